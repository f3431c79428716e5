/* main — option parsing and wiring only (placeholder until the CLI lands). */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "arsim: not built yet\n");
    return 1;
}
