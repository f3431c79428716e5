/* test_protocol — the protocol layer (io/protocol.h, coll/collexec.h):
 * its settings' reader and writer; single messages on both sides of the
 * eager limit with either handshake and with overhead, including a late
 * receiver and an early arrival; every flat algorithm on a contention-free
 * star, p = 2 ... 256 (non-powers of two included), message and packet
 * mode, against the closed forms of collform.h (exact where every step's
 * two ends start together, bounds where folds let ranks start early);
 * coll_cost_model against the simulation; segments (a pipelined exchange
 * and ring exactly, every algorithm within its bounds, capped pieces);
 * and no schedule deadlocks under rendezvous. Training under the protocol:
 * test_protocoltrain.c. */
#include "coll/collexec.h"
#include "coll/collrun.h"
#include "coll/commcost.h"
#include "engine/simrng.h"

#include "collform.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define O 2e-6             /* overhead in the overhead cases */
#define EAGER 65536        /* eager limit in the rendezvous cases */

static const int PS[] = {2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 100, 256};

/* The protocols every flat case runs under. */
static const struct {
    const char *name;
    ProtocolHandshake hs;
    double o;
    ProtocolAck ack;
} PROTOS[] = {
    {"none", PROTOCOL_HANDSHAKE_NONE, 0, PROTOCOL_ACK_NONE},
    {"rtt", PROTOCOL_HANDSHAKE_RTT, 0, PROTOCOL_ACK_NONE},
    {"none+o", PROTOCOL_HANDSHAKE_NONE, O, PROTOCOL_ACK_NONE},
    {"rtt+o", PROTOCOL_HANDSHAKE_RTT, O, PROTOCOL_ACK_NONE},
    {"none+ack", PROTOCOL_HANDSHAKE_NONE, 0, PROTOCOL_ACK_RTT},
    {"rtt+ack", PROTOCOL_HANDSHAKE_RTT, 0, PROTOCOL_ACK_RTT},
    {"rtt+ack+o", PROTOCOL_HANDSHAKE_RTT, O, PROTOCOL_ACK_RTT},
};

static Protocol proto(ProtocolHandshake hs, double o, uint64_t eager, uint64_t segment)
{
    Protocol p;
    protocol_init(&p);
    p.handshake = hs;
    p.overhead_s = o;
    p.eager_limit = eager;
    p.segment_bytes = segment;
    return p;
}

/* PROTOS[i] with the eager limit and segment: the protocol a case runs under. */
static Protocol proto_of(size_t i, uint64_t eager, uint64_t segment)
{
    Protocol p = proto(PROTOS[i].hs, PROTOS[i].o, eager, segment);
    p.ack = PROTOS[i].ack;
    return p;
}

static void within(double got, double lo, double hi, const char *what, int p, uint64_t n)
{
    ck_assert_msg(got >= lo * (1 - 1e-9) - 1e-15 && got <= hi * (1 + 1e-9) + 1e-15,
                  "%s p=%d n=%" G_GUINT64_FORMAT ": simulated %.9g s, expected [%.9g, %.9g]", what, p, (guint64)n,
                  got, lo, hi);
}

/* The defaults, and when a message is rendezvous. */
START_TEST(test_defaults)
{
    Protocol p;
    protocol_init(&p);
    ck_assert_uint_eq(p.eager_limit, 65536);
    ck_assert_int_eq(p.handshake, PROTOCOL_HANDSHAKE_NONE);
    ck_assert(p.overhead_s == 0 && p.segment_bytes == 0 && !protocol_is_eager(&p));
    ck_assert(!protocol_rendezvous(&p, 65535) && protocol_rendezvous(&p, 65536));
    protocol_init_eager(&p);
    ck_assert(protocol_is_eager(&p) && !protocol_rendezvous(&p, UINT64_MAX - 1));
    ck_assert_uint_eq(p.control_queue[PROTOCOL_FROM_LOWER], PROTOCOL_INF);
    ck_assert_uint_eq(p.control_queue[PROTOCOL_FROM_HIGHER], PROTOCOL_INF);
    ck_assert(p.host_queue == 0 && p.ack == PROTOCOL_ACK_NONE);
}
END_TEST

/* A mapping's keys read into their fields; the writer's text reads back;
 * absent keys keep their values; inf and none. */
START_TEST(test_read_write)
{
    Protocol p;
    char *err = NULL;
    CfgNode *n = cfg_parse_string("{eager_limit: 128KiB, handshake: rtt, overhead: 12us, segment: 1MiB, "
                                  "control_queue: 256KiB, host_queue: 64KiB, ack: rtt}", "p.yaml", &err);
    ck_assert_msg(n, "%s", err);
    protocol_init(&p);
    ck_assert_msg(protocol_read(n, &p, &err), "%s", err);
    ck_assert_uint_eq(p.eager_limit, 131072);
    ck_assert_int_eq(p.handshake, PROTOCOL_HANDSHAKE_RTT);
    ck_assert_double_eq_tol(p.overhead_s, 12e-6, 1e-18);
    ck_assert_uint_eq(p.segment_bytes, 1 << 20);
    ck_assert_uint_eq(p.control_queue[PROTOCOL_FROM_LOWER], 262144);
    ck_assert_uint_eq(p.control_queue[PROTOCOL_FROM_HIGHER], 262144);
    ck_assert_uint_eq(p.host_queue, 65536);
    ck_assert_int_eq(p.ack, PROTOCOL_ACK_RTT);
    cfg_free(n);
    /* the writer's text reads back to the same values */
    char *text = protocol_format(&p);
    ck_assert_str_eq(text, "{eager_limit: 131072, handshake: rtt, overhead: 1.2e-05s, segment: 1048576, "
                           "control_queue: 262144, host_queue: 65536, ack: rtt}");
    n = cfg_parse_string(text, "q.yaml", &err);
    Protocol q;
    protocol_init_eager(&q);
    ck_assert_msg(n && protocol_read(n, &q, &err), "%s", err);
    ck_assert(memcmp(&p, &q, sizeof p) == 0);
    cfg_free(n);
    g_free(text);
    /* absent keys keep their values; inf and none */
    n = cfg_parse_string("{eager_limit: inf, segment: none, control_queue: inf, host_queue: 0, ack: none}", "r.yaml",
                         &err);
    ck_assert_msg(n && protocol_read(n, &q, &err), "%s", err);
    ck_assert_uint_eq(q.eager_limit, PROTOCOL_INF);
    ck_assert_uint_eq(q.control_queue[PROTOCOL_FROM_LOWER], PROTOCOL_INF);
    ck_assert_uint_eq(q.control_queue[PROTOCOL_FROM_HIGHER], PROTOCOL_INF);
    ck_assert_uint_eq(q.segment_bytes, 0);
    ck_assert_int_eq(q.handshake, PROTOCOL_HANDSHAKE_RTT);
    ck_assert(q.host_queue == 0 && q.ack == PROTOCOL_ACK_NONE);
    q.host_queue = PROTOCOL_INF;
    text = protocol_format(&q);
    ck_assert_msg(strstr(text, ", host_queue: inf}"), "%s", text);
    g_free(text);
    cfg_free(n);
}
END_TEST

