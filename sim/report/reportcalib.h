/* reportcalib — the tables `arsim calibrate` prints for a calibration
 * (calib/calrun.h), as text:
 *
 *   a header line (file, MPI library, ranks and hosts, modes fitted);
 *   the fit table: one row per link class (α, β, goodput, burst, R²,
 *     RMS relative error, points, outliers);
 *   one line per class and setting: β (where it was held), the peak rate
 *     (classes with a burst), the protocol (fitted or given), the control
 *     queue with the exchange cases (where fitted), the host queue (where
 *     fitted), γ;
 *   the residual table: one row per point of the inter, intra and γ fits
 *     (measured, fitted, relative residual, outliers marked).
 *
 * Pure text: reads the CalRun and the MeasFile, writes nothing. */
#ifndef ARSIM_REPORTCALIB_H
#define ARSIM_REPORTCALIB_H

#include "calib/calmeas.h"
#include "calib/calrun.h"

/* The whole text, ending in a newline (g_free). */
char *reportcalib_text(const MeasFile *m, const CalRun *r);

#endif
