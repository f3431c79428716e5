/* plotgp — the one gnuplot runner of arsim. It finds the scripts (plots/
 * on the data search path, io/datapath.h) and gnuplot (on PATH), writes a
 * figure's data file and draws the figure's script into a PNG and an SVG
 * beside it. plotfig (`arsim plot`, `run --plot`) and plotcalib (`compare
 * --plot`) draw through it. */
#ifndef ARSIM_PLOTGP_H
#define ARSIM_PLOTGP_H

#include <glib.h>
#include <stdbool.h>

typedef struct {
    char *scripts;           /* the directory holding the .gp scripts; owned */
    char *gnuplot;           /* the gnuplot executable; owned */
} PlotGp;

/* Finds the directory holding plots/<probe> (a script name) on the data
 * search path, finds gnuplot, and creates outdir. false + *err (exit
 * status 1: the installation, not the input, is at fault); every field is
 * NULL or owned, for plotgp_close, either way. */
bool plotgp_open(PlotGp *g, const char *probe, const char *outdir, char **err);
void plotgp_close(PlotGp *g);

/* Appends s as a gnuplot double-quoted string (text: titles, labels). */
void plotgp_str(GString *out, const char *s);
/* Appends s as a gnuplot single-quoted string (paths: no escapes but ''). */
void plotgp_path(GString *out, const char *s);

/* Writes <dir>/<base>.dat (data), then runs <scripts>/<script>.gp with
 * `datafile`, `scriptdir`, the gnuplot assignments in vars (such as
 * "plottitle=\"x\"; nblocks=2"), then `fmt` and `outfile`, once into
 * <dir>/<base>.png and once into <dir>/<base>.svg. false + *err when the
 * data cannot be written or gnuplot fails (its last stderr line); the
 * images are removed then. */
bool plotgp_draw(const PlotGp *g, const char *dir, const char *script, const char *base, const char *data,
                 const char *vars, char **err);

#endif