/* One end's control queue: its key over control_queue, the writer's keys,
 * which end a control message is from, the command line's one or two
 * values. */
START_TEST(test_control_queue_ends)
{
    Protocol q;
    protocol_init(&q);
    q.eager_limit = PROTOCOL_INF;
    q.handshake = PROTOCOL_HANDSHAKE_RTT;
    q.overhead_s = 12e-6;
    char *err = NULL, *text;
    CfgNode *n;
    /* one end's own key wins over control_queue wherever it stands; the writer names both ends */
    static const char *const ends[] = {"{control_queue_from_higher: 512KiB, control_queue: 0}",
                                       "{control_queue: 0, control_queue_from_higher: 512KiB}"};
    for (size_t i = 0; i < G_N_ELEMENTS(ends); i++) {
        n = cfg_parse_string(ends[i], "e.yaml", &err);
        ck_assert_msg(n && protocol_read(n, &q, &err), "%s", err);
        ck_assert_uint_eq(q.control_queue[PROTOCOL_FROM_LOWER], 0);
        ck_assert_uint_eq(q.control_queue[PROTOCOL_FROM_HIGHER], 524288);
        cfg_free(n);
    }
    text = protocol_format(&q);
    ck_assert_str_eq(text, "{eager_limit: inf, handshake: rtt, overhead: 1.2e-05s, segment: none, "
                           "control_queue_from_lower: 0, control_queue_from_higher: 524288}");
    g_free(text);
    q.control_queue[PROTOCOL_FROM_LOWER] = PROTOCOL_INF;
    text = protocol_format(&q);
    ck_assert_msg(strstr(text, "control_queue_from_lower: inf, control_queue_from_higher: 524288}"), "%s", text);
    g_free(text);
    /* which end a control message is from: its sender's rank against its receiver's */
    ck_assert_uint_eq(protocol_control_queue(&q, 3, 1), 524288);
    ck_assert_uint_eq(protocol_control_queue(&q, 1, 3), PROTOCOL_INF);
    /* the command line's one value or two */
    uint64_t two[2];
    const char *why = NULL;
    ck_assert(protocol_parse_control_queues("64KiB", two, &why) && two[0] == 65536 && two[1] == 65536);
    ck_assert(protocol_parse_control_queues("0,inf", two, &why) && two[0] == 0 && two[1] == PROTOCOL_INF);
    static const char *const bad_cli[] = {"0,1,2", "", "0,", ",0", "0,-1", "x"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_cli); i++) {
        why = NULL;
        ck_assert_msg(!protocol_parse_control_queues(bad_cli[i], two, &why) && why && strstr(why, "expected"),
                      "'%s' accepted", bad_cli[i]);
    }
}
END_TEST

/* Bad values and keys: one message at the value, the struct untouched. */
START_TEST(test_bad_settings)
{
    Protocol p;
    char *err = NULL;
    CfgNode *n;
    static const struct {
        const char *yaml, *want;   /* input, the start of the error */
    } bad[] = {
        {"{eager_limit: -1KiB}", "b.yaml:1:15: '-1KiB': not an eager limit; expected"},
        {"{eager_limit: lots}", "b.yaml:1:15: 'lots': not an eager limit; expected"},
        {"{handshake: rendezvous}", "b.yaml:1:13: 'rendezvous': unknown handshake; expected none"},
        {"{overhead: -3us}", "b.yaml:1:12: '-3us': not a time; expected"},
        {"{overhead: 2s}", "b.yaml:1:12: '2s': overhead above 1 s per message; expected"},
        {"{segment: 0}", "b.yaml:1:11: '0': not a segment size; expected a positive size"},
        {"{segment: [1]}", "b.yaml:1:11: wrong type: a list; expected a size or none"},
        {"{control_queue: -5}", "b.yaml:1:17: '-5': not a control queue; expected a size"},
        {"{control_queue: all}", "b.yaml:1:17: 'all': not a control queue; expected a size"},
        {"{control_queue_from_higher: [1]}", "b.yaml:1:29: wrong type: a list; expected a size or inf"},
        {"{control_queue_from_lower: -1}", "b.yaml:1:28: '-1': not a control queue; expected a size"},
        {"{host_queue: -64KiB}", "b.yaml:1:14: '-64KiB': not a host queue; expected a size"},
        {"{host_queue: most}", "b.yaml:1:14: 'most': not a host queue; expected a size"},
        {"{ack: yes}", "b.yaml:1:7: 'yes': unknown ack; expected none"},
        {"{ack: [rtt]}", "b.yaml:1:7: wrong type: a list; expected none or rtt"},
        {"{eager: 1KiB}", "b.yaml:1:2: unknown key 'eager' in protocol; expected one of"},
        {"64KiB", "b.yaml:1:1: "},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        n = cfg_parse_string(bad[i].yaml, "b.yaml", &err);
        ck_assert_msg(n, "%s", err);
        protocol_init(&p);
        Protocol before = p;
        ck_assert_msg(!protocol_read(n, &p, &err), "%s accepted", bad[i].yaml);
        ck_assert_msg(g_str_has_prefix(err, bad[i].want), "%s: got '%s'", bad[i].yaml, err);
        ck_assert(memcmp(&p, &before, sizeof p) == 0);
        g_clear_pointer(&err, g_free);
        cfg_free(n);
    }
}
END_TEST

