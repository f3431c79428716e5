/* plotfig — the figures of `arsim plot`: for each, a data file (.dat: a
 * whitespace table with a header comment) written into the output
 * directory, drawn by its gnuplot script in plots/ into a PNG (pngcairo)
 * and an SVG beside it:
 *
 *   iteration_vs_batch  iteration time against per-GPU batch, a line per policy
 *   speedup_vs_batch    speed-up over the baseline against batch
 *   breakdown           stacked bars per policy and batch: compute, hidden and exposed communication
 *   scaling             iteration time and scaling efficiency against GPU count (when it varies)
 *   best_policy         heat map of the best policy and its margin over two varying dimensions
 *   timeline            one iteration's compute and sync spans per rank (from a trace)
 *   iteration_cdf       what-if results: the CDF of the measured iterations' times, a line per policy
 *   speedup_vs_whatif   sweeps over a what-if key (variation.cv, stragglers.0.slowdown, ...): speed-up
 *                       over the baseline and iteration time against it, a line per policy
 *   memory              results with memory_peak_bytes: iteration time and peak memory per GPU
 *                       against GPUs (when the count varies) and against the model (when it varies),
 *                       a line per policy, runs above the GPU's memory circled
 *
 * A figure whose rows split over other varying dimensions gets one image
 * per group, named <figure>-NN (01, 02, ... in sweep order). figures.txt
 * lists every image with its title.
 */
#ifndef ARSIM_PLOTFIG_H
#define ARSIM_PLOTFIG_H

#include "plot/plotgp.h"
#include "report/reportplot.h"

#include <stdio.h>

#define PLOTFIG_WIDTH 960        /* pixels of every PNG */
#define PLOTFIG_HEIGHT 600
#define PLOTFIG_MAX_GROUPS 64    /* images per figure kind at most */

typedef struct {
    const char *outdir;      /* where .dat, .png, .svg go (exists) */
    const PlotGp *gp;        /* the scripts and gnuplot */
    FILE *log;               /* one line per image */
    GString *index;          /* figures.txt being built */
    int made;                /* images drawn (PNG + SVG pairs) */
} PlotFigCtx;

/* Draws every figure the data supports. false + *err on an I/O or
 * gnuplot failure (that figure's images removed). */
bool plotfig_all(const PlotData *pd, PlotFigCtx *c, char **err);

#endif
