/* cmdimport — `arsim import-profile`; see cmdimport.h. Option parsing,
 * matching the trace's layers to the model file's, and writing the
 * measured model file. The trace itself is read by reportprof.c. */
#include "cli/cmdimport.h"
#include "io/fileio.h"
#include "io/cfg.h"
#include "io/units.h"
#include "train/gpu.h"
#include "train/model.h"
#include "report/reportprof.h"
#include "report/reportrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *trace;       /* TRACE.json; the first argument */
    char *model;             /* --model NAME or path */
    char *out;               /* --out FILE; NULL: stdout */
    char *gpu;               /* --gpu KEY; NULL: from the trace's device */
    char *precision;         /* --precision; NULL: from the trace, else fp32 */
    int batch;               /* --batch; 0: from the trace */
    bool gaps;               /* --gaps: add each layer's GPU idle gaps to its kernel time */
    GPtrArray *args;         /* the arguments: TRACE.json */
} ImportOpts;

/* What the output file says besides the layers. */
typedef struct {
    char *name;              /* the new model's name; owned */
    char *gpu;               /* GPU key; owned */
    const char *precision;   /* fp32, tf32, fp16 or bf16; borrowed */
    int batch;               /* batch of the trace, >= 1 */
} ImportMeta;

/* Lower-case letters and digits of s only. */
static char *squash(const char *s)
{
    GString *g = g_string_new(NULL);
    for (; *s; s++)
        if (g_ascii_isalnum(*s))
            g_string_append_c(g, g_ascii_tolower(*s));
    return g_string_free(g, FALSE);
}

/* The gpus.yaml key whose squashed form is the longest substring of the
 * squashed device name ("NVIDIA A100-SXM4-80GB" -> a100); NULL if none, or
 * with *err set (caller frees) when models/gpus.yaml cannot be read. */
static char *gpu_for_device(const char *device, char **err)
{
    char **keys = gpu_list(NULL, err);
    if (!keys || !device) {
        g_strfreev(keys);
        return NULL;
    }
    char *dev = squash(device), *best = NULL;
    size_t best_len = 0;
    for (int i = 0; keys[i]; i++) {
        char *k = squash(keys[i]);
        if (*k && strstr(dev, k) && strlen(k) > best_len) {
            best_len = strlen(k);
            g_free(best);
            best = g_strdup(keys[i]);
        }
        g_free(k);
    }
    g_free(dev);
    g_strfreev(keys);
    return best;
}

/* Prefixes *err with "--gpu: " (the GPU file failed to load); returns 2. */
static int gpu_option_err(char **err)
{
    char *why = *err;
    *err = g_strdup_printf("--gpu: %s", why);
    g_free(why);
    return 2;
}

/* Batch, GPU and precision from the options, else from the trace. */
static int resolve_meta(const ImportOpts *o, const ReportProf *p, ImportMeta *m, char **err)
{
    m->batch = o->batch ? o->batch : p->batch;
    if (m->batch < 1) {
        *err = g_strdup_printf("--batch: missing and %s has no arsim:batch=B range; expected --batch B (the "
                               "per-GPU batch size of the profiled step)", o->trace);
        return 2;
    }
    if (o->gpu) {
        Gpu g;
        if (!gpu_load(o->gpu, NULL, &g, err))
            return gpu_option_err(err);
        gpu_clear(&g);
        m->gpu = g_strdup(o->gpu);
    } else if (!(m->gpu = gpu_for_device(p->device, err))) {
        if (*err)
            return gpu_option_err(err);
        *err = cfg_oneline(g_strdup_printf("--gpu: missing and the trace's device '%s' matches no entry of "
                                           "models/gpus.yaml; expected --gpu KEY (arsim list gpus)",
                                           p->device ? p->device : "(none)"));
        return 2;
    }
    const char *prec = o->precision ? o->precision : p->precision ? p->precision : "fp32";
    Precision pr;
    if (!gpu_precision_parse(prec, &pr)) {
        *err = o->precision ? g_strdup_printf("--precision: unknown precision '%s'; expected fp32, tf32, fp16 or bf16",
                                              prec)
                            : cfg_oneline(g_strdup_printf("%s:1:1: arsim:precision=%s is unknown; expected fp32, tf32, "
                                                          "fp16 or bf16", o->trace, prec));
        return 2;
    }
    m->precision = prec;
    if (o->gaps && !p->gpu_time) {
        *err = cfg_oneline(g_strdup_printf("--gaps: %s has no GPU kernel in a layer range, so no GPU gaps; "
                                           "expected a trace with CUDA activity, or no --gaps", o->trace));
        return 2;
    }
    return 0;
}

/* Every model layer needs a fwd: and a bwd: range. Trace layers the model
 * lacks and layers without kernels get a line in notes (printed on stderr
 * once the import succeeded). */
