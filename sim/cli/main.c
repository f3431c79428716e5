/* main — arsim's command line: dispatches to the commands (each parses
 * its own options from its table, cli/cli.h) and answers --help,
 * --version and `help [COMMAND]`. Hidden, for `make install`: --man
 * writes the man page, --man-scenario arsim-scenario(5), --bash-completion
 * the completion script. `arsim` alone is a question, not a mistake: it
 * prints the same overview as --help on stdout, exit status 0. Exit status:
 * 0 ok, 2 bad input or usage (one line on stderr), 1 anything else. */
#include "cli/clidoc.h"
#include "cli/cmdcalib.h"
#include "cli/cmdcheck.h"
#include "cli/cmdcoll.h"
#include "cli/cmdcompare.h"
#include "cli/cmdimport.h"
#include "cli/cmdlist.h"
#include "cli/cmdplot.h"
#include "cli/cmdrun.h"
#include "cli/cmdsweep.h"
#include "io/version.h"

#include <stdio.h>
#include <string.h>

/* Every command, in the order --help lists them. */
static const CliCmd *const commands[] = {
    &cmdrun_cli,     &cmdcoll_cli,  &cmdsweep_cli,  &cmdplot_cli, &cmdcalib_cli,
    &cmdcompare_cli, &cmdcheck_cli, &cmdimport_cli, &cmdlist_cli,
};
#define NCOMMANDS ((int)G_N_ELEMENTS(commands))

static const CliCmd *find_command(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static char *unknown_command(const char *name)
{
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "%s: unknown command; expected ", name);
    for (int i = 0; i < NCOMMANDS; i++)
        g_string_append_printf(g, "%s%s", commands[i]->name,
                               i == NCOMMANDS - 1 ? "" : i == NCOMMANDS - 2 ? " or " : ", ");
    g_string_append(g, " (see arsim --help)");
    return g_string_free(g, FALSE);
}

/* `arsim help [COMMAND]`. */
static int help(int argc, char **argv)
{
    if (argc > 3)
        return cli_exit(2, g_strdup_printf("help: unexpected argument '%s'; expected arsim help [COMMAND]", argv[3]));
    if (argc < 3 || strcmp(argv[2], "help") == 0) {
        clidoc_help(stdout, commands, NCOMMANDS);
        return 0;
    }
    const CliCmd *c = find_command(argv[2]);
    if (!c)
        return cli_exit(2, unknown_command(argv[2]));
    char *text = cli_help(c);
    fputs(text, stdout);
    g_free(text);
    return 0;
}

int main(int argc, char **argv)
{
    const char *word = argc > 1 ? argv[1] : "--help";
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
        clidoc_help(stdout, commands, NCOMMANDS);
        return 0;
    }
    if (strcmp(word, "--version") == 0) {
        printf("arsim %s\n", ARSIM_VERSION);
        return 0;
    }
    if (argc == 2 && strcmp(word, "--man") == 0) {
        clidoc_man(stdout, commands, NCOMMANDS);
        return 0;
    }
    if (argc == 2 && strcmp(word, "--man-scenario") == 0) {
        clidoc_man_scenario(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(word, "--bash-completion") == 0) {
        clidoc_bash(stdout, commands, NCOMMANDS);
        return 0;
    }
    if (strcmp(word, "help") == 0)
        return help(argc, argv);
    const CliCmd *c = find_command(word);
    if (!c)
        return cli_exit(2, unknown_command(word));
    return c->main(argc - 1, argv + 1);
}