static double run_sched(Topo *t, const CollSchedule *s, const int *r2h, double g)
{
    return run_sched_at(t, s, r2h, g, NULL);
}

/* One message of m bytes from rank 0 to rank 1 on both sides of the eager
 * limit, each handshake, with and without overhead: α + mβ + 2o, plus 2α
 * for a rendezvous with rtt, and 2α more with ack rtt. */
START_TEST(test_one_message)
{
    const double a = 2 * LAT, b = 1 / BW;
    const uint64_t sizes[] = {0, 1, EAGER - 1, EAGER, 3 * EAGER};
    for (size_t pi = 0; pi < G_N_ELEMENTS(PROTOS); pi++) {
        Protocol pr = proto_of(pi, EAGER, 0);
        Topo *t = star_proto(2, 0, &pr);
        for (size_t si = 0; si < G_N_ELEMENTS(sizes); si++) {
            uint64_t m = sizes[si];
            CollSchedule *s = coll_schedule_new(2, m);
            sched_add(s, 0, 1, m, -1, 0, false);
            sched_add(s, 1, -1, 0, 0, m, false);
            bool rdv_rtt = PROTOS[pi].hs == PROTOCOL_HANDSHAKE_RTT && m >= EAGER;
            bool rdv_ack = PROTOS[pi].ack == PROTOCOL_ACK_RTT && m >= EAGER;
            double want = a + m * b + 2 * PROTOS[pi].o + (rdv_rtt ? 2 * a : 0) + (rdv_ack ? 2 * a : 0);
            ck_assert_msg(fabs(run_sched(t, s, NULL, 0) - want) < 1e-12, "%s m=%" G_GUINT64_FORMAT, PROTOS[pi].name,
                          (guint64)m);
            coll_schedule_free(s);
        }
        topo_free(t);
    }
}
END_TEST

/* A late receiver: rank 1 first exchanges B bytes with rank 2 (T1 = α +
 * Bβ + 2o, plus 2α with rtt), then receives m from rank 0, which sent at
 * time 0. Eager (m below the limit): the message went ahead of rank 2's
 * on rank 1's link (T1 + mβ) and waited at rank 1's host, which pays its
 * receive overhead after its step: T1 + mβ + o; with rtt rank 2's
 * request-to-send, in another connection than rank 0's message, passes
 * it, and the data follows long after it left: T1 + o. Rendezvous, none: the
 * data leaves when rank 1 posts, at T1: T1 + α + mβ + o. Rendezvous, rtt:
 * the request-to-send arrived long before, the clear-to-send leaves at
 * T1: T1 + 2α + mβ + o. With ack rtt every rendezvous step ends 2α later
 * (the acknowledgement, then the confirmation): T1 too (B is one). */
START_TEST(test_late_receiver)
{
    const double a = 2 * LAT, b = 1 / BW;
    const uint64_t B = 1 << 20;
    for (size_t pi = 0; pi < G_N_ELEMENTS(PROTOS); pi++) {
        double o = PROTOS[pi].o;
        bool rtt = PROTOS[pi].hs == PROTOCOL_HANDSHAKE_RTT;
        double ack = PROTOS[pi].ack == PROTOCOL_ACK_RTT ? 2 * a : 0;
        Protocol pr = proto_of(pi, EAGER, 0);
        Topo *t = star_proto(3, 0, &pr);
        for (int big = 0; big < 2; big++) {
            uint64_t m = big ? 2 * EAGER : 1000;
            CollSchedule *s = coll_schedule_new(3, B);
            sched_add(s, 0, 1, m, -1, 0, false);
            sched_add(s, 1, 2, B, 2, B, false);
            sched_add(s, 1, -1, 0, 0, m, false);
            sched_add(s, 2, 1, B, 1, B, false);
            double t1 = a + B * b + 2 * o + (rtt ? 2 * a : 0) + ack;
            double want = !big ? t1 + (rtt ? 0 : m * b) + o : t1 + (rtt ? 2 * a : a) + m * b + o + ack;
            double got = run_sched(t, s, NULL, 0);
            ck_assert_msg(fabs(got - want) < 1e-12, "%s m=%" G_GUINT64_FORMAT ": %.12g, want %.12g",
                          PROTOS[pi].name, (guint64)m, got, want);
            coll_schedule_free(s);
        }
        topo_free(t);
    }
}
END_TEST

/* A rank's overheads and reductions run one at a time. Rank 1 first
 * receives and reduces B bytes from rank 2 (rank 0's 1000 B eager message,
 * sent at the same time, crosses rank 1's link first: T1 = α + (B +
 * 1000)β + 2o + Bγ). Then, in one step, it sends 1000 B to rank 3 on its
 * own host (delivered as it leaves, at T1 + o) and receives rank 0's
 * message, which is already there: its receive overhead runs after its
 * send overhead, so the step ends at T1 + 2o (not T1 + o). Its last step
 * sends 1000 B to rank 0: T1 + 3o + α + 1000β, and rank 0's receive
 * overhead ends the collective at T1 + 4o + α + 1000β. */
START_TEST(test_cpu_serial)
{
    const double a = 2 * LAT, b = 1 / BW, o = 3e-6;
    Protocol pr = proto(PROTOCOL_HANDSHAKE_NONE, o, EAGER, 0);
    Topo *t = star_proto(3, 0, &pr);
    const uint64_t B = 1000000;
    CollSchedule *s = coll_schedule_new(4, B);
    sched_add(s, 0, 1, 1000, -1, 0, false);
    sched_add(s, 0, -1, 0, 1, 1000, false);
    sched_add(s, 1, -1, 0, 2, B, true);
    sched_add(s, 1, 3, 1000, 0, 1000, false);
    sched_add(s, 1, 0, 1000, -1, 0, false);
    sched_add(s, 2, 1, B, -1, 0, false);
    sched_add(s, 3, -1, 0, 1, 1000, false);
    const int r2h[] = {0, 1, 2, 1};
    double t1 = a + (B + 1000) * b + 2 * o + B * GAMMA;
    ck_assert_double_eq_tol(run_sched(t, s, r2h, GAMMA), t1 + 4 * o + a + 1000 * b, 1e-12);
    coll_schedule_free(s);
    topo_free(t);
}
END_TEST

