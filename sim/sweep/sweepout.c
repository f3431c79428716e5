/* sweepout — results.jsonl, results.csv, sweep.yaml; see sweepout.h. */
#include "sweep/sweepout.h"
#include "io/cfg.h"
#include "io/fileio.h"
#include "report/reportsweep.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

void sweepout_line_free(SweepLine *l)
{
    if (!l)
        return;
    g_free(l->id);
    g_free(l->text);
    g_free(l);
}

GPtrArray *sweepout_read(const char *path, SweepoutTorn torn, gsize *dropped, char **err)
{
    GPtrArray *lines = g_ptr_array_new_with_free_func((GDestroyNotify)sweepout_line_free);
    *dropped = 0;
    char *buf = NULL;
    gsize len = 0;
    GError *ge = NULL;
    if (!g_file_get_contents(path, &buf, &len, &ge)) {
        bool missing = g_error_matches(ge, G_FILE_ERROR, G_FILE_ERROR_NOENT);
        if (!missing) {
            *err = g_strdup_printf("%s:1:1: cannot read: %s; expected a readable results.jsonl", path, ge->message);
            g_ptr_array_free(lines, TRUE);
            lines = NULL;
        }
        g_error_free(ge);
        return lines;
    }
    gsize pos = 0, good = 0;
    int lineno = 0;
    while (pos < len) {
        lineno++;
        const char *nl = memchr(buf + pos, '\n', len - pos);
        gsize end = nl ? (gsize)(nl - buf) : len;
        SweepLine *l = g_new0(SweepLine, 1);
        char *why = NULL;
        gsize at = 0;
        bool ok = nl && end > pos && reportsweep_parse(buf + pos, end - pos, &l->id, &l->index, &why, &at);
        bool last = !nl || end + 1 == len;
        if (ok) {
            l->text = g_strndup(buf + pos, end - pos);
            g_ptr_array_add(lines, l);
            pos = good = end + 1;
            continue;
        }
        sweepout_line_free(l);
        if (last) {                       /* a torn tail: the write a kill interrupted */
            g_free(why);
            break;
        }
        *err = cfg_oneline(g_strdup_printf("%s:%d:%zu: %s", path, lineno, at + 1,
                                           why ? why : "empty line; expected one JSON object per line"));
        g_free(why);
        g_free(buf);
        g_ptr_array_free(lines, TRUE);
        return NULL;
    }
    *dropped = len - good;
    g_free(buf);
    if (torn == SWEEPOUT_REPAIR && *dropped && truncate(path, (off_t)good) != 0) {
        *err = g_strdup_printf("%s: cannot cut the torn last line: %s", path, g_strerror(errno));
        g_ptr_array_free(lines, TRUE);
        return NULL;
    }
    return lines;
}

bool sweepout_append(int fd, const char *path, const char *line, char **err)
{
    gsize n = strlen(line);
    char *buf = g_malloc(n + 1);
    memcpy(buf, line, n);
    buf[n] = '\n';
    gsize off = 0;
    while (off < n + 1) {
        ssize_t w = write(fd, buf + off, n + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *err = g_strdup_printf("%s: write failed: %s", path, g_strerror(errno));
            g_free(buf);
            return false;
        }
        off += (gsize)w;
    }
    g_free(buf);
    if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        *err = g_strdup_printf("%s: fdatasync failed: %s", path, g_strerror(errno));
        return false;
    }
    return true;
}

static gint by_id(gconstpointer a, gconstpointer b)
{
    const SweepLine *x = *(SweepLine *const *)a, *y = *(SweepLine *const *)b;
    return strcmp(x->id, y->id);
}

/* Sorts lines by id and removes repeated ids in place; returns how many
 * repeats held different text. */
static guint sort_dedup(GPtrArray *lines)
{
    g_ptr_array_sort(lines, by_id);   /* GLib sorts stably (merge sort): the first of equal ids stays first */
    guint conflicts = 0, w = 0;
    for (guint i = 0; i < lines->len; i++) {
        SweepLine *l = g_ptr_array_index(lines, i);
        SweepLine *prev = w ? g_ptr_array_index(lines, w - 1) : NULL;
        if (prev && strcmp(prev->id, l->id) == 0) {
            conflicts += strcmp(prev->text, l->text) != 0;
            sweepout_line_free(l);
            continue;
        }
        g_ptr_array_index(lines, w++) = l;
    }
    g_ptr_array_set_free_func(lines, NULL);
    g_ptr_array_set_size(lines, w);
    g_ptr_array_set_free_func(lines, (GDestroyNotify)sweepout_line_free);
    return conflicts;
}

bool sweepout_write_csv(GPtrArray *lines, const char *dir, char **err)
{
    sort_dedup(lines);
    GPtrArray *texts = g_ptr_array_new();
    for (guint i = 0; i < lines->len; i++)
        g_ptr_array_add(texts, ((SweepLine *)g_ptr_array_index(lines, i))->text);
    char *csv = reportsweep_csv(texts);
    g_ptr_array_free(texts, TRUE);
    char *path = g_build_filename(dir, "results.csv", NULL);
    bool ok = fileio_write_text(path, csv, err);
    g_free(path);
    g_free(csv);
    return ok;
}

