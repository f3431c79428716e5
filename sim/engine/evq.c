/* evq — event queue: a 4-ary min-heap of time buckets; see evq.h.
 *
 * Events that are due at the same time are very common in a simulated
 * collective (every rank of a symmetric schedule acts at once), so the
 * heap orders *buckets*, not events: a bucket is a FIFO of the events
 * pushed for one time, and the heap holds one entry per bucket, keyed by
 * (time, creation number of the bucket). A push finds the bucket of its
 * time in a small direct-mapped cache (time -> newest bucket of that
 * time) and appends in O(1); only a time not in the cache creates a bucket
 * and costs a heap push. A pop takes the head of the earliest bucket and
 * costs a heap pop only when that bucket runs empty.
 *
 * Order: events of one bucket run in push order (FIFO). Two buckets of
 * the same time can exist (the cache forgot the older one); the older
 * stops receiving events as soon as the newer is created, and the heap
 * key runs the older first, so equal times still pop in push order.
 *
 * A bucket's FIFO is a chain of chunks of EVQ_CHUNK consecutive slots
 * (fn, ctx, data, generation; 32 bytes, a chunk four aligned cache
 * lines), so walking a time's events reads memory in sequence. A slot
 * never moves while its event is pending, so a handle (slot + generation)
 * cancels in O(1): the slot becomes a tombstone (fn NULL) that pops skip;
 * a bucket counts its live events and leaves the heap, O(log n), when a
 * cancel or pop takes its last. Invariant: a bucket in use has a live
 * event at its head. Heap keys are one unsigned 128-bit integer
 * (time << 64 | bucket number) so sifting compares without branches on
 * ties.
 */
#include "engine/evq.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#define EVQ_ARITY 4u
#define EVQ_NONE UINT32_MAX
#define EVQ_CACHE_BITS 10u
#define EVQ_CACHE (1u << EVQ_CACHE_BITS)
#define EVQ_CHUNK_BITS 3u
#define EVQ_CHUNK (1u << EVQ_CHUNK_BITS)   /* slots a chunk */
#define EVQ_LAST (EVQ_CHUNK - 1u)          /* a chunk's last slot, as slot & EVQ_LAST */
#define EVQ_ALIGN 64u                      /* bytes; a cache line */
#define EVQ_HMAP_BITS 5u
#define EVQ_HMAP (1u << EVQ_HMAP_BITS)     /* entries of the hint table, > 2 * EVQ_HINTS: probes stay short */

typedef unsigned __int128 EvqKey;    /* time << 64 | bucket creation number */

typedef struct {
    EvqKey key;       /* the bucket's (time, creation number); unique */
    uint32_t bucket;  /* index in Evq.buckets */
} EvqEntry;

typedef struct {
    simtime_t t;      /* ps; due time of every event in the bucket */
    uint32_t head;    /* first live slot of the FIFO; EVQ_NONE only while the bucket is free */
    uint32_t tail;    /* last slot of the FIFO (live or a tombstone) */
    uint32_t live;    /* events of the FIFO neither run nor cancelled; > 0 while in use */
    uint32_t pos;     /* index in heap[] while in use; next free bucket when free */
} EvqBucket;

typedef struct {
    EvqFn fn;         /* action; NULL: free, run or cancelled */
    void *ctx;        /* first argument of fn */
    void *data;       /* second argument of fn */
    uint32_t gen;     /* generation; bumped each time the event runs or is cancelled */
    uint32_t hint;    /* index in Evq.hints of fn's entry when pushed (hint_of); valid where that entry's fn
                       * is still fn (then its hints are fn's), else none */
} EvqSlot;

typedef struct {
    uint32_t next;    /* in a FIFO: its next chunk (stale in the tail's chunk, never read there); free: next free chunk */
    uint32_t bucket;  /* in a FIFO: the bucket that owns it */
} EvqChunk;

typedef struct {
    EvqFn fn;         /* the action; NULL: an empty entry (its hints NULL) */
    EvqFn early;      /* its hint two pops ahead, or NULL (evq_set_hint) */
    EvqFn late;       /* its hint one pop ahead, or NULL */
} EvqHint;

typedef struct {
    simtime_t t;      /* time this entry maps */
    uint32_t bucket;  /* the newest bucket of time t, in use; EVQ_NONE: entry empty */
} EvqCacheLine;

