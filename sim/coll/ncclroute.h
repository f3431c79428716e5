/* ncclroute — where NCCL's channels run on a node cluster: each channel's
 * ring or tree over the ranks, and the links a message between two GPUs
 * crosses (inside a node over NVSwitch, an NVLink of the mesh or PCIe;
 * between nodes through the NIC of the channel's rail, reached from a GPU
 * not on that NIC's PCIe switch over NVLink through the GPU that is, as
 * NCCL's PXN does, then the rail's leaf and, between leaves, a spine).
 * Rank r is GPU r % ppn of node r / ppn (of the communicator's GPUs and
 * nodes: the caller maps them onto the cluster's hosts).
 */
#ifndef ARSIM_NCCLROUTE_H
#define ARSIM_NCCLROUTE_H

#include "coll/nccl.h"
#include "net/node.h"

typedef struct NcclRoutes NcclRoutes;

/* A host standing for node 0's NVSwitch (NVLS connections end there). */
#define NCCLROUTE_SWITCH (-1)

NcclRoutes *ncclroute_new(Topo *t, const NodeCluster *cl, int nodes, int ppn);
/* The same for ranks on GPUs gpu0 .. gpu0 + ppn - 1 of their nodes (a
 * channel's rail: the NIC of the GPU it enters a node at); ncclroute_new
 * is gpu0 0. Local indices (orders, trees) stay 0 .. ppn - 1. */
NcclRoutes *ncclroute_new_at(Topo *t, const NodeCluster *cl, int gpu0, int nodes, int ppn);
void ncclroute_free(NcclRoutes *r);

/* The route from src_host to dst_host (either may be NCCLROUTE_SWITCH),
 * between nodes on rail `rail`; owned by r, cached. */
const TopoRoute *ncclroute_get(NcclRoutes *r, int src_host, int dst_host, int rail);
/* Where that connection runs, for NCCL's latencies. */
NcclHw ncclroute_hw(const NcclRoutes *r, int src_host, int dst_host);

/* Channel c's ring: order[pos] = rank (nodes*ppn entries, node by node,
 * rank 0 first), and the rail its hops between nodes take. */
void ncclroute_ring(NcclRoutes *r, int c, int nodes, int ppn, int32_t *order, int *rail);
/* Channel c's tree (tree t, 0 or 1, of NCCL's double binary tree over the
 * nodes, a chain inside each node from the GPU on channel c's rail's NIC):
 * for each rank tree[rank*4 + 0] its parent, tree[rank*4 + 1..3] its
 * children (-1 none). */
void ncclroute_tree(NcclRoutes *r, int c, int t, int nodes, int ppn, int32_t *tree, int *rail);

/* NCCL's double binary tree (trees.cc ncclGetDtree) over n ranks: rank's
 * parent and two children in tree t (0 or 1), -1 for none. */
void ncclroute_dtree(int n, int rank, int t, int *up, int *d0, int *d1);

#endif
