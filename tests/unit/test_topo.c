/* test_topo — topology builders, validation and routing: node and link
 * counts from closed forms, route lengths, dimension order, ECMP, errors. */
#include "net/topo.h"

#include "testmain.h"

#include <check.h>
#include <math.h>
#include <string.h>

static const TopoLink *lk(const Topo *t, uint32_t id)
{
    return &g_array_index(t->links, TopoLink, id);
}

/* A route must be a chain of links from src to dst. */
static void assert_chain(const Topo *t, const TopoRoute *r, int src, int dst)
{
    if (src == dst) {
        ck_assert_uint_eq(r->nhops, 0);
        return;
    }
    ck_assert_uint_ge(r->nhops, 1);
    ck_assert_int_eq(lk(t, r->link[0])->from, src);
    ck_assert_int_eq(lk(t, r->link[r->nhops - 1])->to, dst);
    for (uint32_t i = 0; i + 1 < r->nhops; i++)
        ck_assert_int_eq(lk(t, r->link[i])->to, lk(t, r->link[i + 1])->from);
}

static Topo *must(const TopoSpec *s)
{
    char *err = NULL;
    Topo *t = topo_new(s, &err);
    if (!t)
        ck_abort_msg("topo_new failed: %s", err);
    ck_assert_ptr_null(err);
    return t;
}

/* topo_new must fail with a message containing `want` and a "; expected". */
static void must_fail(const TopoSpec *s, const char *want)
{
    char *err = NULL;
    Topo *t = topo_new(s, &err);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(err);
    if (!strstr(err, want) || !strstr(err, "; expected"))
        ck_abort_msg("error '%s' lacks '%s' or '; expected'", err, want);
    g_free(err);
}

START_TEST(test_kind_names)
{
    const char *names[] = {"star", "ring", "torus2d", "fat-tree", "hierarchical", "graph"};
    for (int i = 0; i < 6; i++) {
        TopoKind k;
        ck_assert(topo_kind_parse(names[i], &k));
        ck_assert_str_eq(topo_kind_name(k), names[i]);
    }
    TopoKind k;
    ck_assert(!topo_kind_parse("mesh", &k));
    ck_assert(!topo_kind_parse("", &k));
    TopoSpec s;
    topo_spec_init(&s);
    ck_assert_int_eq(s.kind, TOPO_STAR);
    ck_assert_int_eq(s.hosts, 8);
    ck_assert(s.link.bw_Bps == 1.25e9);
    ck_assert(s.link.latency_s == 5e-6);
    ck_assert_uint_eq(s.packet_bytes, 0);
    topo_spec_clear(&s);
}
END_TEST

START_TEST(test_star)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.hosts = 5;
    s.switch_latency_s = 1e-6;
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 5);
    ck_assert_int_eq(t->nnodes, 6);
    ck_assert_uint_eq(t->links->len, 10);
    ck_assert_str_eq(g_ptr_array_index(t->node_names, 0), "h0");
    ck_assert_str_eq(g_ptr_array_index(t->node_names, 5), "sw0");
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) {
            const TopoRoute *r = topo_route(t, a, b);
            assert_chain(t, r, a, b);
            if (a != b) {
                ck_assert_uint_eq(r->nhops, 2);
                ck_assert_int_eq(lk(t, r->link[0])->from, a);
                /* host->switch 5 us; switch->host 5 us + 1 us of switching */
                ck_assert_uint_eq(lk(t, r->link[0])->latency_ps, 5000000);
                ck_assert_uint_eq(lk(t, r->link[1])->latency_ps, 6000000);
                ck_assert(fabs(topo_route_latency_s(t, r) - 11e-6) < 1e-15);
                ck_assert(topo_route_min_bw(t, r) == 1.25e9);
                ck_assert_ptr_eq(r, topo_route(t, a, b));   /* cached */
            }
        }
    ck_assert(isinf(topo_route_min_bw(t, topo_route(t, 2, 2))));
    topo_free(t);

    s.hosts = 1500;   /* past the flat route cache: the hash table keeps routes */
    t = must(&s);
    ck_assert_uint_eq(t->links->len, 3000);
    for (int a = 0; a < 1500; a += 7) {
        int b = (a * 13 + 5) % 1500;
        const TopoRoute *r = topo_route(t, a, b);
        assert_chain(t, r, a, b);
        ck_assert_uint_eq(r->nhops, a == b ? 0 : 2);
        ck_assert_ptr_eq(r, topo_route(t, a, b));
        if (a != b) {   /* host h's cable: links 2h (up) and 2h+1 (down) */
            ck_assert_uint_eq(r->link[0], 2 * a);
            ck_assert_uint_eq(r->link[1], 2 * b + 1);
        }
    }
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

