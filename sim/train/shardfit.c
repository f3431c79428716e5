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

/* What would fit for policy p instead of batch b (g_free). */
static char *hint(const Scenario *s, const Policy *p, int b)
{
    uint64_t cap = s->gpu.mem_capacity;
    for (int k = b - 1; k >= 1; k--) {
        uint64_t m = shardfit_peak(s, p, k);
        if (m <= cap)
            return g_strdup_printf("batch %d (%.1f GiB) or less with this policy", k, gib(m));
    }
    return g_strdup("checkpoint: full, sharding: full_shard or more GPUs (no batch fits this policy)");
}

bool shardfit_check(const Scenario *s, char **err)
{
    uint64_t cap = s->gpu.mem_capacity;
    if (!cap)
        return true;
    for (guint i = 0; i < s->batches->len; i++) {
        int b = g_array_index(s->batches, int, i);
        for (guint j = 0; j < s->policies->len; j++) {
            const Policy *p = g_ptr_array_index(s->policies, j);
            uint64_t m = shardfit_peak(s, p, b);
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
