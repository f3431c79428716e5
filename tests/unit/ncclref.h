/* ncclref — the NCCL oracle the training suites compare against: what
 * `arsim collective --algo nccl` takes for one call, asked of the tuner
 * and ncclsim directly, outside any training engine. Header-only, for the
 * unit tests; failures end the test (Check). */
#ifndef ARSIM_NCCLREF_H
#define ARSIM_NCCLREF_H

#include "coll/ncclsim.h"

#include <check.h>
#include <math.h>

/* What `arsim collective --algo nccl --node NAME --nodes cl_nodes --ranks
 * nodes*ppn` takes for op on `bytes`, in ps, under the tuner's choice
 * forced as nccl_tune() takes algo, proto and channels (-1, -1, 0: free),
 * that choice in *choice. */
static inline simtime_t ncclref_ps(const char *node, int cl_nodes, int nodes, int ppn, NcclOp op, uint64_t bytes,
                                   int algo, int proto, int channels, NcclChoice *choice)
{
    NodeSpec n;
    char *err = NULL;
    ck_assert_msg(node_load(node, &n, &err), "%s", err);
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = cl_nodes;
    TopoSpec spec;
    topo_spec_init(&spec);
    NodeCluster cl;
    ck_assert_msg(node_cluster(&n, &f, &spec, &cl, &err), "%s", err);
    Topo *t = topo_new(&spec, &err);
    ck_assert_msg(t, "%s", err);
    NcclSystem sys;
    nccl_system_from_node(&n, nodes * ppn, nodes, &sys);
    ck_assert_msg(nccl_tune(&sys, op, bytes, algo, proto, channels, choice, &err), "%s", err);
    NcclSimSpec sp = {.topo = t, .cl = &cl, .nodes = nodes, .ppn = ppn, .op = op, .bytes = bytes, .choice = *choice};
    double secs = ncclsim_time(&sp, NULL, &err);
    ck_assert_msg(secs > 0, "%s", err);
    topo_free(t);
    node_cluster_clear(&cl);
    topo_spec_clear(&spec);
    node_spec_clear(&n);
    return (simtime_t)llround(secs * 1e12);
}

#endif