static int match_layers(const ImportOpts *o, const Model *m, const ReportProf *p, GString *notes, char **err)
{
    GString *none = g_string_new(NULL);
    for (guint i = 0; i < m->layers->len; i++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, i);
        const ReportProfLayer *t = reportprof_layer(p, l->name);
        if (!t || !t->fwd_ranges || !t->bwd_ranges) {
            *err = g_strdup_printf("%s:1:1: no %s:%s range for layer '%s' of model %s; expected fwd:LAYER and "
                                   "bwd:LAYER ranges for every layer (models/gen/profile_model.py records them)",
                                   o->trace, !t || !t->fwd_ranges ? "fwd" : "bwd", l->name, l->name, m->name);
            g_string_free(none, TRUE);
            return 2;
        }
        if (p->gpu_time && t->fwd_kernels + t->bwd_kernels == 0)
            g_string_append_printf(none, "%s%s", none->len ? ", " : "", l->name);
    }
    if (none->len)
        g_string_append_printf(notes, "arsim: note: layers with ranges but no GPU kernels (time 0): %s\n", none->str);
    g_string_free(none, TRUE);
    for (guint i = 0; i < p->layers->len; i++) {
        const ReportProfLayer *t = g_ptr_array_index(p->layers, i);
        bool known = false;
        for (guint j = 0; j < m->layers->len && !known; j++)
            known = strcmp(g_array_index(m->layers, ModelLayer, j).name, t->name) == 0;
        if (!known)
            g_string_append_printf(notes, "arsim: note: ignored the trace's ranges for '%s': model %s has no such "
                                   "layer\n", t->name, m->name);
    }
    return 0;
}

/* s as a double-quoted YAML scalar. */
static void put_quoted(GString *g, const char *s)
{
    g_string_append_c(g, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            g_string_append_printf(g, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            g_string_append_printf(g, "\\x%02x", (unsigned char)*s);
        else
            g_string_append_c(g, *s);
    }
    g_string_append_c(g, '"');
}

/* What a layer's time is: the words the file's header and the summary use. */
static const char *time_kind(const ImportOpts *o, const ReportProf *p)
{
    return !p->gpu_time ? "CPU range time" : o->gaps ? "GPU kernel time and idle gaps" : "GPU kernel time";
}

/* The measured model file's text. */
static char *model_text(const ImportOpts *o, const Model *m, const ReportProf *p, const ImportMeta *mt)
{
    GString *g = g_string_new(NULL);
    char *base = g_path_get_basename(o->trace);
    const char *how = time_kind(o, p);
    char *source = g_strdup_printf("torch.profiler trace %s (%s, %d step%s)", base, how, p->steps,
                                   p->steps == 1 ? "" : "s");
    g_string_append_printf(g, "# %s - per-layer times measured with torch.profiler.\n"
                              "# Written by `arsim import-profile %s --model %s`; do not edit by hand.\n"
                              "# fwd_ms/bwd_ms: %s per training step at per-GPU batch %d on %s (%s),\n"
                              "# averaged over %d profiled step%s; arsim scales them linearly with the batch.\n"
                              "# kind, params, tensors, flops and mem_bytes are copied from model %s.\n",
                           mt->name, base, o->model, how, mt->batch, mt->gpu, mt->precision, p->steps,
                           p->steps == 1 ? "" : "s", m->name);
    g_string_append(g, "name: ");
    put_quoted(g, mt->name);
    g_string_append(g, "\ndescription: ");
    char *desc = g_strdup_printf("%s%sper-layer times measured with torch.profiler", m->description,
                                 *m->description ? "; " : "");
    put_quoted(g, desc);
    g_string_append_printf(g, "\nparams: %" G_GUINT64_FORMAT "\nmeasured: {batch: %d, gpu: ", (guint64)m->params,
                           mt->batch);
    put_quoted(g, mt->gpu);
    g_string_append(g, ", source: ");
    put_quoted(g, source);
    g_string_append_printf(g, ", precision: %s}\nlayers:\n", mt->precision);
    for (guint i = 0; i < m->layers->len; i++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, i);
        const ReportProfLayer *t = reportprof_layer(p, l->name);
        g_string_append(g, "  - {name: ");
        put_quoted(g, l->name);
        g_string_append_printf(g, ", kind: %s, params: %" G_GUINT64_FORMAT ", tensors: [", model_kind_name(l->kind),
                               (guint64)l->params);
        for (guint j = 0; j < l->tensors->len; j++)
            g_string_append_printf(g, "%s%" G_GUINT64_FORMAT, j ? ", " : "",
                                   (guint64)g_array_index(l->tensors, uint64_t, j));
        g_string_append_printf(g, "], flops: %.15g, mem_bytes: %.15g, fwd_ms: %.10g, bwd_ms: %.10g}\n", l->flops,
                               l->mem_bytes, (t->fwd_s + (o->gaps ? t->fwd_gap_s : 0)) * 1e3,
                               (t->bwd_s + (o->gaps ? t->bwd_gap_s : 0)) * 1e3);
    }
    g_free(desc);
    g_free(source);
    g_free(base);
    return g_string_free(g, FALSE);
}

