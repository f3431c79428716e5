/* calqueue — the control queue of the rendezvous handshake
 * (protocol.control_queue, io/protocol.h) fitted to exchange
 * measurements, and the simulated star a calibration describes.
 *
 * An exchange case (validate/mpibench `exchange`) is two ranks on two
 * hosts that send each other n bytes at once, one (the higher rank, or
 * the lower: late_lower) starting delay_s after the other. Under
 * handshake rtt with n at or above the eager limit the late rank's
 * clear-to-send leaves first, the early rank's data starts, and the
 * clear-to-send the late rank is owed (the early rank sends it) queues
 * behind that data: how much of it, the early end's control queue,
 * decides the case's time
 * (coll/collexec.h, net_send_control). Where the two directions take
 * turns (protocol.duplex half) an exchange serializes however its ends
 * start. The fit simulates every exchange case under each candidate
 * queue and duplex and keeps the one with the least sum of squared
 * relative errors (half only when clearly better). */
#ifndef ARSIM_CALQUEUE_H
#define ARSIM_CALQUEUE_H

#include "calib/calmeas.h"
#include "io/calfile.h"
#include "net/topo.h"

typedef struct {
    bool handshake_found;    /* the ping-pong showed no handshake, the exchange cases did: the protocol now
                              * has handshake rtt from eager_limit on */
    uint64_t eager_limit;    /* handshake_found: the eager limit placed between two exchange sizes, bytes */
    uint64_t control_queue[2]; /* bytes, PROTOCOL_INF: all data ahead; the best candidates, [PROTOCOL_FROM_LOWER]
                                * and [PROTOCOL_FROM_HIGHER] (the same unless a case's lower rank was late) */
    ProtocolRtsPayload rts_payload; /* eager when a request-to-send carrying the eager part cuts the squared
                                     * error to CALFIT_KEEP_RTS_PAYLOAD of an empty one's */
    ProtocolDuplex duplex;   /* half when it cuts the simultaneous cases' squared error to CALFIT_KEEP_DUPLEX
                              * of full's */
    double rms_rel;          /* RMS relative error of the exchange cases under it */
    int points;              /* exchange cases fitted, >= 1 */
} CalQueueFit;

/* A calibration class as a link class: bandwidth 1/β, latency α/2 (two
 * links host to host), its burst and peak. */
TopoLinkClass calqueue_link(const CalClass *k);

/* A star of `hosts` hosts (>= 1) with the calibration's inter class
 * (links α/2 and 1/β, its burst) and inter protocol (else the default),
 * no switch latency; NULL and *err if it cannot be built. Caller frees. */
Topo *calqueue_star(const CalFile *cal, int hosts, char **err);

#define CALQUEUE_SKEW_SEED 1   /* the seed of the ranks' start draws in a skewed prediction */
#define CALQUEUE_SKEW_TRIALS 15 /* a skewed prediction: the median of this many draws */
#define CALQUEUE_ELEM_BYTES 8  /* mpibench's vectors are doubles */
#define CALQUEUE_WARMUP 1      /* mpibench's unmeasured repetitions per case (its --warmup default) */

/* The times of n trials (n >= 1) of all-reduce case c (c->ranks >= 2 with
 * c->start_spread_s > 0, or c->has_gap) under algorithm a on topology t,
 * into v[0..n): the ranks leave the barrier apart, p uniform draws over a
 * width w spreading (w - 0)(p-1)/(p+1) on average, so w is the measured
 * spread times (p+1)/(p-1) (0 when none was measured); trial k draws with
 * (CALQUEUE_SKEW_SEED, k), each timed as mpibench times it (the longest
 * span of a rank from its own start). Where the case measured its gap
 * between repetitions (c->has_gap) the trials run as mpibench ran them,
 * back to back on one network c->gap_s apart after CALQUEUE_WARMUP
 * unmeasured ones (collrun_times_back_to_back: a shaper's bucket drained
 * by one repetition is not full at the next); else each on a fresh one.
 * false and *err when one cannot be simulated. */
bool calqueue_case_trials(Topo *t, CollAlgo a, const CollParams *prm, const MeasCase *c, double gamma, int n,
                          double *v, char **err);

/* The queue candidates of the fits, k = -2 .. CALQUEUE_LAST: inf, 0, then
 * 1 KiB ... 64 MiB in steps of 2^(1/4). */
#define CALQUEUE_LAST 64
uint64_t calqueue_candidate(int k);

/* The simulated time of exchange case c (inter class) on cal's two-host
 * star under its inter protocol; < 0 and *err when it cannot be
 * simulated. */
double calqueue_exchange_time(const CalFile *cal, const MeasCase *c, char **err);

/* Fits the control queue to m's inter exchange cases under cal (its inter
 * class and protocol already fitted). false when there is none or the
 * protocol is not one to fit (nothing done: *out untouched); otherwise
 * true, *out filled and each case's index added to cal->used.
 *
 * With a handshake (rtt) the queue is fitted — one for both ends, or,
 * where some case had the pair's lower rank late (MeasCase.late_lower),
 * each end's own — whether the request-to-send carries the eager part
 * (Open MPI's; kept when it cuts the squared error to
 * CALFIT_KEEP_RTS_PAYLOAD of an empty one's), and the duplex: full, or
 * half where that cuts the squared error of the cases whose ends start
 * together (only they show it) to CALFIT_KEEP_DUPLEX of full's. Where the ping-pong
 * showed none (eager_limit inf, handshake none: a noisy ping-pong can hide
 * the 2α step) the exchange cases with a late partner may show it instead
 * (its rendezvous waits; cases that start together cannot tell it from a
 * slow host): the eager limit is tried at each of their sizes (the
 * messages from that size on rendezvous), with each queue, judged on
 * them, and kept
 * (handshake rtt, no overhead; queue and duplex as above) when it cuts
 * the squared error to CALFIT_KEEP_HANDSHAKE of the eager model's, as the
 * ping-pong's step must. */
bool calqueue_fit(const MeasFile *m, CalFile *cal, CalQueueFit *out);

#endif
