/* testmain — the one way every Check suite runs: all tests, normal
 * verbosity, exit status 1 when any failed. CK_RUN_SUITE / CK_RUN_CASE
 * (Check's environment variables) pick one suite or one test case.
 *
 * Test cases are named by intent ("closed-forms", "conservation",
 * "bad-input", "determinism", ...) and have no time limit: a verdict
 * never depends on the machine's speed (a hang shows as a hang). */
#ifndef ARSIM_TESTMAIN_H
#define ARSIM_TESTMAIN_H

#include <check.h>

/* A new test case `name` of suite s (CK_RUN_CASE=name runs it alone). */
static inline TCase *testmain_case(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 0);   /* 0: no timer (Check arms none) */
    suite_add_tcase(s, tc);
    return tc;
}

static inline int testmain_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
