/* colltable — checking an explicit schedule's table; see colltable.h. */
#include "coll/colltable.h"

#include <stdlib.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorted, distinct receive peers of each rank of an explicit schedule,
 * concatenated in *pool from (*start)[r] to (*start)[r + 1]. */
static void recv_peer_tables(const CollSchedule *s, GArray *pool, uint32_t *start)
{
    for (int r = 0; r < s->p; r++) {
        start[r] = pool->len;
        for (guint i = 0; i < s->steps[r]->len; i++) {
            const CollStep *st = &g_array_index(s->steps[r], CollStep, i);
            if (st->recv_peer >= 0)
                g_array_append_val(pool, st->recv_peer);
        }
        uint32_t n = pool->len - start[r], u = 0;
        int32_t *t = n ? &g_array_index(pool, int32_t, start[r]) : NULL;
        if (n)
            qsort(t, n, sizeof *t, cmp_i32);
        for (uint32_t i = 0; i < n; i++)
            if (u == 0 || t[i] != t[u - 1])
                t[u++] = t[i];
        g_array_set_size(pool, start[r] + u);
    }
    start[s->p] = pool->len;
}

bool colltable_check(const CollSchedule *s, char **err)
{
    int p = s->p;
    GArray *pool = g_array_new(FALSE, FALSE, sizeof(int32_t));
    uint32_t *start = g_new(uint32_t, (gsize)p + 1);
    bool ok = true;
    for (int r = 0; r < p && ok; r++)
        for (guint i = 0; i < s->steps[r]->len && ok; i++) {
            const CollStep *st = &g_array_index(s->steps[r], CollStep, i);
            if (st->send_peer >= p || st->recv_peer >= p || st->send_peer < -1 || st->recv_peer < -1 ||
                (st->send_peer >= 0 && st->send_len > s->count) || (st->recv_peer >= 0 && st->recv_len > s->count)) {
                *err = g_strdup_printf("collective: rank %d step %u has a peer outside 0..%d or too many elements",
                                       r, i, p - 1);
                ok = false;
            }
        }
    if (ok)
        recv_peer_tables(s, pool, start);
    for (int r = 0; r < p && ok; r++)
        for (guint i = 0; i < s->steps[r]->len && ok; i++) {
            int32_t peer = g_array_index(s->steps[r], CollStep, i).send_peer;
            if (peer < 0)
                continue;
            const int32_t *t = &g_array_index(pool, int32_t, 0);
            if (!bsearch(&(int32_t){r}, t + start[peer], start[peer + 1] - start[peer], sizeof *t, cmp_i32)) {
                *err = g_strdup_printf("collective: rank %d sends to rank %d, which never receives from it", r,
                                       peer);
                ok = false;
            }
        }
    g_free(start);
    g_array_free(pool, TRUE);
    return ok;
}
