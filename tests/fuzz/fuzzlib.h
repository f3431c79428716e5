/* fuzzlib — what every libFuzzer harness in tests/fuzz/ shares: the
 * input as a file a path-taking reader can open (a memfd, never a file on
 * disk), the repository root (for names that resolve along the data
 * search path) and the contract every reader keeps on bad input.
 *
 * The contract (docs/reference/units.md "Bad input"): a reader fails with exactly one line
 * "file:line:col: what is wrong; what is expected" — no newline, no other
 * control character, a "; " between the complaint and the expectation —
 * and succeeds with no error set. A breach aborts, so libFuzzer records
 * the input as a crash. */
#ifndef ARSIM_FUZZLIB_H
#define ARSIM_FUZZLIB_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The repository root the harness was built in (FUZZ_ROOT). */
const char *fuzz_root(void);

/* A path under the root ("configs/fuzz-input.yaml"), interned: a name for
 * input parsed from a buffer, so relative references in it resolve as in
 * a shipped file. The file need not exist and is never written. */
const char *fuzz_path(const char *rel);

/* Writes data to the process's one memfd (created on first use, cut to
 * size each time) and returns its path, /proc/self/fd/N: the input as a
 * file for readers that take a path. Nothing is written to disk. */
const char *fuzz_memfd(const uint8_t *data, size_t size);

/* The input as a NUL-terminated copy (g_free), or NULL if it holds a NUL
 * byte (a file reader refuses those before parsing; the path harnesses
 * cover that check). */
char *fuzz_text(const uint8_t *data, size_t size);

/* Checks the contract above for a reader that returned ok with *err;
 * aborts on a breach, then frees *err and sets it to NULL. */
void fuzz_check(bool ok, char **err, const char *reader);

/* G_SLICE=always-malloc (so LeakSanitizer sees each GLib allocation) and
 * ARSIM_DATA set to the repository root (names a scenario gives resolve
 * in the shipped files from any working directory, as libFuzzer's jobs
 * run in their log folder, and never in the caller's own data). fuzzlib.c's LLVMFuzzerInitialize calls it for every harness
 * (each links fuzzlib); a harness defines only LLVMFuzzerTestOneInput. */
void fuzz_init(void);

/* libFuzzer's start-up hook, defined once here: calls fuzz_init. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
