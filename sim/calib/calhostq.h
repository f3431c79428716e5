/* calhostq — the host queue of the protocol's control messages
 * (protocol.host_queue, io/protocol.h) fitted to ring all-reduce
 * measurements.
 *
 * A rank of a ring sends to its right neighbour while it receives from its
 * left one. Its control messages to the left (a clear-to-send, and under
 * ack rtt the acknowledgement that ends its left neighbour's send and,
 * through the confirmation, its own receive) leave by the same host link
 * as its data to the right: on a host whose sockets share one queue (the
 * emulated cluster's shaper) they wait behind the part of that data
 * queued ahead of them. Where the ranks start apart, as they leave
 * mpibench's barrier, a rank whose data to the right started late holds
 * its left neighbour back, and the ring's steps lock to the slowest
 * rank's. A two-host exchange cannot show it (one connection per host);
 * a ring of three hosts or more can. The fit simulates every inter ring
 * case of at least three ranks whose messages (n/p) rendezvous, each from
 * the measured start spread (the median of CALQUEUE_SKEW_TRIALS draws),
 * under each candidate queue, and keeps the least sum of squared relative
 * errors when it cuts host_queue 0's to CALHOSTQ_GAIN: a host queue moves
 * every ring and every iteration that runs rings, so it must explain most
 * of the rings' error (halve its RMS), not shave noise off it
 * (docs/explanation/calibration-notes.md, "The host queue's gain"). */
#ifndef ARSIM_CALHOSTQ_H
#define ARSIM_CALHOSTQ_H

#include "calib/calmeas.h"
#include "io/calfile.h"

#define CALHOSTQ_GAIN 0.25    /* the host queue must cut the rings' squared error to this fraction */

typedef struct {
    uint64_t host_queue;     /* bytes, PROTOCOL_INF: all of it; the best candidate (0 unless kept) */
    bool kept;               /* it cut host_queue 0's squared error to CALHOSTQ_GAIN */
    double rms_rel;          /* RMS relative error of the ring cases under host_queue */
    double rms_rel_zero;     /* the same under host_queue 0 */
    int points;              /* ring cases judged, >= 1 */
} CalHostQueueFit;

/* Fits the host queue to m's inter ring cases under cal (its inter class
 * and protocol already fitted, the control queues and duplex included).
 * false when cal's protocol sends no control messages (handshake and ack
 * none) or no case qualifies (nothing done: *out untouched); else true,
 * *out filled and cal's inter protocol given the host queue kept (0
 * otherwise). */
bool calhostq_fit(const MeasFile *m, CalFile *cal, CalHostQueueFit *out);

#endif
