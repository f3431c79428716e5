/* fileio — the one way arsim writes an output file: atomically. The text
 * goes to PATH.tmp.PID, is flushed and synced, then renamed over PATH, so
 * a reader (or a crash) sees the old file whole or the new one whole,
 * never a part. PATH "-" is standard output instead (written as it
 * comes, flushed; nothing to rename). Every command's output files and the validation harness's
 * measurement files are written through here. */
#ifndef ARSIM_FILEIO_H
#define ARSIM_FILEIO_H

#include <stdbool.h>
#include <stdio.h>

/* Calls fn(f, ctx) to write the contents to a temporary stream, then
 * replaces path with it. false + *err (g_free) "PATH: what failed (why);
 * expected a writable path"; the temporary file is removed then. */
bool fileio_write_with(const char *path, void (*fn)(FILE *f, void *ctx), void *ctx, char **err);

/* Same with a NUL-terminated text. */
bool fileio_write_text(const char *path, const char *text, char **err);

/* Whether path names standard output: "-". NULL is not. */
bool fileio_is_stdout(const char *path);

#endif
