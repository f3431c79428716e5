/* shardfit — memory against capacity; see shardfit.h. */
#include "train/shardfit.h"
#include "coll/nccl.h"
#include "train/shardplan.h"

uint64_t shardfit_nccl_comm_bytes(const NodeSpec *n, int ranks, int nodes, int channels)
{
    if (ranks < 2)
        return 0;
    NcclSystem sys;
    nccl_system_from_node(n, ranks, nodes, &sys);
    uint64_t b = (uint64_t)(channels > 0 ? channels : sys.channels) * SHARDFIT_NCCL_CONNS * SHARDFIT_NCCL_CONN_BYTES;
    int local = ranks / nodes;
    if (n->nvls && local > 1)
        b += (uint64_t)sys.nvls_channels * (uint64_t)local * SHARDFIT_NVLS_BYTES;
    return b;
}

uint64_t shardfit_nccl_bytes(const Scenario *s, const Policy *p)
{
    if (!s->node || s->world < 2)
        return 0;
    int ch = p->nccl.channels;
    if (p->sharding == SHARD_HYBRID && policy_rules(p->overlap)->units == UNITS_SHARDED)
        return shardfit_nccl_comm_bytes(s->node, s->gpus_per_node, 1, ch) +
               shardfit_nccl_comm_bytes(s->node, s->nodes, s->nodes, ch);
    return shardfit_nccl_comm_bytes(s->node, s->world, s->nodes, ch);
}

uint64_t shardfit_peak(const Scenario *s, const Policy *p, int batch)
{
    uint64_t m = shardplan_memory(p, s->model, s->world, s->gpus_per_node, batch, s->elem_bytes);
    return m ? m + shardfit_nccl_bytes(s, p) : 0;
}

static double gib(uint64_t b)
{
    return (double)b / 1073741824.0;
}

/* p fully sharded: fsdp's full_shard (fsdp2 stays fsdp2), re-sharded to
 * every GPU after forward. */
static Policy full_shard(const Policy *p)
{
    Policy q = *p;   /* shares p's owned fields: read only */
    if (policy_rules(q.overlap)->units != UNITS_SHARDED)
        q.overlap = OVERLAP_FSDP;
    q.sharding = SHARD_FULL;
    q.shard_group = 0;
    q.reshard = POLICY_RESHARD_TRUE;
    q.keep_last = false;
    return q;
}

/* What would fit for policy p instead of batch b (g_free): the largest
 * smaller batch; else, at batch 1, the first of checkpoint: full, full
 * sharding and both that fits, each only where it changes p; else what
 * both leave at batch 1 and whether more GPUs would bring it under. */
static char *hint(const Scenario *s, const Policy *p, int b)
{
    uint64_t cap = s->gpu.mem_capacity;
    for (int k = b - 1; k >= 1; k--) {
        uint64_t m = shardfit_peak(s, p, k);
        if (m <= cap)
            return g_strdup_printf("batch %d (%.1f GiB) or less with this policy", k, gib(m));
    }
    bool sharded = policy_rules(p->overlap)->units == UNITS_SHARDED;
    const char *shard = sharded ? "sharding: full_shard" : "overlap: fsdp";
    Policy ck = *p, fs = full_shard(p), both = fs;
    ck.checkpoint = both.checkpoint = SHARD_CKPT_FULL;
    struct {
        const Policy *q;
        bool differs;
        const char *what;
    } tries[] = {{&ck, p->checkpoint != SHARD_CKPT_FULL, "checkpoint: full"},
                 {&fs, !sharded || p->sharding != SHARD_FULL, shard},
                 {&both, true, NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(tries); i++) {
        uint64_t m = tries[i].differs ? shardfit_peak(s, tries[i].q, 1) : 0;
        if (!tries[i].differs || !m || m > cap)
            continue;
        if (tries[i].what)
            return g_strdup_printf("%s (%.1f GiB at batch 1)", tries[i].what, gib(m));
        return g_strdup_printf("%s with checkpoint: full (%.1f GiB at batch 1)", shard, gib(m));
    }
    uint64_t here = shardfit_peak(s, &both, 1);
    /* with GPUs without end, the sharded states vanish: what is left is
     * every GPU's own (activations, the gathered units, buffers) */
    uint64_t floor = shardplan_memory(&both, s->model, 1 << 20, s->gpus_per_node, 1, s->elem_bytes);
    return g_strdup_printf("more GPUs or a GPU with more memory (no batch fits this policy; fully sharded with "
                           "checkpoint: full it needs %.1f GiB at batch 1 on %d GPUs%s)", gib(here), s->world,
                           floor > cap ? ", and above the GPU's memory on any number" : "");
}

bool shardfit_check(const Scenario *s, char **err)
{
    uint64_t cap = s->gpu.mem_capacity;
    if (!cap) {
        *err = g_strdup_printf("--strict-memory: GPU %s gives no memory_GiB, so nothing to check against; expected "
                               "memory_GiB in its GPU entry, or no --strict-memory", s->gpu.key);
        return false;
    }
    for (guint i = 0; i < s->batches->len; i++) {
        int b = g_array_index(s->batches, int, i);
        for (guint j = 0; j < s->policies->len; j++) {
            const Policy *p = g_ptr_array_index(s->policies, j);
            uint64_t m = shardfit_peak(s, p, b);
            if (!m) {
                *err = g_strdup_printf("--strict-memory: model %s gives no act_bytes, so no memory estimate; "
                                       "expected a model whose layers give act_bytes (llama3-*), or no "
                                       "--strict-memory", s->model->name);
                return false;
            }
            if (m <= cap)
                continue;
            char *h = hint(s, p, b);
            *err = g_strdup_printf("--strict-memory: policy '%s' at batch %d needs an estimated %.1f GiB a GPU, "
                                   "above the %s's %.0f GiB; expected %s", p->name, b, gib(m), s->gpu.key, gib(cap),
                                   h);
            g_free(h);
            return false;
        }
    }
    return true;
}
