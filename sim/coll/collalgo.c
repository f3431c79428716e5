/* collalgo — the rows of coll.h's algorithm table as data, and what is
 * read off them: names, parsing, lists of names, where each fits; see
 * collalgo.h.
 */
#include "coll/collalgo.h"

#define COLL_IS_NESTABLE true
#define COLL_IS_OUTER false
#define COLLALGO_ROW(ID, name_, nest, fit_, allreduce, rs, ag, max, cost_, bound_, peers_, summary_)                \
    [COLL_##ID] = {.name = name_, .nestable = COLL_IS_##nest, .fit = fit_, .walk = {allreduce, rs, ag},            \
                   .max_send = max, .cost = cost_, .bound = bound_, .peers = peers_, .summary = summary_},
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

char *coll_algo_list(bool inter_only, const char *sep, const char *last)
{
    GString *s = g_string_new(NULL);
    int n = 0, total = 0;
    for (int a = 0; a < COLL_NALGOS; a++)
        total += !inter_only || table[a].nestable;
    for (int a = 0; a < COLL_NALGOS; a++) {
        if (inter_only && !table[a].nestable)
            continue;
        if (n > 0)
            g_string_append(s, n == total - 1 ? last : sep);
        g_string_append(s, table[a].name);
        n++;
    }
    return g_string_free(s, FALSE);
}
