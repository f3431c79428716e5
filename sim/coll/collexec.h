/* collexec — the one executor that runs any CollSchedule on a Net, and
 * the protocol layer between the schedules and the network (the rules of
 * io/protocol.h, with the protocol of each message's route class).
 *
 * Every rank starts its first step at the time collexec_start() is called
 * and runs its steps in order. At a step's start the rank posts its
 * receive and sends: after `overhead` of its CPU, a message below the
 * eager limit enters the network at once (net_send over the topology's
 * route between the two ranks' hosts); a larger one waits until the
 * receiver has posted the matching receive (the receiving rank reached
 * that step) — with handshake rtt it first sends a request-to-send, and
 * the receiver a clear-to-send once posted, both payload-free messages on
 * the routes. A received message costs the receiver `overhead` of CPU
 * once it arrived and was posted. The step ends when its message was
 * delivered (reached the receiver's host) and its receive completed,
 * plus gamma seconds per received byte when the step reduces. A rank's
 * overheads and reductions use its one CPU in the order they were asked
 * for (a run's own: collectives in flight at once do not wait for each
 * other's). With a segment, each rank runs its steps as K independent pieces
 * (see io/protocol.h), piece k of a message matched with piece k of the
 * receive. The collective ends when every rank ended its last step.
 *
 * Under protocol_init_eager() (every message eager, no overhead, no
 * segment) the protocol layer schedules no event of its own: a step's
 * message enters the network when the step starts.
 */
#ifndef ARSIM_COLLEXEC_H
#define ARSIM_COLLEXEC_H

#include "coll/coll.h"
#include "net/net.h"

typedef struct CollExec CollExec;
typedef void (*CollDoneFn)(void *ctx, void *data);

/* What one run needs. */
typedef struct {
    Sim *sim;                  /* the clock and event queue; not owned */
    Net *net;                  /* the network the messages cross; not owned */
    Topo *topo;                /* routes, and the protocol of each route's class; not owned */
    const CollSchedule *sched; /* the steps; not owned */
    const int *rank2host;      /* rank r's host (NULL: rank r on host r, and sched->p <= topo->nhosts);
                                * not owned */
    uint32_t elem_bytes;       /* bytes per element, >= 1 */
    double gamma;              /* reduction seconds per received byte, >= 0 */
    CollDoneFn done;           /* run once at the end (NULL: nothing) */
    void *ctx, *data;          /* done's arguments */
    bool deferred;             /* true: no rank starts in collexec_start; each starts at its
                                * collexec_rank_go (per-rank issue times, skew between ranks) */
} CollRunSpec;

/* Starts spec->sched at sim->now. Everything the spec points to must
 * outlive the run. done(ctx, data) runs once, at the end, always from an
 * event (never inside this call). The caller owns the returned CollExec
 * and frees it (from done at the earliest). NULL, with the Sim failed
 * (sim->error), if a rank's host, a step's peer or the byte count is out
 * of range. A schedule that deadlocks never calls done. */
CollExec *collexec_start(const CollRunSpec *spec);
/* Deferred runs: rank r (0 <= r < p, once) issues the collective now and
 * starts its first step; messages sent to a rank that has not issued yet
 * wait for its receives as they would for a slow rank. done runs once
 * every rank issued and ended its last step. */
void collexec_rank_go(CollExec *x, int r);
simtime_t collexec_start_time(const CollExec *x);
simtime_t collexec_end_time(const CollExec *x);   /* valid once done ran */
/* When rank r (0 <= r < p) finished its last step; valid once done ran. */
simtime_t collexec_rank_end_time(const CollExec *x, int r);
void collexec_free(CollExec *x);

/* Whether a run on topology t sends control messages (a request- or
 * clear-to-send, an acknowledgement or a confirmation: some route class's
 * protocol has handshake rtt or ack rtt). A Net without link statistics
 * (net_set_stats) refuses them; one that carries no control message times
 * the same with or without statistics. */
bool collexec_sends_controls(const Topo *t);
/* Sets n's delivery hints (net_set_deliver_hint) to prefetch, ahead of a
 * message's delivery, the sending and receiving lanes the executor then
 * touches. Only prefetches: the run is the same with or without them. For
 * a Net whose deliveries are this module's (one collective's Net). */
void collexec_hint_net(Net *n);

/* Bytes one run of algorithm a on p ranks (hosts 0..p-1) of topology t
 * and `bytes` bytes holds at its peak, the Topo's own structures and
 * routes included (an estimate, for --max-memory: io/memlimit.h). A run
 * that shares a Topo counts it once: see collexec_mem_run. */
uint64_t collexec_mem_estimate(const Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes);
/* The part of that estimate one collective in flight adds: its lanes,
 * messages and events, without the Topo. */
uint64_t collexec_mem_run(const Topo *t, int p, uint64_t bytes);

#endif
