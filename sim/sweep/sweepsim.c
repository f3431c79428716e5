/* sweepsim — scenario + training as a SweepRunner; see sweepsim.h. */
#include "sweep/sweepsim.h"
#include "report/reportsim.h"
#include "train/train.h"

static bool sim_check(CfgNode *tree, void *ctx, char **err)
{
    (void)ctx;
    Scenario *s = scenario_from_cfg(tree, err);
    scenario_free(s);
    return s != NULL;
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
