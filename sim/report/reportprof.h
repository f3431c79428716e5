/* reportprof — per-layer forward/backward times from a PyTorch profiler
 * Chrome trace (torch.profiler's export_chrome_trace, one training step).
 * Report code: the only kind that may use cJSON. `arsim import-profile`
 * (cmdimport.c) turns the result into a measured model file.
 *
 * How layers are found in the trace (the contract; docs/howto/add-your-model.md "Measured
 * models"):
 *
 *  - Layers are user annotations: a complete event (ph "X") on a CPU
 *    thread named "fwd:LAYER" spans LAYER's forward, "bwd:LAYER" its
 *    backward, LAYER being the layer's name in models/<model>.yaml. They
 *    are what torch.autograd.profiler.record_function("fwd:conv1_1")
 *    writes; models/gen/profile_model.py (the user-side tool, run under
 *    PyTorch, not needed to build arsim) records them with forward and
 *    backward hooks on each named module. Module names from
 *    with_modules=True are not used: they cover forward only and name
 *    classes ("nn.Module: Conv2d_0"), not the model file's layers.
 *    Events whose category contains "gpu" (gpu_user_annotation, the GPU
 *    mirror of a range) are ignored.
 *  - A GPU kernel (category "kernel", any case) belongs to the innermost
 *    layer range that contains the CPU point it was launched from, on the
 *    same pid and tid. The launch point is the CUDA runtime event
 *    (category cuda_runtime / cuda_driver / runtime) with the kernel's
 *    args.correlation; failing that, the flow (ph "s" -> ph "f", same id)
 *    whose "f" end lies on the kernel's pid, tid and ts.
 *  - A layer's time is the GPU busy time of its kernels (the union of
 *    their [ts, ts + dur) intervals, so concurrent kernels count once).
 *    Separately, its gap time: the GPU's idle time right before each of
 *    its kernels, where the kernel before (in start order, any kernel of
 *    the trace) belongs to a range of the same pass (fwd or bwd) — the
 *    time the GPU waited for the CPU to launch this layer's work. Gaps
 *    after a kernel outside every layer (the loss, the optimizer) or after
 *    the other pass are nobody's. Kernel time + gap time over a pass is
 *    the span of its GPU work.
 *    If no kernel of the trace falls in any layer range (a CPU-only
 *    trace), every layer's time is the summed duration of its CPU ranges.
 *  - A layer with several ranges (called twice) sums them. The result is
 *    divided by the number of "ProfilerStep#N" ranges (1 if none): a trace
 *    of several steps gives the per-step average.
 *  - Ranges named "arsim:batch=B" and "arsim:precision=P" carry the batch
 *    size and precision of the run; deviceProperties[0].name the GPU.
 *  - ts and dur are microseconds (numbers, or numeric strings). */
#ifndef ARSIM_REPORTPROF_H
#define ARSIM_REPORTPROF_H

#include <glib.h>
#include <stdbool.h>

/* One layer named in the trace. */
typedef struct {
    char *name;          /* layer name without the fwd:/bwd: prefix; owned */
    double fwd_s;        /* forward time per step, s (>= 0) */
    double bwd_s;        /* backward time per step, s (>= 0) */
    int fwd_ranges;      /* fwd:NAME ranges found (0: no forward range) */
    int bwd_ranges;      /* bwd:NAME ranges found (0: no backward range) */
    int fwd_kernels;     /* kernels attributed to the forward ranges */
    int bwd_kernels;     /* kernels attributed to the backward ranges */
    double fwd_gap_s;    /* GPU idle time before its forward kernels, per step, s (>= 0; 0 for CPU time) */
    double bwd_gap_s;    /* the same for its backward kernels, s */
} ReportProfLayer;

typedef struct {
    GPtrArray *layers;   /* ReportProfLayer*, in order of first appearance; owned */
    GHashTable *by_name; /* name -> ReportProfLayer* borrowed from layers */
    bool gpu_time;       /* true: times are kernel time; false: CPU range time */
    int steps;           /* ProfilerStep#N ranges (1 if none); times are divided by it */
    int batch;           /* from "arsim:batch=B"; 0 if absent */
    char *precision;     /* from "arsim:precision=P"; owned; NULL if absent */
    char *device;        /* deviceProperties[0].name; owned; NULL if absent */
    int kernels;         /* kernel events in the trace */
    int kernels_in_layers; /* of those, attributed to a layer range */
} ReportProf;

/* Parses trace text (len bytes; need not be NUL-terminated). `file` names
 * it in errors: "file:line:col: what; expected ..." (the position of a
 * JSON syntax error; 1:1 for an error in the trace's content, which names
 * the event index). NULL + *err on bad input. */
ReportProf *reportprof_parse(const char *text, size_t len, const char *file, char **err);
/* Reads and parses a file. */
ReportProf *reportprof_load(const char *path, char **err);
void reportprof_free(ReportProf *p);
/* The layer of that name, or NULL. */
const ReportProfLayer *reportprof_layer(const ReportProf *p, const char *name);

#endif