static const uint64_t SIZES_MSG[] = {8, 4096, 200000, 1 << 20, 64u << 20};
static const uint64_t SIZES_PKT[] = {8, 1000, 64 << 10, 512 << 10};

/* Checks a simulated time of a flat algorithm against its formula f.
 * Exact wherever both ends of every step start together (ring, p a power
 * of two), and, in message mode without overhead, for folded schedules
 * whose every message is a rendezvous (the ranks that skip the fold wait
 * for their partners' receives: SMPI's rule makes MPICH's folded
 * Rabenseifner meet its closed form). Otherwise, with a fold (p not a
 * power of two) the ranks >= 2r skip it and start early:
 * - a step whose partner started early saves at most its partner's
 *   receive overhead, so sim >= f - k·o (k core steps);
 * - small eager messages (below the limit) may run ahead and share a busy
 *   host's link: Rabenseifner's halving messages add at most nβ/2;
 * - with rtt and an overhead, the partners of a core step no longer start
 *   together, and one's clear-to-send queues behind the other's data on
 *   the same link (what the README's Open MPI measurements showed): each
 *   core step may wait one partner message longer, at most the bytes a
 *   rank sends in the core, k·nβ for butterfly and 2nβ for Rabenseifner;
 * - in packet mode the fold message and the first core message share a
 *   link round robin: f - k·o is a lower bound only.
 * The tree's formula is an upper bound for p not a power of two (its
 * incomplete subtrees report early) and exact otherwise. */
static void check(double sim, const FormCost *c, CollAlgo a, int p, uint64_t n, const char *what)
{
    int k = lg_floor(p);
    double f = f_flat(c, a, p, (double)n), nb = (double)n * c->b;
    bool folded = p != 1 << k && (a == COLL_BUTTERFLY || a == COLL_RABENSEIFNER);
    char label[96];
    snprintf(label, sizeof label, "%s %s%s", coll_algo_name(a), what, c->pkt > 0 ? " packet" : "");
    if (a == COLL_TREE && p != 1 << k) {
        within(sim, 0, f, label, p, n);
        return;
    }
    double smallest = a == COLL_RABENSEIFNER ? (double)n / (1 << k) : (double)n;
    if (!folded || (smallest >= c->eager && c->o == 0 && c->pkt == 0 && !c->rtt)) {
        within(sim, f * (1 - 1e-3), f * (1 + 1e-3), label, p, n);
        return;
    }
    /* A folded butterfly or Rabenseifner under rtt (no ack): a rank that skipped
     * the fold sends its request-to-send early; its late partner posts
     * the receive (its clear-to-send leaves) before sending its own
     * request, so the early rank's data is under way when that request
     * arrives and the partner's clear-to-send queues behind it: the step's
     * two messages go one after the other, mβ more for a message of m —
     * at most once per exchange step (k·nβ; Rabenseifner's steps carry at
     * most n/2 + n/4 + ... twice, 2nβ). With p = 3 (one early rank) it is
     * exactly the first exchange step: nβ (butterfly), nβ/2 (Rabenseifner's
     * halving step; its doubling step starts together). */
    if (folded && c->rtt && !c->ack && c->o == 0 && c->pkt == 0 && smallest >= c->eager) {
        double extra = a == COLL_BUTTERFLY ? nb : nb / 2;
        if (p == 3)
            within(sim, (f + extra) * (1 - 1e-6), (f + extra) * (1 + 1e-6), label, p, n);
        else
            within(sim, f * (1 - 1e-6), f + (a == COLL_BUTTERFLY ? k * nb : 2 * nb), label, p, n);
        return;
    }
    /* With overhead, a rank whose message arrived before it posted the
     * receive pays the receive's o before its own send's (MPI's order:
     * the receive is posted first), so its send leaves o later: at most
     * one o per exchange step either way. */
    double lo = f - k * c->o, hi = f + k * c->o;
    /* With ack rtt, in an exchange step whose two messages went one after
     * the other, the first one's acknowledgement and confirmation cross
     * while the second one's data flows: at most α less per core step. */
    if (c->ack && folded)
        lo -= k * c->a;
    if (a == COLL_RABENSEIFNER)
        hi += nb / 2;
    if (c->rtt)
        hi += a == COLL_BUTTERFLY ? k * nb : 2 * nb;   /* serialized exchange steps, as above */
    within(sim, lo, c->pkt > 0 ? INFINITY : hi, label, p, n);
}

