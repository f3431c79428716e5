/* ncclref — the NCCL oracle the training suites compare against: what
 * `arsim collective --algo nccl` takes for one call, asked of the tuner
 * and ncclsim directly, outside any training engine. Header-only, for the
 * unit tests; failures end the test (Check). */
#ifndef ARSIM_NCCLREF_H
#define ARSIM_NCCLREF_H

#include "coll/commnccl.h"
#include "coll/ncclsim.h"
#include "engine/engine.h"
#include "net/net.h"

#include <check.h>
#include <math.h>

/* A cluster of `nodes` nodes of node file `name` (leaf radix `radix`, 0:
 * the fabric's default, as the commands build it) and
 * its Topo, for suites that run ncclsim on it; ncclfix_clear frees it. */
typedef struct {
    NodeSpec node;
    TopoSpec spec;
    NodeCluster cl;
    Topo *t;
} NcclFix;

static inline void ncclfix_init(NcclFix *x, const char *name, int nodes, int radix)
{
    char *err = NULL;
    ck_assert_msg(node_load(name, &x->node, &err), "%s", err);
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = nodes;
    if (radix > 0)
        f.leaf_radix = radix;
    topo_spec_init(&x->spec);
    ck_assert_msg(node_cluster(&x->node, &f, &x->spec, &x->cl, NULL, &err), "%s", err);
    x->t = topo_new(&x->spec, &err);
    ck_assert_msg(x->t, "%s", err);
}

static inline void ncclfix_clear(NcclFix *x)
{
    topo_free(x->t);
    topo_spec_clear(&x->spec);
    node_cluster_clear(&x->cl);
    node_spec_clear(&x->node);
}

/* A cluster as NcclFix, with its communicator, a simulator and a Net on
 * its Topo: for the suites that run NCCL calls live (nccllive);
 * live_clear frees all four. */
typedef struct {
    NcclFix x;
    CommNccl *c;
    Sim *sim;
    Net *net;
} Live;

static inline void live_init(Live *l, const char *node, int nodes)
{
    ncclfix_init(&l->x, node, nodes, 0);
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = nodes;
    char *err = NULL;
    l->c = commnccl_new(l->x.t, &l->x.node, &f, &err);
    ck_assert_msg(l->c, "%s", err);
    l->sim = sim_new(SIM_DEFAULT_SEED);
    l->net = net_new(l->sim, l->x.t);
}

static inline void live_clear(Live *l)
{
    net_free(l->net);
    sim_free(l->sim);
    commnccl_free(l->c);
    ncclfix_clear(&l->x);
}

/* What `arsim collective --algo nccl --node NAME --nodes cl_nodes --ranks
 * nodes*ppn` takes for op on `bytes`, in ps, under the tuner's choice
 * forced as nccl_tune() takes algo, proto and channels (-1, -1, 0: free),
 * that choice in *choice. */
static inline simtime_t ncclref_ps(const char *node, int cl_nodes, int nodes, int ppn, NcclOp op, uint64_t bytes,
                                   int algo, int proto, int channels, NcclChoice *choice)
{
    NcclFix x;
    ncclfix_init(&x, node, cl_nodes, 0);
    char *err = NULL;
    NcclSystem sys;
    nccl_system_from_node(&x.node, nodes * ppn, nodes, &sys);
    ck_assert_msg(nccl_tune(&sys, op, bytes, algo, proto, channels, choice, &err), "%s", err);
    NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = nodes, .ppn = ppn, .op = op, .bytes = bytes,
                      .choice = *choice};
    double secs = ncclsim_time(&sp, NULL, &err);
    ck_assert_msg(secs > 0, "%s", err);
    ncclfix_clear(&x);
    return (simtime_t)llround(secs * 1e12);
}

#endif
