/* collturn — duplex half's turns; see collturn.h. */
#include "coll/collturn.h"

/* One direction: what is in flight from a to b, and who waits to go back. */
typedef struct {
    uint32_t inflight;   /* messages from a to b in the network */
    GArray *waiting;     /* uint64_t sender ids to go from b to a once inflight is 0; owned */
} Turn;

struct CollTurns {
    GHashTable *dir;     /* gint64 (a << 32 | b) -> Turn*; keys and values owned */
};

static void turn_free(void *p)
{
    Turn *t = p;
    g_array_free(t->waiting, TRUE);
    g_free(t);
}

CollTurns *collturn_new(void)
{
    CollTurns *t = g_new(CollTurns, 1);
    t->dir = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, turn_free);
    return t;
}

void collturn_free(CollTurns *t)
{
    if (!t)
        return;
    g_hash_table_destroy(t->dir);
    g_free(t);
}

/* The Turn from a to b, created if `make` (else NULL when absent). */
static Turn *turn_of(CollTurns *t, int32_t a, int32_t b, bool make)
{
    gint64 key = (gint64)(((uint64_t)(uint32_t)a << 32) | (uint32_t)b);
    Turn *d = g_hash_table_lookup(t->dir, &key);
    if (!d && make) {
        d = g_new0(Turn, 1);
        d->waiting = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(t->dir, g_memdup2(&key, sizeof key), d);
    }
    return d;
}

bool collturn_wait(CollTurns *t, int32_t a, int32_t b, uint64_t id)
{
    Turn *back = turn_of(t, b, a, false);
    if (!back || back->inflight == 0)
        return false;
    g_array_append_val(back->waiting, id);
    return true;
}

void collturn_add(CollTurns *t, int32_t a, int32_t b)
{
    turn_of(t, a, b, true)->inflight++;
}

void collturn_delivered(CollTurns *t, int32_t a, int32_t b, GArray *ready)
{
    Turn *d = turn_of(t, a, b, false);
    g_return_if_fail(d && d->inflight > 0);
    if (--d->inflight > 0)
        return;
    g_array_append_vals(ready, d->waiting->data, d->waiting->len);
    g_array_set_size(d->waiting, 0);
}
