/* nccllive — NCCL calls live on a shared network; see nccllive.h. */
#include "coll/nccllive.h"

NcclLive *nccllive_start(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                         Sim *sim, Net *net, void (*done)(void *ctx, void *data), void *ctx, void *data,
                         NcclChoice *choice, char **err)
{
    NcclChoice ch;
    if (!commnccl_choose(c, g, op, f, bytes, &ch, err))
        return NULL;
    if (choice)
        *choice = ch;
    NcclSimSpec sp = commnccl_spec(c, g, op, bytes, &ch);
    return ncclsim_start(&sp, sim, net, done, ctx, data, err);
}

uint64_t nccllive_mem(const NcclSimSpec *spec)
{
    NcclSimSpec sp = *spec;
    sp.full = true;
    return ncclsim_mem_estimate(&sp) - topo_mem_estimate(sp.topo, 0);
}
