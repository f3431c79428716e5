/* sweepmpi — scenarios handed out over MPI; see sweepmpi.h. */
#include "sweep/sweepmpi.h"

#ifdef ARSIM_MPI

#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { TAG_RESULT = 1, TAG_WORK = 2, TAG_STOP = 3 };

bool sweepmpi_available(void)
{
    return true;
}

/* Waits for a nonblocking request without spinning a core (ranks are
 * often more than cores). */
static void wait_gently(MPI_Request *req)
{
    int done = 0;
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        g_usleep(200);
    }
}

/* Rank 0: hands out the plan's indices, records what comes back. */
static int coordinate(SweepPlan *plan, int size, char **err)
{
    const GArray *todo = sweepexec_todo(plan);
    guint next = 0;
    int active = size - 1, rc = 0;
    while (active > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            g_usleep(200);
            continue;
        }
        int n = 0;
        MPI_Get_count(&st, MPI_CHAR, &n);
        char *buf = g_malloc((gsize)n + 1);
        MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        buf[n] = '\0';
        long long idx = -1;
        int ok = 0;
        double secs = 0;
        const char *body = strchr(buf, '\n');
        if (sscanf(buf, "%lld %d %lf", &idx, &ok, &secs) == 3 && body && idx >= 0) {
            if (!ok)
                sweepexec_fail(plan, (guint64)idx, body + 1);
            else if (rc == 0 && !sweepexec_record(plan, (guint64)idx, body + 1, secs, err))
                rc = 1;
        }
        g_free(buf);
        if (rc == 0 && next < todo->len) {
            long long i = (long long)g_array_index(todo, guint64, next++);
            MPI_Send(&i, 1, MPI_LONG_LONG, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
        } else {
            long long none = -1;
            MPI_Send(&none, 1, MPI_LONG_LONG, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
            active--;
        }
    }
    return rc;
}

/* Ranks 1..n-1: ask, simulate, send back, until told to stop. */
static void work(const SweepDef *d, const SweepRunner *r)
{
    char *msg = g_strdup("-1 1 0\n");
    for (;;) {
        MPI_Send(msg, (int)strlen(msg), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
        g_free(msg);
        long long idx = -1;
        MPI_Status st;
        MPI_Recv(&idx, 1, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG != TAG_WORK)
            return;
        gint64 t0 = g_get_monotonic_time();
        char *e = NULL, *json = NULL;
        CfgNode *t = sweepexp_tree(d, (guint64)idx, &e);
        if (t)
            json = r->run(t, r->ctx, &e);
        double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
        msg = g_strdup_printf("%lld %d %.6f\n%s", idx, json != NULL, secs,
                              json ? json : e ? e : "the simulation gave no results");
        g_free(json);
        g_free(e);
    }
}

int sweepmpi_run(const char *file, char **sets, const SweepRunner *r, const SweepOpts *o, char **err)
{
    int inited = 0, rank = 0, size = 1;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *lerr = NULL;
    SweepDef *d = sweepexp_load(file, sets, &lerr);
    int lrc = d ? 0 : 2, grc = 0;
    MPI_Allreduce(&lrc, &grc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = grc;
    if (grc == 0 && size == 1) {
        rc = sweepexec_run(d, r, o, err);
    } else if (grc == 0) {
        SweepPlan *plan = NULL;
        int status = 0;
        if (rank == 0) {
            plan = sweepexec_prepare(d, r, o, &status, err);
            if (plan)
                status = 0;
        }
        MPI_Request req;
        MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
        wait_gently(&req);
        rc = status;
        if (status == 0 && rank == 0) {
            rc = coordinate(plan, size, err);
            int frc = sweepexec_finish(plan, rc ? &lerr : err);
            rc = rc ? rc : frc;
        } else if (status == 0) {
            work(d, r);
        }
    } else if (rank == 0) {
        *err = lerr ? g_steal_pointer(&lerr) : g_strdup("another MPI rank could not read the sweep");
    }
    g_free(lerr);
    sweepexp_free(d);
    MPI_Finalize();
    return rank == 0 ? rc : 0;
}

#else

bool sweepmpi_available(void)
{
    return false;
}

int sweepmpi_run(const char *file, char **sets, const SweepRunner *r, const SweepOpts *o, char **err)
{
    (void)file;
    (void)sets;
    (void)r;
    (void)o;
    *err = g_strdup("--mpi: this arsim was built without MPI; expected a build with mpicc (make, with Open MPI's "
                    "mpicc on PATH: make deps installs it)");
    return 2;
}

#endif
