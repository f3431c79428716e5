/* mbmodes — mpibench's modes: the option set, the run context and the
 * mode table that main() dispatches through.
 *
 * A mode is one row of mbmodes_table: its name, its own options (parsed
 * before MPI_Init), a check of the whole option set (before MPI_Init, so
 * bad input never starts MPI), and a collective run function that appends
 * its cases to the context. `all` runs every row marked in_all, in table
 * order. A new mode is a new row: add its fields to MbmodesOpts, a
 * parse_opt for its flags, a check and a run, and it shows up in --help,
 * in parsing and (if in_all) in `all`. `iteration --config CONFIG
 * --policy NAME` (mbiter.h) is such a row, not in `all`: it needs a
 * scenario.
 */
#ifndef MBMODES_H
#define MBMODES_H

#include "coll/coll.h"
#include "mbcase.h"
#include "mbiter.h"

#include <glib.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

/* exchange --late: which rank of each pair starts late. */
typedef enum {
    MBMODES_LATE_SECOND,        /* its higher rank (the default) */
    MBMODES_LATE_FIRST,         /* its lower rank */
    MBMODES_LATE_BOTH,          /* each late case twice, the higher rank late, then the lower (at delay 0, once) */
} MbmodesLate;

typedef struct {
    const char *mode;           /* the mode name from the command line; borrowed from argv */
    const char *out;            /* --out FILE, or NULL for no file; borrowed from argv */
    GArray *sizes;              /* --sizes as guint64 bytes (owned), or NULL for each mode's default */
    GArray *delays;             /* exchange: --delays as double seconds (owned), or NULL for 2 ms alone */
    bool all_pairs;             /* exchange: --pairs all: every rank 2j with 2j+1 at once (else one pair) */
    MbmodesLate late;           /* exchange: --late: which rank of a pair starts late */
    bool quiet;                 /* --quiet: no per-case lines on stdout */
    MbcaseRule rule;            /* --warmup, --min-reps, --max-reps, --tol, --case-time, --timeout, --poll */
    bool algo_given;            /* --algo appeared */
    bool algo_mpi;              /* allreduce: run the library's own all-reduce */
    bool mpi_nonblocking;       /* allreduce --mpi-call iallreduce: the library's all-reduce as MPI_Iallreduce,
                                 * waited for as --poll says (false: MPI_Allreduce, which waits as the
                                 * library does) */
    bool algos[COLL_NALGOS];    /* allreduce: run arsim's schedule of each marked algorithm */
    CollAlgo inter;             /* --inter: hierarchical's inter-node algorithm (default ring) */
    int gpus_per_node;          /* --gpus-per-node: hierarchical's G; 0 = ranks per host if uniform */
    char why[160];              /* room for a parse message made at run time (names from coll.h's table) */
    MbiterOpts iter;            /* iteration: --config, --policy, --batch, --scale, --iterations, --set */
} MbmodesOpts;

typedef struct {
    const MbmodesOpts *opt;     /* the options; borrowed */
    MPI_Comm comm;              /* all ranks */
    int rank, p;                /* this rank and the number of ranks (p >= 1) */
    int *node;                  /* p host indices into host_names, by rank; owned */
    GPtrArray *host_names;      /* H distinct processor names (char*, owned), in order of first rank */
    int ranks_per_host;         /* G if every host runs the same number of ranks, else 0 */
    bool consecutive;           /* every host's ranks form one consecutive block */
    MbcaseWatchdog *wd;         /* the hard per-case timeout; borrowed */
    GArray *cases;              /* MbcaseResult appended by the modes (identical on every rank) */
    bool all_verified;          /* false once any checked result was wrong */
    bool bad_input;             /* an option did not fit the run (e.g. G does not divide P); exit 2 */
} MbmodesCtx;

typedef struct {
    const char *name;           /* mode name on the command line */
    const char *summary;        /* one line for --help */
    /* The mode's own option FLAG VALUE: 1 consumed, 0 not this mode's
     * flag, -1 bad value (*why: "what is wrong; what is expected"). May be NULL. */
    int (*parse_opt)(MbmodesOpts *o, const char *flag, const char *val, const char **why);
    /* Whole-option check before MPI_Init, which may also prepare what the
     * run needs without MPI (iteration loads its scenario here): false
     * with "--flag: what is wrong; what is expected" in msg. May be NULL. */
    bool (*check)(MbmodesOpts *o, char *msg, size_t n);
    void (*run)(MbmodesCtx *c);  /* collective: measures and appends cases */
    bool in_all;                 /* `all` runs it */
} MbmodesMode;

/* The modes, ending with a row whose name is NULL. */
extern const MbmodesMode mbmodes_table[];

const MbmodesMode *mbmodes_find(const char *name);

/* Options with their defaults (no sizes, every allreduce algorithm off). */
void mbmodes_opts_init(MbmodesOpts *o);
void mbmodes_opts_clear(MbmodesOpts *o);

/* Gathers processor names and fills node, host_names, ranks_per_host and
 * consecutive. Collective. */
void mbmodes_ctx_init(MbmodesCtx *c, const MbmodesOpts *o, MPI_Comm comm, MbcaseWatchdog *wd);
void mbmodes_ctx_clear(MbmodesCtx *c);

#endif
