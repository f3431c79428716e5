/* cli — option tables, parsing, help and the shared checks; see cli.h.
 *
 * GOptionContext parses: it calls on_option for every option it knows (all
 * rows are callbacks, so the value parsing and its wording stay arsim's)
 * and leaves unknown options and arguments in argv
 * (ignore_unknown_options). --help is written here from the same rows,
 * wrapped to 79 columns (GLib's help does not wrap). Two things GLib accepts that arsim must refuse are
 * found before it runs, by pre_scan: a value given to a flag (--json=yes,
 * which GLib drops) and an option whose value is missing. */
#include "cli/cli.h"
#include "io/fileio.h"
#include "io/units.h"

#include <stdlib.h>
#include <string.h>

/* One parse: what the callbacks need. */
typedef struct {
    const CliCmd *cmd;
    void *opts;              /* the command's options struct */
    bool *given;             /* per row: given on the command line */
    bool help;               /* --help or -h given */
    char *err;               /* the first value error, arsim's wording; owned */
} CliParse;

const CliOpt *cli_find(const CliCmd *cmd, const char *name)
{
    for (const CliOpt *o = cmd->opts; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static void *field_of(void *opts, const CliOpt *o)
{
    return (char *)opts + o->field;
}

static GPtrArray **args_of(const CliCmd *cmd, void *opts)
{
    return (GPtrArray **)((char *)opts + cmd->args_field);
}

const char *cli_opt_value(const CliOpt *o)
{
    if (o->value)
        return o->value;
    switch (o->kind) {
    case CLI_FLAG: return NULL;
    case CLI_IN:
    case CLI_OUT: return "FILE";
    case CLI_DIR: return "DIR";
    case CLI_INT: return "N";
    case CLI_BYTES: return "SIZE";
    case CLI_RATE: return "RATE";
    case CLI_TIME: return "TIME";
    case CLI_NUMBER: return "X";
    default: return "VALUE";
    }
}

/* A fixed set of words in prose: "a, b or c". */
static char *words_prose(const char *words)
{
    gchar **w = g_strsplit(words, " ", -1);
    GString *g = g_string_new(NULL);
    for (int i = 0; w[i]; i++)
        g_string_append_printf(g, "%s%s", i == 0 ? "" : w[i + 1] ? ", " : " or ", w[i]);
    g_strfreev(w);
    return g_string_free(g, FALSE);
}

/* How a value of the row is written, or NULL. */
static char *unit_text(const CliOpt *o)
{
    if (o->unit)
        return g_strdup(o->unit);
    if (o->words)
        return words_prose(o->words);
    switch (o->kind) {
    case CLI_OUT: return g_strdup("a file name, or - for standard output");
    case CLI_INT: return g_strdup_printf("an integer from %d to %d", o->min, o->max);
    case CLI_BYTES: return g_strdup("a size: 4096, 64KiB, 1MB");
    case CLI_RATE: return g_strdup("a rate: 10Gbps, 400Gb/s, 3.2Tb/s, 450GB/s (bytes) or inf");
    case CLI_TIME: return g_strdup("a time: 500ns, 5us, 1.5ms or 0");
    case CLI_NUMBER: return g_strdup("a finite number >= 0");
    default: return NULL;
    }
}

char *cli_opt_text(const CliOpt *o)
{
    GString *g = g_string_new(o->help);
    char *unit = unit_text(o);
    if (unit)
        g_string_append_printf(g, "; %s", unit);
    if (o->deflt || o->note)
        g_string_append_printf(g, "; default: %s", o->deflt ? o->deflt : o->note);
    if (o->required)
        g_string_append(g, "; required");
    g_free(unit);
    return g_string_free(g, FALSE);
}

char *cli_usage(const CliCmd *cmd)
{
    return g_strdup_printf("arsim %s%s%s [OPTION...]", cmd->name, cmd->args ? " " : "", cmd->args ? cmd->args : "");
}

/* The options of cmd as "--a --b ...", for messages. */
static char *option_list(const CliCmd *cmd)
{
    GString *g = g_string_new(NULL);
    for (const CliOpt *o = cmd->opts; o->name; o++)
        g_string_append_printf(g, "%s--%s", g->len ? " " : "", o->name);
    g_string_append_printf(g, "%s--help", g->len ? " " : "");
    return g_string_free(g, FALSE);
}

/* The message for arg, an option cmd does not know (or a flag given a
 * value): named up to any '=', or as its first short letter. */
static char *unknown_option(const CliCmd *cmd, const char *arg)
{
    char *name = arg[1] == '-' ? g_strndup(arg, strcspn(arg, "=")) : g_strdup_printf("-%c", arg[1]);
    char *msg;
    if (cmd->near && name[1] == '-' && cli_find(cmd->near, name + 2)) {
        char *usage = cli_usage(cmd);
        msg = g_strdup_printf("%s: not an option of %s; expected %s", name, cmd->name, usage);
        g_free(usage);
    } else {
        char *all = option_list(cmd);
        msg = g_strdup_printf("%s: unknown option (or a value it does not take); expected one of %s", name, all);
        g_free(all);
    }
    g_free(name);
    return msg;
}

static bool parse_int(int *out, const CliOpt *o, const char *value, char **err)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (end == value || *end || v < o->min || v > o->max) {
        *err = g_strdup_printf("--%s: '%s' is not an integer from %d to %d; expected such an integer", o->name, value,
                               o->min, o->max);
        return false;
    }
    *out = (int)v;
    return true;
}

/* Stores value (NULL for a flag) into the row's field. */
static bool set_value(const CliOpt *o, void *opts, const char *value, char **err)
{
    void *f = field_of(opts, o);
    const char *why = NULL;
    bool ok = true;
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)f = true;
        return true;
    case CLI_IN:
        if (!*value) {
            *err = g_strdup_printf("--%s: empty name; expected --%s %s", o->name, o->name, cli_opt_value(o));
            return false;
        }
        /* fall through */
    case CLI_STR:
    case CLI_OUT:
    case CLI_DIR:
        g_free(*(char **)f);
        *(char **)f = g_strdup(value);
        return true;
    case CLI_LIST: {
        GPtrArray **a = f;
        if (!*a)
            *a = g_ptr_array_new_null_terminated(4, g_free, TRUE);
        g_ptr_array_add(*a, g_strdup(value));
        return true;
    }
    case CLI_INT: return parse_int(f, o, value, err);
    case CLI_BYTES: ok = units_parse_bytes(value, f, &why); break;
    case CLI_RATE: ok = units_parse_rate(value, f, &why); break;
    case CLI_TIME: ok = units_parse_time(value, f, &why); break;
    case CLI_NUMBER: ok = units_parse_nonneg(value, f, &why); break;
    case CLI_CUSTOM: return o->parse(f, o, value, err);
    }
    if (!ok)
        *err = g_strdup_printf("--%s: '%s': %s", o->name, value, why);
    return ok;
}

