/* shardfit — memory against capacity; see shardfit.h. */
#include "train/shardfit.h"
#include "train/shardplan.h"

static uint64_t peak(const Scenario *s, const Policy *p, int batch)
{
    return shardplan_memory(p, s->model, s->world, s->gpus_per_node, batch, s->elem_bytes);
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
        uint64_t m = peak(s, p, k);
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
            uint64_t m = peak(s, p, b);
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
