/* cliprogress — the progress line of a long command on a terminal:
 *
 *   arsim run: 3/8 runs done, now batch 64 policy thesis; 12 s
 *
 * on stderr, rewritten in place ("\r", the line cleared) about five times
 * a second by a thread of its own, once the command has run for
 * CLIPROGRESS_DELAY_S; cleared when the command ends. Nothing at all when
 * stderr is not a terminal, so logs and pipes stay clean. ARSIM_PROGRESS
 * overrides: 0 never, 1 always and from the start (for tests: when stderr
 * is not a terminal each step is then written once, on a line of its
 * own). The line is stderr's only: results never depend on it. */
#ifndef ARSIM_CLIPROGRESS_H
#define ARSIM_CLIPROGRESS_H

#include <stdio.h>

#define CLIPROGRESS_DELAY_S 2.0   /* seconds before the line appears on a terminal */

typedef struct CliProgress CliProgress;

/* Starts the line for `what` ("arsim run") on out; NULL when it is not
 * shown (cliprogress_step and cliprogress_end accept NULL). */
CliProgress *cliprogress_start(FILE *out, const char *what);

/* The new state: done of total steps finished, now (copied) the one that
 * runs. Thread-safe. */
void cliprogress_step(CliProgress *p, int done, int total, const char *now);

/* Stops the thread, clears the line; frees p. */
void cliprogress_end(CliProgress *p);

#endif