static gboolean on_option(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    CliParse *p = data;
    const CliOpt *o = g_str_has_prefix(name, "--") ? cli_find(p->cmd, name + 2) : NULL;
    if (!o) {   /* -h or --help: the only entry that is not a row */
        p->help = true;
        return TRUE;
    }
    p->given[o - p->cmd->opts] = true;
    if (set_value(o, p->opts, value, &p->err))
        return TRUE;
    g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, p->err);
    return FALSE;
}

/* A GOptionContext over cmd's rows calling on_option with p; *entries
 * (g_free after the context) is the array it points to. */
static GOptionContext *context_new(const CliCmd *cmd, CliParse *p, GOptionEntry **entries)
{
    GOptionContext *ctx = g_option_context_new(NULL);
    g_option_context_set_help_enabled(ctx, FALSE);
    g_option_context_set_ignore_unknown_options(ctx, TRUE);
    int n = 0;
    while (cmd->opts[n].name)
        n++;
    GOptionEntry *e = g_new0(GOptionEntry, n + 2);
    for (int i = 0; i < n; i++) {
        const CliOpt *o = &cmd->opts[i];
        e[i] = (GOptionEntry){o->name, 0, o->kind == CLI_FLAG ? G_OPTION_FLAG_NO_ARG : G_OPTION_FLAG_FILENAME,
                              G_OPTION_ARG_CALLBACK, (gpointer)on_option, NULL, NULL};
    }
    e[n] = (GOptionEntry){"help", 'h', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_option, NULL, NULL};
    GOptionGroup *g = g_option_group_new(cmd->name, cmd->summary, cmd->summary, p, NULL);
    g_option_group_add_entries(g, e);
    g_option_context_set_main_group(ctx, g);
    *entries = e;
    return ctx;
}

