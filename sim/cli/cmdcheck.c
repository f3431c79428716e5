/* cmdcheck — `arsim check`; see cmdcheck.h. A sweep file is checked by
 * sweep_check, a scenario here. */
#include "cli/cmdcheck.h"
#include "cli/cmdrun.h"
#include "io/cfg.h"
#include "io/memlimit.h"
#include "sweep/sweep.h"
#include "train/scenario.h"
#include "train/trainest.h"
#include "train/trainmem.h"

/* The --estimate line: the probe's events and time, scaled to the run. */
static int estimate(const char *config, const Scenario *s, FILE *out, char **err)
{
    TrainEst e;
    if (!trainest_probe(s, &e, err))
        return 2;
    char rest[64] = "the whole run";
    if (s->batches->len > 1)
        g_snprintf(rest, sizeof rest, "the other %u batch sizes taken to cost the same", s->batches->len - 1);
    fprintf(out, "%s: run would simulate about %" G_GUINT64_FORMAT " engine events (between %" G_GUINT64_FORMAT
            " and %" G_GUINT64_FORMAT "), taking about %.3g s here; probed: every policy at batch %d, %"
            G_GUINT64_FORMAT " events in %.3g s, %s\n", config, (guint64)e.events,
            (guint64)(e.events / TRAINEST_FACTOR), (guint64)(e.events * TRAINEST_FACTOR), e.wall_s, e.probe_batch,
            (guint64)e.probe_events, e.probe_wall_s, rest);
    return 0;
}

static int check(const char *config, char **sets, bool probe, FILE *out, char **err)
{
    CfgNode *peek = cfg_load_file(config, err);
    bool sweep = peek && cfg_peek(peek, "sweep");
    cfg_free(peek);
    g_free(*err);
    *err = NULL;
    if (sweep && probe) {
        *err = g_strdup_printf("--estimate: %s is a sweep; expected a scenario (check one of its scenarios)", config);
        return 2;
    }
    if (sweep)
        return sweep_check(config, sets, out, err);
    Scenario *s = scenario_load(config, sets, err);
    if (!s)
        return 2;
    guint nb = s->batches->len, np = s->policies->len, nr = nb * np;
    fprintf(out, "%s: ok: %s, %u batch size%s x %u polic%s, %d GPU%s (%d node%s x %d)\n", config, s->model->name, nb,
            nb == 1 ? "" : "s", np, np == 1 ? "y" : "ies", s->world, s->world == 1 ? "" : "s", s->nodes,
            s->nodes == 1 ? "" : "s", s->gpus_per_node);
    if (s->cluster_desc)
        fprintf(out, "%s: cluster: %s\n", config, s->cluster_desc);
    uint64_t nccl = 0, mem = trainmem_estimate_parts(s, &nccl, err);
    if (!mem) {
        scenario_free(s);
        return 2;
    }
    char m[32], mn[32], part[96] = "";
    memlimit_fmt(m, sizeof m, mem);
    memlimit_fmt(mn, sizeof mn, nccl);
    int live = 1;   /* the most NCCL calls a policy holds at once */
    for (guint i = 0; i < s->policies->len; i++)
        live = MAX(live, trainmem_nccl_live_calls(s, g_ptr_array_index(s->policies, i)));
    if (nccl && live == 1)   /* GPU nodes: NCCL's simulation of one call, the largest */
        g_snprintf(part, sizeof part, ", %s of it NCCL's simulation of one call", mn);
    else if (nccl)
        g_snprintf(part, sizeof part, ", %s of it NCCL's simulation of up to %d calls live at once", mn, live);
    fprintf(out, "%s: run would simulate %u run%s of %d iterations (%d warmup + %d measured), holding about %s of "
            "memory at the peak%s (the estimate --max-memory is compared with)\n", config, nr, nr == 1 ? "" : "s",
            s->warmup + s->measured, s->warmup, s->measured, m, part);
    int rc = probe ? estimate(config, s, out, err) : 0;
    scenario_free(s);
    return rc;
}

static const CliOpt opts[] = {
    CMDRUN_SET_ROW(CmdCheckOpts),
    {"estimate", CLI_FLAG, offsetof(CmdCheckOpts, estimate),
     .help = "also estimate the engine events and the time of the run, by simulating every policy at the first "
             "batch size (1/B of the run's work for B batch sizes); the events within a factor of 2"},
    {NULL},
};

const CliCmd cmdcheck_cli = {
    .name = "check",
    .summary = "validate a scenario or a sweep without running it",
    .about = "Reads CONFIG as `run` and `sweep` would (every scenario of a sweep) and prints what it found, with, "
             "for a scenario, how many runs and iterations `run` would simulate and its memory estimate (with "
             "--estimate, its events and time too); or the first error.",
    .args = "CONFIG",
    .arg_what = "CONFIG file",
    .min_args = 1,
    .max_args = 1,
    .args_field = offsetof(CmdCheckOpts, args),
    .opts = opts,
    .near = &cmdrun_cli,
    .main = cmdcheck_main,
};

static int check_main(void *opts, char **err)
{
    CmdCheckOpts *o = opts;
    char *config = cmdrun_config_path(o->args->pdata[0]);
    int rc = check(config, cmdrun_sets(o->sets), o->estimate, stdout, err);
    g_free(config);
    return rc;
}

int cmdcheck_main(int argc, char **argv)
{
    CmdCheckOpts o = {0};
    return cli_main(&cmdcheck_cli, argc, argv, &o, check_main);
}
