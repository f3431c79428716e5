/* fuzz_results — libFuzzer harness: results files: a sweep's results.jsonl as `sweep
 * --resume`/`--merge` read it (sweepout_read, without repair: nothing is
 * cut) and its results.csv (reportsweep_csv), and as `arsim plot` reads it or a `run --json` file or a trace
 * (reportplot_load), then the plot's dimensions, groups and titles
 * (plotdims; the drawing itself writes files and is not run).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "plot/plotdims.h"
#include "report/reportsweep.h"
#include "sweep/sweepout.h"

/* The groups and titles of a figure over x dimension x. */
static void groups(const PlotDims *d, int x)
{
    GPtrArray *gs = plotdims_groups(d, &x, 1);
    for (guint i = 0; i < gs->len; i++)
        g_free(plotdims_title(d, g_ptr_array_index(gs, i)));
    g_ptr_array_free(gs, TRUE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfd(data, size);
    char *err = NULL;
    gsize dropped = 0;
    GPtrArray *lines = sweepout_read(path, SWEEPOUT_KEEP_FILE, &dropped, &err);
    fuzz_check(lines != NULL, &err, "sweepout_read");
    if (lines) {
        GPtrArray *texts = g_ptr_array_new();
        for (guint i = 0; i < lines->len; i++)
            g_ptr_array_add(texts, ((SweepLine *)g_ptr_array_index(lines, i))->text);
        g_free(reportsweep_csv(texts));  /* results.csv of --resume and --merge */
        g_ptr_array_free(texts, TRUE);
        g_ptr_array_free(lines, TRUE);
    }

    PlotData pd;
    reportplot_init(&pd);
    bool ok = reportplot_load(path, &pd, &err);
    fuzz_check(ok, &err, "reportplot_load");
    if (ok) {
        PlotDims *d = plotdims_new(&pd);
        groups(d, d->batch_dim);
        groups(d, d->world_dim);
        plotdims_free(d);
    }
    reportplot_clear(&pd);
    return 0;
}
