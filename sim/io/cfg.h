/* cfg — a YAML document as a plain tree of nodes that remember where they
 * came from (file:line:col), plus typed getters that turn nodes into C
 * values with one-line errors "file:line:col: what is wrong; what is
 * expected".
 *
 * sim/io/config.c (the only file that sees libyaml) builds the tree;
 * sim/io/cfgget.c holds the getters and the tree edits (--set, clone). An
 * extractor reads the keys it knows with cfg_get*() — which marks them
 * used — and then calls cfg_check_keys() so that an unknown key is an
 * error, never silently ignored. Errors are g_strdup'd strings that the
 * caller owns.
 */
#ifndef ARSIM_CFG_H
#define ARSIM_CFG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { CFG_SCALAR, CFG_MAP, CFG_SEQ } CfgType;

typedef struct CfgNode CfgNode;
struct CfgNode {
    CfgType type;
    const char *file;     /* source name; interned (g_intern_string), never freed */
    int line, col;        /* 1-based position of the node's first character */
    char *scalar;         /* CFG_SCALAR: the text; owned */
    bool quoted;          /* CFG_SCALAR: written in quotes (so never a number or null) */
    GPtrArray *keys;      /* CFG_MAP: key nodes (scalars), in file order; owned */
    GPtrArray *items;     /* CFG_MAP: values, parallel to keys; CFG_SEQ: items; owned */
    bool used;            /* set when an extractor read it (map values only) */
};

/* Parse a file / a string holding one YAML document. NULL + *err on a
 * syntax error, an empty document, an alias, a duplicate key, or a
 * non-scalar key. */
CfgNode *cfg_load_file(const char *path, char **err);
CfgNode *cfg_parse_string(const char *text, const char *name, char **err);
void cfg_free(CfgNode *n);
CfgNode *cfg_clone(const CfgNode *n);

/* "file:line:col: " + the formatted message, its control characters
 * escaped (cfg_oneline): a token quoted from the input stays on the line. */
char *cfg_err(const CfgNode *n, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* msg (consumed) with each control character written as an escape — \n,
 * \r, \t, or \xNN (DEL too) — so an error message is one line whatever
 * its quoted tokens hold. Returns a new g_malloc'd string. */
char *cfg_oneline(char *msg);

/* The value of key in a map (marking it used), or NULL if absent. */
CfgNode *cfg_get(CfgNode *map, const char *key);
/* Like cfg_get, without marking. */
CfgNode *cfg_peek(const CfgNode *map, const char *key);
bool cfg_is_null(const CfgNode *n);

/* Checks that n is a map (what = what the map is, for the message). */
bool cfg_expect_map(const CfgNode *n, const char *what, char **err);
/* Fails on the first key of map not marked used: "unknown key 'x' in
 * <what>; expected one of: a, b, c". */
bool cfg_check_keys(const CfgNode *map, const char *what, const char *known, char **err);

/* The same message, from the names alone, before any value is read: every
 * key of map must be one of known ("a, b, c"). A reader calls it first, so
 * that a misspelt key is reported before a rule about the values it would
 * have changed; true for a node that is not a mapping. */
bool cfg_known_keys(const CfgNode *map, const char *what, const char *known, char **err);

/* Typed conversions of one scalar node. Each returns false + *err. */
bool cfg_as_string(const CfgNode *n, const char **out, char **err);
bool cfg_as_int(const CfgNode *n, int64_t min, int64_t max, int64_t *out, char **err);
bool cfg_as_double(const CfgNode *n, double min, double max, double *out, char **err);
bool cfg_as_bool(const CfgNode *n, bool *out, char **err);
bool cfg_as_bytes(const CfgNode *n, uint64_t *out, char **err);
bool cfg_as_rate(const CfgNode *n, double *out, char **err);     /* bytes/s */
bool cfg_as_time(const CfgNode *n, double *out, char **err);     /* seconds */
/* A scalar through a units-style parser (false and a static *why "what is
 * wrong; what is expected"); expected names the value for a non-scalar. */
typedef bool (*CfgParseFn)(const char *s, void *out, const char **why);
bool cfg_as_with(const CfgNode *n, CfgParseFn parse, void *out, const char *expected, char **err);

/* Optional-key helpers: absent (or null) leaves *out unchanged and succeeds. */
bool cfg_opt_string(CfgNode *map, const char *key, const char **out, char **err);
bool cfg_opt_int(CfgNode *map, const char *key, int64_t min, int64_t max, int64_t *out, char **err);
bool cfg_opt_double(CfgNode *map, const char *key, double min, double max, double *out, char **err);
bool cfg_opt_bool(CfgNode *map, const char *key, bool *out, char **err);
bool cfg_opt_bytes(CfgNode *map, const char *key, uint64_t *out, char **err);
bool cfg_opt_rate(CfgNode *map, const char *key, double *out, char **err);
bool cfg_opt_time(CfgNode *map, const char *key, double *out, char **err);
/* Required key: absent is "missing key 'k' in <what>; expected ...". */
CfgNode *cfg_need(CfgNode *map, const char *key, const char *what, char **err);

/* --set: replaces (or adds) the node at a dotted path ("cluster.nodes";
 * a numeric part indexes a sequence) with the YAML value text; a null
 * value (KEY=null, KEY=~ or KEY=) removes the key or the list entry, so
 * that it reads as never written (a quoted 'null' is the string). */
bool cfg_set_path(CfgNode *root, const char *assignment, char **err);

/* Resolves a name along the data search path (io/datapath.h) of
 * including_file (NULL: a name from the command line): "vgg16" ->
 * "<dir>/<subdir>/vgg16.yaml" in the first directory that has it; a path
 * with '/' or ending in .yaml is "<dir>/<path>" (in the working directory:
 * the path as written); an absolute path is taken as is. The result is
 * g_strdup'd, or NULL if no file exists. */
char *cfg_resolve(const char *name, const char *subdir, const char *including_file);

#endif
