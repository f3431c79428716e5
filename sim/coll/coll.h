/* coll — all-reduce algorithms as pure schedule generators (LogGOPSim).
 *
 * A CollSchedule yields, for each rank, an ordered list of steps. A step
 * may send a range of the vector to one peer and receive a range from
 * another (MPI_Sendrecv semantics): the send carries the values the range
 * holds when the step begins; the received values are added into the
 * range (reduce) or copied over it. A step ends when its send was
 * delivered and its receive arrived (and was reduced). The k-th message
 * from rank a to rank b matches b's k-th receive from a (MPI's
 * non-overtaking rule). The simulator (collexec.h), the real-buffer checker
 * (coll_verify) and the MPI harness (validate/) all run these same steps.
 *
 * Schedules are generated on demand (collgen.c): coll_gen_step() computes
 * step k of one rank from (algorithm, p, rank, k) alone, a small pure
 * function, so no table of steps is stored and a collective in flight
 * needs O(p) memory. Generators work on a group whose member m is global
 * rank base + stride*m and touch elements [off, off + count) only, so
 * algorithms compose (hierarchical = ring reduce-scatter + inner
 * all-reduce + ring all-gather). A schedule may instead hold explicit
 * per-rank tables (hand-written schedules in tests).
 */
#ifndef ARSIM_COLL_H
#define ARSIM_COLL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    COLL_RING,          /* reduce-scatter + all-gather around a ring */
    COLL_BUTTERFLY,     /* recursive doubling, whole vector each step */
    COLL_RABENSEIFNER,  /* recursive-halving reduce-scatter + recursive-doubling all-gather */
    COLL_TREE,          /* binomial reduce to rank 0 + binomial broadcast */
    COLL_HIERARCHICAL,  /* intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather */
    COLL_TORUS2D,       /* ring reduce-scatter along X, all-reduce along Y, all-gather along X */
    COLL_NALGOS
} CollAlgo;

const char *coll_algo_name(CollAlgo a);
bool coll_algo_parse(const char *name, CollAlgo *out);

/* The collective a schedule performs. All-reduce runs every algorithm;
 * the others run these (coll_build refuses the rest):
 *   reduce-scatter  ring: every rank ends with its block of an even
 *                   p-split summed over all ranks ((p-1)/p of the vector
 *                   sent per rank); hierarchical: a ring reduce-scatter
 *                   inside each node of G ranks, then an all-reduce of
 *                   each local block with prm.inter among the ranks of
 *                   that local index (sharded inside a node, replicated
 *                   across nodes)
 *   all-gather      ring: rank i starts with its block, every rank ends
 *                   with the whole vector ((p-1)/p sent per rank);
 *                   hierarchical: a ring all-gather inside each node
 *   broadcast       tree: MPICH's binomial broadcast from rank 0; ring:
 *                   a chain 0 -> 1 -> ... -> p-1 of whole vectors */
typedef enum { COLL_OP_ALLREDUCE, COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER, COLL_OP_BROADCAST, COLL_NOPS } CollOp;

const char *coll_op_name(CollOp o);   /* "all-reduce", "reduce-scatter", "all-gather", "broadcast" */

typedef struct {
    int32_t send_peer;   /* global rank sent to, or -1 for no send */
    int32_t recv_peer;   /* global rank received from, or -1 for no receive */
    uint64_t send_off;   /* first element sent */
    uint64_t send_len;   /* elements sent (0 allowed: an empty message) */
    uint64_t recv_off;   /* first element received into */
    uint64_t recv_len;   /* elements received */
    bool reduce;         /* true: add received values; false: copy them */
} CollStep;

typedef struct {
    CollOp op;           /* the collective (coll_params_init: all-reduce) */
    int gpus_per_node;   /* hierarchical: ranks per node (consecutive ranks), >= 1; must divide p */
    CollAlgo inter;      /* hierarchical: the inter-node algorithm */
    int torus_x;         /* torus2d: X (ranks r and r+1 are X neighbours); X*Y must equal p */
    int torus_y;
} CollParams;

typedef struct {
    int p;               /* ranks, >= 1 */
    uint64_t count;      /* elements in the vector */
    CollAlgo algo;       /* generated schedules: the algorithm (set by coll_build) */
    CollParams prm;      /* generated schedules: the parameters, torus dimensions resolved */
    GArray **steps;      /* explicit schedules: p arrays of CollStep, in execution order; owned.
                          * NULL once coll_build made the schedule a generated one */
} CollSchedule;

