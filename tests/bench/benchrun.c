/* benchrun — runs one command and reports what it cost: wall seconds,
 * CPU seconds (user + system) and peak resident memory.
 *
 *   benchrun [-o FILE] [-i FILE] -- COMMAND [ARG]...
 *
 * The command's stdout goes to FILE with -o (else /dev/null), its stdin
 * comes from FILE with -i (else /dev/null); its stderr is left alone. On
 * stderr, after the command ends, benchrun prints one line:
 *
 *   benchrun: rc=RC wall_s=W cpu_s=C maxrss_kib=K
 *
 * RC is the exit status, or 128+N when signal N killed it. Wall time comes
 * from CLOCK_MONOTONIC around fork/wait4; CPU time and peak RSS from the
 * child's struct rusage (ru_maxrss, KiB on Linux). benchrun exits with the
 * command's RC, or 127 when it could not be started. Used by
 * tests/bench/run.sh instead of GNU time, which a fresh machine may lack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Opens path onto fd in the child; returns 0 or -1. */
static int redirect(const char *path, int fd, int flags)
{
    int f = open(path, flags, 0644);
    if (f < 0)
        return -1;
    if (f != fd) {
        if (dup2(f, fd) < 0)
            return -1;
        close(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *out = "/dev/null", *in = "/dev/null";
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
            in = argv[++i];
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: benchrun [-o FILE] [-i FILE] -- COMMAND [ARG]...\n");
        return 2;
    }
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "benchrun: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (redirect(in, STDIN_FILENO, O_RDONLY) < 0 ||
            redirect(out, STDOUT_FILENO, O_WRONLY | O_CREAT | O_TRUNC) < 0) {
            fprintf(stderr, "benchrun: %s: %s\n", argv[i], strerror(errno));
            _exit(127);
        }
        execvp(argv[i], argv + i);
        fprintf(stderr, "benchrun: %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "benchrun: wait4: %s\n", strerror(errno));
            return 127;
        }
    }
    double wall = now_s() - t0;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "benchrun: rc=%d wall_s=%.6f cpu_s=%.6f maxrss_kib=%ld\n", rc, wall,
            tv_s(ru.ru_utime) + tv_s(ru.ru_stime), ru.ru_maxrss);
    return rc;
}
