/* protocol — reading and writing the protocol layer's settings; see protocol.h. */
#include "io/protocol.h"
#include "io/units.h"

#include <string.h>

#define PROTOCOL_KEYS \
    "eager_limit, handshake, overhead, segment, control_queue, control_queue_from_lower, " \
    "control_queue_from_higher, host_queue, duplex, rts_payload, ack, progress"

void protocol_init(Protocol *p)
{
    *p = (Protocol){.eager_limit = PROTOCOL_DEFAULT_EAGER, .handshake = PROTOCOL_HANDSHAKE_NONE,
                    .control_queue = {PROTOCOL_INF, PROTOCOL_INF}};
}

void protocol_init_eager(Protocol *p)
{
    *p = (Protocol){.eager_limit = PROTOCOL_INF, .handshake = PROTOCOL_HANDSHAKE_NONE,
                    .control_queue = {PROTOCOL_INF, PROTOCOL_INF}};
}

bool protocol_is_eager(const Protocol *p)
{
    return p->eager_limit == PROTOCOL_INF && p->overhead_s == 0 && p->segment_bytes == 0;
}

/* The names of the two-valued settings, the second value's name second:
 * handshake and ack none|rtt, rts_payload none|eager, duplex full|half,
 * progress always|in_mpi. */
static const char *const handshake_names[2] = {"none", "rtt"};
static const char *const rts_payload_names[2] = {"none", "eager"};
static const char *const duplex_names[2] = {"full", "half"};
static const char *const progress_names[2] = {"always", "in_mpi"};

/* 0 or 1: which of names[] name is; -1 if neither. */
static int name_index(const char *const names[2], const char *name)
{
    return g_strcmp0(name, names[0]) == 0 ? 0 : g_strcmp0(name, names[1]) == 0 ? 1 : -1;
}

const char *protocol_handshake_name(ProtocolHandshake h)
{
    return handshake_names[h == PROTOCOL_HANDSHAKE_RTT];
}

bool protocol_handshake_parse(const char *name, ProtocolHandshake *out)
{
    int i = name_index(handshake_names, name);
    if (i >= 0)
        *out = i ? PROTOCOL_HANDSHAKE_RTT : PROTOCOL_HANDSHAKE_NONE;
    return i >= 0;
}

const char *protocol_rts_payload_name(ProtocolRtsPayload r)
{
    return rts_payload_names[r == PROTOCOL_RTS_EAGER];
}

bool protocol_rts_payload_parse(const char *name, ProtocolRtsPayload *out)
{
    int i = name_index(rts_payload_names, name);
    if (i >= 0)
        *out = i ? PROTOCOL_RTS_EAGER : PROTOCOL_RTS_EMPTY;
    return i >= 0;
}

const char *protocol_duplex_name(ProtocolDuplex d)
{
    return duplex_names[d == PROTOCOL_DUPLEX_HALF];
}

bool protocol_duplex_parse(const char *name, ProtocolDuplex *out)
{
    int i = name_index(duplex_names, name);
    if (i >= 0)
        *out = i ? PROTOCOL_DUPLEX_HALF : PROTOCOL_DUPLEX_FULL;
    return i >= 0;
}

const char *protocol_ack_name(ProtocolAck a)
{
    return handshake_names[a == PROTOCOL_ACK_RTT];
}

bool protocol_ack_parse(const char *name, ProtocolAck *out)
{
    int i = name_index(handshake_names, name);
    if (i >= 0)
        *out = i ? PROTOCOL_ACK_RTT : PROTOCOL_ACK_NONE;
    return i >= 0;
}

const char *protocol_progress_name(ProtocolProgress g)
{
    return progress_names[g == PROTOCOL_PROGRESS_IN_MPI];
}

bool protocol_progress_parse(const char *name, ProtocolProgress *out)
{
    int i = name_index(progress_names, name);
    if (i >= 0)
        *out = i ? PROTOCOL_PROGRESS_IN_MPI : PROTOCOL_PROGRESS_ALWAYS;
    return i >= 0;
}

/* "inf" (PROTOCOL_INF) or a size into *out; else false, *why = what (static). */
static bool size_or_inf(const char *s, uint64_t *out, const char **why, const char *what)
{
    if (g_strcmp0(s, "inf") == 0) {
        *out = PROTOCOL_INF;
        return true;
    }
    if (!units_parse_bytes(s, out, why)) {
        *why = what;
        return false;
    }
    return true;
}

