/* test_cli — the option tables of cli/cli.h on a made-up command with one
 * row of every kind: defaults before the command line, each kind's value
 * in its field and unit, repeated and positional arguments, "--", and
 * what stops a command before it runs (exit status 2 or, for --help, 0).
 * The expected values are the units' definitions, written out here. */
#include "cli/cli.h"

#include "testmain.h"

#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    bool flag;
    char *str, *in, *out, *dir;
    GPtrArray *list, *args;
    int n;
    uint64_t bytes;
    double rate, time, number;
    int custom;              /* the length of --custom's value */
    int runs;                /* how often run() was called */
    int (*check)(void *o);   /* run()'s assertions; not a row */
} Demo;

static bool parse_len(void *field, const CliOpt *opt, const char *value, char **err)
{
    if (!*value) {
        *err = g_strdup_printf("--%s: empty; expected some text", opt->name);
        return false;
    }
    *(int *)field = (int)strlen(value);
    return true;
}

static const CliOpt opts[] = {
    {"flag", CLI_FLAG, offsetof(Demo, flag), .help = "a flag"},
    {"str", CLI_STR, offsetof(Demo, str), .help = "text", .value = "TEXT"},
    {"in", CLI_IN, offsetof(Demo, in), .help = "an input"},
    {"out", CLI_OUT, offsetof(Demo, out), .help = "an output"},
    {"dir", CLI_DIR, offsetof(Demo, dir), .help = "a directory"},
    {"list", CLI_LIST, offsetof(Demo, list), .help = "repeatable", .value = "X"},
    {"n", CLI_INT, offsetof(Demo, n), .help = "a count", .min = 1, .max = 10, .deflt = "3"},
    {"bytes", CLI_BYTES, offsetof(Demo, bytes), .help = "a size", .deflt = "64KiB"},
    {"rate", CLI_RATE, offsetof(Demo, rate), .help = "a rate", .deflt = "10Gbps"},
    {"time", CLI_TIME, offsetof(Demo, time), .help = "a time", .deflt = "5us"},
    {"number", CLI_NUMBER, offsetof(Demo, number), .help = "a number"},
    {"custom", CLI_CUSTOM, offsetof(Demo, custom), .help = "custom", .value = "TEXT", .parse = parse_len},
    {NULL},
};

static const CliCmd demo = {
    .name = "demo",
    .summary = "a command for the tests",
    .args = "ARG...",
    .arg_what = "ARG",
    .min_args = 1,
    .max_args = 3,
    .args_field = offsetof(Demo, args),
    .opts = opts,
};

static int run(void *opts, char **err)
{
    Demo *o = opts;
    (void)err;
    o->runs++;
    return o->check(o);
}

/* cli_main on a NULL-terminated list of words after "demo"; stderr
 * (the one-line errors) and stdout (--help) go to /dev/null. */
static int demo_main(Demo *o, const char *const *words)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "demo");
    for (int i = 0; words[i]; i++)
        g_ptr_array_add(argv, (char *)words[i]);
    g_ptr_array_add(argv, NULL);
    fflush(stdout);
    int saved_out = dup(1), saved_err = dup(2);
    FILE *null = fopen("/dev/null", "w");
    dup2(fileno(null), 1);
    dup2(fileno(null), 2);
    int rc = cli_main(&demo, (int)argv->len - 1, (char **)argv->pdata, o, run);
    fflush(stdout);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    fclose(null);
    g_ptr_array_free(argv, TRUE);
    return rc;
}

static int defaults_only(void *opts)
{
    Demo *o = opts;
    ck_assert(!o->flag);
    ck_assert_ptr_null(o->str);
    ck_assert_ptr_null(o->list);
    ck_assert_int_eq(o->n, 3);
    ck_assert_uint_eq(o->bytes, 65536);
    ck_assert(fabs(o->rate - 10e9 / 8) < 1e-3);
    ck_assert(fabs(o->time - 5e-6) < 1e-18);
    ck_assert_uint_eq(o->args->len, 1);
    ck_assert_str_eq(o->args->pdata[0], "a");
    ck_assert_ptr_null(o->args->pdata[1]);
    return 0;
}

START_TEST(test_defaults)
{
    Demo o = {.check = defaults_only};
    ck_assert_int_eq(demo_main(&o, (const char *[]){"a", NULL}), 0);
    ck_assert_int_eq(o.runs, 1);
    ck_assert_ptr_null(o.args);   /* freed */
}
END_TEST

