/* protocol — the protocol layer's settings: the key table, and the YAML
 * reader, the writer and the command-line parser that all read it; see
 * protocol.h. */
#include "io/protocol.h"
#include "io/units.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

/* Why a value is not a control queue. */
#define CONTROL_QUEUE_BAD                                                                                          \
    "not a control queue; expected a size such as 256KiB (the queued data a request- or clear-to-send waits "      \
    "behind at most) or inf"

static bool parse_segment(const char *s, uint64_t *out, const char **why)
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
        ok = size_or_inf(lower, &out[PROTOCOL_FROM_LOWER], why, CONTROL_QUEUE_BAD) &&
             size_or_inf(higher, &out[PROTOCOL_FROM_HIGHER], why, CONTROL_QUEUE_BAD);
    }
    g_strfreev(part);
    return ok;
}

static bool parse_overhead(const char *s, double *out, const char **why)
{
    if (!units_parse_time(s, out, why))
        return false;
    if (*out > PROTOCOL_MAX_OVERHEAD_S) {
        *why = "overhead above 1 s per message; expected a CPU time per message such as 5us";
        return false;
    }
    return true;
}

/* How a setting's value is written and stored. */
typedef enum {
    KEY_SIZE_INF,     /* uint64_t: a size, or inf (PROTOCOL_INF) */
    KEY_SEGMENT,      /* uint64_t: a positive size, or none (0) */
    KEY_TIME,         /* double: seconds, at most PROTOCOL_MAX_OVERHEAD_S */
    KEY_CHOICE,       /* a two-valued enum: names[0] is 0, names[1] is 1 */
    KEY_QUEUES,       /* uint64_t[2]: both ends' control queue (YAML: one size or inf; command line: one, or
                       * LOWER,HIGHER) */
    KEY_QUEUE_END,    /* one end's control queue, control_queue[end] */
} KeyKind;

/* One protocol setting: a row of protocol.h's PROTOCOL_KEYS. */
typedef struct {
    const char *key;          /* its YAML key */
    const char *flag;         /* its command-line option without "--"; NULL: none */
    unsigned bit;             /* its PROTOCOL_SET_ bit */
    KeyKind kind;
    size_t offset;            /* offsetof(Protocol, its field) */
    size_t size;              /* sizeof its field */
    bool always;              /* protocol_format writes it even at 0 */
    const char *expected;     /* YAML: what a value that is not a scalar is told to be */
    const char *bad;          /* sizes: why a value is not one; KEY_CHOICE: the setting in words */
    const char *names[2];     /* KEY_CHOICE: its values' names */
    const char *choices;      /* KEY_CHOICE: the values explained, after "expected" */
    const char *cli_choices;  /* KEY_CHOICE: the same on the command line where it differs; NULL: choices */
} ProtocolKey;

/* What the rows of PROTOCOL_KEYS leave to this file. */
#define FIELD(f) .offset = offsetof(Protocol, f), .size = sizeof(((Protocol *)0)->f)
#define OPT_ROW(id, fl, value, unit, dflt, help, ...) {.flag = fl, .bit = PROTOCOL_SET_##id, __VA_ARGS__},
#define CHOICE_ROW(id, fl, name0, name1, help, ...)                                                                  \
    {.flag = fl, .bit = PROTOCOL_SET_##id, .kind = KEY_CHOICE, .names = {name0, name1}, __VA_ARGS__},
#define KEY_ROW(...) {__VA_ARGS__},

/* The key table, in the order of the YAML mapping and of protocol_format. */
static const ProtocolKey keys[] = {PROTOCOL_KEYS(OPT_ROW, CHOICE_ROW, KEY_ROW)};

#undef KEY_ROW
#undef CHOICE_ROW
#undef OPT_ROW
#undef FIELD

/* KEY_CHOICE fields are two-valued enums of the size of an unsigned int. */
G_STATIC_ASSERT(sizeof(ProtocolHandshake) == sizeof(unsigned) && sizeof(ProtocolProgress) == sizeof(unsigned));

static void *field_of(Protocol *p, const ProtocolKey *k)
{
    return (char *)p + k->offset;
}

static const void *cfield_of(const Protocol *p, const ProtocolKey *k)
{
    return (const char *)p + k->offset;
}

/* Parses s as key k's value into field (KEY_QUEUES: both ends; `cli`: the
 * command line's form, one or LOWER,HIGHER). false and *why (static). */
static bool parse_value(const ProtocolKey *k, const char *s, void *field, bool cli, const char **why)
{
    uint64_t *u = field;
    switch (k->kind) {
    case KEY_SIZE_INF:
    case KEY_QUEUE_END:
        return size_or_inf(s, u, why, k->bad);
    case KEY_SEGMENT:
        return parse_segment(s, u, why);
    case KEY_TIME:
        return parse_overhead(s, field, why);
    case KEY_QUEUES:
        if (cli)
            return protocol_parse_control_queues(s, u, why);
        if (!size_or_inf(s, &u[0], why, k->bad))
            return false;
        u[1] = u[0];
        return true;
    case KEY_CHOICE:
        for (unsigned i = 0; i < 2; i++)
            if (g_strcmp0(s, k->names[i]) == 0) {
                *(unsigned *)field = i;
                return true;
            }
        return false;
    }
    return false;
}

/* What cfg_as_with's parser gets: the key and a field, and room for a
 * choice's message. */
typedef struct {
    const ProtocolKey *key;
    void *field;
    char why[320];
} ReadCtx;

static bool parse_yaml(const char *s, void *ctx, const char **why)
{
    ReadCtx *c = ctx;
    if (parse_value(c->key, s, c->field, false, why))
        return true;
    if (c->key->kind == KEY_CHOICE) {
        snprintf(c->why, sizeof c->why, "unknown %s; expected %s", c->key->bad, c->key->choices);
        *why = c->why;
    }
    return false;
}

/* The keys as "a, b, c", for the unknown-key message (g_free). */
static char *key_list(void)
{
    GString *g = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        g_string_append_printf(g, "%s%s", i ? ", " : "", keys[i].key);
    return g_string_free(g, FALSE);
}

bool protocol_read(CfgNode *map, Protocol *p, char **err)
{
    if (!cfg_expect_map(map, "protocol", err))
        return false;
    Protocol q = *p;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        CfgNode *v = cfg_get(map, keys[i].key);
        ReadCtx c = {.key = &keys[i], .field = field_of(&q, &keys[i])};
        if (v && !cfg_is_null(v) && !cfg_as_with(v, parse_yaml, &c, keys[i].expected, err))
            return false;
    }
    char *names = key_list();
    bool ok = cfg_check_keys(map, "protocol", names, err);
    g_free(names);
    if (ok)
        *p = q;
    return ok;
}