void cli_wrap(GString *out, const char *text, int col, int indent, int width)
{
    gchar **words = g_strsplit(text, " ", -1);
    for (int i = 0; words[i]; i++) {
        int len = (int)strlen(words[i]);
        if (!len)
            continue;
        if (col > indent && col + 1 + len > width) {
            g_string_append_c(out, '\n');
            col = 0;
        }
        if (col == 0 || col < indent) {
            g_string_append_printf(out, "%*s%s", indent - col, "", words[i]);
            col = indent + len;
        } else {
            g_string_append_printf(out, " %s", words[i]);
            col += 1 + len;
        }
    }
    g_string_append_c(out, '\n');
    g_strfreev(words);
}

#define HELP_COL 24   /* where option descriptions start in --help */

char *cli_help(const CliCmd *cmd)
{
    char *usage = cli_usage(cmd);
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "usage: %s\n\n", usage);
    char *summary = g_strdup_printf("%c%s.", g_ascii_toupper(cmd->summary[0]), cmd->summary + 1);
    cli_wrap(g, summary, 0, 0, 79);
    if (cmd->about) {
        g_string_append_c(g, '\n');
        cli_wrap(g, cmd->about, 0, 0, 79);
    }
    g_string_append(g, "\nOptions:\n");
    for (const CliOpt *o = cmd->opts; o->name; o++) {
        const char *v = cli_opt_value(o);
        char *text = cli_opt_text(o);
        int col = (int)g->len;
        g_string_append_printf(g, "  --%s%s%s", o->name, v ? " " : "", v ? v : "");
        col = (int)g->len - col;
        if (col > HELP_COL - 2) {
            g_string_append_c(g, '\n');
            col = 0;
        }
        cli_wrap(g, text, col, HELP_COL, 79);
        g_free(text);
    }
    g_string_append(g, "  -h, --help");
    cli_wrap(g, "show this help and exit", 12, HELP_COL, 79);
    g_string_append_c(g, '\n');
    cli_wrap(g, "Exit status: 0 success, 2 bad input or usage (one line on stderr), 1 anything else. See arsim(1).",
             0, 0, 79);
    g_free(summary);
    g_free(usage);
    return g_string_free(g, FALSE);
}

/* Whether arg is one of cmd's options (--name or --name=...) or --help. */
static bool is_option(const CliCmd *cmd, const char *arg)
{
    if (!g_str_has_prefix(arg, "--"))
        return strcmp(arg, "-h") == 0;
    char *name = g_strndup(arg + 2, strcspn(arg + 2, "="));
    bool known = cli_find(cmd, name) || strcmp(name, "help") == 0;
    g_free(name);
    return known;
}

/* What GLib would accept and arsim refuses: a value given to a flag
 * (--json=yes), and a value option with no value: last, or followed by
 * another option (--json --links). NULL or the message. */
static char *pre_scan(const CliCmd *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (!g_str_has_prefix(a, "--"))
            continue;
        const char *eq = strchr(a, '=');
        char *name = g_strndup(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
        const CliOpt *o = cli_find(cmd, name);
        bool flag = (o && o->kind == CLI_FLAG) || strcmp(name, "help") == 0;
        g_free(name);
        if (flag && eq)
            return unknown_option(cmd, a);
        if (o && !flag && !eq && i == argc - 1)
            return g_strdup_printf("%s: missing value; expected %s %s", a, a, cli_opt_value(o));
        if (o && !flag && !eq && is_option(cmd, argv[i + 1]))
            return g_strdup_printf("%s: missing value (%s is an option); expected %s %s", a, argv[i + 1], a,
                                   cli_opt_value(o));
        if (o && !flag && !eq)
            i++;   /* its value, whatever it looks like */
    }
    return NULL;
}

/* The arguments GLib left in av[1..ac): unknown options are an error;
 * the rest (all after "--") go into args. */
static char *take_args(const CliCmd *cmd, int ac, char **av, GPtrArray *args)
{
    bool dashdash = false;
    for (int i = 1; i < ac; i++) {
        if (!dashdash && strcmp(av[i], "--") == 0)
            dashdash = true;
        else if (!dashdash && av[i][0] == '-' && av[i][1])
            return unknown_option(cmd, av[i]);
        else
            g_ptr_array_add(args, g_strdup(av[i]));
    }
    return NULL;
}

