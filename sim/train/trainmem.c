/* trainmem — memory estimate of a scenario; see trainmem.h. */
#include "train/trainmem.h"
#include "coll/collexec.h"
#include "coll/nccllive.h"
#include "io/memlimit.h"
#include "train/trainnccl.h"

/* The process itself, the model and the results: bytes. */
#define TRAINMEM_BASE ((uint64_t)16 << 20)

int trainmem_nccl_live_calls(const Scenario *s, const Policy *p)
{
    if (!trainnccl_used(s, p) || !trainnccl_live(s, p))
        return 1;
    /* each communicator stream (one per collective: COLL_NOPS) starts at most comm.streams; the per-rank
     * engine starts a call once every rank issued it, so it holds a place on every rank's communicator */
    int streams = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE ? COLL_NOPS : 1;
    return streams * s->comm_streams;
}

/* The NCCL calls of s's policies that hold the most at once (the memo
 * runs one at a time; a live policy runs up to trainmem_nccl_live_calls
 * units' calls at once, each on every group of its shape, every channel:
 * the estimate below is already the full run's, as it has no cluster map
 * to merge orbits by): over the policies that
 * go through NCCL, the algorithms they may run on the cluster, each at
 * the most channels the tuner gives (or the policy forces), at most
 * `cap` channels (0: no cap). Their bytes, beside the Topo t they share
 * with the run, and *at (may be NULL): that call's spec. 0 when no
 * policy goes through NCCL. */
static uint64_t nccl_peak(const Scenario *s, Topo *t, int cap, NcclSimSpec *at)
{
    uint64_t best = 0;
    if (!s->node)
        return 0;
    for (guint i = 0; i < s->policies->len; i++) {
        const Policy *p = g_ptr_array_index(s->policies, i);
        if (!trainnccl_used(s, p))
            continue;
        CommNcclGroup shape[TRAINNCCL_MAX_SHAPES];
        /* from the memo, one call at a time on the whole cluster's communicator (the estimate of every
         * call's); live, each unit's calls on every group of their shape at once */
        int nshapes = trainnccl_live(s, p) ? trainnccl_shapes(s, p, shape) : 1;
        if (nshapes == 1)
            shape[0] = (CommNcclGroup){s->nodes, s->gpus_per_node};
        for (int k = 0; k < nshapes; k++) {
            const CommNcclGroup *g = &shape[k];
            uint64_t groups = (uint64_t)(s->nodes / g->nodes) * (uint64_t)(s->gpus_per_node / g->ppn);
            NcclSystem sys;
            nccl_system_from_node(s->node, g->nodes * g->ppn, g->nodes, &sys);
            for (int a = 0; a < NCCL_NALGOS; a++) {
                bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE;
                if ((p->nccl.algo >= 0 && p->nccl.algo != a) || (nvls && !s->node->nvls) ||
                    (a == NCCL_ALGO_NVLS && g->nodes > 1) || (a == NCCL_ALGO_NVLSTREE && g->nodes < 2))
                    continue;
                int ch = p->nccl.channels > 0 ? p->nccl.channels : nvls ? sys.nvls_channels : sys.channels;
                NcclSimSpec sp = {.topo = t, .nodes = g->nodes, .ppn = g->ppn, .op = NCCL_OP_ALLREDUCE,
                                  .choice = {.algo = (NcclAlgo)a, .channels = cap > 0 && ch > cap ? cap : ch},
                                  .release = (NcclRelease)p->nccl.release};
                /* the run's own Net and routes; the Topo is the run's; the per-rank counts (commnccl) */
                uint64_t m = (uint64_t)trainmem_nccl_live_calls(s, p) * groups * nccllive_mem(&sp) +
                             (uint64_t)s->world * sizeof(uint64_t);
                if (m > best) {
                    best = m;
                    if (at)
                        *at = sp;
                }
            }
        }
    }
    return best;
}

/* The estimate before the margin, NCCL's calls at most `cap` channels. */
static uint64_t raw(const Scenario *s, Topo *t, int cap)
{
    int p = s->world;
    uint64_t lg = 1;
    while ((1ull << lg) < (uint64_t)p)
        lg++;
    uint64_t bytes = s->model->params * (uint64_t)s->elem_bytes;
    /* every algorithm's routes (a rank sends to at most lg p + 1 peers), the network, and
     * comm_streams collectives in flight (memo runs: one), and NCCL's memo run */
    return TRAINMEM_BASE + topo_mem_estimate(t, (uint64_t)p * (lg + 1)) + net_mem_estimate(t, 0) +
           (uint64_t)s->comm_streams * collexec_mem_run(t, p, bytes) + (uint64_t)s->model->layers->len * 4096 +
           nccl_peak(s, t, cap, NULL);
}

/* The margin collexec_mem_estimate adds: +25 %. */
static uint64_t margin(uint64_t b)
{
    return b + b / 4;
}

uint64_t trainmem_estimate_parts(const Scenario *s, uint64_t *nccl, char **err)
{
    Topo *t = topo_new(&s->topo, err);
    if (!t)
        return 0;
    uint64_t need = margin(raw(s, t, 0));
    if (nccl)
        *nccl = margin(nccl_peak(s, t, 0, NULL));
    topo_free(t);
    return need;
}

uint64_t trainmem_estimate(const Scenario *s, char **err)
{
    return trainmem_estimate_parts(s, NULL, err);
}

/* The most channels NCCL's calls may use for s to fit limit (0: none,
 * or no NCCL call), below the peak call's. */
static int channels_fit(const Scenario *s, uint64_t limit)
{
    Topo *t = topo_new(&s->topo, NULL);
    if (!t)
        return 0;
    NcclSimSpec at = {0};
    int c = nccl_peak(s, t, 0, &at) ? at.choice.channels - 1 : 0;
    while (c > 0 && margin(raw(s, t, c)) > limit)
        c--;
    topo_free(t);
    return c;
}

bool trainmem_check(const Scenario *s, uint64_t limit, char **err)
{
    uint64_t need = trainmem_estimate(s, err);
    if (need == 0)
        return false;
    if (need <= limit)
        return true;
    char *what = g_strdup_printf("scenario %s", s->name);
    int fit = channels_fit(s, limit);
    char *change = fit > 0 ? g_strdup_printf("nccl: {channels: %d} in its NCCL policies (the most that fit), or fewer "
                                             "nodes or GPUs per node (cluster.nodes, cluster.gpus_per_node)", fit)
                           : g_strdup("fewer nodes or GPUs per node (cluster.nodes, cluster.gpus_per_node)");
    *err = memlimit_refusal(what, need, limit, change);
    g_free(change);
    g_free(what);
    return false;
}
