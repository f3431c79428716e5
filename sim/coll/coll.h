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

/* The algorithm table: one row per algorithm, everything that tells it
 * apart, in the order of CollAlgo (and of every list of names):
 *
 *   X(ID, name, nest, fit, allreduce, reduce_scatter, all_gather, broadcast, cost, bound, peers, summary)
 *
 *   ID              CollAlgo's COLL_<ID>
 *   name            its name in configs, on the command line and in outputs
 *   nest            NESTABLE: it may be hierarchical's inter-node algorithm; OUTER: not
 *   fit             where it runs (CollFit)
 *   allreduce ...   one cell per collective (CollOp, in its order): RUNS(walk, max_send), its
 *                   generator (CollWalkFn) and largest message (CollMaxFn) of that collective,
 *                   or NONE where it does not run it; every row runs the all-reduce
 *   cost            its all-reduce's alpha-beta-gamma cost with the protocol (CollCostFn)
 *   bound           where that cost is a lower bound of the simulated time (CollBound)
 *   peers           the distinct ranks one rank sends to in its all-reduce (CollPeersFn)
 *   summary         one line for `arsim list algorithms`
 *
 * The functions are declared by coll/collalgo.h; sim/coll/collalgo.c
 * holds the rows as data. docs/dev/add-an-algorithm.md walks through
 * adding one. */
#define COLL_ALGO_TABLE(X)                                                                                             \
    X(RING, "ring", NESTABLE, COLL_FIT_ANY, RUNS(collgen_ring, collgen_ring_max),                                      \
      RUNS(coll_gen_ring_reduce_scatter, collgen_ring_max), RUNS(coll_gen_ring_all_gather, collgen_ring_max),          \
      RUNS(collgen_chain_broadcast, collgen_whole_max), collcost_ring, COLL_BOUND_ALWAYS, collgen_ring_peers,          \
      "reduce-scatter + all-gather around a ring: 2(p-1) steps, bandwidth-optimal")                                    \
    X(BUTTERFLY, "butterfly", NESTABLE, COLL_FIT_ANY, RUNS(collgen_butterfly, collgen_whole_max), NONE, NONE, NONE,    \
      collcost_butterfly, COLL_BOUND_ALWAYS, collgen_log_peers,                                                        \
      "recursive doubling, whole vector every step: log2(p) steps, latency-optimal")                                   \
    X(RABENSEIFNER, "rabenseifner", NESTABLE, COLL_FIT_ANY, RUNS(collgen_rabenseifner, collgen_rabenseifner_max),      \
      NONE, NONE, NONE, collcost_rabenseifner, COLL_BOUND_ALWAYS, collgen_log_peers,                                   \
      "recursive-halving reduce-scatter + recursive-doubling all-gather: 2 log2(p) steps, bandwidth-optimal")          \
    X(TREE, "tree", NESTABLE, COLL_FIT_ANY, RUNS(collgen_tree, collgen_whole_max), NONE, NONE,                         \
      RUNS(collgen_tree_broadcast, collgen_whole_max), collcost_tree, COLL_BOUND_POW2, collgen_log_peers,              \
      "binomial reduce to rank 0 + binomial broadcast: 2 log2(p) steps of the whole vector")                           \
    X(HIERARCHICAL, "hierarchical", OUTER, COLL_FIT_NODES, RUNS(collgen_hierarchical, collgen_hierarchical_max),       \
      RUNS(collgen_hierarchical_reduce_scatter, collgen_hierarchical_max),                                             \
      RUNS(collgen_hierarchical_all_gather, collgen_hierarchical_gather_max), NONE, collcost_hierarchical,             \
      COLL_BOUND_ALWAYS, collgen_hierarchical_peers,                                                                   \
      "intra-node reduce-scatter, inter-node all-reduce (the policy's inter), intra-node all-gather")                  \
    X(TORUS2D, "torus2d", NESTABLE, COLL_FIT_TORUS, RUNS(collgen_torus2d, collgen_torus2d_max), NONE, NONE, NONE,      \
      collcost_torus2d, COLL_BOUND_ALWAYS, collgen_torus2d_peers,                                                      \
      "ring reduce-scatter along X, all-reduce along Y, all-gather along X of a 2D torus")