void coll_params_init(CollParams *prm);   /* G = 1, inter = ring, torus 0x0 (auto square) */

/* A schedule with p empty explicit tables (append CollSteps to steps[r]),
 * or, after coll_build, a generated one. */
CollSchedule *coll_schedule_new(int p, uint64_t count);
void coll_schedule_free(CollSchedule *s);

/* Makes s algorithm a's generated schedule for all s->p ranks (dropping
 * its empty tables). False and *err (g_free) if the parameters do not fit
 * (e.g. G does not divide p); s is then unchanged. */
bool coll_build(CollSchedule *s, CollAlgo a, const CollParams *prm, char **err);

/* Rank r's number of steps, and its step k (k < coll_nsteps), from the
 * tables or the generator. */
uint32_t coll_nsteps(const CollSchedule *s, int r);
void coll_step(const CollSchedule *s, int r, uint32_t k, CollStep *out);
/* The most elements any one message of s carries (0: no message). */
uint64_t coll_max_send(const CollSchedule *s);

/* The generator: rank's step k of algorithm a on p ranks and count
 * elements, prm as coll_build resolved it (torus dimensions set). Returns
 * the rank's number of steps; fills *out only when k is below it (pass
 * UINT32_MAX to count). Pure: no allocation, no state. */
uint32_t coll_gen_step(CollAlgo a, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                       CollStep *out);
/* The largest message of that schedule, in elements (closed form). */
uint64_t coll_gen_max_send(CollAlgo a, const CollParams *prm, int p, uint64_t count);

/* Element range [*off, *off + *len) that member i of a p-group holds after
 * a ring reduce-scatter of [off, off+count) (block i of an even split). */
void coll_ring_block(int p, int i, uint64_t off, uint64_t count, uint64_t *boff, uint64_t *blen);

/* The range rank r holds summed after s's reduce-scatter, or holds
 * before its all-gather: its block of an even p-split (ring), of a
 * G-split by its index inside its node (hierarchical); the whole vector
 * for the other collectives. */
void coll_owned_range(const CollSchedule *s, int r, uint64_t *off, uint64_t *len);

/* Totals over the schedule, for conservation checks. */
uint64_t coll_schedule_elems_sent(const CollSchedule *s);
uint64_t coll_schedule_msgs(const CollSchedule *s);

/* Runs the schedule on real vectors of doubles (rank r's element i starts
 * as a value unique to (r, i)) in a dependency-respecting order and checks
 * that every rank ends with the exact sum (all-reduce), its owned range
 * summed (reduce-scatter), the whole vector from every rank's owned range
 * (all-gather: each starts with its range only), or rank 0's vector
 * (broadcast). False and *err on a wrong
 * result, a deadlock or an unmatched message. */
bool coll_verify(const CollSchedule *s, char **err);

/* α-β-γ closed-form time of algorithm a on p ranks and n bytes, as in
 * docs/dev/design.md §7.7 and docs/explanation/algorithms.md (non-power-of-two folds included); used by the
 * `auto` chooser. INFINITY for parameters coll_build rejects; prm NULL
 * means coll_params_init's defaults (also accepted by coll_build). */
double coll_cost(CollAlgo a, const CollParams *prm, int p, double n, double alpha, double beta, double gamma);

/* The cost model of the protocol layer (io/protocol.h) on top of α-β-γ. */
typedef struct {
    double alpha;            /* s per message, host to host */
    double beta;             /* s per byte */
    double gamma;            /* s per byte reduced */
    double overhead;         /* o: CPU s per message at each end */
    double eager_limit;      /* bytes: messages of at least this many are rendezvous (INFINITY: none) */
    bool rtt;                /* rendezvous messages wait for a request-to-send and a clear-to-send */
    bool ack;                /* and, once their data arrived, for an acknowledgement and a confirmation */
} CollCostModel;

/* coll_cost with the protocol (collcost.c states the formulas); coll_cost
 * is this with o = 0 and every message eager. */
double coll_cost_model(CollAlgo a, const CollParams *prm, int p, double n, const CollCostModel *c);

#endif