bool protocol_parse_eager_limit(const char *s, uint64_t *out, const char **why)
{
    return size_or_inf(s, out, why, "not an eager limit; expected a size such as 64KiB (messages below it are eager) "
                                    "or inf");
}

bool protocol_parse_segment(const char *s, uint64_t *out, const char **why)
{
    if (g_strcmp0(s, "none") == 0) {
        *out = 0;
        return true;
    }
    if (!units_parse_bytes(s, out, why) || *out == 0) {
        *why = "not a segment size; expected a positive size such as 128KiB or none";
        return false;
    }
    return true;
}

bool protocol_parse_control_queue(const char *s, uint64_t *out, const char **why)
{
    return size_or_inf(s, out, why, "not a control queue; expected a size such as 256KiB (the queued data a request- "
                                    "or clear-to-send waits behind at most) or inf");
}

bool protocol_parse_host_queue(const char *s, uint64_t *out, const char **why)
{
    return size_or_inf(s, out, why, "not a host queue; expected a size such as 256KiB (the other connections' "
                                    "queued data a control message waits behind at most; 0: none) or inf");
}

bool protocol_parse_control_queues(const char *s, uint64_t out[2], const char **why)
{
    char **part = g_strsplit(s, ",", 3);
    guint n = g_strv_length(part);
    bool ok;
    if (n > 2) {
        *why = "more than two control queues; expected SIZE or inf (both ends), or the lower rank's and the "
               "higher rank's such as 0,512KiB";
        ok = false;
    } else {
        const char *lower = n ? part[0] : s, *higher = n ? part[n - 1] : s;
        ok = protocol_parse_control_queue(lower, &out[PROTOCOL_FROM_LOWER], why) &&
             protocol_parse_control_queue(higher, &out[PROTOCOL_FROM_HIGHER], why);
    }
    g_strfreev(part);
    return ok;
}

bool protocol_parse_overhead(const char *s, double *out, const char **why)
{
    if (!units_parse_time(s, out, why))
        return false;
    if (*out > PROTOCOL_MAX_OVERHEAD_S) {
        *why = "overhead above 1 s per message; expected a CPU time per message such as 5us";
        return false;
    }
    return true;
}

/* The value of key (absent or null: *out untouched) through a parser. */
static bool read_value(CfgNode *map, const char *key, CfgParseFn parse, void *out, const char *expected, char **err)
{
    CfgNode *v = cfg_get(map, key);
    return !v || cfg_is_null(v) || cfg_as_with(v, parse, out, expected, err);
}

static bool parse_limit(const char *s, void *o, const char **w) { return protocol_parse_eager_limit(s, o, w); }
static bool parse_segment(const char *s, void *o, const char **w) { return protocol_parse_segment(s, o, w); }
static bool parse_overhead(const char *s, void *o, const char **w) { return protocol_parse_overhead(s, o, w); }
static bool parse_cq(const char *s, void *o, const char **w) { return protocol_parse_control_queue(s, o, w); }
static bool parse_hq(const char *s, void *o, const char **w) { return protocol_parse_host_queue(s, o, w); }

static bool parse_handshake(const char *s, void *o, const char **w)
{
    if (protocol_handshake_parse(s, o))
        return true;
    *w = "unknown handshake; expected none (data leaves when the receive is posted) or rtt (request-to-send, "
         "clear-to-send)";
    return false;
}

static bool parse_duplex(const char *s, void *o, const char **w)
{
    if (protocol_duplex_parse(s, o))
        return true;
    *w = "unknown duplex; expected full (both directions at once) or half (rendezvous data one direction at a "
         "time)";
    return false;
}

static bool parse_ack(const char *s, void *o, const char **w)
{
    if (protocol_ack_parse(s, o))
        return true;
    *w = "unknown ack; expected none (a rendezvous message completes when its data arrived) or rtt (an "
         "acknowledgement and a confirmation cross after it)";
    return false;
}

static bool parse_progress(const char *s, void *o, const char **w)
{
    if (protocol_progress_parse(s, o))
        return true;
    *w = "unknown progress; expected always (control messages handled when they arrive) or in_mpi (only while "
         "the rank is inside MPI)";
    return false;
}

static bool parse_rts(const char *s, void *o, const char **w)
{
    if (protocol_rts_payload_parse(s, o))
        return true;
    *w = "unknown request-to-send payload; expected none (no data) or eager (the message's first eager_limit - 1 "
         "bytes)";
    return false;
}

