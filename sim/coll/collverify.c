/* collverify — coll_verify: runs a schedule on real vectors of doubles.
 *
 * Rank r's element i starts as i*p + r + 1: unique to (r, i), and every
 * partial sum is an integer below 2^53, so sums are exact in any order and
 * the result must equal i*p*p + p(p+1)/2 bit for bit. Execution follows
 * coll.h's semantics: at a step's start its send is snapshotted into the
 * FIFO channel (src, dst) (sends never block, as in the simulator where a
 * message arriving before its receive is posted counts as arrived); the
 * step ends once the head of channel (recv_peer, self) can be consumed.
 * Ranks are advanced round-robin until none can move. Steps come from
 * coll_step(), so the generator the simulator runs is the one checked.
 */
#include "coll/coll.h"

#include <string.h>

typedef struct {
    uint64_t len;   /* elements carried */
    double *vals;   /* len values snapshotted at the sending step's start; owned (NULL if len 0) */
} VerifyMsg;

typedef struct {
    uint32_t cur;   /* index of the rank's running step; nsteps when done */
    uint32_t nsteps;/* the rank's steps (coll_nsteps) */
    bool begun;     /* the running step's send has been posted */
} VerifyRank;

static void msg_free(gpointer m)
{
    VerifyMsg *vm = m;
    g_free(vm->vals);
    g_free(vm);
}

static void queue_free(gpointer q)
{
    g_queue_free_full(q, msg_free);
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t count)
{
    return off <= count && len <= count - off;
}

/* The channel from src to dst, created on first use. */
static GQueue *channel(GHashTable *ch, int p, int src, int dst)
{
    gint64 key = (gint64)src * p + dst;
    GQueue *q = g_hash_table_lookup(ch, &key);
    if (!q) {
        gint64 *k = g_new(gint64, 1);
        *k = key;
        q = g_queue_new();
        g_hash_table_insert(ch, k, q);
    }
    return q;
}

/* Advances rank r as far as it can. Returns -1 on an error (*err set),
 * else 1 if it moved, 0 if not. */
static int advance(const CollSchedule *s, double *data, VerifyRank *vr, GHashTable *ch, int r, char **err)
{
    int p = s->p, moved = 0;
    double *mine = data + (size_t)r * s->count;
    while (vr->cur < vr->nsteps) {
        CollStep step;
        coll_step(s, r, vr->cur, &step);
        const CollStep *st = &step;
        if (!vr->begun) {
            if (st->send_peer >= p || st->recv_peer >= p || st->send_peer < -1 || st->recv_peer < -1 ||
                (st->send_peer >= 0 && !range_ok(st->send_off, st->send_len, s->count)) ||
                (st->recv_peer >= 0 && !range_ok(st->recv_off, st->recv_len, s->count))) {
                *err = g_strdup_printf("rank %d step %u: peer or element range out of bounds (p %d, count %" G_GUINT64_FORMAT ")",
                                       r, vr->cur, p, (guint64)s->count);
                return -1;
            }
            if (st->send_peer >= 0) {
                VerifyMsg *m = g_new0(VerifyMsg, 1);
                m->len = st->send_len;
                if (m->len)
                    m->vals = g_memdup2(mine + st->send_off, m->len * sizeof(double));
                g_queue_push_tail(channel(ch, p, r, st->send_peer), m);
            }
            vr->begun = true;
            moved = 1;
        }
        if (st->recv_peer >= 0) {
            GQueue *q = channel(ch, p, st->recv_peer, r);
            VerifyMsg *m = g_queue_pop_head(q);
            if (!m)
                return moved;
            if (m->len != st->recv_len) {
                *err = g_strdup_printf("rank %d step %u receives %" G_GUINT64_FORMAT " elements from rank %d, "
                                       "which sent %" G_GUINT64_FORMAT "; expected equal lengths",
                                       r, vr->cur, (guint64)st->recv_len, st->recv_peer, (guint64)m->len);
                msg_free(m);
                return -1;
            }
            double *dst = mine + st->recv_off;
            if (st->reduce) {
                for (uint64_t i = 0; i < m->len; i++)
                    dst[i] += m->vals[i];
            } else if (m->len) {
                memcpy(dst, m->vals, m->len * sizeof(double));
            }
            msg_free(m);
        }
        vr->cur++;
        vr->begun = false;
        moved = 1;
    }
    return moved;
}

