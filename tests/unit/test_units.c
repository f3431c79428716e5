/* test_units — the unit spellings of io/units.h as people write them:
 * every spelling of a rate against its definition (a lower-case b a bit,
 * an upper-case B a byte, prefixes powers of 10), sizes with kB, and the
 * spellings that stay refused. The expected values are the definitions,
 * written out here as products of exact integers. */
#include "io/units.h"

#include "testmain.h"

#include <check.h>
#include <math.h>

/* Bytes per second of s, which must parse. */
static double rate(const char *s)
{
    double d = -1;
    const char *why = NULL;
    ck_assert_msg(units_parse_rate(s, &d, &why), "%s refused: %s", s, why);
    return d;
}

START_TEST(test_rate_spellings)
{
    /* bits per second: every spelling of the same prefix is the same rate */
    const char *bits[][4] = {
        {"8bps", "8b/s", "8bit/s", NULL},
        {"8Kbps", "8kbps", "8Kb/s", "8kb/s"},
        {"8Mbps", "8Mb/s", "8Mbit/s", NULL},
        {"8Gbps", "8Gb/s", "8Gbit/s", NULL},
        {"8Tbps", "8Tb/s", "8Tbit/s", NULL},
    };
    for (int p = 0; p < 5; p++)
        for (int k = 0; k < 4 && bits[p][k]; k++)
            ck_assert_msg(rate(bits[p][k]) == pow(1000, p), "%s", bits[p][k]);   /* 8 bits = 1 byte */
    ck_assert(rate("8kbit/s") == 1000);
    /* the figures of a datasheet */
    ck_assert(rate("400Gb/s") == 400e9 / 8);
    ck_assert(rate("400 Gb/s") == 400e9 / 8);
    ck_assert(rate("3.2Tb/s") == 3.2e12 / 8);
    ck_assert(rate("450GB/s") == 450e9);                 /* bytes: 3.6 Tb/s */
    ck_assert(rate("500GB/s") == rate("4Tb/s"));
    ck_assert(rate("1kB/s") == 1000 && rate("1KB/s") == 1000);
    ck_assert(rate("25MB/s") == 25e6 && rate("1TB/s") == 1e12 && rate("1B/s") == 1);
}
END_TEST

START_TEST(test_refused)
{
    double d;
    uint64_t b;
    const char *why;
    const char *bad[] = {"400", "400G", "400gb/s", "400GBps", "400Gib/s", "400 Gb /s", "-1Gb/s", "0Gb/s", "Gb/s"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!units_parse_rate(bad[i], &d, &why), "%s accepted", bad[i]);
    ck_assert(units_parse_bytes("4kB", &b, &why) && b == 4000);
    ck_assert(!units_parse_bytes("4kb", &b, &why));      /* bits are not a size */
    ck_assert(!units_parse_bytes("4Kib", &b, &why));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("units");
    TCase *tc = testmain_case(s, "definitions");
    tcase_add_test(tc, test_rate_spellings);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_refused);
    return testmain_run(s);
}