START_TEST(test_ring)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_RING;
    for (int n = 1; n <= 9; n++) {
        s.hosts = n;
        Topo *t = must(&s);
        ck_assert_int_eq(t->nnodes, n);
        /* n >= 3: n cables; 2 hosts share one cable; 1 host has none */
        int cables = n >= 3 ? n : n == 2 ? 1 : 0;
        ck_assert_uint_eq(t->links->len, 2 * cables);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const TopoRoute *r = topo_route(t, a, b);
                assert_chain(t, r, a, b);
                int d = ((b - a) % n + n) % n;
                ck_assert_uint_eq(r->nhops, d <= n - d ? d : n - d);
                if (d > 0 && 2 * d == n)   /* a tie goes the + way */
                    ck_assert_int_eq(lk(t, r->link[0])->to, (a + 1) % n);
            }
        topo_free(t);
    }
    topo_spec_clear(&s);
}
END_TEST

START_TEST(test_torus)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_TORUS2D;
    s.hosts = 0;
    s.x = 4;
    s.y = 4;
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 16);
    ck_assert_int_eq(t->torus_x, 4);
    ck_assert_int_eq(t->torus_y, 4);
    ck_assert_uint_eq(t->links->len, 2 * (16 + 16));
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) {
            const TopoRoute *r = topo_route(t, a, b);
            assert_chain(t, r, a, b);
            int dx = ((b % 4 - a % 4) + 4) % 4, dy = ((b / 4 - a / 4) + 4) % 4;
            int hx = dx <= 4 - dx ? dx : 4 - dx, hy = dy <= 4 - dy ? dy : 4 - dy;
            ck_assert_uint_eq(r->nhops, hx + hy);
            /* X first: the first hx hops keep the row, the rest keep the column */
            for (int i = 0; i < hx + hy; i++) {
                int to = lk(t, r->link[i])->to;
                if (i < hx)
                    ck_assert_int_eq(to / 4, a / 4);
                else
                    ck_assert_int_eq(to % 4, b % 4);
            }
        }
    /* (0,0) -> (3,2): one step -x to node 3, then the tie in y goes +: 7, 11 */
    const TopoRoute *r = topo_route(t, 0, 3 + 4 * 2);
    ck_assert_uint_eq(r->nhops, 3);
    ck_assert_int_eq(lk(t, r->link[0])->to, 3);
    ck_assert_int_eq(lk(t, r->link[1])->to, 7);
    ck_assert_int_eq(lk(t, r->link[2])->to, 11);
    topo_free(t);

    s.x = 2;   /* 2 x 3: one cable per row of 2, three per column of 3 */
    s.y = 3;
    t = must(&s);
    ck_assert_uint_eq(t->links->len, 2 * (3 * 1 + 2 * 3));
    ck_assert_uint_eq(topo_route(t, 0, 1)->nhops, 1);
    ck_assert_uint_eq(topo_route(t, 1, 0)->nhops, 1);
    ck_assert_uint_eq(topo_route(t, 0, 5)->nhops, 2);
    topo_free(t);

    s.x = s.y = 0;   /* dimensions from the host count */
    s.hosts = 12;
    t = must(&s);
    ck_assert_int_eq(t->torus_x, 3);
    ck_assert_int_eq(t->torus_y, 4);
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

