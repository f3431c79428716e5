/* testmain — the one way every Check suite runs: all tests, normal
 * verbosity, exit status 1 when any failed. */
#ifndef ARSIM_TESTMAIN_H
#define ARSIM_TESTMAIN_H

#include <check.h>

static inline int testmain_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