struct Evq {
    EvqSlot *slots;       /* event slots, EVQ_CHUNK a chunk, EVQ_ALIGN-aligned; grows by doubling */
    EvqChunk *chunks;     /* chunk links; capacity nchunks */
    uint32_t nchunks;     /* chunks in slots[] (nchunks * EVQ_CHUNK slots) */
    uint32_t cfree;       /* head of the free-chunk list; nchunks when empty */
    EvqBucket *buckets;   /* bucket pool, grows by doubling; capacity nbuckets */
    EvqEntry *heap;       /* one entry per bucket in use, heap-ordered; capacity nbuckets */
    uint32_t nbuckets;    /* capacity of buckets[] and heap[] */
    uint32_t bfree;       /* head of the free-bucket list; nbuckets when empty */
    uint32_t hlen;        /* buckets in use (entries in heap[]) */
    uint32_t len;         /* pending events */
    uint64_t bseq;        /* next bucket creation number */
    EvqCacheLine cache[EVQ_CACHE]; /* time -> newest bucket of that time, direct-mapped */
    uint32_t nhints;      /* actions in hints[] */
    EvqHint hints[EVQ_HMAP];  /* actions with prefetch hints, open addressing by fn (hint_hash) */
};

static inline uint32_t cache_index(simtime_t t)
{
    return (uint32_t)((t * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - EVQ_CACHE_BITS));
}

static inline uint32_t hint_hash(EvqFn fn)
{
    return (uint32_t)(((uint64_t)(uintptr_t)fn * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - EVQ_HMAP_BITS));
}

/* The hints of action fn: the index of its entry, or of the empty entry
 * where it would go (hints NULL; fn NULL, a tombstone's, finds one too).
 * The table is never full (at most EVQ_HINTS of EVQ_HMAP entries), so
 * the probe ends. */
static inline uint32_t hint_of(const Evq *q, EvqFn fn)
{
    uint32_t i = hint_hash(fn);
    while (q->hints[i].fn != fn && q->hints[i].fn != NULL)
        i = (i + 1) & (EVQ_HMAP - 1);
    return i;
}

static inline void heap_set(Evq *q, uint32_t i, const EvqEntry *e)
{
    q->heap[i] = *e;
    q->buckets[e->bucket].pos = i;
}

/* Moves e up from hole i to its place. */
static void sift_up(Evq *q, uint32_t i, const EvqEntry *e)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / EVQ_ARITY;
        if (!(e->key < q->heap[parent].key))
            break;
        heap_set(q, i, &q->heap[parent]);
        i = parent;
    }
    heap_set(q, i, e);
}

/* Index of the smallest child of i; i must have at least one child. */
static inline uint32_t min_child(const Evq *q, uint32_t i)
{
    uint32_t c = EVQ_ARITY * i + 1, end = c + EVQ_ARITY, best = c;
    if (end > q->hlen)
        end = q->hlen;
    EvqKey bk = q->heap[c].key;
    for (uint32_t j = c + 1; j < end; j++) {
        EvqKey k = q->heap[j].key;
        bool lt = k < bk;
        best = lt ? j : best;
        bk = lt ? k : bk;
    }
    return best;
}

/* Moves e down from hole i to its place. */
static void sift_down(Evq *q, uint32_t i, const EvqEntry *e)
{
    while (EVQ_ARITY * i + 1 < q->hlen) {
        uint32_t c = min_child(q, i);
        if (!(q->heap[c].key < e->key))
            break;
        heap_set(q, i, &q->heap[c]);
        i = c;
    }
    heap_set(q, i, e);
}

/* Removes the heap entry at index i, refilling the hole with the last one. */
static void heap_remove_at(Evq *q, uint32_t i)
{
    EvqEntry last = q->heap[--q->hlen];
    if (i == q->hlen)
        return;
    if (i > 0 && last.key < q->heap[(i - 1) / EVQ_ARITY].key)
        sift_up(q, i, &last);
    else
        sift_down(q, i, &last);
}

/* Removes the root: the hole goes down to a leaf along the smaller
 * children, then the last entry sifts up from there (it is usually late,
 * so this saves a comparison per level). */
