/* ncclsym — the rotation symmetry of NCCL's channels on full nodes, so
 * that a run simulates one channel of each orbit (ncclsim.h).
 *
 * On a node of G GPUs (G even) whose channel c + 2 is channel c with
 * every GPU g of every node moved to g + 2 (mod G) — its rail, NIC and
 * spine moving along — channels c, c + 2, ..., c + G - 2 (c % G < 2) form
 * an orbit of h = G/2 channels: one rotation `sigma` of the ranks and,
 * link for link, of the routes. A merged run simulates the orbit's first
 * channel on links merged by orbit (each link stands for the h links of
 * its orbit); its lanes' timelines are those of all h channels, shifted.
 * Exact where the rotation maps the schedule, the routes and the links'
 * rates and latencies to themselves and acts freely on the links used:
 * ncclsym_pair and ncclsym_close check that from the routes themselves.
 */
#ifndef ARSIM_NCCLSYM_H
#define ARSIM_NCCLSYM_H

#include "net/topo.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct NcclSym NcclSym;

/* Rank (node r / G, GPU r % G) with its GPU moved by 2j: sigma^j(rank). */
static inline int ncclsym_rot(int rank, int G, int j)
{
    int g = rank % G;
    return rank - g + ((g + 2 * j) % G + G) % G;
}

/* For a topology t of nlinks links and an orbit of h channels (h >= 2). */
NcclSym *ncclsym_new(const Topo *t, int h);
void ncclsym_free(NcclSym *s);

/* Records that route rj (of channel c + 2j's connection sigma^j(a) ->
 * sigma^j(b)) is route r0 (of channel c's a -> b) rotated j times, link
 * for link. False when the routes differ in length or in a link's rate or
 * latency, or a link's image contradicts one recorded before. */
bool ncclsym_pair(NcclSym *s, int j, const TopoRoute *r0, const TopoRoute *rj);

/* After every connection of the simulated channels was paired: true when
 * the recorded images split the links used into orbits of exactly h
 * distinct links (the rotation is a free action there). */
bool ncclsym_close(NcclSym *s);

/* Route r0 (a simulated channel's) with each link replaced by its orbit's
 * first; owned by s, cached. Only after ncclsym_close returned true. */
const TopoRoute *ncclsym_route(NcclSym *s, const TopoRoute *r0);

/* Whether channels 0..C-1's rings (ring[c*n + pos]: rank at pos, n ranks,
 * full nodes of G GPUs) are, as cycles, channel c - 2j's ring rotated j
 * times, j = (c % G) / 2. */
bool ncclsym_rings_match(const int32_t *ring, int n, int C, int G);
/* Whether channels 0..C-1's trees (tree[(c*n + r)*4 + i]: parent and
 * children, -1 none) satisfy tree_c[sigma^j r][i] = sigma^j(tree_{c-2j}[r][i]). */
bool ncclsym_trees_match(const int32_t *tree, int n, int C, int G);

#endif
