/* trainnccl — a policy's NCCL keys and the hybrid rule on GPU nodes; see trainnccl.h. */
#include "train/trainnccl.h"

#define NCCL_KEYS "algo, proto, channels, release"

NcclAlgo trainnccl_hybrid_algo(CollAlgo a)
{
    return a == COLL_BUTTERFLY || a == COLL_TREE ? NCCL_ALGO_TREE : NCCL_ALGO_RING;
}

NcclOp trainnccl_op(CollOp c)
{
    switch (c) {
    case COLL_OP_REDUCE_SCATTER:
        return NCCL_OP_REDUCESCATTER;
    case COLL_OP_ALLGATHER:
        return NCCL_OP_ALLGATHER;
    case COLL_OP_BROADCAST:
        return NCCL_OP_BROADCAST;
    default:
        return NCCL_OP_ALLREDUCE;
    }
}

const char *trainnccl_live(const Scenario *s, const Policy *p)
{
    if (policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE)
        return "runs its collectives on a stream each";
    if (s->comm_streams > 1)
        return "runs comm.streams > 1 collectives at once";
    if (s->faults && s->faults->len > 0)
        return "runs on a cluster with faults";
    if (s->background && s->background->len > 0)
        return "shares the network with background traffic";
    return NULL;
}

/* Whether p is hybrid_shard (its all-reduces across nodes on one GPU a node). */
static bool hybrid_shard(const Policy *p)
{
    return policy_rules(p->overlap)->units == UNITS_SHARDED && p->sharding == SHARD_HYBRID;
}

bool trainnccl_used(const Scenario *s, const Policy *p)
{
    return s->node && (p->select == ALGSEL_NCCL || p->select == ALGSEL_HYBRID || p->select == ALGSEL_AUTO);
}

/* Why hybrid_shard's G replica groups (GPU g of every node, one group a
 * local index, all at once) cannot each be simulated alone, or NULL:
 * each GPU needs a NIC of its own on its PCIe switch, so that its group
 * crosses no link of another's (its rail's leaves and spines are its
 * own) and every group is alike (GPU 0's, which the memo runs). */
static char *replica_problem(const NodeSpec *n)
{
    for (int g = 0; g < n->ngpus; g++) {
        if (n->gpu_nic[g] < 0)
            return g_strdup_printf("GPU %d of node %s has no NIC on its PCIe switch, so its replica group's "
                                   "all-reduce would cross other GPUs' links", g, n->name);
        for (int h = 0; h < g; h++)
            if (n->gpu_nic[h] == n->gpu_nic[g])
                return g_strdup_printf("GPUs %d and %d of node %s share NIC %d, so their replica groups' "
                                       "all-reduces would share it", h, g, n->name, n->gpu_nic[g]);
    }
    return NULL;
}

/* The communicator standing for groups of g consecutive GPUs (all at
 * once) in *out, or why none can: k = g/G whole nodes whose groups keep
 * to leaves of their own (or share one leaf, with no spine between
 * them): k divides the nodes a leaf holds or is a multiple of them,
 * unless the groups run live (each on its own links, sharing what they
 * share); g dividing G on an NVSwitch node, where every GPU has its own
 * links to the switch. */
static char *group_problem(const Scenario *s, int g, bool live, CommNcclGroup *out)
{
    int G = s->gpus_per_node, per_leaf = s->node_fab.leaf_radix / 2;
    if (g % G == 0) {
        int k = g / G;
        if (!live && s->nodes > per_leaf && per_leaf % k != 0 && k % per_leaf != 0)
            return g_strdup_printf("groups of %d nodes straddle leaves of %d nodes that other groups use too, so "
                                   "they would share the leaves' uplinks", k, per_leaf);
        *out = (CommNcclGroup){k, G};
        return NULL;
    }
    if (G % g == 0 && s->node->fabric == NODE_FABRIC_NVSWITCH) {
        *out = (CommNcclGroup){1, g};
        return NULL;
    }
    if (G % g == 0)
        return g_strdup_printf("groups of %d GPUs inside nodes %s without an NVSwitch are not alike (their links "
                               "differ)", g, s->node->name);
    return g_strdup_printf("groups of %d GPUs span part of a node of %d", g, G);
}

