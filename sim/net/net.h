/* net — links as serializing queues followed by latency pipes (htsim).
 *
 * A message (or each of its packets) carries a shared, immutable route and
 * a hop index; a queue serializes at its link's bandwidth, a pipe delays by
 * its latency. Components know nothing about topology. An event is
 * scheduled only when a queue goes from idle to busy, or a message moves
 * to its next hop.
 *
 * Message mode (packet_bytes == 0): virtual cut-through. A message holds a
 * link for m/B, FIFO; its head moves to the next link after the latency.
 * Contention-free cost over h links: sum(L) + m/B_min.
 * Packet mode: store-and-forward packets of packet_bytes, each queue serves
 * the messages waiting on it packet by packet, round robin. Contention-free
 * cost: sum(L) + m/B + (h-1)·s/B (s = min(packet, m)).
 * A link with a token bucket of b bytes (TopoLink.burst_B, a tc tbf
 * shaper) starts full and refills at B while idle; the bytes its credit
 * covers pass at once, so an uncontended message over a star (two links
 * of equal B and b, both full) costs sum(L) + max(0, m - b)/B. With a peak
 * rate P > B (TopoLink.peak_Bps) the credit's bytes pass at P, the credit
 * draining at P - B, so it covers the first bP/(P - B) bytes and such a
 * message costs sum(L) + max(m/P, (m - b)/B).
 */
#ifndef ARSIM_NET_H
#define ARSIM_NET_H

#include "engine/engine.h"
#include "net/topo.h"

typedef struct Net Net;

/* Per directed link, since the Net was made or last reset. */
typedef struct {
    uint64_t bytes;          /* bytes serialized onto the link */
    uint64_t msgs;           /* messages (message mode) or packets (packet mode) sent */
    simtime_t busy_ps;       /* time spent serializing */
    uint64_t peak_bytes;     /* most bytes waiting or in service at once */
    uint32_t peak_msgs;      /* most messages/packets waiting or in service at once */
} NetLinkStats;

/* Runs when the last byte of a message reached the route's last node. */
typedef void (*NetDeliverFn)(void *ctx, void *data);

/* The Net reads t's links and packet size; t must outlive it. */
Net *net_new(Sim *sim, Topo *t);
void net_free(Net *n);

/* Sends `bytes` (0 allowed: a header-only message that still pays the
 * latencies) along route r, starting now. fn(ctx, data) runs at delivery.
 * A route of 0 hops delivers at once (same time, through the queue). */
void net_send(Net *n, const TopoRoute *r, uint64_t bytes, NetDeliverFn fn, void *ctx, void *data);

/* A payload-free control message (an MPI request- or clear-to-send) along
 * r, as net_send(n, r, 0, ...) except in message mode, where it travels in
 * its connection's byte stream (the messages whose routes leave by r's
 * first link and arrive by its last: one pair of hosts): on each link it
 * waits until cap_bytes of that connection's data queued ahead of it have
 * left (all of it when there is less; the message in service counts by
 * the part of its serialization left; UINT64_MAX: all of it), and until
 * other_bytes of the other connections' data queued ahead of it have left
 * (the same way; 0: it passes them, as they lie in other streams (sockets);
 * more: they share a FIFO with it, a host's shaper); then it leaves
 * without taking the link and moves on after the latency. The moment is
 * counted at the link's rate through the FIFO as it stands when the
 * message arrives (a token bucket's credit is not counted). In packet
 * mode the caps are not used (the round robin already serves it after one
 * packet of each message ahead). */
void net_send_control(Net *n, const TopoRoute *r, uint64_t cap_bytes, uint64_t other_bytes, NetDeliverFn fn,
                      void *ctx, void *data);

/* Changes a link's rate and latency from now on: a message (packet) that
 * starts on it later serializes at bw_Bps (> 0, INFINITY allowed) and
 * crosses it in lat_ps; one in service keeps its times. netfault.h uses
 * it for degraded links. */
void net_set_link(Net *n, uint32_t link, double bw_Bps, simtime_t lat_ps);