static void heap_remove_root(Evq *q)
{
    EvqEntry last = q->heap[--q->hlen];
    if (q->hlen == 0)
        return;
    uint32_t i = 0;
    while (EVQ_ARITY * i + 1 < q->hlen) {
        uint32_t c = min_child(q, i);
        heap_set(q, i, &q->heap[c]);
        i = c;
    }
    sift_up(q, i, &last);
}

G_GNUC_NO_INLINE static void grow_chunks(Evq *q)
{
    uint32_t old = q->nchunks, n = old ? old * 2 : 32;
    EvqSlot *s = g_aligned_alloc((gsize)n * EVQ_CHUNK, sizeof(EvqSlot), EVQ_ALIGN);
    if (old)
        memcpy(s, q->slots, (size_t)old * EVQ_CHUNK * sizeof(EvqSlot));
    g_aligned_free(q->slots);
    q->slots = s;
    for (uint32_t i = old * EVQ_CHUNK; i < n * EVQ_CHUNK; i++)
        q->slots[i] = (EvqSlot){.gen = 1};
    q->chunks = g_renew(EvqChunk, q->chunks, n);
    for (uint32_t i = old; i < n; i++)
        q->chunks[i].next = i + 1;
    /* the free list was empty when grow_chunks() is called: the new chunks are all of it */
    q->cfree = old;
    q->nchunks = n;
}

/* A free chunk for bucket b; its slots are all free (fn NULL). */
static inline uint32_t chunk_new(Evq *q, uint32_t b)
{
    if (q->cfree >= q->nchunks)
        grow_chunks(q);
    uint32_t c = q->cfree;
    q->cfree = q->chunks[c].next;
    q->chunks[c].bucket = b;
    return c;
}

static inline void chunk_free(Evq *q, uint32_t c)
{
    q->chunks[c].next = q->cfree;
    q->cfree = c;
}

/* Frees the chunks of bk's FIFO, from its head's to its tail's (all its
 * slots run or cancelled). */
static void chunks_free(Evq *q, const EvqBucket *bk)
{
    uint32_t c = bk->head >> EVQ_CHUNK_BITS, last = bk->tail >> EVQ_CHUNK_BITS;
    while (c != last) {
        uint32_t next = q->chunks[c].next;
        chunk_free(q, c);
        c = next;
    }
    chunk_free(q, last);
}

/* The slot after s in bk's FIFO, or EVQ_NONE past its tail. */
static inline uint32_t slot_next(const Evq *q, const EvqBucket *bk, uint32_t s)
{
    if (s == bk->tail)
        return EVQ_NONE;
    return (s & EVQ_LAST) == EVQ_LAST ? q->chunks[s >> EVQ_CHUNK_BITS].next << EVQ_CHUNK_BITS : s + 1;
}

/* Prefetches the lines of slot s's chunk. */
static inline void chunk_prefetch(const Evq *q, uint32_t s)
{
    const EvqSlot *c = &q->slots[s & ~EVQ_LAST];
    for (uint32_t i = 0; i < EVQ_CHUNK; i += EVQ_ALIGN / sizeof(EvqSlot))
        __builtin_prefetch(c + i);
}

/* Moves bk's head (run or cancelled; bk->live > 0) to its next live
 * slot, freeing the chunks it leaves. */
static void head_next(Evq *q, EvqBucket *bk)
{
    uint32_t s = bk->head;
    do {
        if ((s & EVQ_LAST) == EVQ_LAST) {
            uint32_t c = s >> EVQ_CHUNK_BITS, n = q->chunks[c].next;
            s = n << EVQ_CHUNK_BITS;
            chunk_free(q, c);
            if (n != bk->tail >> EVQ_CHUNK_BITS)   /* the chunk after, EVQ_CHUNK pops ahead */
                chunk_prefetch(q, q->chunks[n].next << EVQ_CHUNK_BITS);
        } else {
            s++;
        }
    } while (q->slots[s].fn == NULL);
    bk->head = s;
}

static void grow_buckets(Evq *q)
{
    uint32_t old = q->nbuckets, n = old ? old * 2 : 64;
    q->buckets = g_renew(EvqBucket, q->buckets, n);
    q->heap = g_renew(EvqEntry, q->heap, n);
    for (uint32_t i = old; i < n; i++) {
        q->buckets[i].head = EVQ_NONE;
        q->buckets[i].pos = i + 1;
    }
    q->bfree = old;
    q->nbuckets = n;
}