static void check_fattree(int k)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_FATTREE;
    s.hosts = 0;
    s.k = k;
    Topo *t = must(&s);
    int half = k / 2, hosts = k * k * k / 4, per_edge = half, per_pod = half * half;
    ck_assert_int_eq(t->nhosts, hosts);
    ck_assert_int_eq(t->nnodes, hosts + k * half * 2 + half * half);
    /* cables: host-edge k^3/4, edge-agg k * (k/2)^2, agg-core k * (k/2)^2 */
    ck_assert_uint_eq(t->links->len, 2 * (hosts + k * half * half + k * half * half));
    int ncore = half * half, core0 = t->nnodes - ncore;
    gboolean *core_used = g_new0(gboolean, ncore);
    for (int a = 0; a < hosts; a++)
        for (int b = 0; b < hosts; b++) {
            const TopoRoute *r = topo_route(t, a, b);
            assert_chain(t, r, a, b);
            uint32_t want = a == b ? 0 : a / per_edge == b / per_edge ? 2 : a / per_pod == b / per_pod ? 4 : 6;
            ck_assert_uint_eq(r->nhops, want);
            if (want == 6) {
                int core = lk(t, r->link[2])->to;
                ck_assert_int_ge(core, core0);
                core_used[core - core0] = TRUE;
            }
        }
    for (int c = 0; c < ncore; c++)   /* ECMP spreads over every core */
        ck_assert(core_used[c]);
    g_free(core_used);

    /* Deterministic: a second build routes every pair over the same links. */
    Topo *t2 = must(&s);
    for (int a = 0; a < hosts; a += 3)
        for (int b = 0; b < hosts; b += 5) {
            const TopoRoute *r1 = topo_route(t, a, b), *r2 = topo_route(t2, a, b);
            ck_assert_uint_eq(r1->nhops, r2->nhops);
            ck_assert(memcmp(r1->link, r2->link, r1->nhops * sizeof r1->link[0]) == 0);
        }
    topo_free(t2);
    topo_free(t);
    topo_spec_clear(&s);
}

START_TEST(test_fattree_k4) { check_fattree(4); }
END_TEST

START_TEST(test_fattree_k8) { check_fattree(8); }
END_TEST

START_TEST(test_fattree_fewer_and_oversub)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_FATTREE;
    s.k = 4;
    s.hosts = 10;
    s.oversub = 4;
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 10);
    ck_assert_uint_eq(t->links->len, 2 * (10 + 16 + 16));
    /* host 9 is in pod 2 (4 hosts per pod): 6 hops from host 0 */
    const TopoRoute *r = topo_route(t, 0, 9);
    assert_chain(t, r, 0, 9);
    ck_assert_uint_eq(r->nhops, 6);
    ck_assert(lk(t, r->link[0])->bw_Bps == 1.25e9);
    for (int i = 1; i < 5; i++)
        ck_assert(lk(t, r->link[i])->bw_Bps == 1.25e9 / 4);
    ck_assert(lk(t, r->link[5])->bw_Bps == 1.25e9);
    ck_assert(topo_route_min_bw(t, r) == 1.25e9 / 4);
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

/* 1024 hosts (k = 16): every ring neighbour and every butterfly partner. */
START_TEST(test_fattree_1024_routes)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_FATTREE;
    s.k = 16;
    s.hosts = 0;
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 1024);
    for (int a = 0; a < 1024; a++) {
        assert_chain(t, topo_route(t, a, (a + 1) % 1024), a, (a + 1) % 1024);
        for (int m = 1; m < 1024; m <<= 1)
            assert_chain(t, topo_route(t, a, a ^ m), a, a ^ m);
    }
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