/* Whether links keep their statistics and occupancy (true, the default).
 * Without them a message touches one 64-byte line of each link it
 * crosses instead of two, net_link_stats reads zeros and a control
 * message fails the run (it reads the message in service). Timing is the
 * same either way. Set before the first send. */
void net_set_stats(Net *n, bool keep);

/* Prefetch hints for deliveries to fn, called with fn's arguments: three
 * events before a message is delivered to fn(ctx, data), early(ctx,
 * data), as the Net prefetches data (what data points to may not have
 * arrived: early should use its value, not read it); one event before,
 * late(ctx, data) (after data was prefetched). They prefetch what fn
 * will touch and only read and prefetch (engine/evq.h's hints; the
 * first two events of a time get no early one). Either may be NULL. One
 * callback at a time; fn NULL removes it. */
void net_set_deliver_hint(Net *n, NetDeliverFn fn, NetDeliverFn early, NetDeliverFn late);

/* A prefetch for a send on route r to come (after r's first line was
 * prefetched): the line of r's first link that the send reads. It only
 * reads and prefetches (engine/evq.h's hints). */
void net_prefetch_send(const Net *n, const TopoRoute *r);

/* A route map: with one set, every net_send's route r is replaced by
 * fn(ctx, r), a route between the same two hosts that outlives every
 * message sent on it (netfault.h reroutes around failed links); NULL
 * removes it. */
typedef const TopoRoute *(*NetRouteFn)(void *ctx, const TopoRoute *r);
void net_set_router(Net *n, NetRouteFn fn, void *ctx);

/* Trains (message mode, data messages only): every message stands for
 * itself and `followers` copies of it sent gap_ps apart behind it on
 * routes whose links time alike. A link a message takes is held for the
 * copies too (until its end plus followers x gap_ps); the message itself
 * moves and is delivered as before. The run stands for the copies
 * exactly only if each copy finds every link free when its head arrives:
 * net_train_broken says when that may fail, true once any message waited
 * for a link or held one longer than gap_ps (its copy behind would wait).
 * followers 0: off (the default). Set before the first send. */
void net_set_train(Net *n, uint32_t followers, simtime_t gap_ps);
bool net_train_broken(const Net *n);

/* Express trains (on: true; off, the default). A data message sent while
 * trains are on (followers > 0), in message mode, without link statistics
 * (net_set_stats(n, false)), route map or token bucket, is booked whole
 * at net_send: each hop as the hop-by-hop run starts it when its head
 * arrives (s_h = s_{h-1} + L_{h-1}, s_0 = now; end = max(s_h + m/B, the
 * previous hop's tail); the link held for the followers after end), and
 * its one event is its delivery at the last hop's tail. Any other message
 * goes hop by hop as without it; the two mix (a hop-by-hop message that
 * finds a link booked waits, which breaks the trains).
 * Exact where kept: while net_train_broken is false every message's
 * delivery time is the hop-by-hop run's to the picosecond, as nothing
 * waits there. The trains break wherever it could differ, and more often,
 * never less: a hop whose link is booked past the head's arrival, however
 * the two were booked (a message sent after another but reaching a
 * shared link before it breaks them, though hop by hop it might pass
 * first), a link with messages waiting, a hop held longer than gap_ps,
 * and net_set_link while a message is in flight (booked hops used the
 * old rate). Once broken, its times are not the hop-by-hop run's.
 * Deliveries at one picosecond may run in another order than hop by hop
 * (each is scheduled at its send, not at its last hop's start): the
 * caller's results must not depend on that order. Set before the first
 * send. */
void net_set_express(Net *n, bool on);

/* Messages sent and not yet delivered. */
uint64_t net_inflight(const Net *n);
/* Bytes a Net on topology t holds with `msgs` messages in flight at once,
 * their events included (an estimate, for --max-memory). */
uint64_t net_mem_estimate(const Topo *t, uint64_t msgs);
const NetLinkStats *net_link_stats(const Net *n, uint32_t link);
void net_reset_stats(Net *n);

#endif
