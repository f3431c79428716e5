/* cliprogress — the progress line; see cliprogress.h. On a terminal the
 * command's thread writes the state under the mutex; the line's thread
 * wakes every TICK_US, and writes the line when the state or the whole
 * seconds changed. Forced (ARSIM_PROGRESS=1) with no terminal, there is
 * no thread: each step writes its line at once, so that the lines are
 * exactly the steps, whatever the machine's speed. */
#include "cli/cliprogress.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define TICK_US (G_USEC_PER_SEC / 5)

struct CliProgress {
    FILE *out;               /* stderr */
    char *what;              /* "arsim run"; owned */
    bool tty;                /* out is a terminal: rewrite in place; else one line per state */
    double delay_s;          /* seconds before the first line */
    gint64 start_us;         /* g_get_monotonic_time() at start, microseconds */
    GMutex lock;             /* guards the fields below */
    GCond wake;              /* signalled by cliprogress_end */
    bool stop;               /* cliprogress_end was called */
    int done, total;         /* steps finished, of total */
    char *now;               /* the step running; owned, or NULL */
    int serial;              /* state changes so far */
    bool shown;              /* a line was written */
    GThread *thread;         /* the line's thread; NULL when not a terminal */
};

/* Writes the line (the lock held). */
static void draw(CliProgress *p, double elapsed_s)
{
    GString *g = g_string_new(p->tty ? "\r\033[K" : "");
    g_string_append_printf(g, "%s: %d/%d runs done", p->what, p->done, p->total);
    if (p->now)
        g_string_append_printf(g, ", now %s", p->now);
    g_string_append_printf(g, "; %.0f s%s", elapsed_s, p->tty ? "" : "\n");
    fputs(g->str, p->out);
    fflush(p->out);
    g_string_free(g, TRUE);
    p->shown = true;
}

static gpointer run(gpointer data)
{
    CliProgress *p = data;
    int drawn_serial = -1;
    long drawn_s = -1;
    g_mutex_lock(&p->lock);
    while (!p->stop) {
        double elapsed = (double)(g_get_monotonic_time() - p->start_us) / G_USEC_PER_SEC;
        bool changed = p->serial != drawn_serial || (p->tty && (long)elapsed != drawn_s);
        if (elapsed >= p->delay_s && changed && p->total > 0) {
            draw(p, elapsed);
            drawn_serial = p->serial;
            drawn_s = (long)elapsed;
        }
        g_cond_wait_until(&p->wake, &p->lock, g_get_monotonic_time() + TICK_US);
    }
    g_mutex_unlock(&p->lock);
    return NULL;
}

CliProgress *cliprogress_start(FILE *out, const char *what)
{
    const char *env = g_getenv("ARSIM_PROGRESS");
    bool forced = env && strcmp(env, "1") == 0, tty = isatty(fileno(out));
    if ((env && strcmp(env, "0") == 0) || (!forced && !tty))
        return NULL;
    CliProgress *p = g_new0(CliProgress, 1);
    p->out = out;
    p->what = g_strdup(what);
    p->tty = tty && !forced;
    p->delay_s = forced ? 0 : CLIPROGRESS_DELAY_S;
    p->start_us = g_get_monotonic_time();
    g_mutex_init(&p->lock);
    g_cond_init(&p->wake);
    if (p->tty)
        p->thread = g_thread_new("progress", run, p);
    return p;
}

void cliprogress_step(CliProgress *p, int done, int total, const char *now)
{
    if (!p)
        return;
    g_mutex_lock(&p->lock);
    p->done = done;
    p->total = total;
    g_free(p->now);
    p->now = g_strdup(now);
    p->serial++;
    if (!p->tty)
        draw(p, (double)(g_get_monotonic_time() - p->start_us) / G_USEC_PER_SEC);
    g_mutex_unlock(&p->lock);
}

void cliprogress_end(CliProgress *p)
{
    if (!p)
        return;
    g_mutex_lock(&p->lock);
    p->stop = true;
    g_cond_signal(&p->wake);
    g_mutex_unlock(&p->lock);
    if (p->thread)
        g_thread_join(p->thread);
    if (p->shown && p->tty) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
    g_mutex_clear(&p->lock);
    g_cond_clear(&p->wake);
    g_free(p->now);
    g_free(p->what);
    g_free(p);
}
