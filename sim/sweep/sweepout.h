/* sweepout — the files of a sweep's output directory: results.jsonl
 * (append-only, one whole line per finished scenario, flushed to disk
 * before the next), results.csv (derived, sorted) and sweep.yaml; torn-
 * line recovery for --resume, and --merge of several directories.
 *
 * Crash safety: a line is written with one write() of the whole line
 * including its newline, then fdatasync(); a process killed at any moment
 * leaves every earlier line intact and at most one torn line at the end
 * (no newline, or not parsable), which sweepout_read() drops. Derived files
 * (results.csv, sweep.yaml) are written to a temporary name and renamed.
 */
#ifndef ARSIM_SWEEPOUT_H
#define ARSIM_SWEEPOUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
    char *id;        /* scenario id; owned */
    guint64 index;   /* scenario index in its definition */
    char *text;      /* the whole line without its newline; owned */
} SweepLine;

void sweepout_line_free(SweepLine *l);

/* What sweepout_read does with a torn last line. */
typedef enum {
    SWEEPOUT_KEEP_FILE,      /* drop it from the list only: the file is not written */
    SWEEPOUT_REPAIR,         /* and cut it off the file (ftruncate) */
} SweepoutTorn;

/* Reads a results.jsonl file (a missing file is an empty list). A torn
 * last line (no newline or not a result) is dropped, and cut off the file
 * under SWEEPOUT_REPAIR — *dropped tells how many bytes. Any other bad
 * line is "file:line:col: ...; expected ..." (NULL + *err). Returns a
 * GPtrArray of SweepLine* in file order. */
GPtrArray *sweepout_read(const char *path, SweepoutTorn torn, gsize *dropped, char **err);

/* Appends line + '\n' with one write() and fdatasync()s. */
bool sweepout_append(int fd, const char *path, const char *line, char **err);

/* Whether sweepout_same_sweep compares the shard lines. */
typedef enum {
    SWEEPOUT_SAME_SHARD,     /* one shard of a sweep: the shard lines must be equal too */
    SWEEPOUT_ANY_SHARD,      /* shards of one sweep: the shard lines may differ */
} SweepoutShards;

/* True when two sweep.yaml texts describe the same sweep: equal but for
 * the config and set lines (where the file was and how --set said it; the
 * base scenario records the result) and, under SWEEPOUT_ANY_SHARD, the
 * shard line. */
bool sweepout_same_sweep(const char *a, const char *b, SweepoutShards shards);

/* Sorts lines by id, drops repeated ids (keeping the first) and writes
 * DIR/results.csv (reportsweep_csv). */
bool sweepout_write_csv(GPtrArray *lines, const char *dir, char **err);

/* --merge: joins DIR/results.jsonl of every dir (their sweep.yaml must
 * describe the same sweep, shard line aside), keeps the first line of each
 * id, writes OUT/results.jsonl (sorted by id), results.csv and sweep.yaml.
 * Prints a summary (and how many scenarios are still missing) to log.
 * Returns the exit status: 0, 2 bad input (*err), 1 I/O. */
int sweepout_merge(char **dirs, int ndirs, const char *out, FILE *log, char **err);

#endif
