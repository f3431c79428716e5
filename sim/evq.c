/* evq — binary min-heap of events on (time, seq); see evq.h. */
#include "evq.h"

#include <glib.h>
#include <stdlib.h>

typedef struct {
    simtime_t t;      /* ps; due time */
    uint64_t seq;     /* push order; breaks ties between equal times */
    EvqFn fn;         /* action; NULL marks a free slot */
    void *ctx;        /* first argument of fn */
    void *data;       /* second argument of fn */
    uint32_t gen;     /* generation; bumped each time the slot is freed */
    uint32_t pos;     /* index in heap[] while pending; next free slot when free */
} EvqNode;

struct Evq {
    EvqNode *nodes;   /* slot pool, grows by doubling */
    uint32_t nslots;  /* capacity of nodes[] */
    uint32_t free;    /* head of the free-slot list; nslots when empty */
    uint32_t *heap;   /* slot indices, heap-ordered; capacity nslots */
    uint32_t len;     /* pending events */
    uint64_t seq;     /* next push sequence number */
};

static inline bool node_less(const Evq *q, uint32_t a, uint32_t b)
{
    const EvqNode *x = &q->nodes[a], *y = &q->nodes[b];
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static inline void heap_set(Evq *q, uint32_t i, uint32_t slot)
{
    q->heap[i] = slot;
    q->nodes[slot].pos = i;
}

static void sift_up(Evq *q, uint32_t i)
{
    uint32_t slot = q->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!node_less(q, slot, q->heap[parent]))
            break;
        heap_set(q, i, q->heap[parent]);
        i = parent;
    }
    heap_set(q, i, slot);
}

static void sift_down(Evq *q, uint32_t i)
{
    uint32_t slot = q->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->len)
            break;
        if (c + 1 < q->len && node_less(q, q->heap[c + 1], q->heap[c]))
            c++;
        if (!node_less(q, q->heap[c], slot))
            break;
        heap_set(q, i, q->heap[c]);
        i = c;
    }
    heap_set(q, i, slot);
}

static void grow(Evq *q)
{
    uint32_t old = q->nslots, n = old ? old * 2 : 256;
    q->nodes = g_renew(EvqNode, q->nodes, n);
    q->heap = g_renew(uint32_t, q->heap, n);
    for (uint32_t i = old; i < n; i++) {
        q->nodes[i].fn = NULL;
        q->nodes[i].gen = 1;
        q->nodes[i].pos = i + 1;
    }
    /* the free list was empty when grow() is called: the new slots are all of it */
    q->free = old;
    q->nslots = n;
}

Evq *evq_new(void)
{
    Evq *q = g_new0(Evq, 1);
    q->free = 0;
    return q;
}

void evq_free(Evq *q)
{
    if (!q)
        return;
    g_free(q->nodes);
    g_free(q->heap);
    g_free(q);
}

EvqHandle evq_push(Evq *q, simtime_t t, EvqFn fn, void *ctx, void *data)
{
    if (q->free >= q->nslots)
        grow(q);
    uint32_t slot = q->free;
    EvqNode *n = &q->nodes[slot];
    q->free = n->pos;
    n->t = t;
    n->seq = q->seq++;
    n->fn = fn;
    n->ctx = ctx;
    n->data = data;
    q->heap[q->len] = slot;
    n->pos = q->len++;
    sift_up(q, n->pos);
    return ((uint64_t)n->gen << 32) | (uint64_t)(slot + 1);
}

static void release(Evq *q, uint32_t slot)
{
    EvqNode *n = &q->nodes[slot];
    n->fn = NULL;
    n->gen++;
    n->pos = q->free;
    q->free = slot;
}

static void remove_at(Evq *q, uint32_t i)
{
    uint32_t last = q->heap[--q->len];
    if (i < q->len) {
        heap_set(q, i, last);
        if (i > 0 && node_less(q, last, q->heap[(i - 1) / 2]))
            sift_up(q, i);
        else
            sift_down(q, i);
    }
}

bool evq_cancel(Evq *q, EvqHandle h)
{
    uint32_t slot = (uint32_t)(h & 0xffffffffu);
    if (slot == 0 || slot > q->nslots)
        return false;
    slot--;
    EvqNode *n = &q->nodes[slot];
    if (n->fn == NULL || n->gen != (uint32_t)(h >> 32))
        return false;
    remove_at(q, n->pos);
    release(q, slot);
    return true;
}

bool evq_pop(Evq *q, simtime_t *t, EvqFn *fn, void **ctx, void **data)
{
    if (q->len == 0)
        return false;
    uint32_t slot = q->heap[0];
    EvqNode *n = &q->nodes[slot];
    *t = n->t;
    *fn = n->fn;
    *ctx = n->ctx;
    *data = n->data;
    remove_at(q, 0);
    release(q, slot);
    return true;
}

simtime_t evq_peek_time(const Evq *q)
{
    return q->len ? q->nodes[q->heap[0]].t : SIMTIME_MAX;
}

size_t evq_len(const Evq *q)
{
    return q->len;
}