/* A new, empty bucket of time t, entered in the heap and the cache (out
 * of line: a push that joins a bucket keeps a short prologue). */
G_GNUC_NO_INLINE static uint32_t bucket_new(Evq *q, simtime_t t)
{
    if (q->bfree >= q->nbuckets)
        grow_buckets(q);
    uint32_t b = q->bfree;
    EvqBucket *bk = &q->buckets[b];
    q->bfree = bk->pos;
    bk->t = t;
    bk->tail = EVQ_NONE;
    bk->live = 0;
    EvqEntry e = {((EvqKey)t << 64) | q->bseq++, b};
    sift_up(q, q->hlen++, &e);
    EvqCacheLine *c = &q->cache[cache_index(t)];
    c->t = t;
    c->bucket = b;
    return b;
}

/* Returns an emptied bucket (already out of the heap) to the pool. */
static void bucket_release(Evq *q, uint32_t b)
{
    EvqBucket *bk = &q->buckets[b];
    EvqCacheLine *c = &q->cache[cache_index(bk->t)];
    if (c->bucket == b)
        c->bucket = EVQ_NONE;
    bk->head = EVQ_NONE;
    bk->pos = q->bfree;
    q->bfree = b;
}

Evq *evq_new(void)
{
    Evq *q = g_new0(Evq, 1);
    for (uint32_t i = 0; i < EVQ_CACHE; i++)
        q->cache[i].bucket = EVQ_NONE;
    return q;
}

void evq_free(Evq *q)
{
    if (!q)
        return;
    g_aligned_free(q->slots);
    g_free(q->chunks);
    g_free(q->buckets);
    g_free(q->heap);
    g_free(q);
}

/* evq_push's slot for time t where no cached bucket of t has room in its
 * tail's chunk: a new bucket or a new chunk, chained on; the slot is the
 * bucket's tail and counted live (out of line: the common push, a slot
 * after its bucket's tail, keeps a short prologue). */
G_GNUC_NO_INLINE static uint32_t push_slot(Evq *q, simtime_t t)
{
    const EvqCacheLine *c = &q->cache[cache_index(t)];
    uint32_t b = c->bucket != EVQ_NONE && c->t == t ? c->bucket : bucket_new(q, t);
    uint32_t tail = q->buckets[b].tail, slot;
    if (tail == EVQ_NONE || (tail & EVQ_LAST) == EVQ_LAST) {   /* a chunk chained on (chunk_new may move slots) */
        uint32_t k = chunk_new(q, b);
        slot = k << EVQ_CHUNK_BITS;
        if (tail == EVQ_NONE)
            q->buckets[b].head = slot;
        else
            q->chunks[tail >> EVQ_CHUNK_BITS].next = k;
    } else {
        slot = tail + 1;
    }
    EvqBucket *bk = &q->buckets[b];
    bk->tail = slot;
    bk->live++;
    return slot;
}

EvqHandle evq_push(Evq *q, simtime_t t, EvqFn fn, void *ctx, void *data)
{
    const EvqCacheLine *c = &q->cache[cache_index(t)];
    uint32_t slot;
    EvqBucket *bk = c->bucket != EVQ_NONE && c->t == t ? &q->buckets[c->bucket] : NULL;
    if (bk && (bk->tail & EVQ_LAST) != EVQ_LAST) {   /* room in its tail's chunk (EVQ_NONE has none) */
        slot = ++bk->tail;
        bk->live++;
    } else {
        slot = push_slot(q, t);
    }
    EvqSlot *n = &q->slots[slot];
    n->fn = fn;
    n->ctx = ctx;
    n->data = data;
    n->hint = hint_of(q, fn);
    q->len++;
    return ((uint64_t)n->gen << 32) | (uint64_t)(slot + 1);
}

/* Bucket b lost its last live event: it leaves the heap and frees its
 * chunks (out of line, as bucket_new). */
G_GNUC_NO_INLINE static void bucket_empty(Evq *q, uint32_t b)
{
    EvqBucket *bk = &q->buckets[b];
    chunks_free(q, bk);
    if (bk->pos == 0) {
        heap_remove_root(q);
        if (q->hlen > 1)   /* the bucket after the new earliest: its first chunk, a bucket's pops ahead */
            chunk_prefetch(q, q->buckets[q->heap[min_child(q, 0)].bucket].head);
    } else
        heap_remove_at(q, bk->pos);
    bucket_release(q, b);
}

