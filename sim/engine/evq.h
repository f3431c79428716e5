/* evq — the event queue: a 4-ary min-heap of time buckets (evq.c).
 *
 * The one hand-written container of arsim (docs/dev/design.md §5.1): events due at one time form a
 * FIFO bucket, and the heap orders the buckets by (time, creation), so
 * events at equal times pop in the order they were pushed and every run
 * is deterministic. A push to a time whose bucket is cached is O(1),
 * otherwise it creates a bucket, O(log b) for b buckets; a pop is O(1)
 * until its bucket runs empty, then O(log b); a cancel is O(1) plus
 * O(log b) when it empties its bucket. No global state: every Evq is
 * independent, so several simulations run side by side.
 */
#ifndef ARSIM_EVQ_H
#define ARSIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t simtime_t;            /* picoseconds since the start of a run */
#define SIMTIME_MAX UINT64_MAX
#define PS_PER_S 1000000000000.0       /* picoseconds in a second */

/* An event's action: ctx is the component's context, data its opaque datum. */
typedef void (*EvqFn)(void *ctx, void *data);

/* A handle names one pushed event; 0 names none. A handle stays unique
 * after its event ran or was cancelled (a generation counter), so a stale
 * handle can never cancel a newer event. */
typedef uint64_t EvqHandle;

typedef struct Evq Evq;

Evq *evq_new(void);
void evq_free(Evq *q);

/* Schedules fn(ctx, data) at time t. Never fails (memory aside). */
EvqHandle evq_push(Evq *q, simtime_t t, EvqFn fn, void *ctx, void *data);

/* Removes a pending event; returns false if it already ran or was cancelled. */
bool evq_cancel(Evq *q, EvqHandle h);

/* Pops the earliest event into the out-parameters; false when empty. */
bool evq_pop(Evq *q, simtime_t *t, EvqFn *fn, void **ctx, void **data);
/* evq_pop of an event due at or before `until`; false when there is none. */
bool evq_pop_until(Evq *q, simtime_t until, simtime_t *t, EvqFn *fn, void **ctx, void **data);

/* Prefetch hints for events of action fn, each called with the event's
 * arguments while the events before it run, along its time's FIFO:
 * early(ctx, data) three pops before it runs (its datum was prefetched
 * at least a pop before that), late(ctx, data) one pop before (what early
 * prefetched may be read). Either may be NULL; the first two events of a
 * time get no early hint, and a hint repeats when an earlier event is
 * pushed between it and its event. A hint only reads and
 * prefetches: it changes nothing, so a run is the same with or without
 * it. An event looks its action's hints up when pushed (a hash and,
 * nearly always, one comparison): one pushed before they were set gets
 * none, one pushed before they were replaced gets the new ones. At most
 * EVQ_HINTS actions (fn not NULL) have hints; false when they are all
 * taken or fn is NULL (fn already hinted: replaced). */
#define EVQ_HINTS 8
bool evq_set_hint(Evq *q, EvqFn fn, EvqFn early, EvqFn late);

/* Time of the earliest event, or SIMTIME_MAX when empty. */
simtime_t evq_peek_time(const Evq *q);

size_t evq_len(const Evq *q);

#endif
