/* nccltrans — a Ring run of one block of leaves; see nccltrans.h. */
#include "coll/nccltrans.h"

#include <string.h>

#define UNSET UINT32_MAX

int nccltrans_blocks(const NcclSimSpec *sp)
{
    if (!sp->cl || sp->choice.algo != NCCL_ALGO_RING || sp->op == NCCL_OP_BROADCAST || sp->node0 || sp->gpu0 ||
        sp->ppn != sp->cl->node.ngpus || sp->cl->node.fabric != NODE_FABRIC_NVSWITCH)
        return 1;
    int per = sp->cl->nodes_per_leaf;
    return per >= 1 && sp->nodes % per == 0 && sp->nodes / per >= 2 ? sp->nodes / per : 1;
}

/* Every slot's ring of R copied to ring, each from the position where it
 * enters node 0 (from another node), so that a block of positions is a
 * block of whole nodes; false if a ring never enters node 0 or does not
 * move by one block: ring[i + g*b] == ring[i] + g*b (mod n). */
static bool rings_translate(const Run *R, int b, int32_t *ring)
{
    int n = R->n, m = R->sp->ppn;
    for (int s = 0; s < R->S; s++) {
        const int32_t *o = R->ring + (size_t)s * n;
        int32_t *t = ring + (size_t)s * n;
        int p0 = 0;
        while (p0 < n && !(o[p0] / m == 0 && o[(p0 + n - 1) % n] / m != 0))
            p0++;
        if (p0 == n)
            return false;
        for (int i = 0; i < n; i++)
            t[i] = o[(p0 + i) % n];
        for (int i = b; i < n; i++)
            if (t[i] != (t[i % b] + i / b * b) % n)
                return false;
    }
    return true;
}

/* Whether the ops of the lane at position 0 and at its image b are alike
 * (receives, sends, data bytes), op for op: every position of a loop moves
 * the same bytes. */
static bool ops_translate(Run *R, int b)
{
    int32_t rv[2][4], sd[2][4];
    Op o[2] = {{.recv = rv[0], .send = sd[0]}, {.recv = rv[1], .send = sd[1]}};
    Lane L[2] = {{.kind = LANE_RING, .chan = 0, .who = 0}, {.kind = LANE_RING, .chan = 0, .who = b}};
    uint64_t nops = ncclsched_ring_nops(R);
    for (uint64_t k = 0; k < nops; k++) {
        for (int j = 0; j < 2; j++)
            ncclsched_op(R, &L[j], k, &o[j]);
        if (o[0].data != o[1].data || o[0].nrecv != o[1].nrecv || o[0].nsend != o[1].nsend)
            return false;
    }
    return true;
}

/* The links the check tracks: per link its index among the first block's
 * (id), the copy that uses it (owner), and per first-block link its image
 * in the copy being checked (img, valid where stamp is that copy). */
typedef struct {
    const Run *R;
    const int32_t *ring;     /* [s*n + pos]: the rings from their entry to node 0 (rings_translate) */
    uint32_t *id, *owner;    /* [link]: UNSET or the first block's index; UNSET or the copy using it */
    GArray *img, *stamp;     /* uint32 [id]: image under the current copy; the copy that set it */
} Links;

/* The route of slot s's connection from position pos to pos + 1 (mod n). */
static const TopoRoute *conn_route(const Links *x, int s, int pos, const int *rails)
{
    const Run *R = x->R;
    const int32_t *o = x->ring + (size_t)s * R->n;
    return ncclroute_get(R->routes, ncclsched_host(R, o[pos]), ncclsched_host(R, o[(pos + 1) % R->n]),
                         rails[ncclsched_slot_chan(R, s) % 64]);
}

/* Link l as the run uses it: its orbit's first in a merged run. */
static uint32_t used(const Run *R, uint32_t l) { return R->sym ? ncclsym_link(R->sym, l) : l; }