static char *check_args(const CliCmd *cmd, const GPtrArray *args)
{
    int n = (int)args->len;
    char *usage = cli_usage(cmd), *msg = NULL;
    if (n < cmd->min_args)
        msg = g_strdup_printf("%s: no %s; expected %s", cmd->name, cmd->arg_what, usage);
    else if (cmd->max_args == 0 && n > 0)
        msg = g_strdup_printf("%s: unexpected argument; expected options only", (char *)args->pdata[0]);
    else if (cmd->max_args >= 0 && n > cmd->max_args)
        msg = g_strdup_printf("%s: unexpected argument '%s'; expected %s %s", cmd->name,
                              (char *)args->pdata[cmd->max_args], cmd->max_args == 1 ? "exactly one" : "at most",
                              cmd->arg_what);
    for (int i = 0; !msg && i < n; i++)
        if (!*(char *)args->pdata[i])
            msg = g_strdup_printf("%s: empty name for the %s; expected %s", cmd->name, cmd->arg_what, usage);
    g_free(usage);
    return msg;
}

static char *check_required(const CliCmd *cmd, const bool *given)
{
    for (const CliOpt *o = cmd->opts; o->name; o++) {
        if (!o->required || given[o - cmd->opts])
            continue;
        char *words = o->words ? g_strdelimit(g_strdup(o->words), " ", '|') : g_strdup(cli_opt_value(o));
        char *unit = o->words ? NULL : unit_text(o);
        char *msg = g_strdup_printf("--%s: missing; expected --%s %s%s%s%s", o->name, o->name, words,
                                    unit ? " (" : "", unit ? unit : "", unit ? ")" : "");
        g_free(words);
        g_free(unit);
        return msg;
    }
    return NULL;
}

/* Output path i (names[i] its flag, paths[i] its value) must be creatable
 * without touching anything else: a non-empty name, not a directory, in
 * an existing directory, and none of paths[0..i-1] (the inputs, the
 * outputs before it); or "-", standard output, given to one output only.
 * Checked before anything runs, so bad input never leaves a partial
 * output. */
static char *check_out_path(char *const *names, char *const *paths, guint i)
{
    const char *flag = names[i], *path = paths[i];
    char *dir = g_path_get_dirname(path), *msg = NULL;
    for (guint j = 0; fileio_is_stdout(path) && !msg && j < i; j++)
        if (fileio_is_stdout(paths[j]))
            msg = g_strdup_printf("%s: standard output (-) is also given to %s; expected one output on standard "
                                  "output, the others in files", flag, names[j]);
    if (msg || fileio_is_stdout(path)) {
        g_free(dir);
        return msg;
    }
    if (!*path)
        msg = g_strdup_printf("%s: empty file name; expected %s FILE", flag, flag);
    else if (g_file_test(path, G_FILE_TEST_IS_DIR))
        msg = g_strdup_printf("%s: '%s' is a directory; expected a file name", flag, path);
    else if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        msg = g_strdup_printf("%s: directory '%s' does not exist; expected a file in an existing directory", flag,
                              dir);
    for (guint j = 0; !msg && j < i; j++)
        if (strcmp(paths[j], path) == 0)
            msg = g_strdup_printf("%s: '%s' is also given as %s; expected a file of its own", flag, path, names[j]);
    g_free(dir);
    return msg;
}

/* The CLI_OUT and CLI_DIR checks of parse. */
static char *check_outputs(const CliCmd *cmd, void *opts, const GPtrArray *args)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free), *paths = g_ptr_array_new();
    for (guint i = 0; i < args->len; i++) {
        g_ptr_array_add(names, g_strdup(cmd->args));
        g_ptr_array_add(paths, args->pdata[i]);
    }
    for (int pass = 0; pass < 2; pass++)   /* the inputs, then the outputs */
        for (const CliOpt *o = cmd->opts; o->name; o++) {
            char *v = o->kind == (pass ? CLI_OUT : CLI_IN) ? *(char **)field_of(opts, o) : NULL;
            if (v) {
                g_ptr_array_add(names, g_strdup_printf("--%s", o->name));
                g_ptr_array_add(paths, v);
            }
        }
    guint first_out = args->len;
    for (const CliOpt *o = cmd->opts; o->name; o++)
        first_out += o->kind == CLI_IN && *(char **)field_of(opts, o);
    char *msg = NULL;
    for (guint i = first_out; !msg && i < paths->len; i++)
        msg = check_out_path((char *const *)names->pdata, (char *const *)paths->pdata, i);
    for (const CliOpt *o = cmd->opts; !msg && o->name; o++) {
        const char *v = o->kind == CLI_DIR ? *(char **)field_of(opts, o) : NULL;
        if (fileio_is_stdout(v))
            msg = g_strdup_printf("--%s: '-' (standard output) is for files; expected --%s DIR (./- for a directory "
                                  "named -)", o->name, o->name);
        else if (v && (!*v || (g_file_test(v, G_FILE_TEST_EXISTS) && !g_file_test(v, G_FILE_TEST_IS_DIR))))
            msg = g_strdup_printf("--%s: '%s' is not a directory name; expected --%s DIR", o->name, v, o->name);
    }
    g_ptr_array_free(names, TRUE);
    g_ptr_array_free(paths, TRUE);
    return msg;
}