#define COLL_ALGO_ENUM(ID, ...) COLL_##ID,
typedef enum { COLL_ALGO_TABLE(COLL_ALGO_ENUM) COLL_NALGOS } CollAlgo;
#undef COLL_ALGO_ENUM

/* The names as one space-separated string constant, for option tables:
 * every algorithm, and those that may be hierarchical's inter-node one. */
#define COLL_ALGO_WORD(ID, name, ...) " " name
#define COLL_IF_NESTABLE(s) s
#define COLL_IF_OUTER(s)
#define COLL_INTER_WORD(ID, name, nest, ...) COLL_IF_##nest(" " name)
#define COLL_ALGO_WORDS (&(COLL_ALGO_TABLE(COLL_ALGO_WORD))[1])
#define COLL_INTER_WORDS (&(COLL_ALGO_TABLE(COLL_INTER_WORD))[1])

/* Where an algorithm's cost (coll_cost) is a lower bound of its
 * simulated time on an idle network. */
typedef enum {
    COLL_BOUND_ALWAYS,   /* on any p */
    COLL_BOUND_POW2,     /* only when p is a power of two (elsewhere an upper bound) */
} CollBound;

/* Where an algorithm runs. */
typedef enum {
    COLL_FIT_ANY,      /* any cluster */
    COLL_FIT_NODES,    /* nodes of more than one GPU (gpus_per_node > 1) */
    COLL_FIT_TORUS,    /* a torus2d topology */
} CollFit;

/* The collectives (the table's cells, in this order). All-reduce runs
 * every algorithm; the others run the algorithms whose row has a cell
 * for them (coll_algo_runs; coll_build refuses the rest):
 *   reduce-scatter  every rank ends with its owned range (coll_owned_range)
 *                   summed over all ranks. ring: block i of an even
 *                   p-split ((p-1)/p of the vector sent per rank);
 *                   hierarchical: a ring reduce-scatter inside each node
 *                   of G ranks, then an all-reduce of each local block
 *                   with prm.inter among the ranks of that local index
 *                   (sharded inside a node, replicated across nodes)
 *   all-gather      every rank starts with its owned range, every rank
 *                   ends with the whole vector. ring: (p-1)/p sent per
 *                   rank; hierarchical: a ring all-gather inside each node
 *   broadcast       every rank ends with rank 0's vector. tree: MPICH's
 *                   binomial broadcast; ring: a chain 0 -> 1 -> ... -> p-1
 *                   of whole vectors */
typedef enum { COLL_OP_ALLREDUCE, COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER, COLL_OP_BROADCAST, COLL_NOPS } CollOp;

const char *coll_op_name(CollOp o);   /* "all-reduce", "reduce-scatter", "all-gather", "broadcast" */

const char *coll_algo_name(CollAlgo a);
bool coll_algo_parse(const char *name, CollAlgo *out);
/* The row's one-line summary ("?" for no algorithm). */
const char *coll_algo_summary(CollAlgo a);
/* Whether a may be hierarchical's inter-node algorithm. */
bool coll_algo_nestable(CollAlgo a);
/* Where a runs. */
CollFit coll_algo_fit(CollAlgo a);
/* Whether a runs on a cluster of gpus_per_node ranks per node, on a torus2d
 * topology or not. */
bool coll_algo_fits(CollAlgo a, int gpus_per_node, bool torus);
/* What a cluster needs for a to fit, in words ("gpus_per_node > 1"), or
 * NULL when a fits any. */
const char *coll_algo_needs(CollAlgo a);
/* Whether coll_cost of a on p ranks bounds its simulated time from below. */
bool coll_algo_cost_bounds(CollAlgo a, int p);
/* Whether a's table row has a generator for collective op. */
bool coll_algo_runs(CollAlgo a, CollOp op);
/* The names, for messages (g_free): every algorithm's (only the nestable
 * ones with inter_only), sep between two names and last before the last,
 * e.g. (false, ", ", " or ") "ring, butterfly, ... or torus2d". */
