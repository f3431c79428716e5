/* ncclsym — channels' orbits under the rotation of GPUs; see ncclsym.h. */
#include "coll/ncclsym.h"

#include <glib.h>
#include <string.h>

#define UNSET UINT32_MAX

struct NcclSym {
    const Topo *topo;        /* not owned */
    int h;                   /* channels an orbit, >= 2 */
    uint32_t nlinks;
    uint32_t *img;           /* [(j-1)*nlinks + l]: sigma^j(l) for a link l of a simulated channel, or UNSET */
    uint32_t *orb;           /* [l]: the first link of l's orbit, or UNSET; made by ncclsym_close */
    GHashTable *routes;      /* r0 -> its merged TopoRoute (owned, g_free) */
};

NcclSym *ncclsym_new(const Topo *t, int h)
{
    NcclSym *s = g_new0(NcclSym, 1);
    s->topo = t;
    s->h = h;
    s->nlinks = t->links->len;
    s->img = g_new(uint32_t, (size_t)(h - 1) * s->nlinks);
    memset(s->img, 0xff, sizeof(uint32_t) * (size_t)(h - 1) * s->nlinks);
    s->routes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return s;
}

void ncclsym_free(NcclSym *s)
{
    if (!s)
        return;
    g_free(s->img);
    g_free(s->orb);
    g_hash_table_destroy(s->routes);
    g_free(s);
}

bool ncclsym_same_link(const Topo *t, uint32_t a, uint32_t b)
{
    const TopoLink *x = &g_array_index(t->links, TopoLink, a), *y = &g_array_index(t->links, TopoLink, b);
    return x->bw_Bps == y->bw_Bps && x->latency_ps == y->latency_ps && x->burst_B == y->burst_B &&
           x->peak_Bps == y->peak_Bps;
}

bool ncclsym_pair(NcclSym *s, int j, const TopoRoute *r0, const TopoRoute *rj)
{
    if (j < 1 || j >= s->h || r0->nhops != rj->nhops)
        return false;
    uint32_t *img = s->img + (size_t)(j - 1) * s->nlinks;
    for (uint32_t k = 0; k < r0->nhops; k++) {
        uint32_t a = r0->link[k], b = rj->link[k];
        if (img[a] == UNSET) {
            if (!ncclsym_same_link(s->topo, a, b))
                return false;
            img[a] = b;
        } else if (img[a] != b) {
            return false;
        }
    }
    return true;
}

/* Link l's orbit {l, sigma(l), ..., sigma^(h-1)(l)} into o (h entries); false if an image is missing or two
 * coincide. */
static bool orbit_of(const NcclSym *s, uint32_t l, uint32_t *o)
{
    o[0] = l;
    for (int j = 1; j < s->h; j++) {
        o[j] = s->img[(size_t)(j - 1) * s->nlinks + l];
        if (o[j] == UNSET)
            return false;
        for (int i = 0; i < j; i++)
            if (o[i] == o[j])
                return false;
    }
    return true;
}

bool ncclsym_close(NcclSym *s)
{
    s->orb = g_new(uint32_t, s->nlinks);
    memset(s->orb, 0xff, sizeof(uint32_t) * s->nlinks);
    uint32_t *count = g_new0(uint32_t, s->nlinks);
    uint32_t o[64];
    bool ok = s->h <= 64;
    for (uint32_t l = 0; ok && l < s->nlinks; l++) {
        if (s->img[l] == UNSET)
            continue;
        ok = orbit_of(s, l, o);
        uint32_t m = l;
        for (int j = 0; ok && j < s->h; j++)
            m = o[j] < m ? o[j] : m;
        for (int j = 0; ok && j < s->h; j++) {
            if (s->orb[o[j]] == UNSET) {
                s->orb[o[j]] = m;
                count[m]++;
            }
            ok = s->orb[o[j]] == m;
        }
    }
    for (uint32_t l = 0; ok && l < s->nlinks; l++)
        ok = s->orb[l] == UNSET || count[s->orb[l]] == (uint32_t)s->h;
    g_free(count);
    return ok;
}

uint32_t ncclsym_link(const NcclSym *s, uint32_t l) { return s->orb[l]; }

uint32_t ncclsym_image(const NcclSym *s, uint32_t l) { return s->img[l]; }

const TopoRoute *ncclsym_route(NcclSym *s, const TopoRoute *r0)
{
    TopoRoute *t = g_hash_table_lookup(s->routes, r0);
    if (t)
        return t;
    t = g_malloc(sizeof *t + r0->nhops * sizeof(uint32_t));
    t->nhops = r0->nhops;
    t->pooled = 0;
    for (uint32_t k = 0; k < r0->nhops; k++)
        t->link[k] = ncclsym_link(s, r0->link[k]);
    g_hash_table_insert(s->routes, (gpointer)r0, t);
    return t;
}

/* Rank r moved by the o-th channel's rotation, dir +1 forward, -1 back
 * (the inverse): its GPU by o (h == G) or 2o (h == G/2), its node kept. */
static int move(const NcclSymMap *m, int r, int o, int dir)
{
    if (m->h <= 1)
        return r;
    int d = m->h == m->G ? o : 2 * o, k = r / m->G, g = r % m->G;
    return k * m->G + ((g + dir * d) % m->G + m->G) % m->G;
}

int ncclsym_fwd(const NcclSymMap *m, int r, int o) { return move(m, r, o, 1); }

int ncclsym_back(const NcclSymMap *m, int r, int o) { return move(m, r, o, -1); }

bool ncclsym_rings_match(const NcclSymMap *m, const int32_t *ring, int n, int C)
{
    int q = ncclsym_q(m);
    for (int c = 0; c < C; c++) {
        int o = c % m->G / q;
        const int32_t *a = ring + (size_t)(c - q * o) * n, *b = ring + (size_t)c * n;
        int z = 0, first = ncclsym_fwd(m, a[0], o);
        while (z < n && b[z] != first)
            z++;
        if (z == n)
            return false;
        for (int p = 0; p < n; p++)
            if (b[(p + z) % n] != ncclsym_fwd(m, a[p], o))
                return false;
    }
    return true;
}

bool ncclsym_trees_match(const NcclSymMap *m, const int32_t *tree, int n, int C)
{
    int q = ncclsym_q(m);
    for (int c = 0; c < C; c++) {
        int o = c % m->G / q;
        const int32_t *a = tree + (size_t)(c - q * o) * n * 4, *b = tree + (size_t)c * n * 4;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < 4; i++) {
                int32_t x = a[r * 4 + i], y = b[ncclsym_fwd(m, r, o) * 4 + i];
                if (y != (x < 0 ? x : ncclsym_fwd(m, x, o)))
                    return false;
            }
    }
    return true;
}