/* The defaults of the rows that have one. */
static char *apply_defaults(const CliCmd *cmd, void *opts)
{
    char *msg = NULL;
    for (const CliOpt *o = cmd->opts; o->name && !msg; o++)
        if (o->deflt && !set_value(o, opts, o->deflt, &msg)) {
            char *why = msg;
            msg = g_strdup_printf("arsim: internal error, the default of --%s: %s; expected a valid default", o->name,
                                  why);
            g_free(why);
        }
    return msg;
}

/* cli_main's parse and checks: true to run the command; false: *status
 * is the exit status, 0 after --help was written to out, 2 with *err. */
static bool parse(const CliCmd *cmd, int argc, char **argv, void *opts, FILE *out, int *status, char **err)
{
    GPtrArray **args = args_of(cmd, opts);
    *args = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    int nrows = 0;
    while (cmd->opts[nrows].name)
        nrows++;
    CliParse p = {.cmd = cmd, .opts = opts, .given = g_new0(bool, nrows + 1)};
    char *msg = apply_defaults(cmd, opts);
    if (!msg)
        msg = pre_scan(cmd, argc, argv);
    int ac = argc;
    /* GLib rearranges the array and may write into the strings: it gets
     * copies of both; own keeps the strings to free. */
    char **own = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        own[i] = g_strdup(argv[i]);
    char **av = g_memdup2(own, sizeof *own * (size_t)(argc + 1)), **av_block = av;
    if (!msg) {
        GOptionEntry *entries;
        GOptionContext *ctx = context_new(cmd, &p, &entries);
        GError *ge = NULL;
        if (g_option_context_parse(ctx, &ac, &av, &ge)) {
            msg = take_args(cmd, ac, av, *args);
        } else {
            char *usage = cli_usage(cmd);
            msg = p.err ? g_strdup(p.err) : g_strdup_printf("%s: %s; expected %s", cmd->name, ge->message, usage);
            g_free(usage);
            g_error_free(ge);
        }
        g_option_context_free(ctx);
        g_free(entries);
    }
    bool run = false;
    *status = 2;
    if (!msg && p.help) {
        char *text = cli_help(cmd);
        fputs(text, out);
        g_free(text);
        *status = 0;
    } else if (!msg) {
        msg = check_args(cmd, *args);
        if (!msg)
            msg = check_required(cmd, p.given);
        if (!msg)
            msg = check_outputs(cmd, opts, *args);
        run = !msg;
        *status = run ? 0 : 2;
    }
    *err = msg;
    g_free(av_block);
    g_strfreev(own);
    g_free(p.given);
    g_free(p.err);
    return run;
}

/* Frees every string and list the rows (and the arguments) hold in opts. */
static void clear(const CliCmd *cmd, void *opts)
{
    for (const CliOpt *o = cmd->opts; o->name; o++) {
        void *f = field_of(opts, o);
        if (o->kind == CLI_STR || o->kind == CLI_IN || o->kind == CLI_OUT || o->kind == CLI_DIR) {
            g_free(*(char **)f);
            *(char **)f = NULL;
        } else if (o->kind == CLI_LIST && *(GPtrArray **)f) {
            g_ptr_array_free(*(GPtrArray **)f, TRUE);
            *(GPtrArray **)f = NULL;
        }
    }
    GPtrArray **args = args_of(cmd, opts);
    if (*args)
        g_ptr_array_free(*args, TRUE);
    *args = NULL;
}

int cli_main(const CliCmd *cmd, int argc, char **argv, void *opts, int (*run)(void *opts, char **err))
{
    char *err = NULL;
    int rc;
    if (parse(cmd, argc, argv, opts, stdout, &rc, &err))
        rc = run(opts, &err);
    clear(cmd, opts);
    return cli_exit(rc, err);
}

int cli_exit(int rc, char *err)
{
    if (rc && err)
        fprintf(stderr, "%s\n", err);
    g_free(err);
    return rc;
}