/* The value element i must end with on rank r: the sum over the ranks
 * of r's group (every rank, or prm.group's) of their starting values
 * (all-reduce, reduce-scatter), the sum itself (an all-gather starts from
 * it in each rank's owned range), the group's first rank's starting value
 * (broadcast). Members are base + stride m, m < g. */
static double verify_want(const CollSchedule *s, uint64_t i, int r)
{
    double p = s->p, g = p, base = 0, stride = 1;
    if (s->prm.group > 1) {
        g = s->prm.group;
        stride = s->prm.strided ? p / g : 1;
        base = s->prm.strided ? r % (s->p / s->prm.group) : r / s->prm.group * s->prm.group;
    }
    if (s->prm.op == COLL_OP_BROADCAST)
        return (double)i * p + base + 1;
    return g * ((double)i * p + base + 1) + stride * g * (g - 1) / 2.0;
}

/* Rank r's starting vector: (i*p + r + 1) for the reductions, the wanted
 * sum in its owned range and -1 elsewhere (all-gather), i*p + r + 1
 * (broadcast: only rank 0's reaches the others). */
static void verify_start(const CollSchedule *s, double *data, int r)
{
    uint64_t lo, n;
    coll_owned_range(s, r, &lo, &n);
    for (uint64_t i = 0; i < s->count; i++) {
        double v = (double)i * s->p + r + 1;
        if (s->prm.op == COLL_OP_ALLGATHER)
            v = i >= lo && i < lo + n ? verify_want(s, i, r) : -1;
        data[(size_t)r * s->count + i] = v;
    }
}

/* After the run: every rank finished, every channel empty, every sum exact. */
static bool check_end(const CollSchedule *s, const double *data, const VerifyRank *vr, GHashTable *ch, char **err)
{
    int p = s->p;
    for (int r = 0; r < p; r++) {
        if (vr[r].cur < vr[r].nsteps) {
            CollStep st;
            coll_step(s, r, vr[r].cur, &st);
            *err = g_strdup_printf("deadlock: rank %d waits at step %u (of %u) for a message from rank %d",
                                   r, vr[r].cur, vr[r].nsteps, st.recv_peer);
            return false;
        }
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ch);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (!g_queue_is_empty(v)) {
            gint64 key = *(gint64 *)k;
            *err = g_strdup_printf("unmatched message: %u from rank %d to rank %d never received",
                                   g_queue_get_length(v), (int)(key / p), (int)(key % p));
            return false;
        }
    }
    for (int r = 0; r < p; r++) {
        uint64_t lo = 0, n = s->count;
        if (s->prm.op == COLL_OP_REDUCE_SCATTER)
            coll_owned_range(s, r, &lo, &n);
        for (uint64_t i = lo; i < lo + n; i++) {
            double want = verify_want(s, i, r), got = data[(size_t)r * s->count + i];
            if (got != want) {
                *err = g_strdup_printf("rank %d element %" G_GUINT64_FORMAT " is %.17g; expected the sum %.17g",
                                       r, (guint64)i, got, want);
                return false;
            }
        }
    }
    return true;
}

bool coll_verify(const CollSchedule *s, char **err)
{
    int p = s->p;
    /* The largest sum is about count*p*p; keep it exact (< 2^53). */
    if ((double)s->count * p * p >= 9007199254740992.0 || (double)s->count * p > 1e9) {
        *err = g_strdup_printf("coll_verify: %d ranks x %" G_GUINT64_FORMAT " elements is too large to check exactly",
                               p, (guint64)s->count);
        return false;
    }
    double *data = g_new(double, (size_t)p * s->count + 1);
    for (int r = 0; r < p; r++)
        verify_start(s, data, r);
    VerifyRank *vr = g_new0(VerifyRank, p);
    for (int r = 0; r < p; r++)
        vr[r].nsteps = coll_nsteps(s, r);
    GHashTable *ch = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, queue_free);
    bool ok = true;
    for (int moved = 1; moved && ok;) {
        moved = 0;
        for (int r = 0; r < p && ok; r++) {
            int m = advance(s, data, &vr[r], ch, r, err);
            if (m < 0)
                ok = false;
            moved |= m > 0;
        }
    }
    if (ok)
        ok = check_end(s, data, vr, ch, err);
    g_hash_table_destroy(ch);
    g_free(vr);
    g_free(data);
    return ok;
}
