/* sweep — `arsim check` on a sweep file; see sweep.h. */
#include "sweep/sweep.h"
#include "sweep/sweepexec.h"
#include "sweep/sweepsim.h"

int sweep_check(const char *file, char **sets, FILE *out, char **err)
{
    SweepDef *d = sweepexp_load(file, sets, err);
    if (!d)
        return 2;
    int rc = 0;
    if (!sweepexec_validate(d, sweepsim_runner(), (int)g_get_num_processors(), err)) {
        rc = 2;
    } else {
        fprintf(out, "%s: ok: %" G_GUINT64_FORMAT " scenario%s", file, d->count, d->count == 1 ? "" : "s");
        for (guint g = 0; g < d->groups->len; g++) {
            GString *names = g_string_new(NULL);
            int members = 0;
            for (guint a = 0; a < d->axes->len; a++) {
                const SweepAxis *ax = g_ptr_array_index(d->axes, a);
                if (ax->group == (int)g) {
                    g_string_append_printf(names, "%s%s", members ? ", " : "", ax->path);
                    members++;
                }
            }
            fprintf(out, "%s%s%s%s (%d)", g ? " x " : ", axes ", members > 1 ? "zip(" : "", names->str,
                    members > 1 ? ")" : "", g_array_index(d->groups, int, g));
            g_string_free(names, TRUE);
        }
        fputc('\n', out);
    }
    sweepexp_free(d);
    return rc;
}