/* Records the first block's links (copy 0). */
static void first_block(Links *x, int b, const int *rails)
{
    for (int s = 0; s < x->R->S; s++)
        for (int p = 0; p < b; p++) {
            const TopoRoute *r = conn_route(x, s, p, rails);
            for (uint32_t k = 0; k < r->nhops; k++) {
                uint32_t l = used(x->R, r->link[k]);
                if (x->id[l] != UNSET)
                    continue;
                x->id[l] = x->img->len;
                x->owner[l] = 0;
                uint32_t z = UNSET;
                g_array_append_val(x->img, z);
                g_array_append_val(x->stamp, z);
            }
        }
}

/* Whether copy g's routes are the first block's mapped link for link (a
 * map onto links of the same kind, one-to-one, onto links no other copy
 * uses) and its connections run where the first block's do. */
static bool copy_maps(Links *x, int b, uint32_t g, const int *rails)
{
    const Run *R = x->R;
    uint32_t *img = (uint32_t *)(void *)x->img->data, *stamp = (uint32_t *)(void *)x->stamp->data;
    for (int s = 0; s < R->S; s++) {
        const int32_t *o = x->ring + (size_t)s * R->n;
        for (int p = 0; p < b; p++) {
            int q = p + (int)g * b;
            const TopoRoute *r0 = conn_route(x, s, p, rails), *rg = conn_route(x, s, q, rails);
            if (r0->nhops != rg->nhops ||
                ncclroute_hw(R->routes, ncclsched_host(R, o[p]), ncclsched_host(R, o[(p + 1) % R->n])) !=
                    ncclroute_hw(R->routes, ncclsched_host(R, o[q]), ncclsched_host(R, o[(q + 1) % R->n])))
                return false;
            for (uint32_t k = 0; k < r0->nhops; k++) {
                uint32_t a = x->id[used(R, r0->link[k])], l = used(R, rg->link[k]);
                if (stamp[a] == g) {
                    if (img[a] != l)
                        return false;
                    continue;
                }
                if (x->owner[l] != UNSET || !ncclsym_same_link(R->sp->topo, used(R, r0->link[k]), l))
                    return false;
                stamp[a] = g;
                img[a] = l;
                x->owner[l] = g;
            }
        }
    }
    return true;
}

bool nccltrans_check(Run *R, const int *rails)
{
    int b = R->n / R->T;
    if (!ops_translate(R, b))
        return false;
    size_t len = (size_t)R->S * (size_t)R->n;
    int32_t *ring = g_new(int32_t, len);
    if (!rings_translate(R, b, ring)) {
        g_free(ring);
        return false;
    }
    uint32_t nl = R->sp->topo->links->len;
    Links x = {.R = R, .ring = ring, .id = g_new(uint32_t, nl), .owner = g_new(uint32_t, nl),
               .img = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
               .stamp = g_array_new(FALSE, FALSE, sizeof(uint32_t))};
    memset(x.id, 0xff, sizeof(uint32_t) * nl);
    memset(x.owner, 0xff, sizeof(uint32_t) * nl);
    first_block(&x, b, rails);
    bool ok = true;
    for (uint32_t g = 1; ok && g < (uint32_t)R->T; g++)
        ok = copy_maps(&x, b, g, rails);
    if (ok)   /* the run's rings start where they enter node 0 */
        memcpy(R->ring, ring, len * sizeof(int32_t));
    g_free(ring);
    g_free(x.id);
    g_free(x.owner);
    g_array_unref(x.img);
    g_array_unref(x.stamp);
    return ok;
}

void nccltrans_unmerge_sent(Run *R)
{
    size_t n = (size_t)R->n, b = n / (size_t)R->T;
    uint64_t *res = g_new0(uint64_t, b);
    for (size_t x = 0; x < n; x++)
        res[x % b] += R->sent[x];
    for (size_t x = 0; x < n; x++)
        R->sent[x] = res[x % b];
    g_free(res);
}
