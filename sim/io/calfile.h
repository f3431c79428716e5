/* calfile — the calibration YAML that `arsim calibrate` writes and
 * scenarios name with `cluster.calibration: FILE` (read there by
 * sim/train/scenario.c, which applies link latency = α/2 — a star's
 * host-to-host message crosses two links — and bandwidth = 1/β):
 *
 *   source: "meas.json"
 *   inter: {alpha_s: 5.1e-05, beta_s_per_byte: 8.37e-09, r2: 0.9999, points: 14,
 *           protocol: {eager_limit: 65536, handshake: rtt, overhead: 1.2e-05s, segment: none}}
 *   intra: {alpha_s: ..., beta_s_per_byte: ..., r2: ..., points: ...}   (when measured)
 *   gamma_s_per_byte: 1.2e-10                                            (when measured)
 *   fit: {modes: [pingpong, ring], used_cases: [0, 1, ...], ...}         (free-form)
 *
 * `fit` records how the numbers were found: the modes fitted, the
 * measurement file's date and the indices of the cases that took part
 * (so `arsim compare` can tell fitted cases from held-out ones), the
 * burst of a token-bucket shaper, per-class residuals, and where the inter
 * protocol came from when it was taken from another calibration. A class's
 * `protocol` (io/protocol.h; written when the fit ran with it) is what the
 * fit found: the eager limit, the handshake and the overhead; a scenario
 * naming the calibration takes them for that class. `segment` is not
 * measured and must be none.
 */
#ifndef ARSIM_CALFILE_H
#define ARSIM_CALFILE_H

#include "io/protocol.h"

#include <glib.h>
#include <stdbool.h>

typedef struct {
    bool set;                /* this class was fitted / is in the file */
    double alpha_s;          /* per-message latency, s, >= 0 */
    double beta;             /* s/byte, > 0 */
    double r2;               /* the fit's R² (NAN: unknown) */
    int points;              /* points the fit used (0: unknown) */
    double burst_bytes;      /* unshaped burst found by the fit (fit.<class>_burst_bytes), >= 0 */
    double rms_rel;          /* RMS relative residual of the fit (fit.<class>_rms_rel), >= 0 */
    double peak_Bps;         /* bytes/s the burst's bytes pass at (fit.<class>_peak_bytes_per_s), > 1/beta;
                              * 0: at once */
} CalClass;

/* A class's protocol (a field of CalFile beside the class). */
typedef struct {
    bool set;                /* the class carries a protocol */
    Protocol p;              /* set: the fitted eager limit, handshake, overhead (segment 0) */
} CalProtocol;

typedef struct {
    CalClass inter;          /* between hosts */
    CalClass intra;          /* inside a host */
    CalProtocol inter_protocol; /* the protocol found between hosts */
    CalProtocol intra_protocol; /* ... inside a host */
    bool has_gamma;          /* gamma_s_per_byte present */
    double gamma;            /* reduction s/byte, >= 0 */
    double gamma_r2;         /* fit.gamma_r2 (NAN: unknown) */
    int gamma_points;        /* fit.gamma_points */
    char *source;            /* the measurements file fitted; owned ("" unknown) */
    char *modes;             /* fit.modes joined with ',' ("pingpong,ring"); owned */
    char *meas_date;         /* fit.measurements_date: env.date of that file; owned ("" unknown) */
    char *mpi_library;       /* fit.mpi_library; owned */
    char *protocol_from;     /* fit.inter_protocol_from: the calibration the inter protocol was taken from
                              * (arsim calibrate --protocol); owned ("" fitted here) */
    GArray *used;            /* int: fit.used_cases, indices of the cases offered to the fit (outliers
                              * included), ascending; owned */
    GArray *outliers;        /* int: fit.outlier_cases, those of `used` the fit dropped as outliers; owned */
} CalFile;

void calfile_init(CalFile *c);
void calfile_clear(CalFile *c);

/* Writes c to path atomically (path.tmp, then rename). false + *err. */
bool calfile_write(const char *path, const CalFile *c, char **err);
/* The YAML text calfile_write writes (g_free). */
char *calfile_format(const CalFile *c);

/* Reads a calibration file; false + *err "file:line:col: ...; expected ...". */
bool calfile_load(const char *path, CalFile *c, char **err);

/* Whether case index i of the measurements dated `date` was offered to
 * the fit (calfile_used) / dropped by it as an outlier. */
bool calfile_used(const CalFile *c, const char *date, int i);
bool calfile_outlier(const CalFile *c, const char *date, int i);

#endif