/* fsdp2 hybrid_shard's unit u of shard groups of u->split GPUs (a
 * node's): its collective on each node's GPUs, or (across) the
 * all-reduce of its elements on one GPU of every node; 1, or 0 + *err
 * where the groups are not a node's or the replica groups' NICs are
 * shared (replica_problem). */
static int split_call(const Scenario *s, const SyncUnit *u, TrainNcclCall *out, char **err)
{
    int G = s->gpus_per_node;
    uint64_t bytes = u->elems * (uint64_t)s->elem_bytes;
    char *why = NULL;
    if (u->split != G) {
        *err = g_strdup_printf("unit %s: an NCCL call in shard groups of %d GPUs on nodes of %d; expected a node's "
                               "GPUs", u->name, u->split, G);
        return 0;
    }
    if (!u->across) {
        out[0] = (TrainNcclCall){{1, G}, trainnccl_op(u->coll), bytes};
        return 1;
    }
    if (!u->nccl.live && (why = replica_problem(s->node))) {
        *err = g_strdup_printf("unit %s: hybrid_shard's all-reduce across nodes: %s; expected a node with a NIC of "
                               "its own for every GPU", u->name, why);
        g_free(why);
        return 0;
    }
    out[0] = (TrainNcclCall){{s->nodes, 1}, trainnccl_op(u->coll), bytes};
    return 1;
}

int trainnccl_calls(const Scenario *s, const SyncUnit *u, TrainNcclCall *out, char **err)
{
    int G = s->gpus_per_node;
    uint64_t bytes = u->elems * (uint64_t)s->elem_bytes;
    NcclOp op = trainnccl_op(u->coll);
    char *why = NULL;
    if (u->group > 0) {
        CommNcclGroup cg;
        if ((why = group_problem(s, u->group, u->nccl.live, &cg))) {
            *err = g_strdup_printf("unit %s: an NCCL call in groups of %d GPUs: %s; expected groups of whole nodes "
                                   "within or across whole leaves, or of GPUs of one NVSwitch node", u->name,
                                   u->group, why);
            g_free(why);
            return 0;
        }
        out[0] = (TrainNcclCall){cg, op, bytes};
        return 1;
    }
    if (u->split > 0)   /* fsdp2 hybrid_shard: inside each shard group (a node), or across them */
        return split_call(s, u, out, err);
    if (u->coll == COLL_OP_ALLREDUCE || u->algo != COLL_HIERARCHICAL) {   /* the whole world */
        out[0] = (TrainNcclCall){{s->nodes, G}, op, bytes};
        return 1;
    }
    out[0] = (TrainNcclCall){{1, G}, op, bytes};   /* hybrid_shard: inside the node */
    if (u->coll != COLL_OP_REDUCE_SCATTER)
        return 1;
    if (!u->nccl.live && (why = replica_problem(s->node))) {
        *err = g_strdup_printf("unit %s: hybrid_shard's all-reduce across nodes: %s; expected a node with a NIC of "
                               "its own for every GPU", u->name, why);
        g_free(why);
        return 0;
    }
    out[1] = (TrainNcclCall){{s->nodes, 1}, NCCL_OP_ALLREDUCE, (u->elems + (uint64_t)G - 1) / (uint64_t)G *
                                                                   (uint64_t)s->elem_bytes};
    return 2;
}

int trainnccl_shapes(const Scenario *s, const Policy *p, CommNcclGroup *out)
{
    int n = 0, G = s->gpus_per_node;
    CommNcclGroup cg;
    out[n++] = (CommNcclGroup){s->nodes, G};
    if (hybrid_shard(p)) {
        out[n++] = (CommNcclGroup){1, G};
        out[n++] = (CommNcclGroup){s->nodes, 1};
    } else if (p->overlap == OVERLAP_FSDP2 && p->reshard > 0) {
        char *why = group_problem(s, p->reshard, trainnccl_live(s, p) != NULL, &cg);
        if (!why)
            out[n++] = cg;
        g_free(why);
    }
    return n;
}

