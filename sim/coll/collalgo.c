/* collalgo — the rows of coll.h's algorithm table as data, and what is
 * read off them: names (of the collectives too), parsing, lists of names,
 * where each fits; see collalgo.h.
 */
#include "coll/collalgo.h"

#define COLL_IS_NESTABLE true
#define COLL_IS_OUTER false
#define COLLALGO_WALK_RUNS(walk, max) walk
#define COLLALGO_WALK_NONE NULL
#define COLLALGO_MAX_RUNS(walk, max) max
#define COLLALGO_MAX_NONE NULL
#define COLLALGO_ROW(ID, name_, nest, fit_, ar, rs, ag, bc, cost_, bound_, peers_, summary_)                         \
    [COLL_##ID] = {.name = name_,                                                                                      \
                   .nestable = COLL_IS_##nest,                                                                         \
                   .fit = fit_,                                                                                        \
                   .walk = {COLLALGO_WALK_##ar, COLLALGO_WALK_##rs, COLLALGO_WALK_##ag, COLLALGO_WALK_##bc},           \
                   .max_send = {COLLALGO_MAX_##ar, COLLALGO_MAX_##rs, COLLALGO_MAX_##ag, COLLALGO_MAX_##bc},           \
                   .cost = cost_,                                                                                      \
                   .bound = bound_,                                                                                    \
                   .peers = peers_,                                                                                    \
                   .summary = summary_},
static const CollAlgoInfo table[COLL_NALGOS] = {COLL_ALGO_TABLE(COLLALGO_ROW)};
#undef COLLALGO_ROW

const CollAlgoInfo *collalgo_info(CollAlgo a)
{
    return &table[a];
}

const char *coll_algo_name(CollAlgo a)
{
    return (unsigned)a < COLL_NALGOS ? table[a].name : "?";
}

const char *coll_algo_summary(CollAlgo a)
{
    return (unsigned)a < COLL_NALGOS ? table[a].summary : "?";
}

bool coll_algo_parse(const char *name, CollAlgo *out)
{
    for (int a = 0; a < COLL_NALGOS; a++) {
        if (name && g_strcmp0(name, table[a].name) == 0) {
            *out = (CollAlgo)a;
            return true;
        }
    }
    return false;
}

bool coll_algo_nestable(CollAlgo a)
{
    return (unsigned)a < COLL_NALGOS && table[a].nestable;
}

CollFit coll_algo_fit(CollAlgo a)
{
    return (unsigned)a < COLL_NALGOS ? table[a].fit : COLL_FIT_ANY;
}

bool coll_algo_fits(CollAlgo a, int gpus_per_node, bool torus)
{
    switch (coll_algo_fit(a)) {
    case COLL_FIT_NODES:
        return gpus_per_node > 1;
    case COLL_FIT_TORUS:
        return torus;
    default:
        return true;
    }
}

const char *coll_algo_needs(CollAlgo a)
{
    switch (coll_algo_fit(a)) {
    case COLL_FIT_NODES:
        return "gpus_per_node > 1";
    case COLL_FIT_TORUS:
        return "a torus2d topology";
    default:
        return NULL;
    }
}

bool coll_algo_cost_bounds(CollAlgo a, int p)
{
    bool pow2 = p > 0 && (p & (p - 1)) == 0;
    return (unsigned)a < COLL_NALGOS && (table[a].bound == COLL_BOUND_ALWAYS || pow2);
}

bool coll_algo_runs(CollAlgo a, CollOp op)
{
    return (unsigned)a < COLL_NALGOS && (unsigned)op < COLL_NOPS && table[a].walk[op];
}

static const char *const op_names[COLL_NOPS] = {
    [COLL_OP_ALLREDUCE] = "all-reduce",
    [COLL_OP_REDUCE_SCATTER] = "reduce-scatter",
    [COLL_OP_ALLGATHER] = "all-gather",
    [COLL_OP_BROADCAST] = "broadcast",
};

const char *coll_op_name(CollOp o)
{
    return (unsigned)o < COLL_NOPS ? op_names[o] : "?";
}

/* The names of the algorithms that run op (only the nestable ones with
 * inter_only), joined as coll_algo_list says. */
static char *list_names(bool inter_only, CollOp op, const char *sep, const char *last)
{
    GString *s = g_string_new(NULL);
    int n = 0, total = 0;
    for (int a = 0; a < COLL_NALGOS; a++)
        total += (!inter_only || table[a].nestable) && table[a].walk[op];
    for (int a = 0; a < COLL_NALGOS; a++) {
        if ((inter_only && !table[a].nestable) || !table[a].walk[op])
            continue;
        if (n > 0)
            g_string_append(s, n == total - 1 ? last : sep);
        g_string_append(s, table[a].name);
        n++;
    }
    return g_string_free(s, FALSE);
}

char *coll_algo_list(bool inter_only, const char *sep, const char *last)
{
    return list_names(inter_only, COLL_OP_ALLREDUCE, sep, last);
}

char *coll_op_algo_list(CollOp op, const char *sep, const char *last)
{
    return (unsigned)op < COLL_NOPS ? list_names(false, op, sep, last) : g_strdup("");
}
