/* calmeas — the measured cases that calibration fits and compares; see
 * calmeas.h. */
#include "calib/calmeas.h"

static void case_clear(gpointer p)
{
    MeasCase *c = p;
    g_free(c->config);
    g_free(c->policy);
    g_strfreev(c->sets);
    g_free(c->reps_s);
}

MeasFile *calmeas_new(const char *path)
{
    MeasFile *m = g_new0(MeasFile, 1);
    m->path = g_strdup(path);
    m->cases = g_array_new(FALSE, TRUE, sizeof(MeasCase));
    g_array_set_clear_func(m->cases, case_clear);
    return m;
}

void calmeas_free(MeasFile *m)
{
    if (!m)
        return;
    g_free(m->path);
    g_free(m->mpi_library);
    g_free(m->date);
    g_free(m->cwd);
    if (m->cases)
        g_array_free(m->cases, TRUE);
    g_free(m);
}

const char *calmeas_mode_name(MeasMode m)
{
    static const char *const names[] = {"pingpong", "reduce", "allreduce", "iteration", "exchange"};
    return names[m];
}

char *calmeas_case_label(const MeasCase *c)
{
    switch (c->mode) {
    case MEAS_PINGPONG: return g_strdup(c->intra ? "pingpong intra" : "pingpong inter");
    case MEAS_REDUCE: return g_strdup("reduce");
    case MEAS_ALLREDUCE: return g_strdup_printf("allreduce %s", c->mpi ? "mpi" : coll_algo_name(c->algo));
    case MEAS_ITERATION: return g_strdup_printf("iteration %s", c->policy);
    case MEAS_EXCHANGE: return g_strdup(c->intra ? "exchange intra" : "exchange inter");
    }
    return g_strdup("?");
}
