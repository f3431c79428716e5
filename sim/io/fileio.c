/* fileio — atomic output files (see fileio.h). */
#include "io/fileio.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

/* PATH "-": fn writes straight to standard output. */
static bool write_stdout(void (*fn)(FILE *f, void *ctx), void *ctx, char **err)
{
    fn(stdout, ctx);
    if (fflush(stdout) == 0 && !ferror(stdout))
        return true;
    *err = g_strdup_printf("standard output: write failed (%s); expected a writable standard output", strerror(errno));
    return false;
}

bool fileio_write_with(const char *path, void (*fn)(FILE *f, void *ctx), void *ctx, char **err)
{
    if (fileio_is_stdout(path))
        return write_stdout(fn, ctx, err);
    char *tmp = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        *err = g_strdup_printf("%s: cannot write (%s); expected a writable path", path, strerror(errno));
        g_free(tmp);
        return false;
    }
    fn(f, ctx);
    bool ok = fflush(f) == 0 && !ferror(f);
    ok = ok && (fsync(fileno(f)) == 0 || errno == EINVAL || errno == EROFS);
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        *err = g_strdup_printf("%s: write failed (%s); expected a writable path", path, strerror(errno));
        unlink(tmp);
    }
    g_free(tmp);
    return ok;
}

static void put_text(FILE *f, void *ctx)
{
    fputs(ctx, f);
}

bool fileio_write_text(const char *path, const char *text, char **err)
{
    return fileio_write_with(path, put_text, (void *)text, err);
}

bool fileio_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}
