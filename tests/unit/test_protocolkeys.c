/* test_protocolkeys — the protocol key table as the command line sees it:
 * each option (protocol_parse_option) sets its own setting and bit and
 * nothing else; protocol_apply copies exactly the masked settings; the
 * writer's text of every non-default setting reads back to the same
 * struct; a bad choice names the setting, the value and the choices;
 * every option of the key table is in this file's list. */
#include "io/protocol.h"

#include "testmain.h"

#include <check.h>
#include <string.h>

/* Every flag with a value other than the default. */
static const struct {
    const char *flag, *value;
    unsigned bit;
} given[] = {
    {"eager-limit", "1KiB", PROTOCOL_SET_EAGER_LIMIT},   {"handshake", "rtt", PROTOCOL_SET_HANDSHAKE},
    {"overhead", "3us", PROTOCOL_SET_OVERHEAD},          {"segment", "4KiB", PROTOCOL_SET_SEGMENT},
    {"control-queue", "0,8KiB", PROTOCOL_SET_CONTROL_QUEUE}, {"host-queue", "inf", PROTOCOL_SET_HOST_QUEUE},
    {"duplex", "half", PROTOCOL_SET_DUPLEX},             {"rts-payload", "eager", PROTOCOL_SET_RTS_PAYLOAD},
    {"ack", "rtt", PROTOCOL_SET_ACK},                    {"progress", "in_mpi", PROTOCOL_SET_PROGRESS},
};

START_TEST(test_each_option_one_setting)
{
    Protocol all, dflt;
    protocol_init(&dflt);
    unsigned every = 0;
    memset(&all, 0, sizeof all);
    for (size_t i = 0; i < G_N_ELEMENTS(given); i++) {
        Protocol v, dst;
        unsigned mask = 0;
        char *err = NULL;
        protocol_init(&v);
        ck_assert_msg(protocol_parse_option(given[i].flag, given[i].value, &v, &mask, &err), "%s", err);
        ck_assert_uint_eq(mask, given[i].bit);
        ck_assert_msg(memcmp(&v, &dflt, sizeof v) != 0, "--%s changed nothing", given[i].flag);
        dst = dflt;
        protocol_apply(&dst, &v, mask);
        ck_assert(memcmp(&dst, &v, sizeof v) == 0);   /* v is the default but for this setting */
        protocol_apply(&dst, &(Protocol){0}, 0);
        ck_assert(memcmp(&dst, &v, sizeof v) == 0);   /* an empty mask copies nothing */
        ck_assert(protocol_parse_option(given[i].flag, given[i].value, &all, &every, &err));
    }
    ck_assert_uint_eq(every, (1u << G_N_ELEMENTS(given)) - 1);
    ck_assert_uint_eq(all.eager_limit, 1024);
    ck_assert(all.handshake == PROTOCOL_HANDSHAKE_RTT && all.duplex == PROTOCOL_DUPLEX_HALF);
    ck_assert(all.rts_payload == PROTOCOL_RTS_EAGER && all.ack == PROTOCOL_ACK_RTT);
    ck_assert(all.progress == PROTOCOL_PROGRESS_IN_MPI && all.host_queue == PROTOCOL_INF);
    ck_assert(all.control_queue[PROTOCOL_FROM_LOWER] == 0 && all.control_queue[PROTOCOL_FROM_HIGHER] == 8192);
    ck_assert(all.segment_bytes == 4096 && all.overhead_s == 3e-6);
}
END_TEST

/* The key table's options (PROTOCOL_KEYS' OPT and CHOICE rows), with their bits. */
#define ROW_FLAG(id, flag, ...) {flag, PROTOCOL_SET_##id},
#define NO_FLAG(...)
static const struct {
    const char *flag;
    unsigned bit;
} table[] = {PROTOCOL_KEYS(ROW_FLAG, ROW_FLAG, NO_FLAG)};

START_TEST(test_every_option_listed)
{
    ck_assert_uint_eq(G_N_ELEMENTS(table), G_N_ELEMENTS(given));
    ck_assert_uint_eq(PROTOCOL_NBITS, G_N_ELEMENTS(given));
    for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
        size_t j = 0;
        while (j < G_N_ELEMENTS(given) && strcmp(given[j].flag, table[i].flag) != 0)
            j++;
        ck_assert_msg(j < G_N_ELEMENTS(given), "--%s is not in the list of flags", table[i].flag);
        ck_assert_uint_eq(given[j].bit, table[i].bit);
    }
}
END_TEST

START_TEST(test_writer_reads_back)
{
    Protocol p, q;
    unsigned mask = 0;
    char *err = NULL;
    protocol_init(&p);
    for (size_t i = 0; i < G_N_ELEMENTS(given); i++)
        ck_assert(protocol_parse_option(given[i].flag, given[i].value, &p, &mask, &err));
    char *text = protocol_format(&p);
    ck_assert_str_eq(text, "{eager_limit: 1024, handshake: rtt, overhead: 3e-06s, segment: 4096, "
                           "control_queue_from_lower: 0, control_queue_from_higher: 8192, host_queue: inf, "
                           "duplex: half, rts_payload: eager, ack: rtt, progress: in_mpi}");
    CfgNode *n = cfg_parse_string(text, "p.yaml", &err);
    protocol_init_eager(&q);
    ck_assert_msg(n && protocol_read(n, &q, &err), "%s", err);
    ck_assert(memcmp(&p, &q, sizeof p) == 0);
    cfg_free(n);
    g_free(text);
}
END_TEST

START_TEST(test_bad_values)
{
    Protocol v;
    unsigned mask = 0;
    char *err = NULL;
    protocol_init(&v);
    ck_assert(!protocol_parse_option("duplex", "third", &v, &mask, &err));
    ck_assert_str_eq(err, "--duplex: unknown duplex 'third'; expected full (both directions at once) or half "
                          "(rendezvous data one direction at a time)");
    g_free(err);
    err = NULL;
    ck_assert(!protocol_parse_option("segment", "0", &v, &mask, &err));
    ck_assert_str_eq(err, "--segment: '0': not a segment size; expected a positive size such as 128KiB or none");
    g_free(err);
    err = NULL;
    CfgNode *n = cfg_parse_string("{progress: sometimes}", "b.yaml", &err);
    ck_assert(n && !protocol_read(n, &v, &err));
    ck_assert_str_eq(err, "b.yaml:1:12: 'sometimes': unknown progress; expected always (control messages handled "
                          "when they arrive) or in_mpi (only while the rank is inside MPI)");
    cfg_free(n);
    g_free(err);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("protocolkeys");
    TCase *tc = testmain_case(s, "keys");
    tcase_add_test(tc, test_each_option_one_setting);
    tcase_add_test(tc, test_every_option_listed);
    tcase_add_test(tc, test_writer_reads_back);
    tcase_add_test(tc, test_bad_values);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
