/* testfix — fixtures the suites share: a scenario read from YAML text,
 * its sync plan, a run on both training engines, a run's unit row by
 * name, and a temporary file holding a text. Header-only,
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

/* Runs policy `policy` of s at `batch` on both training engines (the
 * memoized one into a, the per-rank one into b, with unit rows) and
 * checks they agree to the bit: iteration, communication, exposed
 * communication, and every unit's start and end. The caller clears a and
 * b (train_result_clear). */
static inline void engines_agree(const Scenario *s, int batch, int policy, TrainResult *a, TrainResult *b)
{
    char *err = NULL;
    TrainOpts memo = {.layers = true}, rank = {.layers = true, .per_rank = true};
    ck_assert_msg(train_run(s, batch, policy, &memo, a, &err), "%s", err);
    ck_assert_msg(train_run(s, batch, policy, &rank, b, &err), "%s", err);
    ck_assert_double_eq(a->iteration_s, b->iteration_s);
    ck_assert_double_eq(a->comm_s, b->comm_s);
    ck_assert_double_eq(a->exposed_comm_s, b->exposed_comm_s);
    ck_assert_uint_eq(a->units->len, b->units->len);
    for (guint u = 0; u < a->units->len; u++) {
        ck_assert_double_eq(g_array_index(a->units, TrainUnitRow, u).start_s,
                            g_array_index(b->units, TrainUnitRow, u).start_s);
        ck_assert_double_eq(g_array_index(a->units, TrainUnitRow, u).end_s,
                            g_array_index(b->units, TrainUnitRow, u).end_s);
    }
}

/* The parameters of m's layers outside its blocks (a Llama file's
 * tok_embeddings, norm and output): every layer not named layers.N.... */
static inline uint64_t root_params(const Model *m)
{
    uint64_t root = 0;
    for (guint l = 0; l < m->layers->len; l++)
        if (!g_str_has_prefix(g_array_index(m->layers, ModelLayer, l).name, "layers."))
            root += g_array_index(m->layers, ModelLayer, l).params;
    return root;
}

/* The row of r's unit named name (r run with TrainOpts.layers); ends
 * the test where there is none. */
/* hybrid_shard's comm_bytes a GPU on `nodes` nodes of 8 GPUs, ring
 * collectives (docs/explanation/sharding.md, traffic): full_shard's within
 * the node, 2 x 7/8 (3 Psi - root), the root (root_params) gathered
 * once, plus the replicas' all-reduce of the shard, 2M(R-1)/(GR) with M = 2 Psi bytes, G = 8, R = nodes. */
static inline uint64_t hsdp8_comm_bytes(const Scenario *s, int nodes)
{
    uint64_t psi = s->model->params, root = root_params(s->model);
    uint64_t R = (uint64_t)nodes, M = 2 * psi;
    return 2 * 7 * (3 * psi - root) / 8 + 2 * M * (R - 1) / (8 * R);
}

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