static void flat_case(int p, uint64_t packet)
{
    CollAlgo algos[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
    const uint64_t *sizes = packet ? SIZES_PKT : SIZES_MSG;
    size_t nsizes = packet ? G_N_ELEMENTS(SIZES_PKT) : G_N_ELEMENTS(SIZES_MSG);
    int q = 1 << lg_floor(p);
    for (size_t pi = 0; pi < G_N_ELEMENTS(PROTOS); pi++) {
        Protocol pr = proto_of(pi, EAGER, 0);
        Topo *t = star_proto(p, packet, &pr);
        for (size_t ai = 0; ai < G_N_ELEMENTS(algos); ai++) {
            CollAlgo a = algos[ai];
            for (size_t si = 0; si < nsizes; si++) {
                uint64_t d = a == COLL_RING ? (uint64_t)p : a == COLL_RABENSEIFNER ? (uint64_t)q : 1;
                uint64_t n = round_up(sizes[si], d);
                for (int gi = 0; gi < 2; gi++) {
                    FormCost c = {.a = 2 * LAT, .b = 1 / BW, .g = gi ? GAMMA : 0, .o = PROTOS[pi].o, .eager = EAGER,
                               .rtt = PROTOS[pi].hs == PROTOCOL_HANDSHAKE_RTT, .pkt = packet ? (double)packet : 0,
                               .ack = PROTOS[pi].ack == PROTOCOL_ACK_RTT};
                    check(run_time(t, a, NULL, p, n, c.g, NULL), &c, a, p, n, PROTOS[pi].name);
                }
            }
        }
        topo_free(t);
    }
}

START_TEST(test_flat_message)
{
    flat_case(PS[_i], 0);
}
END_TEST

START_TEST(test_flat_packet)
{
    flat_case(PS[_i], (uint64_t)PKT);
}
END_TEST

/* coll_cost_model (message mode, every hop one α) equals the simulation
 * of every algorithm, the compositions included, wherever the schedule's
 * steps start together, in each protocol; within check()'s bounds
 * otherwise. */
START_TEST(test_cost_model)
{
    int p = PS[_i], q = 1 << lg_floor(p);
    for (size_t pi = 0; pi < G_N_ELEMENTS(PROTOS); pi++) {
        Protocol pr = proto_of(pi, EAGER, 0);
        Topo *t = star_proto(p, 0, &pr);
        CollCostModel cm = {.alpha = 2 * LAT, .beta = 1 / BW, .gamma = GAMMA, .overhead = PROTOS[pi].o,
                            .eager_limit = EAGER, .rtt = PROTOS[pi].hs == PROTOCOL_HANDSHAKE_RTT,
                            .ack = PROTOS[pi].ack == PROTOCOL_ACK_RTT};
        FormCost c = {.a = cm.alpha, .b = cm.beta, .g = GAMMA, .o = cm.overhead, .eager = EAGER, .rtt = cm.rtt,
                      .ack = cm.ack};
        for (int algo = 0; algo < COLL_NALGOS; algo++) {
            CollParams prm;
            coll_params_init(&prm);
            if (algo == COLL_HIERARCHICAL) {
                prm.gpus_per_node = p % 4 == 0 ? 4 : 1;
                prm.inter = p % 4 == 0 && (p / 4 & (p / 4 - 1)) == 0 ? COLL_BUTTERFLY : COLL_RING;
            }
            for (int big = 0; big < 2; big++) {
                uint64_t n = round_up(big ? 3u << 20 : 3000, (uint64_t)p * q * 4);
                double sim = run_time(t, (CollAlgo)algo, &prm, p, n, GAMMA, NULL);
                double cost = coll_cost_model((CollAlgo)algo, &prm, p, (double)n, &cm);
                if (!f_known((CollAlgo)algo)) {   /* compositions and later rows: the simulation within 0.1 % */
                    within(sim, cost * (1 - 1e-3), cost * (1 + 1e-3), coll_algo_name((CollAlgo)algo), p, n);
                } else {
                    ck_assert_double_eq_tol(cost, f_flat(&c, (CollAlgo)algo, p, (double)n), 1e-12);
                    check(sim, &c, (CollAlgo)algo, p, n, PROTOS[pi].name);
                }
            }
        }
        topo_free(t);
    }
}
END_TEST

/* Ranks issuing apart (collrun_time_skewed): one exchange of n bytes
 * between 2 ranks whose issue times differ by Δ (their draws) takes
 * Δ + T0 (T0 the closed form's time when they issue together) —
 * eagerly, and under handshake none; under rtt the late rank's
 * clear-to-send leaves before
 * its request-to-send, the early rank's data goes first and the late
 * rank's clear-to-send for it waits behind that data on the early rank's
 * link: Δ + T0 + nβ, the two messages one after the other. With a
 * control queue Q the clear-to-send overtakes the data once Q bytes of
 * it passed on each of the route's two links: Δ + T0 + min(n, 2Q)β
 * (n > 2Q: Q on each link; Q < n <= 2Q: on the second link no more than Q
 * is left ahead, it waits for all of it). Skew 0 is the unskewed run. */
START_TEST(test_skewed_exchange)
{
    const uint64_t n = 1 << 20;
    const uint64_t caps[] = {PROTOCOL_INF, n, n / 2 + 4096, n / 4, 1000, 0};
    for (int hs = 0; hs < 2; hs++) {
        for (int eager = 0; eager < 2; eager++) {
          for (size_t ci = 0; ci < G_N_ELEMENTS(caps); ci++) {
            Protocol pr = proto(hs ? PROTOCOL_HANDSHAKE_RTT : PROTOCOL_HANDSHAKE_NONE, 0, eager ? PROTOCOL_INF : EAGER,
                                0);
            /* each end its own cap: the lower rank's caps[ci], the higher's the next one */
            const uint64_t cap_hi = caps[(ci + 1) % G_N_ELEMENTS(caps)];
            pr.control_queue[PROTOCOL_FROM_LOWER] = caps[ci];
            pr.control_queue[PROTOCOL_FROM_HIGHER] = cap_hi;
            Topo *t = star_proto(2, 0, &pr);
            double t0 = run_time(t, COLL_BUTTERFLY, NULL, 2, n, 0, NULL);
            FormCost c = {.a = 2 * LAT, .b = 1 / BW, .eager = eager ? INFINITY : EAGER, .rtt = hs == 1};
            within(t0, f_flat(&c, COLL_BUTTERFLY, 2, (double)n) * (1 - 1e-9), f_flat(&c, COLL_BUTTERFLY, 2, (double)n),
                   "skewed_exchange T0", 2, n);
            char *err = NULL;
            CollSkew none = {.seed = 7};
            ck_assert_double_eq(collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &none, NULL, &err), t0);
            for (uint64_t trial = 0; trial < 5; trial++) {
                CollSkew k = {.skew_s = 0.01, .seed = 7, .trial = trial};
                double u0 = simrng_uniform(7, COLLRUN_SKEW_STREAM, (int64_t)trial, 0);
                double u1 = simrng_uniform(7, COLLRUN_SKEW_STREAM, (int64_t)trial, 1);
                double d = fabs(u0 - u1) * 0.01;
                /* what the late rank's clear-to-send (the early rank sends it) waits behind: all of the
                 * early rank's data (FIFO), or the early rank's cap on each of the two links while as
                 * much is still ahead of it there */
                uint64_t cap = u0 < u1 ? caps[ci] : cap_hi;
                double held = cap == PROTOCOL_INF ? (double)n : fmin((double)n, 2.0 * (double)cap);
                double want = d + t0 + (hs && !eager ? held / BW : 0);
                double got = collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &k, NULL, &err);
                ck_assert_msg(fabs(got - want) <= 2e-12, "hs %d eager %d cap %zu trial %d: %.12g s, want %.12g s", hs,
                              eager, ci, (int)trial, got, want);
                /* own spans: the early rank waits for the late one's data, so its span is the whole */
                CollSkew own = k;
                own.own_span = true;
                ck_assert_double_eq_tol(collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &own, NULL, &err),
                                        want, 2e-12);
            }
            CollSkew bad = {.skew_s = -1, .seed = 7};
            ck_assert(collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &bad, NULL, &err) < 0);
            ck_assert_msg(strstr(err, "expected a time from 0"), "%s", err);
            g_free(err);
            topo_free(t);
          }
        }
    }
}
END_TEST