START_TEST(test_hierarchical)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_HIERARCHICAL;
    s.hosts = 0;
    s.gpus_per_node = 4;
    s.intra = (TopoLinkClass){.bw_Bps = 100e9, .latency_s = 1e-6};
    s.inter = g_new(TopoSpec, 1);
    topo_spec_init(s.inter);
    s.inter->hosts = 3;   /* a star of 3 nodes, 10 Gbps, 5 us */
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 12);
    ck_assert_int_eq(t->gpus_per_node, 4);
    ck_assert_int_eq(t->nnodes, 12 + 3 + 1);
    ck_assert_uint_eq(t->links->len, 2 * 12 + 2 * 3);
    /* same node: up and down the intra links */
    const TopoRoute *r = topo_route(t, 5, 6);
    assert_chain(t, r, 5, 6);
    ck_assert_uint_eq(r->nhops, 2);
    ck_assert(fabs(topo_route_latency_s(t, r) - 2e-6) < 1e-15);
    ck_assert(topo_route_min_bw(t, r) == 100e9);
    /* other node: intra + star (2 links) + intra */
    r = topo_route(t, 1, 10);
    assert_chain(t, r, 1, 10);
    ck_assert_uint_eq(r->nhops, 4);
    ck_assert(lk(t, r->link[0])->bw_Bps == 100e9);
    ck_assert(lk(t, r->link[1])->bw_Bps == 1.25e9);
    ck_assert(lk(t, r->link[2])->bw_Bps == 1.25e9);
    ck_assert(lk(t, r->link[3])->bw_Bps == 100e9);
    ck_assert(fabs(topo_route_latency_s(t, r) - (2e-6 + 10e-6)) < 1e-15);
    topo_free(t);

    /* nodes on a fat-tree k = 4 (16 nodes) with 2 GPUs each */
    s.gpus_per_node = 2;
    s.inter->kind = TOPO_FATTREE;
    s.inter->hosts = 0;
    t = must(&s);
    ck_assert_int_eq(t->nhosts, 32);
    ck_assert_uint_eq(topo_route(t, 0, 1)->nhops, 2);
    ck_assert_uint_eq(topo_route(t, 0, 2)->nhops, 4);    /* nodes 0, 1: same edge */
    ck_assert_uint_eq(topo_route(t, 0, 31)->nhops, 8);   /* other pod */
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++)
            assert_chain(t, topo_route(t, a, b), a, b);
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

static void graph_add_node(TopoSpec *s, const char *name, bool host)
{
    TopoGraphNode n = {.name = g_strdup(name), .is_host = host};
    g_array_append_val(s->graph_nodes, n);
}

static void graph_add_edge(TopoSpec *s, int a, int b, double bw)
{
    TopoGraphEdge e = {.a = a, .b = b, .link = {.bw_Bps = bw, .latency_s = 1e-6}};
    g_array_append_val(s->graph_edges, e);
}

START_TEST(test_graph)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_GRAPH;
    s.hosts = 0;
    s.graph_nodes = g_array_new(FALSE, FALSE, sizeof(TopoGraphNode));
    s.graph_edges = g_array_new(FALSE, FALSE, sizeof(TopoGraphEdge));
    /* s0 - s1 backbone; a, b on s0; c on s1; hosts listed after a switch */
    graph_add_node(&s, "s0", false);
    graph_add_node(&s, "a", true);
    graph_add_node(&s, "b", true);
    graph_add_node(&s, "s1", false);
    graph_add_node(&s, "c", true);
    graph_add_edge(&s, 0, 1, 1e9);
    graph_add_edge(&s, 0, 2, 1e9);
    graph_add_edge(&s, 0, 3, 2e9);
    graph_add_edge(&s, 3, 4, 1e9);
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 3);
    ck_assert_int_eq(t->nnodes, 5);
    ck_assert_str_eq(g_ptr_array_index(t->node_names, 0), "a");
    ck_assert_str_eq(g_ptr_array_index(t->node_names, 2), "c");
    ck_assert_str_eq(g_ptr_array_index(t->node_names, 3), "s0");
    ck_assert_uint_eq(topo_route(t, 0, 1)->nhops, 2);
    ck_assert_uint_eq(topo_route(t, 0, 2)->nhops, 3);
    assert_chain(t, topo_route(t, 2, 0), 2, 0);
    topo_free(t);

    /* a lone host d: disconnected */
    graph_add_node(&s, "d", true);
    must_fail(&s, "graph is disconnected: host d cannot reach host a; expected every host reachable from every other");
    graph_add_edge(&s, 4, 4, 1e9);
    must_fail(&s, "to itself");
    g_array_set_size(s.graph_edges, 4);
    graph_add_edge(&s, 4, 9, 1e9);
    must_fail(&s, "node indices");
    g_array_set_size(s.graph_edges, 4);
    graph_add_edge(&s, 4, 5, 0);
    must_fail(&s, "bandwidth");
    g_array_index(s.graph_edges, TopoGraphEdge, 4).link.bw_Bps = 1e9;
    t = must(&s);   /* connected again */
    ck_assert_int_eq(t->nhosts, 4);
    topo_free(t);
    graph_add_node(&s, "a", false);
    must_fail(&s, "used twice");
    topo_spec_clear(&s);
    ck_assert_ptr_null(s.graph_nodes);
}
END_TEST

