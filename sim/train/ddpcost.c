/* ddpcost — DDP's own time; see ddpcost.h. */
#include "train/ddpcost.h"

double ddpcost_layer_s(const DdpCost *c, uint64_t tensors, bool sync, bool grad_view)
{
    double per = c->hook_s;
    if (sync)
        per += c->sync_s + (grad_view ? 0 : 2) * c->copy_s;
    return (double)tensors * per;
}

double ddpcost_bucket_s(const DdpCost *c)
{
    return c->bucket_s;
}

double ddpcost_once_s(const DdpCost *c, int iter)
{
    return iter == 1 ? c->rebuild_s : 0;
}

double ddpcost_iteration_s(const DdpCost *c, uint64_t tensors, int buckets, bool sync, bool grad_view, int iter)
{
    double t = ddpcost_layer_s(c, tensors, sync, grad_view);
    if (sync)
        t += buckets * ddpcost_bucket_s(c) + ddpcost_once_s(c, iter);
    return t;
}
