/* reportsweep — the JSON and CSV text of sweep results (the cJSON side of
 * sim/sweep*.c).
 *
 * One line of OUT/results.jsonl is one finished scenario:
 *   {"id":"0003-1a2b3c4d","index":3,"axes":{"cluster.nodes":8,...},"results":[{...},...]}
 * where results holds the `run --json` result objects (report_result_json)
 * in train_run_all's order (batch-major, then the scenario's policy order).
 * Axis values are JSON numbers when their unquoted YAML scalar is a
 * number as JSON writes it, in its own text (2.20 stays 2.20: an axis
 * value is shown as the sweep file wrote it, and NCCL release 2.20 is
 * not 2.2), true/false/null for those words, strings otherwise (+5 and
 * 1. too), arrays and objects for lists and mappings.
 */
#ifndef ARSIM_REPORTSWEEP_H
#define ARSIM_REPORTSWEEP_H

#include "io/cfg.h"

#include <glib.h>
#include <stdbool.h>

/* One axis of a scenario: its dotted key path and its value there. */
typedef struct {
    const char *path;        /* "cluster.nodes"; borrowed */
    const CfgNode *value;    /* the value node in this scenario; borrowed */
} ReportSweepAxis;

/* The line (without its newline) of the scenario with this id and index
 * and its n axes in file order; results_json is the text of a JSON array
 * of result objects. NULL + *err if it is not. */
char *reportsweep_line(const char *id, guint64 index, const ReportSweepAxis *axes, guint n, const char *results_json,
                       char **err);

/* Scenario indices of a results.jsonl line are below this (2^53: every
 * whole number below it is exact as a JSON number). */
#define REPORTSWEEP_MAX_INDEX 9007199254740992.0

/* Checks that text[0..len) is one results.jsonl line; on success
 * *id (g_free) and *index are set; on failure *why (g_free) says what is
 * wrong at byte offset *at of the line. */
bool reportsweep_parse(const char *text, gsize len, char **id, guint64 *index, char **why, gsize *at);

/* The axes of results.jsonl line text[0..len): path -> the value's text
 * as the line holds it (a number's own digits, a string's text without
 * quotes, a list or mapping as JSON); g_hash_table_destroy it. NULL when
 * the line is not an object with an axes object. */
GHashTable *reportsweep_axis_texts(const char *line, gsize len);

/* CSV text of lines (char*, whole results.jsonl lines, already sorted by
 * id): header "id,<axis paths...>,<result keys...>", then per line its
 * result rows sorted (stably) by batch. Columns: the axis keys of the
 * first line, then every result key in order of first appearance. Axis
 * values as reportsweep_axis_texts gives them, result values as JSON
 * prints them (strings unquoted unless they hold , " or a newline; lists
 * as JSON text). */
char *reportsweep_csv(GPtrArray *lines);

#endif
