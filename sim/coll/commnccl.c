/* commnccl — memoized NCCL call durations on GPU nodes; see commnccl.h. */
#include "coll/commnccl.h"
#include "coll/ncclsim.h"

typedef struct {
    simtime_t dur;           /* ps */
    NcclChoice choice;       /* what the tuner chose */
    uint64_t sent0;          /* data bytes rank 0 sends in the call */
    uint64_t sent;           /* data bytes its ranks send in all */
} NcclEntry;

typedef struct {
    CommNcclGroup group;
    NcclOp op;
    NcclForce force;
    uint64_t bytes;
} NcclKey;

struct CommNccl {
    Topo *topo;              /* not owned */
    NodeCluster cl;          /* the cluster's map; owned */
    GHashTable *memo;        /* NcclKey -> NcclEntry; both owned */
    uint64_t events;         /* engine events of the memo runs */
};

static guint key_hash(gconstpointer k)
{
    const NcclKey *x = k;
    return (guint)(x->bytes * 2654435761u) ^ (guint)((x->force.algo + 1) | (x->force.proto + 1) << 4 |
                                                     x->force.channels << 8 | (int)x->op << 16 |
                                                     x->force.release << 20) ^
           (guint)(x->group.nodes * 40503u + x->group.ppn) << 7;
}

static gboolean key_eq(gconstpointer a, gconstpointer b)
{
    const NcclKey *x = a, *y = b;
    return x->bytes == y->bytes && x->op == y->op && x->group.nodes == y->group.nodes &&
           x->group.ppn == y->group.ppn && x->force.algo == y->force.algo &&
           x->force.proto == y->force.proto && x->force.channels == y->force.channels &&
           x->force.release == y->force.release;
}

CommNccl *commnccl_new(Topo *t, const NodeSpec *n, const NodeFabricSpec *f, char **err)
{
    CommNccl *c = g_new0(CommNccl, 1);
    TopoSpec spec;   /* the same spec t was built from; only the map is kept */
    topo_spec_init(&spec);
    bool ok = node_cluster(n, f, &spec, &c->cl, NULL, err);
    topo_spec_clear(&spec);
    if (!ok) {
        g_free(c);
        return NULL;
    }
    c->topo = t;
    c->memo = g_hash_table_new_full(key_hash, key_eq, g_free, g_free);
    return c;
}

void commnccl_free(CommNccl *c)
{
    if (!c)
        return;
    node_cluster_clear(&c->cl);
    g_hash_table_destroy(c->memo);
    g_free(c);
}

CommNcclGroup commnccl_all(const CommNccl *c)
{
    return (CommNcclGroup){c->cl.fab.nodes, c->cl.node.ngpus};
}

bool commnccl_choose(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                     NcclChoice *ch, char **err)
{
    if (g->nodes < 1 || g->nodes > c->cl.fab.nodes || g->ppn < 1 || g->ppn > c->cl.node.ngpus) {
        *err = g_strdup_printf("an NCCL communicator of %d nodes x %d GPUs on a cluster of %d x %d; expected "
                               "one inside it", g->nodes, g->ppn, c->cl.fab.nodes, c->cl.node.ngpus);
        return false;
    }
    NcclSystem sys;   /* what the tuner sees: the communicator's GPUs */
    nccl_system_from_node(&c->cl.node, g->nodes * g->ppn, g->nodes, &sys);
    sys.release = (NcclRelease)f->release;
    return nccl_tune(&sys, op, bytes, f->algo, f->proto, f->channels, ch, err);
}

NcclSimSpec commnccl_spec(const CommNccl *c, const CommNcclGroup *g, NcclOp op, uint64_t bytes,
                          const NcclChoice *ch)
{
    return (NcclSimSpec){.topo = c->topo, .cl = &c->cl, .nodes = g->nodes, .ppn = g->ppn, .op = op, .bytes = bytes,
                         .choice = *ch};
}

/* The memo's entry of (g, op, f, bytes), simulated on first use; NULL + *err, *code as commnccl_get. */
static const NcclEntry *entry(CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                              SimErr *code, char **err)
{
    NcclKey k = {*g, op, *f, bytes};
    NcclEntry *e = g_hash_table_lookup(c->memo, &k);
    if (!e) {
        NcclChoice ch;
        if (code)
            *code = SIM_ERR_MODEL;
        if (!commnccl_choose(c, g, op, f, bytes, &ch, err))
            return NULL;
        NcclSimSpec sp = commnccl_spec(c, g, op, bytes, &ch);
        sp.release = (NcclRelease)f->release;
        NcclSimStats st = {0};
        char *why = NULL;
        sp.rank_bytes = g_new0(uint64_t, (size_t)sp.nodes * sp.ppn);
        double secs = ncclsim_time(&sp, &st, &why);
        uint64_t sent0 = sp.rank_bytes[0], sent = 0;
        for (int r = 0; r < sp.nodes * sp.ppn; r++)
            sent += sp.rank_bytes[r];
        g_free(sp.rank_bytes);
        simtime_t ps;
        if (secs < 0 || !sim_seconds_to_ps(secs, &ps)) {
            *err = g_strdup_printf("simulating NCCL's %s/%s %s of %" G_GUINT64_FORMAT " B failed: %s",
                                   nccl_algo_name(ch.algo), nccl_proto_name(ch.proto), nccl_op_name(op), (guint64)bytes,
                                   why ? why : "its time does not fit the clock");
            if (code && secs >= 0)
                *code = SIM_ERR_CLOCK;
            g_free(why);
            return NULL;
        }
        c->events += st.events;
        e = g_new(NcclEntry, 1);
        *e = (NcclEntry){.dur = ps, .choice = ch, .sent0 = sent0, .sent = sent};
        g_hash_table_insert(c->memo, g_memdup2(&k, sizeof k), e);
    }
    return e;
}

bool commnccl_get(CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes, simtime_t *dur,
                  NcclChoice *choice, SimErr *code, char **err)
{
    const NcclEntry *e = entry(c, g, op, f, bytes, code, err);
    if (!e)
        return false;
    *dur = e->dur;
    if (choice)
        *choice = e->choice;
    return true;
}

bool commnccl_sent(CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                   uint64_t *sent0, uint64_t *sent_all, char **err)
{
    const NcclEntry *e = entry(c, g, op, f, bytes, NULL, err);
    if (e) {
        *sent0 = e->sent0;
        *sent_all = e->sent;
    }
    return e != NULL;
}

uint64_t commnccl_events(const CommNccl *c)
{
    return c ? c->events : 0;
}