static int every_kind(void *opts)
{
    Demo *o = opts;
    ck_assert(o->flag);
    ck_assert_str_eq(o->str, "two");         /* the last one given */
    ck_assert_str_eq(o->in, "in.yaml");
    ck_assert_str_eq(o->dir, "d");
    ck_assert_uint_eq(o->list->len, 2);
    ck_assert_str_eq(o->list->pdata[0], "x=1");
    ck_assert_str_eq(o->list->pdata[1], "--y");
    ck_assert_ptr_null(o->list->pdata[2]);   /* NULL-terminated */
    ck_assert_int_eq(o->n, 10);
    ck_assert_uint_eq(o->bytes, 1000000);
    ck_assert(fabs(o->rate - 100e6 / 8) < 1e-6);
    ck_assert(fabs(o->time - 1.5e-3) < 1e-15);
    ck_assert(fabs(o->number - 0.25) < 1e-15);
    ck_assert_int_eq(o->custom, 5);
    ck_assert_uint_eq(o->args->len, 3);
    ck_assert_str_eq(o->args->pdata[0], "a");
    ck_assert_str_eq(o->args->pdata[1], "-b");    /* after "--" */
    ck_assert_str_eq(o->args->pdata[2], "--c");
    return 7;
}

START_TEST(test_every_kind)
{
    Demo o = {.check = every_kind};
    const char *words[] = {"--flag", "--str", "one", "--str=two", "a", "--in", "in.yaml", "--dir", "d",
                           "--list", "x=1", "--list", "--y", "--n", "10", "--bytes", "1MB", "--rate=100Mbps",
                           "--time", "1.5ms", "--number", "0.25", "--custom", "hello", "--", "-b", "--c", NULL};
    ck_assert_int_eq(demo_main(&o, words), 7);   /* run's status is the exit status */
    ck_assert_int_eq(o.runs, 1);
}
END_TEST

static int never(void *opts)
{
    (void)opts;
    ck_abort_msg("run() called on a bad command line");
    return 0;
}

START_TEST(test_refused)
{
    char *dir = g_dir_make_tmp("test_cli.XXXXXX", NULL), *file = g_build_filename(dir, "f", NULL);
    g_file_set_contents(file, "x", -1, NULL);
    char *missing = g_build_filename(dir, "no", "out.json", NULL);
    const char *const *bad[] = {
        (const char *[]){NULL},                                   /* no argument */
        (const char *[]){"a", "b", "c", "d", NULL},               /* one too many */
        (const char *[]){"", NULL},                               /* an empty one */
        (const char *[]){"a", "--bogus", NULL},                   /* unknown option */
        (const char *[]){"a", "-x", NULL},
        (const char *[]){"a", "--flag=1", NULL},                  /* a value given to a flag */
        (const char *[]){"a", "--str", NULL},                     /* missing value */
        (const char *[]){"a", "--n", "0", NULL},                  /* out of range */
        (const char *[]){"a", "--n", "3x", NULL},
        (const char *[]){"a", "--bytes", "1.5", NULL},            /* not whole bytes */
        (const char *[]){"a", "--rate", "10", NULL},              /* no unit */
        (const char *[]){"a", "--time", "-1us", NULL},
        (const char *[]){"a", "--number", "nan", NULL},
        (const char *[]){"a", "--custom", "", NULL},
        (const char *[]){"a", "--in", "", NULL},                  /* empty input name */
        (const char *[]){"a", "--out", "", NULL},                 /* empty output name */
        (const char *[]){"a", "--out", dir, NULL},                /* a directory */
        (const char *[]){"a", "--out", missing, NULL},            /* in a missing directory */
        (const char *[]){"a", "--in", file, "--out", file, NULL}, /* the input */
        (const char *[]){file, "--out", file, NULL},              /* an argument */
        (const char *[]){"a", "--dir", file, NULL},               /* an existing file */
        (const char *[]){"a", "--dir", "", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        Demo o = {.check = never};
        ck_assert_msg(demo_main(&o, bad[i]) == 2, "case %zu: not exit status 2", i);
        ck_assert_ptr_null(o.str);   /* freed even so */
    }
    Demo o = {.check = never};
    ck_assert_int_eq(demo_main(&o, (const char *[]){"--help", NULL}), 0);   /* help, even without ARG */
    ck_assert_int_eq(demo_main(&o, (const char *[]){"a", "-h", NULL}), 0);
    g_unlink(file);
    g_rmdir(dir);
    g_free(missing);
    g_free(file);
    g_free(dir);
}
END_TEST

/* --help lists every row with its value placeholder and its default. */
START_TEST(test_help)
{
    char *h = cli_help(&demo);
    ck_assert(g_str_has_prefix(h, "usage: arsim demo ARG... [OPTION...]\n"));
    for (const CliOpt *o = opts; o->name; o++) {
        const char *v = cli_opt_value(o);
        char *line = g_strdup_printf("\n  --%s%s%s ", o->name, v ? " " : "", v ? v : "");
        ck_assert_msg(strstr(h, line), "no '%s'", line);
        g_free(line);
    }
    ck_assert(strstr(h, "an integer from 1 to 10; default: 3\n"));
    ck_assert(strstr(h, "default: 64KiB\n"));
    g_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_every_kind);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_help);
    suite_add_tcase(s, tc);
    return testmain_run(s);
}