bool trainnccl_unit_cost(CommNccl *c, const Scenario *s, const SyncUnit *u, const NcclForce *f, simtime_t *dur,
                         SyncNccl *out, SimErr *code, char **err)
{
    TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
    if (code)
        *code = SIM_ERR_MODEL;
    int n = trainnccl_calls(s, u, calls, err);
    if (n == 0)
        return false;
    out->force = *f;
    out->calls = n;
    out->next = (NcclChoice){0};
    *dur = 0;
    for (int i = 0; i < n; i++) {
        simtime_t d;
        if (!commnccl_get(c, &calls[i].group, calls[i].op, f, calls[i].bytes, &d, i == 0 ? &out->choice : &out->next,
                          code, err))
            return false;
        if (d > SIMTIME_MAX - *dur) {
            if (code)
                *code = SIM_ERR_CLOCK;
            *err = g_strdup_printf("unit %s: its NCCL calls' time does not fit the clock", u->name);
            return false;
        }
        *dur += d;
    }
    return true;
}

/* The data bytes of unit u's NCCL calls under its force: rank 0's
 * (*sent) and every GPU's over the cluster (*egress, each call's
 * commnccl_sent all-rank bytes times its groups). False + *err otherwise. */
static bool unit_bytes(CommNccl *c, const Scenario *s, const SyncUnit *u, uint64_t *sent, double *egress, char **err)
{
    TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
    int n = trainnccl_calls(s, u, calls, err);
    *sent = 0;
    *egress = 0;
    for (int i = 0; i < n; i++) {
        const TrainNcclCall *k = &calls[i];
        uint64_t b0, all;
        if (!commnccl_sent(c, &k->group, k->op, &u->nccl.force, k->bytes, &b0, &all, err))
            return false;
        *sent += b0;
        *egress += (double)all * (double)s->world / (double)(k->group.nodes * k->group.ppn);
    }
    return n > 0;
}

bool trainnccl_unit_sent(CommNccl *c, const Scenario *s, const SyncUnit *u, uint64_t *sent, char **err)
{
    double egress;
    return unit_bytes(c, s, u, sent, &egress, err);
}

bool trainnccl_unit_egress(CommNccl *c, const Scenario *s, const SyncUnit *u, double *bytes, char **err)
{
    uint64_t sent;
    return unit_bytes(c, s, u, &sent, bytes, err);
}

/* Whether NCCL runs force f on a communicator of `nodes` nodes of `ppn`
 * GPUs of s's cluster (the tuner's check at 1 MiB: what it refuses
 * depends on the cluster, not on the size); the error points at `at`. */
static bool runs(const Scenario *s, const NcclForce *f, int nodes, int ppn, const CfgNode *at, char **err)
{
    NcclSystem sys;
    NcclChoice ch;
    char *why = NULL;
    nccl_system_from_node(s->node, nodes * ppn, nodes, &sys);
    sys.release = (NcclRelease)f->release;
    if (nccl_tune(&sys, NCCL_OP_ALLREDUCE, 1 << 20, f->algo, f->proto, f->channels, &ch, &why))
        return true;
    *err = cfg_err(at, "%s", why);
    g_free(why);
    return false;
}

/* Whether NCCL runs force f for policy p on s's cluster: on every GPU,
 * and for hybrid_shard on one GPU of every node too. */
static bool runs_policy(const Scenario *s, const Policy *p, const NcclForce *f, const CfgNode *at, char **err)
{
    return runs(s, f, s->nodes, s->gpus_per_node, at, err) &&
           (!hybrid_shard(p) || runs(s, f, s->nodes, 1, at, err));
}

/* The groups policy p's NCCL calls run in, checked on s's cluster
 * (trainnccl_calls' rules): false + *err at the key that asks for them. */
static bool groups_ok(CfgNode *n, const Scenario *s, const Policy *p, char **err)
{
    char *why = NULL;
    CommNcclGroup cg;
    bool live = trainnccl_live(s, p) != NULL;   /* every group runs: shared links contend */
    if (hybrid_shard(p) && !live && (why = replica_problem(s->node))) {
        *err = cfg_err(cfg_peek(n, "sharding"), "hybrid_shard through NCCL: %s, and one simulated replica group "
                       "cannot stand for them; expected a node with a NIC of its own for every GPU, or another "
                       "algorithm (ring: point-to-point schedules, every group at once)", why);
    } else if (p->overlap == OVERLAP_FSDP2 && p->reshard > 0 && (why = group_problem(s, p->reshard, live, &cg))) {
        *err = cfg_err(cfg_peek(n, "reshard_after_forward"), "reshard_after_forward %d through NCCL: %s; expected "
                       "groups of whole nodes%s, of GPUs of one NVSwitch node, or another algorithm (ring: "
                       "point-to-point schedules)", p->reshard, why, live ? "" : " within or across whole leaves");
    }
    bool ok = why == NULL;
    g_free(why);
    return ok;
}

