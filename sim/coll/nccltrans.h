/* nccltrans — NCCL's Ring under the translation by one leaf's nodes, so
 * that a run simulates one block of ring positions (ncclsim.h).
 *
 * A ring is node-major (ncclroute_ring): with B nodes of G GPUs a block
 * (b = B*G positions), position i + b holds rank order[i] + b (mod n). On
 * a two-level fat tree of P nodes a leaf with B = P and the nodes a
 * multiple (>= 2) of B, moving every node by B maps each leaf's nodes,
 * NICs, leaf and spine ports onto the next leaf's, so the full ring is T =
 * nodes / B copies of its first block: the T-th part of its positions (0
 * .. b-1), running the full ring's n steps, the last sending to the
 * block's first over its own route (to position b's GPU, whose links no
 * other block's connection uses). Exact where the copies are independent
 * but for the connections between blocks: every op moves the same bytes
 * at a position and at its image, each copy's routes are the first
 * block's mapped link for link onto links of the same rate, latency and
 * token bucket, and no link is used by two copies (then ties between
 * copies never meet on a link, and a lane's start is the same picosecond
 * whichever event wakes it first). nccltrans_check says so from the rings,
 * ops and routes themselves; where it does not hold the run is full.
 */
#ifndef ARSIM_NCCLTRANS_H
#define ARSIM_NCCLTRANS_H

#include "coll/ncclsched.h"

/* The blocks T >= 2 spec's run may be cut into (Ring but not a broadcast,
 * full nodes on NVSwitch from the cluster's first, nodes a multiple >= 2
 * of a leaf's), else 1. The caller decides whether merging is allowed at
 * all. Not on PCIe or an NVLink mesh: there a connection into a node and
 * the node's own ones may share its PCIe links, which the check refuses. */
int nccltrans_blocks(const NcclSimSpec *sp);

/* Whether R (a Ring run planned with R->T = nccltrans_blocks, its slots'
 * rings made, each n positions, merged by orbit where R->sym) is T copies
 * of its first block of positions: rings, ops and routes checked as the
 * banner says. rails[c % 64] is channel c's rail. */
bool nccltrans_check(Run *R, const int *rails);

/* A run of one block's per-rank bytes (Run.sent) made every block's: rank
 * x sent what the simulated rank congruent to it modulo b sent, summed
 * over the slots (each slot's block holds one rank of every residue). */
void nccltrans_unmerge_sent(Run *R);

#endif
