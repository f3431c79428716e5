/* colltable — checks an explicit (hand-written) schedule's table before
 * the executor runs it (coll/collexec.h): generated schedules are right
 * by construction (tests/unit), a table given step by step is not.
 */
#ifndef ARSIM_COLLTABLE_H
#define ARSIM_COLLTABLE_H

#include "coll/coll.h"

#include <stdbool.h>

/* Whether s's explicit steps (s->steps non-NULL) are runnable: every peer
 * in -1..p-1, every length at most the count, and every message sent to a
 * rank that receives from its sender in some step. false and *err
 * ("collective: what is wrong", g_free) otherwise. */
bool colltable_check(const CollSchedule *s, char **err);

#endif