/* A request-to-send that carries the message's first E' = eager_limit - 1
 * bytes (rts_payload eager, Open MPI's ob1). Two ranks exchange n bytes,
 * rank `late` issuing Δ after the other (α = 2L on the two-link star, no
 * burst). The early rank's request arrives long before; the late rank
 * answers it with a clear-to-send (its own end's queue: nothing of its
 * data is queued yet) and sends its request; the early rank's remaining
 * n - E' leave at Δ + α, and the late rank's request reaches it E'β later,
 * when E' of that data has gone. Its clear-to-send then overtakes the rest
 * (its end's queue 0): Δ + 3α + nβ, as with an empty request; or waits
 * behind all of it (inf): Δ + 3α + 2(n - E')β — 2E'β less than an empty
 * request's Δ + 3α + 2nβ. Uncontended (no skew) the payload changes
 * nothing: 3α + nβ. Which end's queue counts is the early rank's. */
START_TEST(test_rts_payload)
{
    const double a = 2 * LAT, b = 1 / BW, d = 0.01;
    const uint64_t n = 1 << 20;
    const double e = EAGER - 1;
    for (int late = 0; late < 2; late++) {
        for (int fifo = 0; fifo < 2; fifo++) {
            for (int carry = 0; carry < 2; carry++) {
                Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, 0, EAGER, 0);
                pr.rts_payload = carry ? PROTOCOL_RTS_EAGER : PROTOCOL_RTS_EMPTY;
                /* the early rank's end waits behind all (fifo) or nothing; the late rank's end the other */
                const int early_end = late == 0 ? PROTOCOL_FROM_HIGHER : PROTOCOL_FROM_LOWER;
                pr.control_queue[early_end] = fifo ? PROTOCOL_INF : 0;
                pr.control_queue[!early_end] = fifo ? 0 : PROTOCOL_INF;
                Topo *t = star_proto(2, 0, &pr);
                char *err = NULL;
                double at[2] = {late == 0 ? d : 0, late == 1 ? d : 0};
                CollSkew k = {.at_s = at};
                double got = collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &k, NULL, &err);
                double want = d + 3 * a + (fifo ? 2 * ((double)n - (carry ? e : 0)) : (double)n) * b;
                ck_assert_msg(fabs(got - want) <= 2e-12, "late %d fifo %d carry %d: %.12g s, want %.12g s", late, fifo,
                              carry, got, want);
                CollSkew none = {.seed = 1};
                ck_assert_double_eq_tol(collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 2, n, 1, 0, &none, NULL, &err),
                                        3 * a + n * b, 2e-12);
                topo_free(t);
            }
        }
    }
    /* the format names it; the reader takes it back */
    Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, 0, EAGER, 0);
    pr.rts_payload = PROTOCOL_RTS_EAGER;
    char *text = protocol_format(&pr), *err = NULL;
    ck_assert_msg(strstr(text, ", rts_payload: eager}"), "%s", text);
    CfgNode *node = cfg_parse_string(text, "r.yaml", &err);
    Protocol back;
    protocol_init(&back);
    ck_assert_msg(node && protocol_read(node, &back, &err), "%s", err);
    ck_assert_int_eq(back.rts_payload, PROTOCOL_RTS_EAGER);
    ck_assert_uint_eq(protocol_rts_bytes(&back, n), EAGER - 1);
    ck_assert_uint_eq(protocol_rts_bytes(&back, 100), 100);
    back.handshake = PROTOCOL_HANDSHAKE_NONE;
    ck_assert_uint_eq(protocol_rts_bytes(&back, n), 0);
    cfg_free(node);
    g_free(text);
    node = cfg_parse_string("{rts_payload: half}", "b.yaml", &err);
    ck_assert(node && !protocol_read(node, &back, &err));
    ck_assert_msg(strstr(err, "b.yaml:1:15: 'half': unknown request-to-send payload; expected none"), "%s", err);
    g_free(err);
    cfg_free(node);
}
END_TEST

/* Control messages travel in their connection. Rank 1 sends n bytes to
 * rank 2 and, in the same step, receives n from rank 0; ranks 1 and 2
 * issue at 0, rank 0 at Δ = α + nβ/2 (rtt, n a rendezvous). Rank 1's data
 * for rank 2 holds its link from 2α to 2α + nβ; rank 0's request-to-send
 * reaches rank 1 at Δ + α, inside that, and rank 1's clear-to-send to
 * rank 0 (another connection: nothing of its own ahead) passes the data
 * whatever the control queue: rank 0's data leaves at Δ + 2α and lands at
 * Δ + 3α + nβ, the end. (A FIFO clear-to-send would wait for rank 1's
 * data: 4α + 2nβ.) With a host queue H it waits behind min(H, n/2) bytes
 * of that data (the half still on the link when it arrives): Δ + 3α + nβ
 * + min(H, n/2)β, whatever the control queue. With ack rtt the
 * acknowledgement and the confirmation of rank 0's message add 2α (the
 * link is idle by then). */