START_TEST(test_invalid)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.hosts = 0;
    must_fail(&s, "star hosts is 0");
    s.hosts = -2;
    must_fail(&s, "hosts is -2");
    s.hosts = 4;
    s.link.bw_Bps = 0;
    must_fail(&s, "bandwidth");
    s.link.bw_Bps = NAN;
    must_fail(&s, "bandwidth");
    s.link.bw_Bps = INFINITY;   /* allowed */
    topo_free(must(&s));
    s.link.latency_s = -1e-6;
    must_fail(&s, "latency");
    s.link.latency_s = 1e8;   /* 1e20 ps does not fit */
    must_fail(&s, "picoseconds");
    s.link.latency_s = 5e-6;
    s.switch_latency_s = NAN;
    must_fail(&s, "switch latency");
    s.switch_latency_s = 0;

    s.kind = TOPO_FATTREE;
    s.k = 3;
    must_fail(&s, "k is 3");
    s.k = 0;
    must_fail(&s, "k is 0");
    s.k = 4;
    s.oversub = 0.5;
    must_fail(&s, "oversubscription");
    s.oversub = 1;
    s.hosts = 17;
    must_fail(&s, "fat-tree has 16 hosts but hosts is 17");

    s.kind = TOPO_TORUS2D;
    s.hosts = 0;
    s.x = 0;
    s.y = 3;
    must_fail(&s, "torus2d is 0 x 3");
    s.x = 2;
    s.hosts = 7;
    must_fail(&s, "torus2d has 6 hosts");

    s.kind = TOPO_RING;
    s.hosts = 0;
    must_fail(&s, "ring hosts is 0");

    s.kind = TOPO_HIERARCHICAL;
    s.hosts = 0;
    must_fail(&s, "no inter-node network");
    s.inter = g_new(TopoSpec, 1);
    topo_spec_init(s.inter);
    s.gpus_per_node = 0;
    must_fail(&s, "gpus_per_node is 0");
    s.gpus_per_node = 2;
    s.intra.bw_Bps = -1;
    must_fail(&s, "intra-node link bandwidth");
    s.intra.bw_Bps = 1e10;
    s.inter->hosts = 0;
    must_fail(&s, "inter-node network: star hosts is 0");
    s.inter->hosts = 2;
    s.inter->kind = TOPO_HIERARCHICAL;
    must_fail(&s, "inter-node network is hierarchical");
    s.inter->kind = TOPO_STAR;
    s.hosts = 5;
    must_fail(&s, "hierarchical has 4 hosts");
    s.hosts = 3;   /* fewer GPUs than nodes x G: the first ones */
    Topo *t = must(&s);
    ck_assert_int_eq(t->nhosts, 3);
    ck_assert_uint_eq(topo_route(t, 0, 2)->nhops, 4);
    topo_free(t);

    s.kind = TOPO_GRAPH;
    must_fail(&s, "graph has no hosts");
    s.kind = (TopoKind)42;
    must_fail(&s, "kind 42 is unknown");
    topo_spec_clear(&s);
}
END_TEST

/* Every pair's on-demand route (topo_route_acquire: arithmetic) has the
 * links of the cached BFS route with its ECMP hash (topo_route, the
 * oracle); released routes are reused. */