/* The new model's name: --out's file stem, else "<model>-measured". */
static char *new_name(const ImportOpts *o, const Model *m)
{
    if (!o->out)
        return g_strdup_printf("%s-measured", m->name);
    char *base = g_path_get_basename(o->out);
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = '\0';
    return base;
}

static int import(void *opts, char **err)
{
    ImportOpts *o = opts;
    o->trace = o->args->pdata[0];
    char *why = NULL;
    Model *m = model_load(o->model, NULL, &why);
    if (!m) {
        *err = g_str_has_prefix(why, "unknown model") ? g_strdup_printf("--model: %s", why) : g_strdup(why);
        g_free(why);
        return 2;
    }
    ReportProf *p = reportprof_load(o->trace, err);
    ImportMeta mt = {0};
    int rc = p ? resolve_meta(o, p, &mt, err) : 2;
    GString *notes = g_string_new(NULL);
    rc = rc ? rc : match_layers(o, m, p, notes, err);
    char *text = NULL;
    if (rc == 0) {
        mt.name = new_name(o, m);
        text = model_text(o, m, p, &mt);
        /* The file must load as a measured model before it is written. */
        CfgNode *root = cfg_parse_string(text, o->out ? o->out : "(output)", &why);
        Model *back = root ? model_from_cfg(root, &why) : NULL;
        if (!back || !back->measured) {
            *err = g_strdup_printf("import-profile: internal error, the output does not load (%s); expected a "
                                   "measured model", why ? why : "not measured");
            rc = 1;
        }
        g_free(why);
        why = NULL;
        model_free(back);
        cfg_free(root);
    }
    if (rc == 0 && o->out) {
        if (!fileio_write_text(o->out, text, &why)) {
            *err = g_strdup_printf("--out: %s", why);
            g_free(why);
            rc = 2;
        } else {
            /* --out -: the model alone on stdout, this line on stderr */
            fprintf(fileio_is_stdout(o->out) ? stderr : stdout,
                    "imported %u layers of %s from %s (%s, %d step%s, batch %d, %s, %s) into %s\n", m->layers->len,
                    m->name, o->trace, time_kind(o, p), p->steps, p->steps == 1 ? "" : "s", mt.batch, mt.gpu,
                    mt.precision, fileio_is_stdout(o->out) ? "standard output" : o->out);
        }
    } else if (rc == 0) {
        fputs(text, stdout);
    }
    if (rc == 0)
        fputs(notes->str, stderr);
    g_string_free(notes, TRUE);
    g_free(text);
    g_free(mt.name);
    g_free(mt.gpu);
    reportprof_free(p);
    model_free(m);
    return rc;
}

static const CliOpt opts[] = {
    {"model", CLI_IN, offsetof(ImportOpts, model),
     .help = "the model the trace profiled: a name in models/ or a file", .value = "NAME", .required = true,
     .names = "models"},
    {"out", CLI_OUT, offsetof(ImportOpts, out),
     .help = "write the measured model file to FILE (atomically); its name is the file's stem",
     .note = "on stdout, named MODEL-measured"},
    {"batch", CLI_INT, offsetof(ImportOpts, batch),
     .help = "the per-GPU batch size of the profiled step", .value = "B", .min = 1, .max = UNITS_COUNT_MAX,
     .note = "the trace's arsim:batch=B range"},
    {"gpu", CLI_STR, offsetof(ImportOpts, gpu),
     .help = "the GPU it ran on", .value = "KEY", .unit = "a key of models/gpus.yaml",
     .note = "matched from the trace's device name", .names = "gpus"},
    {"gaps", CLI_FLAG, offsetof(ImportOpts, gaps),
     .help = "add to each layer the GPU's idle time before its kernels within its pass (the launch-bound "
             "share of the step; a GPU trace only)",
     .note = "kernel time alone"},
    {"precision", CLI_STR, offsetof(ImportOpts, precision),
     .help = "the precision it ran in", .value = "P", .unit = "fp32, tf32, fp16 or bf16", .note = "the trace's, else fp32",
     .words = "fp32 tf32 fp16 bf16"},
    {NULL},
};

const CliCmd cmdimport_cli = {
    .name = "import-profile",
    .summary = "make a measured model file from a PyTorch profiler trace of one training step",
    .about = "TRACE.json: a torch.profiler Chrome trace with fwd:LAYER and bwd:LAYER ranges (models/gen/"
             "profile_model.py records them); the model file gets per-layer fwd_ms and bwd_ms.",
    .args = "TRACE.json",
    .arg_what = "TRACE.json file",
    .min_args = 1,
    .max_args = 1,
    .args_field = offsetof(ImportOpts, args),
    .opts = opts,
    .main = cmdimport_main,
};

int cmdimport_main(int argc, char **argv)
{
    ImportOpts o = {0};
    return cli_main(&cmdimport_cli, argc, argv, &o, import);
}
