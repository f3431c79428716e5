/* sweepsim — scenario + training as a SweepRunner; see sweepsim.h. */
#include "sweep/sweepsim.h"
#include "report/reportsim.h"
#include "train/train.h"
#include "train/trainmem.h"

/* ctx: NULL, or the bound in bytes (const uint64_t *). */
static bool sim_check(CfgNode *tree, void *ctx, char **err)
{
    const uint64_t *limit = ctx;
    Scenario *s = scenario_from_cfg(tree, err);
    bool ok = s && (!limit || trainmem_check(s, *limit, err));
    scenario_free(s);
    return ok;
}

static char *sim_run(CfgNode *tree, void *ctx, char **err)
{
    (void)ctx;
    Scenario *s = scenario_from_cfg(tree, err);
    if (!s)
        return NULL;
    TrainOpts opts = {.layers = false, .trace = false};
    GArray *res = train_run_all(s, &opts, err);
    char *text = res ? reportsim_results_text(s, res) : NULL;
    if (res)
        train_results_free(res);
    scenario_free(s);
    return text;
}

const SweepRunner *sweepsim_runner(void)
{
    static const SweepRunner runner = {.check = sim_check, .run = sim_run, .ctx = NULL};
    return &runner;
}

SweepRunner sweepsim_runner_limited(const uint64_t *max_memory)
{
    return (SweepRunner){.check = sim_check, .run = sim_run, .ctx = (void *)max_memory};
}