/* The lines of a sweep.yaml text that identify the sweep. */
static char *identity(const char *text, SweepoutShards shards)
{
    GString *s = g_string_new(NULL);
    gchar **ls = g_strsplit(text, "\n", -1);
    for (int i = 0; ls[i]; i++)
        if (!g_str_has_prefix(ls[i], "config: ") && !g_str_has_prefix(ls[i], "set: ") &&
            !(shards == SWEEPOUT_ANY_SHARD && g_str_has_prefix(ls[i], "shard: ")))
            g_string_append_printf(s, "%s\n", ls[i]);
    g_strfreev(ls);
    return g_string_free(s, FALSE);
}

bool sweepout_same_sweep(const char *a, const char *b, SweepoutShards shards)
{
    char *x = identity(a, shards), *y = identity(b, shards);
    bool same = strcmp(x, y) == 0;
    g_free(x);
    g_free(y);
    return same;
}

/* sweep.yaml of dir without its shard line; NULL + *err. */
static char *definition(const char *dir, char **err)
{
    char *path = g_build_filename(dir, "sweep.yaml", NULL), *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        *err = g_strdup_printf("%s:1:1: cannot read; expected the sweep.yaml of an arsim sweep --out directory",
                               path);
        g_free(path);
        return NULL;
    }
    g_free(path);
    GString *s = g_string_new(NULL);
    gchar **ls = g_strsplit(text, "\n", -1);
    for (int i = 0; ls[i]; i++)
        if (!g_str_has_prefix(ls[i], "shard: "))
            g_string_append_printf(s, "%s%s", ls[i], ls[i + 1] ? "\n" : "");
    g_strfreev(ls);
    g_free(text);
    return g_string_free(s, FALSE);
}

static guint64 def_count(const char *def)
{
    const char *c = strstr(def, "\ncount: ");
    return c ? g_ascii_strtoull(c + 8, NULL, 10) : 0;
}

int sweepout_merge(char **dirs, int ndirs, const char *out, FILE *log, char **err)
{
    if (ndirs < 1) {
        *err = g_strdup("--merge: no directories; expected arsim sweep --merge DIR... --out DIR");
        return 2;
    }
    char *def0 = NULL;
    GPtrArray *all = g_ptr_array_new_with_free_func((GDestroyNotify)sweepout_line_free);
    int rc = 0;
    for (int i = 0; i < ndirs && rc == 0; i++) {
        char *def = definition(dirs[i], err);
        if (!def) {
            rc = 2;
            break;
        }
        if (def0 && !sweepout_same_sweep(def, def0, SWEEPOUT_ANY_SHARD)) {
            *err = g_strdup_printf("%s/sweep.yaml:1:1: a different sweep than %s/sweep.yaml; expected the shards "
                                   "of one sweep definition", dirs[i], dirs[0]);
            rc = 2;
        }
        if (!def0)
            def0 = def;
        else
            g_free(def);
        char *path = g_build_filename(dirs[i], "results.jsonl", NULL);
        gsize dropped = 0;
        GPtrArray *lines = rc ? NULL : sweepout_read(path, SWEEPOUT_KEEP_FILE, &dropped, err);
        if (!lines && rc == 0)
            rc = 2;
        if (lines) {
            if (dropped)
                fprintf(log, "%s: ignored a torn last line (%zu bytes)\n", path, dropped);
            for (guint k = 0; k < lines->len; k++)
                g_ptr_array_add(all, g_ptr_array_index(lines, k));
            g_ptr_array_set_free_func(lines, NULL);
            g_ptr_array_free(lines, TRUE);
        }
        g_free(path);
    }
    if (rc == 0) {
        guint before = all->len, conflicts = sort_dedup(all);
        GString *text = g_string_new(NULL);
        for (guint i = 0; i < all->len; i++)
            g_string_append_printf(text, "%s\n", ((SweepLine *)g_ptr_array_index(all, i))->text);
        char *jl = g_build_filename(out, "results.jsonl", NULL), *sy = g_build_filename(out, "sweep.yaml", NULL);
        if (g_mkdir_with_parents(out, 0777) != 0) {
            *err = g_strdup_printf("%s: cannot create the directory: %s", out, g_strerror(errno));
            rc = 1;
        } else if (!fileio_write_text(sy, def0, err) || !fileio_write_text(jl, text->str, err) ||
                   !sweepout_write_csv(all, out, err)) {
            rc = 1;
        }
        g_free(jl);
        g_free(sy);
        g_string_free(text, TRUE);
        guint64 count = def_count(def0);
        if (rc == 0)
            fprintf(log, "merged %d directories: %u scenarios (%u repeated ids dropped%s) of %" G_GUINT64_FORMAT
                    "%s\n", ndirs, all->len, before - all->len, conflicts ? ", some with different results" : "",
                    count, count > all->len ? "; the rest are missing" : "");
    }
    g_free(def0);
    g_ptr_array_free(all, TRUE);
    return rc;
}
