/* trainnccl — a policy's NCCL keys and the hybrid rule on GPU nodes; see trainnccl.h. */
#include "train/trainnccl.h"

#define NCCL_KEYS "algo, proto, channels"

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

bool trainnccl_used(const Scenario *s, const Policy *p)
{
    return s->node && (p->select == ALGSEL_NCCL || p->select == ALGSEL_HYBRID || p->select == ALGSEL_AUTO);
}

/* Whether NCCL runs force f on s's cluster (the tuner's check at 1 MiB:
 * what it refuses depends on the cluster, not on the size); the error
 * points at `at`. */
static bool runs(const Scenario *s, const NcclForce *f, const CfgNode *at, char **err)
{
    NcclSystem sys;
    NcclChoice ch;
    char *why = NULL;
    nccl_system_from_node(s->node, s->world, s->nodes, &sys);
    if (nccl_tune(&sys, NCCL_OP_ALLREDUCE, 1 << 20, f->algo, f->proto, f->channels, &ch, &why))
        return true;
    *err = cfg_err(at, "%s", why);
    g_free(why);
    return false;
}

/* Reads the `nccl` mapping m into p->nccl. */
static bool read_force(CfgNode *m, const Scenario *s, Policy *p, char **err)
{
    if (!cfg_expect_map(m, "nccl", err) || !cfg_known_keys(m, "nccl", NCCL_KEYS, err))
        return false;
    const char *algo = NULL, *proto = NULL;
    int64_t channels = 0;
    if (!cfg_opt_string(m, "algo", &algo, err) || !cfg_opt_string(m, "proto", &proto, err) ||
        !cfg_opt_int(m, "channels", 1, 64, &channels, err))
        return false;
    NcclAlgo a;
    NcclProto pr;
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
    p->nccl = (NcclForce){algo ? (int)a : -1, proto ? (int)pr : -1, (int)channels};
    if (p->select == ALGSEL_HYBRID) {   /* both of the rule's algorithms must run what is forced */
        NcclForce t = p->nccl, r = p->nccl;
        t.algo = NCCL_ALGO_TREE;
        r.algo = NCCL_ALGO_RING;
        return runs(s, &t, m, err) && runs(s, &r, m, err);
    }
    return runs(s, &p->nccl, algo ? cfg_peek(m, "algo") : proto ? cfg_peek(m, "proto") : m, err);
}

bool trainnccl_read(CfgNode *n, const Scenario *s, Policy *p, char **err)
{
    CfgNode *a = cfg_peek(n, "algorithm");
    /* an NCCL call runs alone on an idle cluster (commnccl's memo): a policy
     * whose collectives share several streams runs them live instead */
    bool streams = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE;
    if (!a && s->node && !streams)
        p->select = ALGSEL_NCCL;
    if (p->select == ALGSEL_NCCL && !s->node) {
        *err = cfg_err(a, "algorithm nccl runs on GPU nodes; expected cluster: {node: NAME, nodes: N} (arsim list "
                       "nodes) or another algorithm");
        return false;
    }
    if (p->select == ALGSEL_NCCL && streams) {
        *err = cfg_err(a, "algorithm nccl: policy '%s' runs its collectives on a stream each, live on the network, "
                       "and an NCCL call runs alone; expected another algorithm (ring by default)", p->name);
        return false;
    }
    CfgNode *m = cfg_get(n, "nccl");
    if (!m)
        return true;
    if (!trainnccl_used(s, p)) {
        *err = cfg_err(m, "nccl: policy '%s' does not run NCCL (%s); expected algorithm: nccl, hybrid or auto "
                       "on a cluster of GPU nodes, or no nccl key", p->name,
                       s->node ? "its algorithm is fixed" : "the cluster is not of GPU nodes");
        return false;
    }
    return read_force(m, s, p, err);
}