START_TEST(test_host_queue)
{
    const double a = 2 * LAT, b = 1 / BW;
    const uint64_t n = 1 << 20;
    const uint64_t hq[] = {0, 1000, n / 8, n / 2, n, PROTOCOL_INF};
    const uint64_t caps[] = {PROTOCOL_INF, n, n / 4, 0};   /* control queues */
    for (size_t hi = 0; hi < G_N_ELEMENTS(hq); hi++)
        for (int ack = 0; ack < 2; ack++)
            for (size_t ci = 0; ci < G_N_ELEMENTS(caps); ci++) {
                Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, 0, EAGER, 0);
                pr.host_queue = hq[hi];
                pr.ack = ack ? PROTOCOL_ACK_RTT : PROTOCOL_ACK_NONE;
                protocol_set_control_queue(&pr, caps[ci]);
                Topo *t = star_proto(3, 0, &pr);
                CollSchedule *s = coll_schedule_new(3, n);
                sched_add(s, 0, 1, n, -1, 0, false);
                sched_add(s, 1, 2, n, 0, n, false);
                sched_add(s, 2, -1, 0, 1, n, false);
                double delta = a + n * b / 2;
                simtime_t at[3] = {(simtime_t)llround(delta * 1e12), 0, 0};
                double got = run_sched_at(t, s, NULL, 0, at);
                double wait = hq[hi] == PROTOCOL_INF ? n / 2 * b : fmin((double)hq[hi], n / 2) * b;
                double want = delta + 3 * a + n * b + wait + (ack ? 2 * a : 0);
                ck_assert_msg(fabs(got - want) <= 4e-12, "host queue %zu ack %d control queue %zu: %.12g s, want "
                              "%.12g s", hi, ack, ci, got, want);
                coll_schedule_free(s);
                topo_free(t);
            }
}
END_TEST

/* duplex half: the rendezvous data of an exchange takes turns even when
 * both ends start together — 2(α + nβ) under handshake none (both data
 * messages may leave at 0; the second waits for the first's delivery),
 * 2α more under rtt (4α + 2nβ) — while eager messages cross at once
 * (α + nβ), and a ring, whose data never goes both ways between two
 * hosts at once, takes exactly its full-duplex time. */
START_TEST(test_duplex_half)
{
    const double a = 2 * LAT, b = 1 / BW;
    const uint64_t n = 1 << 20;
    for (int hs = 0; hs < 2; hs++) {
        Protocol pr = proto(hs ? PROTOCOL_HANDSHAKE_RTT : PROTOCOL_HANDSHAKE_NONE, 0, EAGER, 0);
        Protocol ph = pr;
        ph.duplex = PROTOCOL_DUPLEX_HALF;
        Topo *full = star_proto(9, 0, &pr), *half = star_proto(9, 0, &ph);
        double got = run_time(half, COLL_BUTTERFLY, NULL, 2, n, 0, NULL);
        double want = (hs ? 4 * a : 2 * a) + 2 * (double)n * b;
        ck_assert_msg(fabs(got - want) <= 1e-12, "hs %d: %.12g s, want %.12g s", hs, got, want);
        got = run_time(half, COLL_BUTTERFLY, NULL, 2, EAGER / 2, 0, NULL);
        ck_assert_msg(fabs(got - (a + (double)(EAGER / 2) * b)) <= 1e-12, "hs %d eager: %.12g s", hs, got);
        for (int p = 3; p <= 9; p++)
            ck_assert_double_eq(run_time(half, COLL_RING, NULL, p, n, 0, NULL),
                                run_time(full, COLL_RING, NULL, p, n, 0, NULL));
        topo_free(full);
        topo_free(half);
    }
}
END_TEST

START_TEST(test_no_deadlock)
{
    for (int p = 1; p <= 40; p++) {
        for (int hs = 0; hs < 2; hs++) {
            for (int segmented = 0; segmented < 2; segmented++) {
                Protocol pr = proto((ProtocolHandshake)hs, hs ? O : 0, 0, segmented ? 1000 : 0);
                Topo *t = star_proto(p, 0, &pr);
                for (int algo = 0; algo < COLL_NALGOS; algo++) {
                    CollParams prm;
                    coll_params_init(&prm);
                    prm.gpus_per_node = p % 3 == 0 ? 3 : 1;
                    prm.inter = (CollAlgo)(p % 4);
                    char *err = NULL;
                    double s = collrun_time(t, (CollAlgo)algo, &prm, p, 10007, 8, GAMMA, NULL, &err);
                    ck_assert_msg(s >= 0, "%s p=%d handshake %d segmented %d: %s", coll_algo_name((CollAlgo)algo), p,
                                  hs, segmented, err);
                }
                topo_free(t);
            }
        }
    }
}
END_TEST


/* Two ranks exchange m bytes and reduce them, in K pieces of s = m/K:
 * every piece leaves at once, the pieces cross the link back to back
 * (the last one arrives at α + mβ, as a whole message would), and each
 * piece is reduced as it arrives (γ < β), so only the last piece's
 * reduction is exposed: α + mβ + sγ instead of α + mβ + mγ. */
START_TEST(test_segment_exchange)
{
    const double a = 2 * LAT, b = 1 / BW;
    const uint64_t m = 960000;
    const uint32_t ks[] = {1, 2, 3, 8, 100};
    for (size_t i = 0; i < G_N_ELEMENTS(ks); i++) {
        Protocol pr = proto(PROTOCOL_HANDSHAKE_NONE, 0, PROTOCOL_INF, m / ks[i]);
        Topo *t = star_proto(2, 0, &pr);
        double got = run_time(t, COLL_BUTTERFLY, NULL, 2, m, GAMMA, NULL);
        double want = a + m * b + (double)m / ks[i] * GAMMA;
        ck_assert_msg(fabs(got - want) < 1e-12, "K=%u: %.12g, want %.12g", ks[i], got, want);
        topo_free(t);
    }
}
END_TEST

/* A ring of p ranks in K pieces of s = n/(pK) bytes, S = 2(p-1) steps,
 * no overhead, γ = 0. Piece k of step i leaves when piece k of step i-1
 * arrived; a rank's link sends the pieces in the order they are ready.
 * Latency-bound (α >= (K-1)sβ): the link idles between steps,
 * S(α + sβ) + (K-1)sβ; bandwidth-bound: the link never idles after the
 * first piece, SKsβ + α. The time is the larger of the two. */