/* control_queue (both ends), then the per-end keys over it. */
static bool read_queues(CfgNode *map, Protocol *q, char **err)
{
    uint64_t both = PROTOCOL_INF;
    CfgNode *v = cfg_get(map, "control_queue");
    if (v && !cfg_is_null(v)) {
        if (!cfg_as_with(v, parse_cq, &both, "a size or inf", err))
            return false;
        protocol_set_control_queue(q, both);
    }
    return read_value(map, "control_queue_from_lower", parse_cq, &q->control_queue[PROTOCOL_FROM_LOWER],
                      "a size or inf", err) &&
           read_value(map, "control_queue_from_higher", parse_cq, &q->control_queue[PROTOCOL_FROM_HIGHER],
                      "a size or inf", err);
}

bool protocol_read(CfgNode *map, Protocol *p, char **err)
{
    if (!cfg_expect_map(map, "protocol", err))
        return false;
    Protocol q = *p;
    if (!read_value(map, "eager_limit", parse_limit, &q.eager_limit, "a size or inf", err) ||
        !read_value(map, "handshake", parse_handshake, &q.handshake, "none or rtt", err) ||
        !read_value(map, "overhead", parse_overhead, &q.overhead_s, "a time such as 5us", err) ||
        !read_value(map, "segment", parse_segment, &q.segment_bytes, "a size or none", err) ||
        !read_queues(map, &q, err) ||
        !read_value(map, "host_queue", parse_hq, &q.host_queue, "a size or inf", err) ||
        !read_value(map, "duplex", parse_duplex, &q.duplex, "full or half", err) ||
        !read_value(map, "rts_payload", parse_rts, &q.rts_payload, "none or eager", err) ||
        !read_value(map, "ack", parse_ack, &q.ack, "none or rtt", err) ||
        !read_value(map, "progress", parse_progress, &q.progress, "always or in_mpi", err) ||
        !cfg_check_keys(map, "protocol", PROTOCOL_KEYS, err))
        return false;
    *p = q;
    return true;
}

char *protocol_format(const Protocol *p)
{
    GString *s = g_string_new("{eager_limit: ");
    if (p->eager_limit == PROTOCOL_INF)
        g_string_append(s, "inf");
    else
        g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)p->eager_limit);
    g_string_append_printf(s, ", handshake: %s, overhead: %.9gs, segment: ", protocol_handshake_name(p->handshake),
                           p->overhead_s);
    if (p->segment_bytes)
        g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)p->segment_bytes);
    else
        g_string_append(s, "none");
    const uint64_t *q = p->control_queue;
    if (q[PROTOCOL_FROM_LOWER] == q[PROTOCOL_FROM_HIGHER]) {
        if (q[PROTOCOL_FROM_LOWER] != PROTOCOL_INF)
            g_string_append_printf(s, ", control_queue: %" G_GUINT64_FORMAT, (guint64)q[PROTOCOL_FROM_LOWER]);
    } else {
        for (int e = PROTOCOL_FROM_LOWER; e <= PROTOCOL_FROM_HIGHER; e++) {
            g_string_append_printf(s, ", control_queue_from_%s: ", e == PROTOCOL_FROM_LOWER ? "lower" : "higher");
            if (q[e] == PROTOCOL_INF)
                g_string_append(s, "inf");
            else
                g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)q[e]);
        }
    }
    if (p->host_queue == PROTOCOL_INF)
        g_string_append(s, ", host_queue: inf");
    else if (p->host_queue)
        g_string_append_printf(s, ", host_queue: %" G_GUINT64_FORMAT, (guint64)p->host_queue);
    if (p->duplex != PROTOCOL_DUPLEX_FULL)
        g_string_append_printf(s, ", duplex: %s", protocol_duplex_name(p->duplex));
    if (p->rts_payload != PROTOCOL_RTS_EMPTY)
        g_string_append_printf(s, ", rts_payload: %s", protocol_rts_payload_name(p->rts_payload));
    if (p->ack != PROTOCOL_ACK_NONE)
        g_string_append_printf(s, ", ack: %s", protocol_ack_name(p->ack));
    if (p->progress != PROTOCOL_PROGRESS_ALWAYS)
        g_string_append_printf(s, ", progress: %s", protocol_progress_name(p->progress));
    g_string_append_c(s, '}');
    return g_string_free(s, FALSE);
}
