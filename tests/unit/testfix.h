/* testfix — fixtures the suites share: a scenario read from YAML text,
 * its sync plan, a run's unit row by name, and a temporary file holding
 * a text. Header-only,
 * static functions; failures end the test (Check). */
#ifndef ARSIM_TESTFIX_H
#define ARSIM_TESTFIX_H

#include "train/scenario.h"
#include "train/train.h"
#include "train/trainplan.h"

#include <check.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

/* The scenario of a YAML text (named test.yaml in errors); the caller
 * frees it (scenario_free). */
static inline Scenario *load(const char *yaml)
{
    char *err = NULL;
    CfgNode *root = cfg_parse_string(yaml, "test.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Scenario *s = scenario_from_cfg(root, &err);
    ck_assert_msg(s, "%s", err);
    return s;
}

/* The plan of policy `policy` of s at `batch` (trainplan_new); the caller
 * frees it (trainplan_free). */
static inline TrainPlan *plan_of(const Scenario *s, int policy, int batch)
{
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, policy, batch, &err);
    ck_assert_msg(p, "%s", err);
    return p;
}

/* The row of r's unit named name (r run with TrainOpts.layers); ends
 * the test where there is none. */
static inline const TrainUnitRow *unit_row(const TrainResult *r, const char *name)
{
    for (guint u = 0; u < r->units->len; u++)
        if (strcmp(g_array_index(r->units, TrainUnitRow, u).name, name) == 0)
            return &g_array_index(r->units, TrainUnitRow, u);
    ck_abort_msg("no unit %s", name);
    return NULL;
}

/* Writes text to a new temporary file named after pattern (g_file_open_tmp);
 * returns its path (g_free it, unlink the file). */
static inline char *tmp_file(const char *text, const char *pattern)
{
    char *path = NULL;
    int fd = g_file_open_tmp(pattern, &path, NULL);
    ck_assert(fd >= 0);
    close(fd);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

#endif
