/* trainnccl — NCCL in training: a policy's `algorithm: nccl` and
 * `nccl: {algo, proto, channels}` keys, and the thesis's hybrid rule
 * mapped onto NCCL's algorithms.
 *
 * On a cluster of GPU nodes (cluster: {node: ...}) a policy without an
 * `algorithm` key runs every unit as an NCCL call (ALGSEL_NCCL);
 * `algorithm: nccl` asks for it explicitly and is refused elsewhere.
 * `hybrid` on GPU nodes maps each unit's algorithm onto NCCL's
 * (trainnccl_hybrid_algo); `auto` counts NCCL among its candidates. The
 * `nccl` key forces what NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS
 * force, for the units that go through NCCL. */
#ifndef ARSIM_TRAINNCCL_H
#define ARSIM_TRAINNCCL_H

#include "train/scenario.h"

/* Reads policy map n's NCCL keys into p (its `algorithm` already read):
 * the default on GPU nodes, the `nccl` mapping, and whether NCCL can run
 * what is asked on s's cluster. False + *err ("file:line:col: ...;
 * expected ...") otherwise. */
bool trainnccl_read(CfgNode *n, const Scenario *s, Policy *p, char **err);

/* Whether policy p's units may go through NCCL on s's cluster (GPU
 * nodes, and a selection that uses it: nccl, hybrid or auto). */
bool trainnccl_used(const Scenario *s, const Policy *p);

/* NCCL's collective for a unit's. */
NcclOp trainnccl_op(CollOp c);

/* The hybrid rule on GPU nodes: the NCCL algorithm standing for a: the
 * latency-optimal ones that move the whole vector each step (butterfly,
 * tree) -> Tree (NCCL's double binary tree, log depth between nodes);
 * the bandwidth-optimal ones (ring, rabenseifner, hierarchical, torus2d)
 * -> Ring. */
NcclAlgo trainnccl_hybrid_algo(CollAlgo a);

#endif