static void check_acquire(const TopoSpec *s)
{
    Topo *t = must(s);
    for (int a = 0; a < t->nhosts; a++)
        for (int b = 0; b < t->nhosts; b++) {
            const TopoRoute *want = topo_route(t, a, b), *got = topo_route_acquire(t, a, b);
            ck_assert_msg(got->nhops == want->nhops, "%s %d -> %d: %u hops, BFS %u", topo_kind_name(t->kind), a, b,
                          got->nhops, want->nhops);
            for (uint32_t i = 0; i < want->nhops; i++)
                ck_assert_msg(got->link[i] == want->link[i], "%s %d -> %d hop %u: link %u, BFS %u",
                              topo_kind_name(t->kind), a, b, i, got->link[i], want->link[i]);
            topo_route_release(t, got);
        }
    topo_free(t);
}

START_TEST(test_acquire_matches_bfs)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.hosts = 7;
    check_acquire(&s);
    s.kind = TOPO_FATTREE;
    const int ks[] = {2, 4, 6, 8};
    for (size_t i = 0; i < G_N_ELEMENTS(ks); i++) {
        s.k = ks[i];
        s.hosts = 0;
        check_acquire(&s);
        s.hosts = ks[i] * ks[i] * ks[i] / 4 - 3 > 0 ? ks[i] * ks[i] * ks[i] / 4 - 3 : 1;   /* fewer hosts */
        check_acquire(&s);
    }
    s.kind = TOPO_TORUS2D;
    s.hosts = 0;
    s.x = 3;
    s.y = 4;
    check_acquire(&s);
    s.kind = TOPO_RING;
    s.hosts = 9;
    check_acquire(&s);
    topo_spec_clear(&s);

    /* a graph with two equal-cost paths between its switches (ECMP) */
    topo_spec_init(&s);
    s.kind = TOPO_GRAPH;
    s.hosts = 0;
    s.graph_nodes = g_array_new(FALSE, FALSE, sizeof(TopoGraphNode));
    s.graph_edges = g_array_new(FALSE, FALSE, sizeof(TopoGraphEdge));
    const char *names[] = {"s0", "s1", "m0", "m1", "a", "b", "c", "d"};
    for (int i = 0; i < 8; i++)
        graph_add_node(&s, names[i], i >= 4);
    const int edges[][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {0, 4}, {0, 5}, {1, 6}, {1, 7}, {4, 5}};
    for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
        graph_add_edge(&s, edges[i][0], edges[i][1], 1e9);
    check_acquire(&s);
    topo_spec_clear(&s);

    /* hierarchical over a star, a fat-tree and a torus */
    topo_spec_init(&s);
    s.kind = TOPO_HIERARCHICAL;
    s.hosts = 0;
    s.gpus_per_node = 3;
    s.intra = (TopoLinkClass){.bw_Bps = 100e9, .latency_s = 1e-6};
    s.inter = g_new(TopoSpec, 1);
    topo_spec_init(s.inter);
    s.inter->hosts = 5;
    check_acquire(&s);
    s.inter->kind = TOPO_FATTREE;
    s.inter->k = 4;
    s.inter->hosts = 0;
    check_acquire(&s);
    s.inter->kind = TOPO_TORUS2D;
    s.inter->x = 2;
    s.inter->y = 3;
    check_acquire(&s);
    topo_spec_clear(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = testmain_case(s, "shapes");
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_star);
    tcase_add_test(tc, test_ring);
    tcase_add_test(tc, test_torus);
    tcase_add_test(tc, test_fattree_k4);
    tcase_add_test(tc, test_fattree_k8);
    tcase_add_test(tc, test_fattree_fewer_and_oversub);
    tcase_add_test(tc, test_hierarchical);
    tcase_add_test(tc, test_graph);
    tc = testmain_case(s, "routes");
    tcase_add_test(tc, test_fattree_1024_routes);
    tcase_add_test(tc, test_acquire_matches_bfs);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_invalid);
    return testmain_run(s);
}
