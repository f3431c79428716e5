/* shardsched — the collectives FSDP issues per iteration; see shardsched.h. */
#include "train/shardsched.h"

#include <string.h>

static const char *const prefetch_names[] = {"none", "backward_pre", "backward_post"};

const char *shard_prefetch_name(ShardPrefetch p)
{
    return (size_t)p < G_N_ELEMENTS(prefetch_names) ? prefetch_names[p] : "?";
}

bool shard_prefetch_parse(const char *name, ShardPrefetch *out)
{
    for (size_t p = 0; p < G_N_ELEMENTS(prefetch_names); p++)
        if (strcmp(name, prefetch_names[p]) == 0) {
            *out = (ShardPrefetch)p;
            return true;
        }
    return false;
}

/* A free the limiter may wait for: a unit's compute in one direction. */
typedef struct {
    guint unit;
    bool backward;
} Free;

typedef struct {
    const ShardSchedConfig *c;
    GArray *ops;            /* ShardOp, the result */
    GArray *frees;          /* Free, pending in the limiter's queue, oldest first */
    bool *gathered[2];      /* [backward][unit]: its all-gather was issued */
} Walk;

static void issue(Walk *w, ShardOpKind kind, guint unit, bool backward, ShardHook hook, guint at)
{
    ShardOp op = {.kind = kind, .unit = unit, .backward = backward, .hook = hook, .at = at, .wait_unit = -1};
    if (kind == SHARD_OP_ALL_GATHER) {
        if (w->gathered[backward][unit])
            return;
        w->gathered[backward][unit] = true;
        /* torch's _FreeEventQueue.dequeue_if_needed: with 2 frees pending,
         * wait for the oldest before the all-gather */
        if (w->c->limit_all_gathers && w->frees->len >= 2) {
            Free f = g_array_index(w->frees, Free, 0);
            g_array_remove_index(w->frees, 0);
            op.wait_unit = (int)f.unit;
            op.wait_backward = f.backward;
        }
    }
    g_array_append_val(w->ops, op);
}

static void free_unit(Walk *w, guint unit, bool backward)
{
    if (!w->c->limit_all_gathers)
        return;
    Free f = {unit, backward};
    g_array_append_val(w->frees, f);
}

static bool needs_backward_gather(const Walk *w, guint u, guint n)
{
    if (u == 0)
        return w->c->reshard_root;
    return !(w->c->keep_last && u == n - 1);
}

static void forward(Walk *w, guint n)
{
    for (guint u = 0; u < n; u++) {
        issue(w, SHARD_OP_ALL_GATHER, u, false, SHARD_PRE_FORWARD, u);
        if (w->c->forward_prefetch && u + 1 < n)
            issue(w, SHARD_OP_ALL_GATHER, u + 1, false, SHARD_PRE_FORWARD, u);
        if (needs_backward_gather(w, u, n) && u > 0)
            free_unit(w, u, false);
    }
    if (w->c->reshard_root)
        free_unit(w, 0, false);
}

/* Backward: the root's pre-backward, units n-1 .. 1, the root's
 * post-backward. The prefetch target of unit u is u - 1 (the root only
 * when it was resharded). A unit kept after forward (the root, the last
 * unit with keep_last) is not gathered again. */
static void backward(Walk *w, guint n)
{
    if (needs_backward_gather(w, 0, n))
        issue(w, SHARD_OP_ALL_GATHER, 0, true, SHARD_PRE_BACKWARD, 0);
    for (guint u = n; u-- > 0;) {
        bool next = u > 0 && needs_backward_gather(w, u - 1, n);
        if (u > 0) {
            if (needs_backward_gather(w, u, n))
                issue(w, SHARD_OP_ALL_GATHER, u, true, SHARD_PRE_BACKWARD, u);
            if (next && w->c->backward_prefetch == SHARD_PREFETCH_PRE)
                issue(w, SHARD_OP_ALL_GATHER, u - 1, true, SHARD_PRE_BACKWARD, u);
        }
        free_unit(w, u, true);
        if (next && w->c->backward_prefetch == SHARD_PREFETCH_POST)
            issue(w, SHARD_OP_ALL_GATHER, u - 1, true, SHARD_POST_BACKWARD, u);
        issue(w, SHARD_OP_REDUCE_SCATTER, u, true, SHARD_POST_BACKWARD, u);
        if (w->c->hybrid)
            issue(w, SHARD_OP_ALL_REDUCE, u, true, SHARD_POST_BACKWARD, u);
    }
}

GArray *shardsched_ops(const GArray *units, const ShardSchedConfig *c)
{
    guint n = units->len;
    Walk w = {.c = c, .ops = g_array_new(FALSE, FALSE, sizeof(ShardOp)),
              .frees = g_array_new(FALSE, FALSE, sizeof(Free)),
              .gathered = {g_new0(bool, n), g_new0(bool, n)}};
    forward(&w, n);
    backward(&w, n);
    g_array_free(w.frees, TRUE);
    g_free(w.gathered[0]);
    g_free(w.gathered[1]);
    return w.ops;
}