START_TEST(test_segment_ring)
{
    const double a = 2 * LAT, b = 1 / BW;
    const int ps[] = {2, 3, 4, 5, 8, 12};
    const uint32_t ks[] = {1, 2, 3, 8, 40};
    for (size_t pi = 0; pi < G_N_ELEMENTS(ps); pi++) {
        int p = ps[pi], S = 2 * (p - 1);
        for (size_t ki = 0; ki < G_N_ELEMENTS(ks); ki++) {
            for (uint64_t seg = 1000; seg <= 100000; seg *= 10) {
                uint32_t K = ks[ki];
                uint64_t n = (uint64_t)p * K * seg;
                Protocol pr = proto(PROTOCOL_HANDSHAKE_NONE, 0, PROTOCOL_INF, seg);
                Topo *t = star_proto(p, 0, &pr);
                double s = (double)seg, want = fmax(S * (a + s * b) + (K - 1) * s * b, S * K * s * b + a);
                within(run_time(t, COLL_RING, NULL, p, n, 0, NULL), want, want, "segmented ring", p, n);
                topo_free(t);
            }
        }
    }
}
END_TEST

/* Every algorithm with segments, every protocol: the same bytes cross
 * every link as without (pieces partition each message), K times the
 * messages where every message has at least K elements and no handshake
 * adds control messages (K capped at PROTOCOL_MAX_SEGMENTS), and the time
 * is at least the busiest link's bytes at its rate plus one message's
 * latency. */
START_TEST(test_segment_bounds)
{
    int p = PS[_i] > 64 ? 64 : PS[_i];
    for (size_t pi = 0; pi < G_N_ELEMENTS(PROTOS); pi++) {
        for (int cap = 0; cap < 2; cap++) {
            uint64_t n = round_up(1 << 20, (uint64_t)p * 8), seg = cap ? 1 : 16384;
            Protocol whole = proto_of(pi, EAGER, 0);
            Protocol cut = proto_of(pi, EAGER, seg);
            Topo *tw = star_proto(p, 0, &whole), *tc = star_proto(p, 0, &cut);
            for (int algo = 0; algo < COLL_NALGOS; algo++) {
                CollParams prm;
                coll_params_init(&prm);
                prm.gpus_per_node = p % 2 == 0 ? 2 : 1;
                NetLinkStats *lw = g_new0(NetLinkStats, tw->links->len), *lc = g_new0(NetLinkStats, tc->links->len);
                char *err = NULL;
                double sw = collrun_time_links(tw, (CollAlgo)algo, &prm, p, n, 1, GAMMA, NULL, lw, &err);
                double sc = collrun_time_links(tc, (CollAlgo)algo, &prm, p, n, 1, GAMMA, NULL, lc, &err);
                ck_assert_msg(sw >= 0 && sc >= 0, "%s p=%d: %s", coll_algo_name((CollAlgo)algo), p, err);
                uint64_t busiest = 0, mw = 0, mc = 0;
                for (guint l = 0; l < tw->links->len; l++) {
                    ck_assert_uint_eq(lw[l].bytes, lc[l].bytes);
                    busiest = lc[l].bytes > busiest ? lc[l].bytes : busiest;
                    mw += lw[l].msgs;
                    mc += lc[l].msgs;
                }
                uint64_t most = 0;   /* the largest message, for K */
                CollSchedule *s = coll_schedule_new(p, n);
                ck_assert(coll_build(s, (CollAlgo)algo, &prm, &err));
                bool all_long = true;
                for (int r = 0; r < p; r++)
                    for (guint i = 0; i < coll_nsteps(s, r); i++) {
                        CollStep step;
                        const CollStep *st = &step;
                        coll_step(s, r, i, &step);
                        most = st->send_peer >= 0 && st->send_len > most ? st->send_len : most;
                        all_long &= st->send_peer < 0 || st->send_len >= PROTOCOL_MAX_SEGMENTS;
                    }
                uint64_t k = (most + seg - 1) / seg;
                k = k > PROTOCOL_MAX_SEGMENTS ? PROTOCOL_MAX_SEGMENTS : k;
                /* rtt and ack add control messages */
                if (all_long && PROTOS[pi].hs == PROTOCOL_HANDSHAKE_NONE && PROTOS[pi].ack == PROTOCOL_ACK_NONE)
                    ck_assert_msg(mc == k * mw, "%s %s p=%d k=%u: %" G_GUINT64_FORMAT " msgs, %" G_GUINT64_FORMAT " whole", coll_algo_name((CollAlgo)algo), PROTOS[pi].name, p, (unsigned)k, (guint64)mc, (guint64)mw);
                if (p > 1)
                    ck_assert_msg(sc >= (busiest / BW + 2 * LAT) * (1 - 1e-9), "%s p=%d: %.9g s below the busiest "
                                  "link's %" G_GUINT64_FORMAT " B", coll_algo_name((CollAlgo)algo), p, sc, busiest);
                coll_schedule_free(s);
                g_free(lw);
                g_free(lc);
            }
            topo_free(tw);
            topo_free(tc);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("protocol");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    int nps = (int)G_N_ELEMENTS(PS);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_read_write);
    tcase_add_test(tc, test_control_queue_ends);
    tcase_add_test(tc, test_bad_settings);
    tcase_add_test(tc, test_one_message);
    tcase_add_test(tc, test_late_receiver);
    tcase_add_test(tc, test_cpu_serial);
    tcase_add_loop_test(tc, test_flat_message, 0, nps);
    tcase_add_loop_test(tc, test_flat_packet, 0, nps);
    tcase_add_loop_test(tc, test_cost_model, 0, nps);
    tcase_add_test(tc, test_no_deadlock);
    tcase_add_test(tc, test_skewed_exchange);
    tcase_add_test(tc, test_host_queue);
    tcase_add_test(tc, test_duplex_half);
    tcase_add_test(tc, test_segment_exchange);
    tcase_add_test(tc, test_segment_ring);
    tcase_add_test(tc, test_rts_payload);
    tcase_add_loop_test(tc, test_segment_bounds, 0, nps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
