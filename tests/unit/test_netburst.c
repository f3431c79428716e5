/* test_netburst — links with a token bucket (TopoLink.burst_B, a tc tbf
 * shaper): the credit a full bucket gives, its absence on back-to-back
 * messages, its refill while idle, packet mode, a peak rate for the
 * credit, the YAML keys and a calibration's fit.inter_burst_bytes and
 * inter_peak_bytes_per_s. Expected times are integer picoseconds written
 * from sum(L) + max(0, m - credit)/B (with a peak P: max(m/P, ...)). */
#include "net/net.h"
#include "train/scenario.h"
#include "net/topocfg.h"

#include "netrec.h"
#include "testmain.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PS_PER_BYTE 800        /* 10 Gbps = 1.25e9 B/s: 800 ps per byte, exactly */
#define L_PS 5000000ULL        /* 5 us per link */
#define BURST 10000ULL         /* bytes in each link's bucket */

/* A 4-host star at 10 Gbps, 5 us per link, BURST-byte buckets. */
static Topo *mk(uint64_t packet, double burst)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_STAR;
    s.hosts = 4;
    s.packet_bytes = packet;
    s.link.burst_B = burst;
    char *err = NULL;
    Topo *t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    topo_spec_clear(&s);
    return t;
}

/* A message to send later: net_send at a given time. */
typedef struct {
    Net *n;                /* the network */
    const TopoRoute *r;    /* its route */
    uint64_t bytes;        /* payload */
    Rec *rec;              /* delivery record */
    int id;                /* index in rec->t */
} Later;

static void send_later(void *ctx, void *data)
{
    Later *l = ctx;
    (void)data;
    net_send(l->n, l->r, l->bytes, on_deliver, l->rec, GINT_TO_POINTER(l->id));
}

/* Sends m1 bytes from host 0 to host 1 at 0 and m2 at t2 (ps); fills r. */
static void two(uint64_t pkt, uint64_t m1, uint64_t m2, simtime_t t2, Rec *r)
{
    Topo *t = mk(pkt, BURST);
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    *r = (Rec){.sim = sim};
    Later a = {n, topo_route(t, 0, 1), m1, r, 0}, b = {n, topo_route(t, 0, 1), m2, r, 1};
    sim_at(sim, 0, send_later, &a, NULL);
    sim_at(sim, t2, send_later, &b, NULL);
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r->n, 2);
    net_free(n);
    sim_free(sim);
    topo_free(t);
}

START_TEST(test_full_bucket)
{
    static const uint64_t sizes[] = {0, 1, 4000, 9999, 10000, 10001, 65536, 1000003};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t m = sizes[i];
        Rec r;
        two(0, m, 0, 1000 * L_PS, &r);   /* the second, empty, message is far later */
        simtime_t want = 2 * L_PS + (m > BURST ? (m - BURST) * PS_PER_BYTE : 0);
        ck_assert_uint_eq(r.t[0], want);
    }
}
END_TEST

/* Back to back, the second message finds both buckets empty: it takes
 * m2/B behind the first's (m1 - b)/B. */
START_TEST(test_back_to_back)
{
    Rec r;
    two(0, 50000, 30000, 0, &r);
    ck_assert_uint_eq(r.t[0], 2 * L_PS + (50000 - BURST) * PS_PER_BYTE);
    ck_assert_uint_eq(r.t[1], 2 * L_PS + (50000 - BURST + 30000) * PS_PER_BYTE);
}
END_TEST

/* After the first message leaves the first link at (m1 - b)/B, the link is
 * idle until t2: its credit is min(b, (t2 - (m1 - b)/B)·B). The second
 * link's credit is the same, its idle time starting L later. */
START_TEST(test_refill)
{
    static const uint64_t idle_bytes[] = {0, 1, 2500, 9999, 10000, 20000};
    for (size_t i = 0; i < G_N_ELEMENTS(idle_bytes); i++) {
        uint64_t m1 = 50000, m2 = 30000, g = idle_bytes[i];
        simtime_t t2 = (m1 - BURST + g) * PS_PER_BYTE;
        Rec r;
        two(0, m1, m2, t2, &r);
        uint64_t credit = g < BURST ? g : BURST;
        ck_assert_uint_eq(r.t[1], t2 + 2 * L_PS + (m2 - credit) * PS_PER_BYTE);
    }
}
END_TEST

/* Packet mode, 1000-byte packets: the first b/p packets of a message pass
 * both links at once; the rest leave the first link p/B apart, and the
 * second link's bucket, refilled as fast as they come, adds nothing:
 * 2L + (m - b)/B, against 2L + m/B + p/B without the buckets. */
START_TEST(test_packet_mode)
{
    static const uint64_t sizes[] = {1000, 10000, 25000, 100000};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t m = sizes[i];
        Rec r;
        two(1000, m, 0, 1000 * L_PS, &r);
        ck_assert_uint_eq(r.t[0], 2 * L_PS + (m > BURST ? (m - BURST) * PS_PER_BYTE : 0));
    }
}
END_TEST

/* A 2-host star whose links carry a 100,000 B bucket that passes its
 * credit at the peak P = 2B (400 ps/B) instead of at once: a message alone
 * costs 2L + max(m/P, (m - b)/B); the credit covers bP/(P - B) = 200,000
 * B. Three messages of 100,000 B back to back: the first at P, leaving
 * 50,000 B of credit (it drains at P - B), which carries the second at P
 * too; the third finds none and goes at B. In packet mode (store and
 * forward) a one-packet message pays its time at P on each of the two
 * links. */
