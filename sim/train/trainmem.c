/* trainmem — memory estimate of a scenario; see trainmem.h. */
#include "train/trainmem.h"
#include "coll/collexec.h"
#include "io/memlimit.h"

/* The process itself, the model and the results: bytes. */
#define TRAINMEM_BASE ((uint64_t)16 << 20)

uint64_t trainmem_estimate(const Scenario *s, char **err)
{
    Topo *t = topo_new(&s->topo, err);
    if (!t)
        return 0;
    int p = s->world;
    uint64_t lg = 1;
    while ((1ull << lg) < (uint64_t)p)
        lg++;
    uint64_t bytes = s->model->params * (uint64_t)s->elem_bytes;
    /* every algorithm's routes (a rank sends to at most lg p + 1 peers), the network, and
     * comm_streams collectives in flight (memo runs: one) */
    uint64_t need = TRAINMEM_BASE + topo_mem_estimate(t, (uint64_t)p * (lg + 1)) + net_mem_estimate(t, 0) +
                    (uint64_t)s->comm_streams * collexec_mem_run(t, p, bytes) +
                    (uint64_t)s->model->layers->len * 4096;
    topo_free(t);
    return need + need / 4;   /* the margin collexec_mem_estimate adds: +25 % */
}

bool trainmem_check(const Scenario *s, uint64_t limit, char **err)
{
    uint64_t need = trainmem_estimate(s, err);
    if (need == 0)
        return false;
    char *what = g_strdup_printf("scenario %s", s->name);
    *err = memlimit_refusal(what, need, limit, "fewer nodes or GPUs per node (cluster.nodes, cluster.gpus_per_node)");
    g_free(what);
    return *err == NULL;
}
