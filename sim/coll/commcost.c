/* commcost — memoized idle-cluster collective durations; see commcost.h. */
#include "coll/commcost.h"

typedef struct {
    simtime_t dur;           /* ps */
    double bytes;            /* bytes serialized onto the hosts' egress links */
} CostEntry;

struct CommCost {
    Topo *topo;              /* not owned */
    int p;                   /* ranks */
    CollParams prm;          /* hierarchical / torus parameters */
    uint32_t elem_bytes;     /* bytes per element */
    double gamma;            /* s/byte of reduction */
    GHashTable *costs;       /* key (algo, elems) -> CostEntry*; owned */
    GHashTable *scheds;      /* key (algo, elems) -> CollSchedule*; owned */
    uint64_t events;         /* engine events of memo runs */
};

typedef struct {
    CollOp op;
    CollAlgo algo;
    uint64_t elems;
} CostKey;

static guint key_hash(gconstpointer k)
{
    const CostKey *c = k;
    return (guint)(c->elems * 2654435761u) ^ (guint)c->algo ^ ((guint)c->op << 8);
}

static gboolean key_eq(gconstpointer a, gconstpointer b)
{
    const CostKey *x = a, *y = b;
    return x->op == y->op && x->algo == y->algo && x->elems == y->elems;
}

CommCost *commcost_new(Topo *t, int p, const CollParams *prm, uint32_t elem_bytes, double gamma)
{
    CommCost *c = g_new0(CommCost, 1);
    c->topo = t;
    c->p = p;
    c->prm = *prm;
    c->elem_bytes = elem_bytes;
    c->gamma = gamma;
    c->costs = g_hash_table_new_full(key_hash, key_eq, g_free, g_free);
    c->scheds = g_hash_table_new_full(key_hash, key_eq, g_free, (GDestroyNotify)coll_schedule_free);
    return c;
}

void commcost_free(CommCost *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->costs);
    g_hash_table_destroy(c->scheds);
    g_free(c);
}

const CollSchedule *commcost_schedule_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, char **err)
{
    CostKey k = {op, a, elems};
    CollSchedule *s = g_hash_table_lookup(c->scheds, &k);
    if (s)
        return s;
    s = coll_schedule_new(c->p, elems);
    CollParams prm = c->prm;
    prm.op = op;
    if (!coll_build(s, a, &prm, err)) {
        coll_schedule_free(s);
        return NULL;
    }
    g_hash_table_insert(c->scheds, g_memdup2(&k, sizeof k), s);
    return s;
}

static void mark_done(void *ctx, void *data)
{
    (void)data;
    *(bool *)ctx = true;
}

const CollSchedule *commcost_schedule(CommCost *c, CollAlgo a, uint64_t elems, char **err)
{
    return commcost_schedule_op(c, COLL_OP_ALLREDUCE, a, elems, err);
}

bool commcost_get(CommCost *c, CollAlgo a, uint64_t elems, simtime_t *dur, double *util, SimErr *code, char **err)
{
    return commcost_get_op(c, COLL_OP_ALLREDUCE, a, elems, dur, util, code, err);
}

/* The memo's entry of that collective, run now on an idle network if it
 * was not yet; NULL + *err (and *code unless NULL) if it failed. */
static const CostEntry *cost_entry(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, SimErr *code, char **err)
{
    CostKey k = {op, a, elems};
    CostEntry *e = g_hash_table_lookup(c->costs, &k);
    if (!e) {
        const CollSchedule *s = commcost_schedule_op(c, op, a, elems, err);
        if (!s) {
            if (code)
                *code = SIM_ERR_MODEL;
            return NULL;
        }
        Sim *sim = sim_new(SIM_DEFAULT_SEED);   /* an idle-network run draws nothing */
        Net *net = net_new(sim, c->topo);
        bool done = false;
        CollRunSpec run = {.sim = sim, .net = net, .topo = c->topo, .sched = s, .elem_bytes = c->elem_bytes,
                           .gamma = c->gamma, .done = mark_done, .ctx = &done};
        CollExec *x = collexec_start(&run);
        bool ok = sim_run(sim) && done;
        if (!ok) {
            *err = g_strdup_printf("simulating %s%s%s failed: %s", coll_algo_name(a), op ? " " : "",
                                   op ? coll_op_name(op) : "", sim->failed ? sim->error : "did not finish");
            if (code)
                *code = sim->failed ? sim->code : SIM_ERR_MODEL;
        } else {
            e = g_new0(CostEntry, 1);
            e->dur = collexec_end_time(x) - collexec_start_time(x);
            for (guint l = 0; l < c->topo->links->len; l++)
                if (g_array_index(c->topo->links, TopoLink, l).from < c->p)
                    e->bytes += (double)net_link_stats(net, l)->bytes;
            c->events += sim->events;
            g_hash_table_insert(c->costs, g_memdup2(&k, sizeof k), e);
        }
        collexec_free(x);
        net_free(net);
        sim_free(sim);
    }
    return e;
}

bool commcost_get_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, simtime_t *dur, double *util, SimErr *code,
                     char **err)
{
    const CostEntry *e = cost_entry(c, op, a, elems, code, err);
    if (!e)
        return false;
    *dur = e->dur;
    if (util)
        *util = commcost_util(c->topo, c->p, e->bytes, e->dur);
    return true;
}

bool commcost_egress_op(CommCost *c, CollOp op, CollAlgo a, uint64_t elems, double *bytes, SimErr *code, char **err)
{
    const CostEntry *e = cost_entry(c, op, a, elems, code, err);
    if (e)
        *bytes = e->bytes;
    return e != NULL;
}

double commcost_util(const Topo *t, int p, double bytes, simtime_t dur)
{
    double cap = 0;
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *tl = &g_array_index(t->links, TopoLink, l);
        if (tl->from < p)
            cap += tl->bw_Bps;
    }
    double secs = sim_ps_to_seconds(dur);
    return secs > 0 && cap > 0 ? bytes / (cap * secs) : 0;
}

uint64_t commcost_events(const CommCost *c)
{
    return c->events;
}
