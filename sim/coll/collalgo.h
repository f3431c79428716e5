/* collalgo — the algorithm table of coll.h as data, for sim/coll's own
 * files: the row of each algorithm, and the functions the rows name
 * (declared here from the table itself, so a new row needs no declaration).
 * Outside sim/coll, use coll.h's coll_algo_* and coll_gen_* functions.
 */
#ifndef ARSIM_COLLALGO_H
#define ARSIM_COLLALGO_H

#include "coll/coll.h"

/* The largest message of one collective of the algorithm on p members
 * and count elements, in elements (closed form); 0 when nothing is sent. */
typedef uint64_t CollMaxFn(const CollParams *prm, int p, uint64_t count);
/* Its time on p ranks and n bytes under cost model c (collcost.c states
 * the formulas); INFINITY for parameters coll_build rejects. nested: it
 * runs inside a hierarchy, where a torus whose dimensions do not make p
 * takes automatic ones. */
typedef double CollCostFn(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested);
/* About how many distinct ranks one rank sends to, on p ranks. */
typedef uint64_t CollPeersFn(const CollParams *prm, int p);

/* One row of COLL_ALGO_TABLE. */
typedef struct {
    const char *name;                 /* the algorithm's name */
    bool nestable;                    /* may be hierarchical's inter-node algorithm */
    CollFit fit;                      /* where it runs */
    CollWalkFn *walk[COLL_NOPS];      /* its generator of each collective; NULL: does not run it */
    CollMaxFn *max_send[COLL_NOPS];   /* its largest message of each; NULL where walk is */
    CollCostFn *cost;                 /* its all-reduce's cost */
    CollBound bound;                  /* where that cost is a lower bound */
    CollPeersFn *peers;               /* its all-reduce's send peers per rank */
    const char *summary;              /* one line for `arsim list algorithms` */
} CollAlgoInfo;

/* A cell RUNS(walk, max) declares both functions, NONE nothing. */
#define COLLALGO_DECLARE_RUNS(walk, max)                                                                               \
    CollWalkFn walk;                                                                                                   \
    CollMaxFn max;
#define COLLALGO_DECLARE_NONE
#define COLLALGO_DECLARE(ID, name, nest, fit, ar, rs, ag, bc, cost, bound, peers, summary)                             \
    COLLALGO_DECLARE_##ar COLLALGO_DECLARE_##rs COLLALGO_DECLARE_##ag COLLALGO_DECLARE_##bc CollCostFn cost;          \
    CollPeersFn peers;
COLL_ALGO_TABLE(COLLALGO_DECLARE)
#undef COLLALGO_DECLARE

/* The row of a (a < COLL_NALGOS). */
const CollAlgoInfo *collalgo_info(CollAlgo a);

#endif
