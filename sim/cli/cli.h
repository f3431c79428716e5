/* cli — what every command of arsim shares: its table of options, the
 * parser (GLib's GOptionContext under arsim's own value parsing and
 * wording), the checks on output paths, and the one-line error:
 *
 *   --flag: what is wrong; expected ...          exit status 2
 *
 * Each command (sim/cli/cmdX.c) has an options struct, one CliOpt row
 * per option, and a CliCmd; its --help, the man page and the bash
 * completion (cli/clidoc.h) are written from the rows, so adding an
 * option is one row and one field. A command's main is
 *
 *   Opts o = {...};               // the defaults that are not a row's deflt
 *   return cli_main(&cmd, argc, argv, &o, run);
 *
 * with run(&o, &err) the command itself, called once the command line
 * passed every check.
 */
#ifndef ARSIM_CLI_H
#define ARSIM_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    CLI_FLAG,      /* bool: given or not; takes no value */
    CLI_STR,       /* char * (owned): any text */
    CLI_IN,        /* char * (owned): an input file or a name on the data search path; not empty */
    CLI_OUT,       /* char * (owned): an output file (cli_main checks it) */
    CLI_DIR,       /* char * (owned): an output directory: not empty, not an existing non-directory */
    CLI_LIST,      /* GPtrArray * (owned) of char *, NULL-terminated: every use of a repeatable option */
    CLI_INT,       /* int, from .min to .max */
    CLI_BYTES,     /* uint64_t: bytes, a size with a unit (io/units.h) */
    CLI_RATE,      /* double: bytes per second, a rate with a unit */
    CLI_TIME,      /* double: seconds, a time with a unit */
    CLI_NUMBER,    /* double: a finite number >= 0 */
    CLI_CUSTOM,    /* .parse writes the field */
} CliKind;

typedef struct CliOpt CliOpt;

/* Parses value into field (the row's field of the options struct). false
 * + *err: the whole one-line message ("--name: ...; expected ..."). */
typedef bool (*CliParseFn)(void *field, const CliOpt *opt, const char *value, char **err);

struct CliOpt {
    const char *name;      /* the long name, without "--" */
    CliKind kind;
    size_t field;          /* offsetof(the options struct, the field it sets) */
    const char *help;      /* what it does: a phrase, no final period */
    const char *value;     /* the value's placeholder ("ALGO"); NULL: the kind's (FILE, SIZE, RATE...) */
    const char *unit;      /* how a value is written; NULL: the words' ("a, b or c"), else the kind's
                            * ("a size: 4096, 64KiB, 1MB") */
    const char *deflt;     /* the default as a user would write it, parsed into the field before the
                            * command line; NULL: the field keeps what the command initialised */
    const char *note;      /* the default in words when it is not a value ("the topology's"); or NULL */
    const char *words;     /* the values, space-separated, when they are a fixed set; or NULL */
    const char *names;     /* the `arsim list` category that completes the value (models...); or NULL */
    int min, max;          /* CLI_INT: the range */
    bool required;         /* absent: "--name: missing; expected --name VALUE" */
    CliParseFn parse;      /* CLI_CUSTOM */
};

typedef struct CliCmd CliCmd;

struct CliCmd {
    const char *name;      /* the command word: "collective" */
    const char *summary;   /* one line, for arsim --help and the man page */
    const char *about;     /* what it does, for its --help and the man page; or NULL */
    const char *args;      /* the arguments in its usage line ("CONFIG"); NULL: none */
    const char *arg_what;  /* what one argument is, for messages ("CONFIG file") */
    const char *arg_words; /* the arguments' values when they are a fixed set (completion); or NULL */
    int min_args, max_args;/* how many arguments; max_args -1: no limit */
    size_t args_field;     /* offsetof the GPtrArray * (owned, of char *, NULL-terminated) of arguments */
    const CliOpt *opts;    /* the table, ended by a row whose name is NULL */
    const CliCmd *near;    /* a command whose extra options are "not an option of" this one; or NULL */
    int (*main)(int argc, char **argv);   /* argv[0] is the command word; returns the exit status */
};

/* A command's main. Parses argv (argv[0] the command word) into opts, the
 * command's options struct: the rows' defaults first, then the command
 * line in order. Then checks that no option is unknown, the number of
 * arguments, that every required option is given, and that each CLI_OUT
 * file is a non-empty name, not a directory, in an existing directory,
 * and not an argument, a CLI_IN file or another output; each CLI_DIR is a
 * non-empty name that is not an existing non-directory. If all is well,
 * calls run(opts, &err), the command itself, which returns the exit
 * status and sets err to its one-line message; --help writes the help on
 * stdout instead (exit status 0); a check that fails writes its message
 * on stderr (exit status 2). Frees what it stored in opts (strings, lists,
 * the arguments; CLI_CUSTOM fields are the command's) and returns the
 * exit status. */
int cli_main(const CliCmd *cmd, int argc, char **argv, void *opts, int (*run)(void *opts, char **err));

/* Writes err (if any, and rc is not 0) as one line on stderr, frees it;
 * returns rc. */
int cli_exit(int rc, char *err);

/* "arsim NAME ARGS [OPTION...]" (g_free). */
char *cli_usage(const CliCmd *cmd);

/* The row's value placeholder ("SIZE"), and its whole description for
 * help and the man page: what it does; how the value is written; the
 * default (g_free). */
const char *cli_opt_value(const CliOpt *o);
char *cli_opt_text(const CliOpt *o);

/* The command's --help text: usage, what it does, every option with its
 * value, unit and default (g_free). */
char *cli_help(const CliCmd *cmd);

/* Appends text's words to out, the cursor at column col: lines end
 * before column width and go on at column indent; ends with a newline. */
void cli_wrap(GString *out, const char *text, int col, int indent, int width);

/* The row named name (no dashes) of cmd, or NULL. */
const CliOpt *cli_find(const CliCmd *cmd, const char *name);

#endif
