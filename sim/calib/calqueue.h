/* calqueue — the control queue of the rendezvous handshake
 * (protocol.control_queue, io/protocol.h) fitted to exchange
 * measurements, and the simulated star a calibration describes.
 *
 * An exchange case (validate/mpibench `exchange`) is two ranks on two
 * hosts that send each other n bytes at once, the second starting
 * delay_s after the first. Under handshake rtt with n at or above the
 * eager limit the late rank's clear-to-send leaves first, the early rank's
 * data starts, and the clear-to-send the late rank is owed queues behind
 * that data: how much of it, the control queue, decides the case's time
 * (coll/collexec.h, net_send_control). The fit simulates every exchange
 * case under each candidate queue and keeps the one with the least sum of
 * squared relative errors. */
#ifndef ARSIM_CALQUEUE_H
#define ARSIM_CALQUEUE_H

#include "calib/calmeas.h"
#include "io/calfile.h"
#include "net/topo.h"

typedef struct {
    uint64_t control_queue;  /* bytes, PROTOCOL_INF: the best candidate (all data ahead) */
    double rms_rel;          /* RMS relative error of the exchange cases under it */
    int points;              /* exchange cases fitted, >= 1 */
} CalQueueFit;

/* A star of `hosts` hosts (>= 1) with the calibration's inter class
 * (links α/2 and 1/β, its burst) and inter protocol (else the default),
 * no switch latency; NULL and *err if it cannot be built. Caller frees. */
Topo *calqueue_star(const CalFile *cal, int hosts, char **err);

/* The simulated time of exchange case c (inter class) under cal with the
 * inter protocol's control queue replaced by `queue`; < 0 and *err when
 * it cannot be simulated. */
double calqueue_exchange_time(const CalFile *cal, const MeasCase *c, uint64_t queue, char **err);

/* Fits the control queue to m's inter exchange cases under cal (its inter
 * class and protocol already fitted). false when there is none or the
 * protocol has no rtt handshake (nothing to fit: *out untouched);
 * otherwise true, *out filled and each case's index added to cal->used. */
bool calqueue_fit(const MeasFile *m, CalFile *cal, CalQueueFit *out);

#endif