/* Retires the live slot `slot` of bucket b (run or cancelled): a
 * tombstone, and the bucket's head moves past it, or, its last live
 * event gone, the bucket leaves the heap and frees its chunks. */
static inline void take(Evq *q, uint32_t b, uint32_t slot)
{
    EvqSlot *n = &q->slots[slot];
    n->fn = NULL;
    n->gen++;
    q->len--;
    EvqBucket *bk = &q->buckets[b];
    if (--bk->live == 0)
        bucket_empty(q, b);
    else if (bk->head == slot)
        head_next(q, bk);
}

bool evq_cancel(Evq *q, EvqHandle h)
{
    uint32_t slot = (uint32_t)(h & 0xffffffffu);
    if (slot == 0 || slot > q->nchunks * EVQ_CHUNK)
        return false;
    slot--;
    const EvqSlot *n = &q->slots[slot];
    if (n->fn == NULL || n->gen != (uint32_t)(h >> 32))
        return false;
    take(q, q->chunks[slot >> EVQ_CHUNK_BITS].bucket, slot);
    return true;
}

bool evq_set_hint(Evq *q, EvqFn fn, EvqFn early, EvqFn late)
{
    EvqHint *h = &q->hints[hint_of(q, fn)];
    if (h->fn == NULL) {
        if (fn == NULL || q->nhints == EVQ_HINTS)
            return false;
        q->nhints++;
    }
    *h = (EvqHint){fn, early, late};
    return true;
}

/* Prefetches for the events next in line (q not empty), in stages along
 * the earliest bucket (whose slots the chunk prefetch brought): the
 * fifth event's datum and the fourth's (a small integer prefetches
 * nothing; the fourth's was the fifth's a pop ago, unless pushed since),
 * the third's early hint, which may read that datum, and the first's
 * late hint, which may read what that early hint prefetched two pops
 * ago. A tombstone in line gets no hint (fn NULL has none). */
static inline void look_ahead(const Evq *q)
{
    const EvqBucket *bk = &q->buckets[q->heap[0].bucket];
    const EvqSlot *n1 = &q->slots[bk->head];
    uint32_t s2 = slot_next(q, bk, bk->head), s3 = s2 != EVQ_NONE ? slot_next(q, bk, s2) : EVQ_NONE;
    if (s3 != EVQ_NONE) {
        const EvqSlot *n3 = &q->slots[s3];
        uint32_t s4 = slot_next(q, bk, s3);
        if (s4 != EVQ_NONE) {
            __builtin_prefetch(q->slots[s4].data);
            uint32_t s5 = slot_next(q, bk, s4);
            if (s5 != EVQ_NONE)
                __builtin_prefetch(q->slots[s5].data);
        }
        const EvqHint *h3 = &q->hints[n3->hint];
        if (h3->fn == n3->fn && h3->early)
            h3->early(n3->ctx, n3->data);
    }
    const EvqHint *h1 = &q->hints[n1->hint];
    if (h1->fn == n1->fn && h1->late)
        h1->late(n1->ctx, n1->data);
}

bool evq_pop(Evq *q, simtime_t *t, EvqFn *fn, void **ctx, void **data)
{
    return evq_pop_until(q, SIMTIME_MAX, t, fn, ctx, data);
}

bool evq_pop_until(Evq *q, simtime_t until, simtime_t *t, EvqFn *fn, void **ctx, void **data)
{
    if (q->len == 0)
        return false;
    uint32_t b = q->heap[0].bucket;
    const EvqBucket *bk = &q->buckets[b];
    if (bk->t > until)
        return false;
    uint32_t slot = bk->head;
    const EvqSlot *n = &q->slots[slot];
    *t = bk->t;
    *fn = n->fn;
    *ctx = n->ctx;
    *data = n->data;
    take(q, b, slot);
    if (q->len)
        look_ahead(q);
    return true;
}

simtime_t evq_peek_time(const Evq *q)
{
    return q->len ? q->buckets[q->heap[0].bucket].t : SIMTIME_MAX;
}

size_t evq_len(const Evq *q)
{
    return q->len;
}