bool protocol_parse_option(const char *flag, const char *value, Protocol *given, unsigned *mask, char **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        const ProtocolKey *k = &keys[i];
        if (!k->flag || strcmp(k->flag, flag) != 0)
            continue;
        const char *why = NULL;
        *mask |= k->bit;
        if (parse_value(k, value, field_of(given, k), true, &why))
            return true;
        if (k->kind == KEY_CHOICE)
            *err = g_strdup_printf("--%s: unknown %s '%s'; expected %s", flag, k->bad, value,
                                   k->cli_choices ? k->cli_choices : k->choices);
        else
            *err = g_strdup_printf("--%s: '%s': %s", flag, value, why);
        return false;
    }
    *err = g_strdup_printf("--%s: not a protocol setting; expected one of protocol.h's keys", flag);
    return false;
}

void protocol_apply(Protocol *dst, const Protocol *given, unsigned mask)
{
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if ((mask & keys[i].bit) && keys[i].kind != KEY_QUEUE_END)
            memcpy(field_of(dst, &keys[i]), cfield_of(given, &keys[i]), keys[i].size);
}

static void append_size(GString *s, uint64_t v)
{
    if (v == PROTOCOL_INF)
        g_string_append(s, "inf");
    else
        g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)v);
}

/* Both control queues: one key when they are equal (nothing at inf, the
 * default), else the per-end keys. */
static void append_queues(GString *s, const Protocol *p)
{
    const uint64_t *q = p->control_queue;
    if (q[PROTOCOL_FROM_LOWER] == q[PROTOCOL_FROM_HIGHER]) {
        if (q[PROTOCOL_FROM_LOWER] != PROTOCOL_INF)
            g_string_append_printf(s, ", control_queue: %" G_GUINT64_FORMAT, (guint64)q[PROTOCOL_FROM_LOWER]);
        return;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (keys[i].kind == KEY_QUEUE_END) {
            g_string_append_printf(s, ", %s: ", keys[i].key);
            append_size(s, *(const uint64_t *)cfield_of(p, &keys[i]));
        }
}

char *protocol_format(const Protocol *p)
{
    GString *s = g_string_new("{");
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        const ProtocolKey *k = &keys[i];
        const void *f = cfield_of(p, k);
        if (k->kind == KEY_QUEUES) {
            append_queues(s, p);
            continue;
        }
        if (k->kind == KEY_QUEUE_END)
            continue;
        bool zero = k->kind == KEY_TIME ? *(const double *)f == 0
                    : k->kind == KEY_CHOICE ? *(const unsigned *)f == 0 : *(const uint64_t *)f == 0;
        if (zero && !k->always)
            continue;
        g_string_append_printf(s, "%s%s: ", i ? ", " : "", k->key);
        if (k->kind == KEY_TIME)
            g_string_append_printf(s, "%.9gs", *(const double *)f);
        else if (k->kind == KEY_CHOICE)
            g_string_append(s, k->names[*(const unsigned *)f != 0]);
        else if (k->kind == KEY_SEGMENT && zero)
            g_string_append(s, "none");
        else if (k->kind == KEY_SEGMENT)
            g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)*(const uint64_t *)f);
        else
            append_size(s, *(const uint64_t *)f);
    }
    g_string_append_c(s, '}');
    return g_string_free(s, FALSE);
}
