/* fuzzlib — shared harness helpers; see fuzzlib.h. */
#include "fuzzlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef FUZZ_ROOT
#error "FUZZ_ROOT (the repository root) must be defined by the build"
#endif

const char *fuzz_root(void)
{
    return FUZZ_ROOT;
}

const char *fuzz_path(const char *rel)
{
    char *p = g_build_filename(FUZZ_ROOT, rel, NULL);
    const char *out = g_intern_string(p);
    g_free(p);
    return out;
}

const char *fuzz_memfd(const uint8_t *data, size_t size)
{
    static int fd = -1;              /* one per process, reused for every input */
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("arsim-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("memfd write");
        abort();
    }
    return path;
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    if (memchr(data, '\0', size))
        return NULL;
    return g_strndup((const char *)data, size);
}

void fuzz_check(bool ok, char **err, const char *reader)
{
    const char *e = *err;
    const char *why = NULL;
    if (ok && e)
        why = "succeeded but set an error";
    else if (!ok && !e)
        why = "failed without an error message";
    else if (e) {
        for (const unsigned char *p = (const unsigned char *)e; *p && !why; p++)
            if (*p < 0x20 || *p == 0x7f)
                why = "error message holds a control character (a newline splits the one line)";
        if (!why && !strstr(e, "; "))
            why = "error message lacks '; expected ...'";
        if (!why && !strchr(e, ':'))
            why = "error message names no position";
    }
    if (why) {
        fprintf(stderr, "fuzz contract broken by %s: %s\nmessage: %s\n", reader, why, e ? e : "(none)");
        abort();
    }
    g_free(*err);
    *err = NULL;
}

void fuzz_init(void)
{
    setenv("G_SLICE", "always-malloc", 1);
    setenv("ARSIM_DATA", FUZZ_ROOT, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    return 0;
}
