/* ncclproxy — NCCL's proxy threads as serializing queues; see ncclproxy.h. */
#include "coll/ncclproxy.h"

#include <glib.h>

struct NcclProxy {
    Sim *sim;                /* borrowed */
    int nhosts;
    simtime_t op_ps;         /* one operation, ps */
    simtime_t *free_at;      /* [host]: when its thread's last operation ends, ps; owned */
    uint64_t *ops;           /* [host]: operations done; owned */
};

NcclProxy *ncclproxy_new(Sim *sim, int nhosts, simtime_t op_ps)
{
    NcclProxy *p = g_new0(NcclProxy, 1);
    p->sim = sim;
    p->nhosts = nhosts > 0 ? nhosts : 0;
    p->op_ps = op_ps;
    p->free_at = g_new0(simtime_t, p->nhosts ? p->nhosts : 1);
    p->ops = g_new0(uint64_t, p->nhosts ? p->nhosts : 1);
    return p;
}

void ncclproxy_free(NcclProxy *p)
{
    if (!p)
        return;
    g_free(p->free_at);
    g_free(p->ops);
    g_free(p);
}

simtime_t ncclproxy_take(NcclProxy *p, int h, simtime_t t)
{
    g_assert(h >= 0 && h < p->nhosts);
    simtime_t start = p->free_at[h] > t ? p->free_at[h] : t;
    p->free_at[h] = sim_add(p->sim, start, p->op_ps);
    p->ops[h]++;
    return p->free_at[h];
}

uint64_t ncclproxy_ops(const NcclProxy *p, int h)
{
    g_assert(h >= 0 && h < p->nhosts);
    return p->ops[h];
}
