/* test_csvnum — report_num, the form of every number in arsim's CSV: it
 * reads back exactly (strtod gives the same double, bit for bit), it is
 * the shortest of %.15g/%.16g/%.17g that does, and the familiar decimals
 * come out as written. */
#include "report/report.h"

#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Significant digits of a %g text ("0.1" 1, "1.25e+09" 3). */
static int digits(const char *s)
{
    int n = 0, lead = 1;
    for (const char *c = s; *c && *c != 'e'; c++) {
        if (*c < '0' || *c > '9')
            continue;
        if (*c == '0' && lead)
            continue;
        lead = 0;
        n++;
    }
    return n;
}

START_TEST(test_familiar)
{
    char b[REPORT_NUM_MAX];
    ck_assert_str_eq(report_num(b, 0.1), "0.1");
    ck_assert_str_eq(report_num(b, 1), "1");
    ck_assert_str_eq(report_num(b, 0), "0");
    ck_assert_str_eq(report_num(b, 1.25e9), "1250000000");
    ck_assert_str_eq(report_num(b, 0.780616417742), "0.780616417742");
    ck_assert_str_eq(report_num(b, 1.0 / 3), "0.3333333333333333");      /* 16 digits suffice */
    ck_assert_str_eq(report_num(b, 0.1 + 0.2), "0.30000000000000004");   /* 17 needed */
    ck_assert_str_eq(report_num(b, -2.5e-7), "-2.5e-07");
}
END_TEST

/* Doubles drawn over many magnitudes from a fixed xorshift stream: each
 * reads back exactly and no shorter %.Ng of the three does. */
START_TEST(test_round_trip)
{
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = ldexp((double)(x >> 11), (int)(x % 120) - 100 - 53);
        char b[REPORT_NUM_MAX], shorter[400];   /* room for any %g gcc can imagine */
        report_num(b, v);
        ck_assert_msg(strtod(b, NULL) == v, "%s does not read back as %.17g", b, v);
        int n = digits(b) < 15 ? 15 : digits(b);
        for (int d = 15; d < n; d++) {
            snprintf(shorter, sizeof shorter, "%.*g", d, v);
            ck_assert_msg(strtod(shorter, NULL) != v, "%s: %.*g is shorter and reads back", b, d, v);
        }
        ck_assert(strlen(b) < REPORT_NUM_MAX);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("csvnum");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_familiar);
    tc = testmain_case(s, "invariants");
    tcase_add_test(tc, test_round_trip);
    return testmain_run(s);
}