char *coll_algo_list(bool inter_only, const char *sep, const char *last);
/* The same of the algorithms that run op, e.g. "ring or hierarchical". */
char *coll_op_algo_list(CollOp op, const char *sep, const char *last);

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
    CollOp op;           /* the collective coll_gen_step runs (coll_params_init: all-reduce) */
    int gpus_per_node;   /* hierarchical: ranks per node (consecutive ranks), >= 1; must divide p */
    CollAlgo inter;      /* hierarchical: the inter-node algorithm */
    int torus_x;         /* torus2d: X (ranks r and r+1 are X neighbours); X*Y must equal p */
    int torus_y;
    int group;           /* > 1: the collective runs at once on each of p / group disjoint groups of `group`
                          * ranks, each group on its own vector, peers inside the group only (an algorithm
                          * that may be hierarchical's inter-node one, torus2d's dimensions those of the
                          * group; group divides p); 0 or 1: on all p ranks */
    bool strided;        /* group: member m of group j is rank j + m p / group, the ranks that hold the same
                          * shard when shards are spread over p / group consecutive ranks (HSDP's replica
                          * groups); false: rank j group + m, consecutive (a node) */
} CollParams;

typedef struct {
    int p;               /* ranks, >= 1 */
    uint64_t count;      /* elements in the vector */
    CollAlgo algo;       /* generated schedules: the algorithm (set by coll_build) */
    CollParams prm;      /* generated schedules: the parameters, torus dimensions resolved */
    GArray **steps;      /* explicit schedules: p arrays of CollStep, in execution order; owned.
                          * NULL once coll_build made the schedule a generated one */
} CollSchedule;

void coll_params_init(CollParams *prm);   /* all-reduce, G = 1, inter = ring, torus 0x0 (auto square), one group */

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

/* The generator: rank's step k of algorithm a's collective prm->op (the
 * table row's generator of it; prm NULL: all-reduce) on p ranks and count
 * elements, prm as coll_build resolved it (torus dimensions set). Returns
 * the rank's number of steps; fills *out only when k is below it (pass
 * UINT32_MAX to count). Pure: no allocation, no state. */
uint32_t coll_gen_step(CollAlgo a, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                       CollStep *out);
/* The largest message of that schedule, in elements (closed form: the
 * row's max_send of prm->op; 0 where a does not run it). */
uint64_t coll_gen_max_send(CollAlgo a, const CollParams *prm, int p, uint64_t count);

/* A generator of one collective, as the table's rows name them: member
 * i's step k of a p-member group working on elements [off, off + count),
 * peers as member indices 0..p-1. Returns the member's number of steps;
 * fills *out only when k is below it (UINT32_MAX counts). Pure. */
typedef uint32_t CollWalkFn(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                            CollStep *out);
/* coll_gen_step of collective op, whatever prm->op says; 0 steps where a
 * does not run op (coll_algo_runs). */
uint32_t coll_gen_op_step(CollAlgo a, CollOp op, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                          CollStep *out);
/* The public reduce-scatter and all-gather: one ring pass each (p-1
 * steps); member i ends with (starts from) block i of coll_ring_block. */
CollWalkFn coll_gen_ring_reduce_scatter;
CollWalkFn coll_gen_ring_all_gather;

/* Element range [*off, *off + *len) that member i of a p-group holds after
 * a ring reduce-scatter of [off, off+count) (block i of an even split). */
void coll_ring_block(int p, int i, uint64_t off, uint64_t count, uint64_t *boff, uint64_t *blen);

/* The range rank r holds summed after s's reduce-scatter, or holds
 * before its all-gather: its block of an even p-split (ring), of a
 * G-split by its index inside its node (hierarchical), of a split over
 * its group by its place in it (prm.group); the whole vector for the
 * other collectives. */
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

/* α-β-γ closed-form time of algorithm a's all-reduce on p ranks and n bytes, as in
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

/* The payload-free control messages (α each) one message of m bytes
 * waits for under c: a rendezvous message (m >= eager limit) 2 for the
 * handshake (rtt) and 2 for the acknowledgement (ack), as the executor
 * (collexec.h) sends them. The one rule for simulation and calibration. */
int coll_msg_controls(const CollCostModel *c, double m);
/* The time of one message of m bytes: α + mβ + 2o + coll_msg_controls·α. */
double coll_msg_time(const CollCostModel *c, double m);

/* coll_cost with the protocol (collcost.c states the formulas); coll_cost
 * is this with o = 0 and every message eager. */
double coll_cost_model(CollAlgo a, const CollParams *prm, int p, double n, const CollCostModel *c);

#endif
