/* ncclsym — the symmetry of NCCL's channels on full nodes, so that a run
 * simulates one channel of each orbit (ncclsim.h).
 *
 * On nodes of G GPUs (G even) whose channel c + 2 is channel c with every
 * GPU g of every node moved to g + 2 (mod G) — its rail, NIC and spine
 * moving along — and, for Tree, channel c + 1 is channel c with every GPU
 * moved by one (the two on the same tree of NCCL's double binary tree:
 * ncclshape_tree_of), a channel's schedule is its orbit's first channel's
 * mapped: an orbit of h channels (Tree: G, the channels c0..c0+G-1 with
 * c0 % G == 0; Ring: G/2, the channels c0 + 2o with c0 % G < 2). A merged run simulates each orbit's first channel on
 * links merged by orbit (each link stands for the h links of its orbit);
 * its lanes' timelines are those of all h channels, mapped. Exact where
 * the maps carry the schedule, the routes and the links' rates and
 * latencies to themselves and act freely on the links used:
 * ncclsym_pair, ncclsym_close and the *_match checks say so from the
 * schedules and routes themselves.
 */
#ifndef ARSIM_NCCLSYM_H
#define ARSIM_NCCLSYM_H

#include "net/topo.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct NcclSym NcclSym;

/* An orbit's maps of ranks. */
typedef struct {
    int G;                   /* GPUs a node, all taking part, even (else h is 1) */
    int h;                   /* channels an orbit: G (rotations by one GPU), G/2 (by two) or 1 (none) */
} NcclSymMap;

/* Channels an orbit's first ones stand apart: the o-th channel of an orbit is its first + q*o, q = G/h. */
static inline int ncclsym_q(const NcclSymMap *m) { return m->h > 1 ? m->G / m->h : 1; }

/* Rank r of an orbit's first channel as it is in the orbit's o-th
 * (0 <= o < h): its GPU moved by o (h == G) or by 2o (h == G/2), its node
 * the same. ncclsym_back is its inverse. */
int ncclsym_fwd(const NcclSymMap *m, int r, int o);
int ncclsym_back(const NcclSymMap *m, int r, int o);

/* For a topology t of nlinks links and an orbit of h channels (h >= 2). */
NcclSym *ncclsym_new(const Topo *t, int h);
void ncclsym_free(NcclSym *s);

/* Records that route rj (of an orbit's j-th channel's connection
 * fwd(a, j) -> fwd(b, j)) is route r0 (of its first channel's a -> b)
 * mapped, link for link. False when the routes differ in length or in a link's rate or
 * latency, or a link's image contradicts one recorded before. */
bool ncclsym_pair(NcclSym *s, int j, const TopoRoute *r0, const TopoRoute *rj);

/* After every connection of the simulated channels was paired: true when
 * the recorded images split the links used into orbits of exactly h
 * distinct links (the rotation is a free action there). */
bool ncclsym_close(NcclSym *s);

/* Whether links a and b have one rate, peak, latency and token bucket. */
bool ncclsym_same_link(const Topo *t, uint32_t a, uint32_t b);

/* The image of link l under the rotation to an orbit's next channel
 * (sigma(l)) where l is on a simulated channel's route, else UINT32_MAX.
 * Only after ncclsym_close returned true. */
uint32_t ncclsym_image(const NcclSym *s, uint32_t l);

/* Link l (of a simulated channel's route) replaced by its orbit's first.
 * Only after ncclsym_close returned true. */
uint32_t ncclsym_link(const NcclSym *s, uint32_t l);

/* Route r0 (a simulated channel's) with each link replaced by its orbit's
 * first; owned by s, cached. Only after ncclsym_close returned true. */
const TopoRoute *ncclsym_route(NcclSym *s, const TopoRoute *r0);

/* Whether every channel's ring (ring[c*n + pos]: rank at pos, n ranks) is,
 * as a cycle, its orbit's first channel's mapped by ncclsym_fwd. */
bool ncclsym_rings_match(const NcclSymMap *m, const int32_t *ring, int n, int C);
/* Whether every channel's tree (tree[(c*n + r)*4 + i]: parent and
 * children, -1 none) is its orbit's first channel's mapped, slot for slot. */
bool ncclsym_trees_match(const NcclSymMap *m, const int32_t *tree, int n, int C);

#endif