START_TEST(test_peak)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.hosts = 2;
    s.link.burst_B = 100000;
    s.link.peak_Bps = 2.5e9;
    char *err = NULL;
    Topo *t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    static const uint64_t alone[] = {1, 100000, 200000, 200001, 1000003};
    for (size_t i = 0; i < G_N_ELEMENTS(alone); i++) {
        Sim *sim = sim_new(1);
        Net *n = net_new(sim, t);
        Rec r = {.sim = sim};
        net_send(n, topo_route(t, 0, 1), alone[i], on_deliver, &r, GINT_TO_POINTER(0));
        ck_assert(sim_run(sim));
        uint64_t m = alone[i], at_peak = m * 400, beyond = m > 100000 ? (m - 100000) * PS_PER_BYTE : 0;
        ck_assert_uint_eq(r.t[0], 2 * L_PS + (at_peak > beyond ? at_peak : beyond));
        net_free(n);
        sim_free(sim);
    }
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    Rec r = {.sim = sim};
    for (int i = 0; i < 3; i++)
        net_send(n, topo_route(t, 0, 1), 100000, on_deliver, &r, GINT_TO_POINTER(i));
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r.n, 3);
    ck_assert_uint_eq(r.t[0], 2 * L_PS + 40000000ULL);
    ck_assert_uint_eq(r.t[1], 2 * L_PS + 80000000ULL);
    ck_assert_uint_eq(r.t[2], 2 * L_PS + 80000000ULL + 100000ULL * PS_PER_BYTE);
    net_free(n);
    sim_free(sim);
    topo_free(t);
    s.packet_bytes = 100000;
    t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    sim = sim_new(1);
    n = net_new(sim, t);
    r = (Rec){.sim = sim};
    net_send(n, topo_route(t, 0, 1), 100000, on_deliver, &r, GINT_TO_POINTER(0));
    ck_assert(sim_run(sim));
    ck_assert_uint_eq(r.t[0], 2 * L_PS + 2 * 40000000ULL);
    net_free(n);
    sim_free(sim);
    topo_free(t);
    s.packet_bytes = 0;
    /* a peak at or below the rate, or without a burst, is refused */
    s.link.peak_Bps = 1.25e9;
    ck_assert(topo_new(&s, &err) == NULL);
    ck_assert(strstr(err, "expected 0 (none) or a rate above the bandwidth") != NULL);
    g_clear_pointer(&err, g_free);
    s.link.peak_Bps = 2.5e9;
    s.link.burst_B = 0;
    ck_assert(topo_new(&s, &err) == NULL);
    ck_assert(strstr(err, "no burst") != NULL);
    g_free(err);
    topo_spec_clear(&s);
}
END_TEST

/* Writes text to a new temporary file; returns its path (g_free it). */
static char *tmpfile_with(const char *text, const char *suffix)
{
    char *path = g_strdup_printf("%s/arsim-test-burst-%d-XXXXXX%s", g_get_tmp_dir(), (int)getpid(), suffix);
    int fd = g_mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

START_TEST(test_yaml_key)
{
    char *path = tmpfile_with("kind: star\nhosts: 2\nlink: {bandwidth: 10Gbps, latency: 5us, burst: 64KiB, peak: 40Gbps}\n",
                              ".yaml");
    TopoSpec s;
    topo_spec_init(&s);
    char *err = NULL;
    ck_assert_msg(topocfg_load(path, &s, &err), "%s", err);
    ck_assert(s.link.burst_B == 65536.0 && s.link.peak_Bps == 5e9);
    Topo *t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    for (guint i = 0; i < t->links->len; i++)
        ck_assert(g_array_index(t->links, TopoLink, i).burst_B == 65536.0 &&
                  g_array_index(t->links, TopoLink, i).peak_Bps == 5e9);
    topo_free(t);
    topo_spec_clear(&s);
    unlink(path);
    g_free(path);
}
END_TEST

/* A calibration's fit.inter_burst_bytes (and inter_peak_bytes_per_s)
 * becomes the links' bucket. */
START_TEST(test_calibration_burst)
{
    char *cal = tmpfile_with("inter: {alpha_s: 1e-05, beta_s_per_byte: 8e-10}\n"
                             "fit: {inter_burst_bytes: 12345.5, inter_peak_bytes_per_s: 3e9, inter_rms_rel: 0.01}\n",
                             ".yaml");
    char *text = g_strdup_printf("model: resnet50\ngpu: v100\nbatch: [32]\ncluster: {nodes: 2, calibration: '%s'}\n"
                                 "policies: [{name: p, overlap: none, algorithm: ring}]\n", cal);
    char *scen = tmpfile_with(text, ".yaml");
    char *err = NULL;
    Scenario *s = scenario_load(scen, NULL, &err);
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert(s->topo.link.burst_B == 12345.5 && s->topo.link.peak_Bps == 3e9);
    ck_assert(s->topo.link.bw_Bps == 1.0 / 8e-10);
    ck_assert(s->topo.link.latency_s == 0.5e-5);
    scenario_free(s);
    unlink(scen);
    unlink(cal);
    g_free(scen);
    g_free(cal);
    g_free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("netburst");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_full_bucket);
    tcase_add_test(tc, test_back_to_back);
    tcase_add_test(tc, test_refill);
    tcase_add_test(tc, test_packet_mode);
    tcase_add_test(tc, test_peak);
    tc = testmain_case(s, "config");
    tcase_add_test(tc, test_yaml_key);
    tcase_add_test(tc, test_calibration_burst);
    return testmain_run(s);
}