/* Reads the `nccl` mapping m into p->nccl. */
static bool read_force(CfgNode *m, const Scenario *s, Policy *p, char **err)
{
    if (!cfg_expect_map(m, "nccl", err) || !cfg_known_keys(m, "nccl", NCCL_KEYS, err))
        return false;
    const char *algo = NULL, *proto = NULL, *release = NULL;
    int64_t channels = 0;
    if (!cfg_opt_string(m, "algo", &algo, err) || !cfg_opt_string(m, "proto", &proto, err) ||
        !cfg_opt_int(m, "channels", 1, 64, &channels, err) || !cfg_opt_string(m, "release", &release, err))
        return false;
    NcclAlgo a;
    NcclProto pr;
    NcclRelease rel = NCCL_REL_2_21;
    if (release && !nccl_release_parse(release, &rel)) {   /* "2.18" or 2.18: the scalar's text either way */
        *err = cfg_err(cfg_peek(m, "release"), "unknown NCCL release '%s'; expected 2.18, 2.19, 2.20 or 2.21",
                       release);
        return false;
    }
    if (algo && !nccl_algo_parse(algo, &a)) {
        *err = cfg_err(cfg_peek(m, "algo"), "unknown NCCL algorithm '%s'; expected ring, tree, nvls or nvlstree", algo);
        return false;
    }
    if (proto && !nccl_proto_parse(proto, &pr)) {
        *err = cfg_err(cfg_peek(m, "proto"), "unknown NCCL protocol '%s'; expected ll, ll128 or simple", proto);
        return false;
    }
    if (algo && p->select == ALGSEL_HYBRID) {
        *err = cfg_err(cfg_peek(m, "algo"), "nccl.algo with algorithm: hybrid (the rule picks Tree or Ring per "
                       "layer); expected only proto and channels, or another algorithm");
        return false;
    }
    p->nccl = (NcclForce){algo ? (int)a : -1, proto ? (int)pr : -1, (int)channels, (int)rel};
    if (p->select == ALGSEL_HYBRID) {   /* both of the rule's algorithms must run what is forced */
        NcclForce t = p->nccl, r = p->nccl;
        t.algo = NCCL_ALGO_TREE;
        r.algo = NCCL_ALGO_RING;
        return runs_policy(s, p, &t, m, err) && runs_policy(s, p, &r, m, err);
    }
    return runs_policy(s, p, &p->nccl, algo ? cfg_peek(m, "algo") : proto ? cfg_peek(m, "proto") : m, err);
}

bool trainnccl_read(CfgNode *n, const Scenario *s, Policy *p, char **err)
{
    CfgNode *a = cfg_peek(n, "algorithm");
    if (!a && s->node)   /* live or from the memo, in groups or on the whole cluster */
        p->select = ALGSEL_NCCL;
    if (p->select == ALGSEL_NCCL && !s->node) {
        *err = cfg_err(a, "algorithm nccl runs on GPU nodes; expected cluster: {node: NAME, nodes: N} (arsim list "
                       "nodes) or another algorithm");
        return false;
    }
    if (s->node && (p->select == ALGSEL_NCCL || p->select == ALGSEL_HYBRID) && !groups_ok(n, s, p, err))
        return false;
    CfgNode *m = cfg_get(n, "nccl");
    if (!m)
        return true;
    if (!trainnccl_used(s, p)) {
        *err = cfg_err(m, "nccl: policy '%s' does not run NCCL (%s); expected algorithm: nccl, hybrid or auto "
                       "on a cluster of GPU nodes, or no nccl key", p->name,
                       !s->node ? "the cluster is not of GPU nodes" : "its algorithm is fixed");
        return false;
    }
    return read_force(m, s, p, err);
}
