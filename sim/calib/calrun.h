/* calrun — a whole calibration from a measurements file: the cases of
 * each class collected, γ, the inter and intra link classes, the
 * protocol (fitted, or taken from another calibration), the control and
 * host queues, assembled into one CalFile. The work of `arsim calibrate`
 * below its options and its tables (report/reportcalib.h prints them).
 *
 * Classes (calfit.h):
 *   inter  ping-pong class inter (fit_pingpong) and ring all-reduce cases
 *          of arsim's ring (fit_ring; only when every host ran one rank)
 *   intra  ping-pong class intra
 *   γ      the reduce cases (always)
 *
 * Invariants of a CalRun that calrun_fit filled (returned 0):
 *   - cal.used holds every collected case's index (outliers included) and
 *     cal.outliers the link classes' dropped ones, both ascending;
 *   - cal.inter.set iff inter->len > 0 (likewise intra);
 *   - cal.inter_protocol.set iff cal.inter.set and !CALFIT_NO_PROTOCOL;
 *     then its progress is in_mpi where it was fitted here (mpibench's MPI
 *     has no progress thread), and it is the given calibration's (its
 *     overhead the one fitted here) where protocol_path was given;
 *   - queued: the control queue was fitted (only without protocol_path);
 *     hosted: the host queue was, either way. */
#ifndef ARSIM_CALRUN_H
#define ARSIM_CALRUN_H

#include "calib/calfit.h"
#include "calib/calhostq.h"
#include "calib/calmeas.h"
#include "calib/calqueue.h"
#include "io/calfile.h"

#include <glib.h>
#include <stdbool.h>

/* What to fit and how. */
typedef struct {
    bool fit_pingpong;       /* ping-pong cases fit the inter class */
    bool fit_ring;           /* ring all-reduce cases fit the inter class */
    unsigned flags;          /* CALFIT_NO_BURST, _NO_PROTOCOL, _FREE_BETA, _NO_PEAK, _NO_RING_BETA (calfit.h) */
    const char *protocol_path; /* a calibration whose inter protocol is taken instead of fitted, or NULL;
                                * never with CALFIT_NO_PROTOCOL */
    const char *source;      /* the measurements file's path, written as the calibration's source */
} CalRunOpts;

/* A finished calibration and the fits behind it (for the tables). */
typedef struct {
    CalRunOpts opts;         /* as given (borrowed strings) */
    CalFile cal;             /* the calibration; owned */
    GArray *reduce;          /* CalPoint of the γ fit, pred_s filled; owned */
    GArray *inter;           /* CalPoint of the inter class, pred_s and used filled; owned */
    GArray *intra;           /* CalPoint of the intra class; owned */
    CalGammaFit gamma;       /* valid where cal.has_gamma */
    CalLinkFit inter_fit;    /* valid where cal.inter.set */
    CalLinkFit intra_fit;    /* valid where cal.intra.set */
    CalQueueFit queue;       /* valid where queued */
    bool queued;             /* the control queue was fitted (calqueue_fit) */
    CalHostQueueFit host;    /* valid where hosted */
    bool hosted;             /* the host queue was fitted (calhostq_fit) */
} CalRun;

/* Fits m into *out (always cleared with calrun_clear afterwards, whatever
 * the result). 0, or 2 with *err (g_free) "file:line:col: what is wrong;
 * what is expected": no case to fit α and β, too few points for a class,
 * an unreadable protocol_path or one without an inter protocol. */
int calrun_fit(const MeasFile *m, const CalRunOpts *o, CalRun *out, char **err);
void calrun_clear(CalRun *r);

/* The modes fitted as the calibration names them: "pingpong,ring",
 * "pingpong" or "ring". */
const char *calrun_modes(const CalRunOpts *o);

#endif
