/* protocol — the settings of the protocol layer: how MPI sends a
 * point-to-point message (eager or rendezvous, the handshake, the CPU
 * overhead per message, pipelined segments). Plain data, and one key
 * table (PROTOCOL_KEYS below: per setting its YAML key, command-line flag
 * and help, field, how its value is written) that the YAML reader, the
 * writer and the command line all read, shared by topology files, scenarios
 * (cluster.protocol), calibration files and `arsim collective`; the rules
 * themselves run in the collective executor (coll/collexec.h), which alone
 * knows when a rank posts a receive. docs/dev/protocol-settings.md says
 * where a new setting goes.
 *
 * In YAML: {eager_limit: SIZE | inf, handshake: none | rtt, overhead: TIME,
 * segment: SIZE | none, control_queue: SIZE | inf, control_queue_from_lower: SIZE | inf,
 * control_queue_from_higher: SIZE | inf, host_queue: SIZE | inf, duplex: full | half,
 * rts_payload: none | eager, ack: none | rtt, progress: always | in_mpi}, every key
 * optional (an absent key keeps the value it had), an unknown key an error.
 *
 *   eager_limit  a message of fewer bytes leaves when it is sent; one of
 *                eager_limit bytes or more (rendezvous) starts moving only
 *                once its receiver posted the matching receive. `inf`:
 *                every message is eager (as protocol_init_eager).
 *                "Fewer than" as SimGrid SMPI's send-is-detached-thresh
 *                (size < 65536) and Open MPI's TCP eager limit (which
 *                counts its match header) both draw it.
 *   handshake    none: the rendezvous message leaves the moment the
 *                receive is posted (SMPI); rtt: the sender sends a
 *                request-to-send, the receiver answers with a
 *                clear-to-send once the receive is posted, and only then
 *                does the data leave (Open MPI ob1, MPICH). Both control
 *                messages carry no payload, cross the route and queue on
 *                its links like any message, and cost no overhead.
 *   overhead     o, CPU time per data message on the sending rank (before
 *                it leaves) and on the receiving rank (after it arrived and
 *                the receive was posted); a rank's overheads and
 *                reductions run one at a time (LogGP's o).
 *   segment      S: every step's message is cut into K pieces, K =
 *                ceil(M / S) for the collective's largest message M (at
 *                most PROTOCOL_MAX_SEGMENTS), so piece k of every step carries
 *                slice k of the data; piece k of a rank's step i waits only
 *                for piece k of its step i-1 (its own slice), so the
 *                slices flow through the schedule as a pipeline (NCCL's
 *                chunks, Open MPI's segmented ring). Each
 *                piece is a message of its own (eager or not by its size).
 *                none (0): whole messages.
 *   control_queue  Q: under handshake rtt, a request- or clear-to-send
 *                travels in its connection (the pair of hosts: one socket
 *                each way): on each link it waits behind at most Q bytes of
 *                that connection's data queued ahead of it (the transport's
 *                buffer: the socket's send buffer, the MPI library's queued
 *                fragments), then overtakes the rest; other connections'
 *                data it passes (net_send_control). inf: behind all of its
 *                connection's data (the default). Matters where a pairwise
 *                exchange's ends start apart: the late rank's clear-to-send
 *                queues behind the early rank's data to it.
 *                control_queue sets both ends; control_queue_from_lower and
 *                control_queue_from_higher set the Q of the control
 *                messages the pair's lower (higher) rank sends, and win over
 *                control_queue wherever they stand (a transport whose lower
 *                rank's clear-to-send passes its data while the higher
 *                rank's waits behind some of it: docs/explanation/validation-history.md, "What the
 *                remaining misses are made of"). The ranks are the
 *                collective's (MPI's world ranks in validate/mpibench).
 *   host_queue   H: a control message (request- or clear-to-send,
 *                acknowledgement, confirmation) also waits on each link
 *                behind at most H bytes of the other connections' data
 *                queued ahead of it (the host's one shaper FIFO, which every
 *                socket's segments share), where control_queue counts only
 *                its own connection's. 0 (the default): it passes them.
 *                A large H: a rank's acknowledgement to one neighbour leaves
 *                only after its own data queued to the other (docs/explanation/validation-history-2.md, "Why
 *                MPICH's mid-size rings are slow").
 *
 *   duplex       full: a connection's two directions carry data at once.
 *                half: a rendezvous message whose receiver is ready waits,
 *                before it leaves, until the rendezvous data in flight the
 *                other way between the same two hosts (in this collective)
 *                has been delivered — an exchange takes turns whenever its
 *                ends start (docs/explanation/validation-method.md), except under progress in_mpi where
 *                the later rank read the request only after posting (it
 *                arrived while that rank computed): then both cross.
 *                Eager messages never wait.
 *
 *   rts_payload  none: a request-to-send is payload-free; eager: it is a
 *                data message carrying the first eager_limit - 1 bytes of
 *                its message (Open MPI's ob1 rendezvous), and only the rest
 *                waits for the clear-to-send. Uncontended it costs the same;
 *                in an exchange whose ends start apart the early rank
 *                answers the late one's request only once its data has
 *                arrived, while its own data flows.
 *
 *   ack          none: a rendezvous message's send and receive complete
 *                when its data has arrived. rtt: then the receiver sends an
 *                acknowledgement to the sender (the send completes when it
 *                arrives) and the sender answers with a confirmation (the
 *                receive completes when that arrives): two payload-free
 *                control messages after the data, as UCX's put rendezvous
 *                (MPICH 4 over UCX's TCP transport: the receiver's put
 *                acknowledgement, the sender's ack-to-put, read off a packet
 *                trace). Eager messages are not acknowledged.
 *
 *   progress     always: a rank's MPI library handles a control message
 *                (request- or clear-to-send, acknowledgement, confirmation)
 *                the moment it arrives (a progress thread; SMPI). in_mpi:
 *                only while the rank is inside MPI — waiting in a step, or
 *                before the collective (in its barrier); one that arrives
 *                while the rank's CPU is busy (a reduction, an overhead) is
 *                handled when the CPU is next free, after whatever the rank
 *                posts then (MPICH and Open MPI without a progress thread:
 *                the library reads its sockets only inside MPI calls). It
 *                decides which way an exchange goes under control_queue inf:
 *                a late rank that read its partner's request-to-send before
 *                posting answers it first and its own data waits behind the
 *                partner's (they take turns); one that finds it only after
 *                posting sends its own request first and both flow at once
 *                (docs/explanation/validation-history-2.md, "An exchange takes turns when its later rank has read
 *                the request").
 *
 * Defaults (protocol_init): 64 KiB, none, 0, none, inf, 0, full, none, none, always — SMPI's semantics.
 */
#ifndef ARSIM_PROTOCOL_H
#define ARSIM_PROTOCOL_H

#include "io/cfg.h"

#include <stdbool.h>
#include <stdint.h>

#define PROTOCOL_INF UINT64_MAX            /* eager_limit: every message is eager */
#define PROTOCOL_DEFAULT_EAGER (64u << 10) /* 64 KiB */
#define PROTOCOL_MAX_OVERHEAD_S 1.0        /* larger per-message overheads are refused */
#define PROTOCOL_MAX_SEGMENTS 256          /* pieces per message at most (a smaller segment grows) */

typedef enum {
    PROTOCOL_HANDSHAKE_NONE,   /* data leaves when the receive is posted */
    PROTOCOL_HANDSHAKE_RTT,    /* request-to-send, clear-to-send, then data */
} ProtocolHandshake;

typedef enum {
    PROTOCOL_RTS_EMPTY,        /* a request-to-send carries no data */
    PROTOCOL_RTS_EAGER,        /* it carries the message's first eager_limit - 1 bytes (Open MPI's ob1) */
} ProtocolRtsPayload;

typedef enum {
    PROTOCOL_ACK_NONE,         /* a rendezvous message completes when its data arrived */
    PROTOCOL_ACK_RTT,          /* then an acknowledgement and a confirmation cross before it does */
} ProtocolAck;

typedef enum {
    PROTOCOL_PROGRESS_ALWAYS,  /* control messages are handled when they arrive */
    PROTOCOL_PROGRESS_IN_MPI,  /* ... when the receiving rank's CPU is free (it is inside MPI) */
} ProtocolProgress;

typedef enum {
    PROTOCOL_DUPLEX_FULL,      /* a connection's two directions carry data at once */
    PROTOCOL_DUPLEX_HALF,      /* its rendezvous data moves one direction at a time */
} ProtocolDuplex;

enum {
    PROTOCOL_FROM_LOWER = 0,   /* control_queue[] index: sent by the lower rank of the two */
    PROTOCOL_FROM_HIGHER = 1,  /* sent by the higher */
};

typedef struct {
    uint64_t eager_limit;        /* bytes: messages below it are eager; PROTOCOL_INF: all */
    ProtocolHandshake handshake; /* what a rendezvous message waits for */
    double overhead_s;           /* CPU seconds per data message at each end, 0..PROTOCOL_MAX_OVERHEAD_S */
    uint64_t segment_bytes;      /* bytes per pipelined piece; 0: whole messages */
    uint64_t control_queue[2];   /* bytes of its connection's queued data a control message waits behind at
                                  * most per link, [PROTOCOL_FROM_LOWER] when the pair's lower rank sends it,
                                  * [PROTOCOL_FROM_HIGHER] when the higher does; PROTOCOL_INF: all of it */
    uint64_t host_queue;         /* bytes of the other connections' queued data a control message waits behind
                                  * at most per link; 0: none; PROTOCOL_INF: all of it */
    ProtocolDuplex duplex;       /* whether rendezvous data crosses between two hosts both ways at once */
    ProtocolRtsPayload rts_payload; /* under rtt: what a request-to-send carries */
    ProtocolAck ack;             /* what a rendezvous message waits for after its data arrived */
    ProtocolProgress progress;   /* when a rank handles the control messages that reach it */
} Protocol;

/* The defaults above. */
void protocol_init(Protocol *p);
/* Every message eager, no overhead, whole messages: the protocol layer
 * adds nothing to the schedules' messages. */
void protocol_init_eager(Protocol *p);
/* Whether p is protocol_init_eager's (nothing for the layer to do). */
bool protocol_is_eager(const Protocol *p);
/* Both ends' control queue set to q. */
static inline void protocol_set_control_queue(Protocol *p, uint64_t q)
{
    p->control_queue[PROTOCOL_FROM_LOWER] = p->control_queue[PROTOCOL_FROM_HIGHER] = q;
}
/* The control queue of a control message rank `from` sends to rank `to`. */
static inline uint64_t protocol_control_queue(const Protocol *p, int64_t from, int64_t to)
{
    return p->control_queue[from > to ? PROTOCOL_FROM_HIGHER : PROTOCOL_FROM_LOWER];
}
/* Bytes of a rendezvous message of `bytes` that travel with its
 * request-to-send (rtt with rts_payload eager: the largest eager message's
 * worth, at most all of it), 0 otherwise. */
static inline uint64_t protocol_rts_bytes(const Protocol *p, uint64_t bytes)
{
    if (p->handshake != PROTOCOL_HANDSHAKE_RTT || p->rts_payload != PROTOCOL_RTS_EAGER || p->eager_limit == 0)
        return 0;
    return bytes < p->eager_limit - 1 ? bytes : p->eager_limit - 1;
}
/* Whether a message of `bytes` bytes waits for its receive. */
static inline bool protocol_rendezvous(const Protocol *p, uint64_t bytes)
{
    return p->eager_limit != PROTOCOL_INF && bytes >= p->eager_limit;
}

/* The key table: one row per setting, in the order of the YAML mapping,
 * of protocol_format's output and of `arsim collective --help`. A row is
 *
 *   OPT(ID, FLAG, VALUE, UNIT, DEFAULT, HELP, ...)  a setting with a command-line option
 *   CHOICE(ID, FLAG, NAME0, NAME1, HELP, ...)        a two-valued one: NAME0 is 0, the default
 *   KEY(...)                                          a YAML key with no option of its own
 *
 * ID names the setting's PROTOCOL_SET_ bit (below). FLAG is its option
 * without "--" (its YAML key with '-' for '_'); VALUE, UNIT, DEFAULT and
 * HELP are what --help, the man page and the completion say of it: the
 * value's placeholder, how a value is written, the default in words, what
 * it does (a CHOICE's placeholder, words and default are its names). `...`
 * is the rest of the row of protocol.c's ProtocolKey (the YAML key, how the
 * value is written and stored, the field, the messages), read there only.
 * protocol.c builds the reader's, writer's and parser's table from it,
 * cli/cmdcoll.c the option rows of `arsim collective`. */
#define PROTOCOL_KEYS(OPT, CHOICE, KEY)                                                                              \
    OPT(EAGER_LIMIT, "eager-limit", "SIZE|inf", "a size: 65536, 64KiB; inf: every message eager", "64KiB",          \
        "messages of fewer bytes leave at once; larger ones wait for their receive (rendezvous)",                    \
        .key = "eager_limit", .kind = KEY_SIZE_INF, FIELD(eager_limit), .always = true, .expected = "a size or inf", \
        .bad = "not an eager limit; expected a size such as 64KiB (messages below it are eager) or inf")             \
    CHOICE(HANDSHAKE, "handshake", "none", "rtt",                                                                    \
           "what a rendezvous message waits for: none (the posted receive) or rtt (request- and clear-to-send)",     \
           .key = "handshake", FIELD(handshake), .always = true, .expected = "none or rtt", .bad = "handshake",      \
           .choices = "none (data leaves when the receive is posted) or rtt (request-to-send, clear-to-send)")       \
    OPT(OVERHEAD, "overhead", "TIME", "a time: 0, 2us, 1.5ms", "0",                                                  \
        "CPU time per message on the sending and on the receiving rank (LogGP's o)",                                 \
        .key = "overhead", .kind = KEY_TIME, FIELD(overhead_s), .always = true, .expected = "a time such as 5us")    \
    OPT(SEGMENT, "segment", "SIZE|none", "a size: 1MiB; none: whole messages", "none",                               \
        "cut each step's message into pipelined pieces of SIZE, or none",                                            \
        .key = "segment", .kind = KEY_SEGMENT, FIELD(segment_bytes), .always = true, .expected = "a size or none")   \
    OPT(CONTROL_QUEUE, "control-queue", "SIZE|inf[,SIZE|inf]",                                                       \
        "a size: 256KiB; inf: all of its connection's data; 0,512KiB: the lower's, the higher's", "inf",            \
        "under handshake rtt, a request- or clear-to-send waits on each link behind at most SIZE of its "            \
        "connection's queued data (the transport's buffer), or inf: behind all of it; other connections' data it "  \
        "passes; LOWER,HIGHER: one for the control messages the pair's lower rank sends, one for the higher's",      \
        .key = "control_queue", .kind = KEY_QUEUES, FIELD(control_queue), .expected = "a size or inf",              \
        .bad = CONTROL_QUEUE_BAD)                                                                                    \
    KEY(.key = "control_queue_from_lower", .bit = PROTOCOL_SET_CONTROL_QUEUE, .kind = KEY_QUEUE_END,                \
        FIELD(control_queue[PROTOCOL_FROM_LOWER]), .expected = "a size or inf", .bad = CONTROL_QUEUE_BAD)           \
    KEY(.key = "control_queue_from_higher", .bit = PROTOCOL_SET_CONTROL_QUEUE, .kind = KEY_QUEUE_END,               \
        FIELD(control_queue[PROTOCOL_FROM_HIGHER]), .expected = "a size or inf", .bad = CONTROL_QUEUE_BAD)          \
    OPT(HOST_QUEUE, "host-queue", "SIZE|inf", "a size: 256KiB; 0: passes it; inf: all of it", "0",                   \
        "a control message also waits on each link behind at most SIZE of the other connections' queued data "      \
        "(one FIFO for every socket: the host's shaper), or inf: behind all of it",                                  \
        .key = "host_queue", .kind = KEY_SIZE_INF, FIELD(host_queue), .expected = "a size or inf",                  \
        .bad = "not a host queue; expected a size such as 256KiB (the other connections' queued data a control "    \
               "message waits behind at most; 0: none) or inf")                                                      \
    CHOICE(DUPLEX, "duplex", "full", "half",                                                                         \
           "full: a connection's two directions carry data at once; half: a rendezvous message waits until the "    \
           "rendezvous data in flight the other way between its two hosts has arrived",                              \
           .key = "duplex", FIELD(duplex), .expected = "full or half", .bad = "duplex",                              \
           .choices = "full (both directions at once) or half (rendezvous data one direction at a time)")            \
    CHOICE(RTS_PAYLOAD, "rts-payload", "none", "eager",                                                              \
           "under handshake rtt, what a request-to-send carries: none, or eager: the message's first eager-limit "  \
           "- 1 bytes, the rest waiting for the clear-to-send (Open MPI)",                                           \
           .key = "rts_payload", FIELD(rts_payload), .expected = "none or eager", .bad = "request-to-send payload",  \
           .choices = "none (no data) or eager (the message's first eager_limit - 1 bytes)",                          \
           .cli_choices = "none (no data) or eager (the message's first eager-limit - 1 bytes)")                      \
    CHOICE(ACK, "ack", "none", "rtt",                                                                                \
           "none, or rtt: a rendezvous message completes only after the receiver's acknowledgement reached the "    \
           "sender (its send) and the sender's confirmation came back (its receive; UCX's put rendezvous, MPICH)",   \
           .key = "ack", FIELD(ack), .expected = "none or rtt", .bad = "ack",                                        \
           .choices = "none (a rendezvous message completes when its data arrived) or rtt (an acknowledgement and a " \
                      "confirmation cross after it)")                                                                \
    CHOICE(PROGRESS, "progress", "always", "in_mpi",                                                                 \
           "always: a rank handles a control message when it arrives; in_mpi: only while inside MPI, one that "      \
           "arrives during a reduction or an overhead after the rank's next posts (MPI without a progress thread)",  \
           .key = "progress", FIELD(progress), .expected = "always or in_mpi", .bad = "progress",                    \
           .choices = "always (control messages handled when they arrive) or in_mpi (only while the rank is inside " \
                      "MPI)")

/* The bits of a mask of settings (protocol_apply): PROTOCOL_SET_ID for
 * each OPT and CHOICE row, bit i for the table's i-th (both ends' control
 * queues are one). */
#define PROTOCOL_ROW_INDEX_(id, ...) PROTOCOL_INDEX_##id,
#define PROTOCOL_BIT_(id, ...) PROTOCOL_SET_##id = 1u << PROTOCOL_INDEX_##id,
#define PROTOCOL_NO_BIT_(...)
enum { PROTOCOL_KEYS(PROTOCOL_ROW_INDEX_, PROTOCOL_ROW_INDEX_, PROTOCOL_NO_BIT_) PROTOCOL_NBITS };
enum { PROTOCOL_KEYS(PROTOCOL_BIT_, PROTOCOL_BIT_, PROTOCOL_NO_BIT_) };

/* A command-line option of a setting: flag is its key with '-' for '_'
 * ("eager-limit"; control-queue takes "Q" or "Q_LOWER,Q_HIGHER"). Parses
 * value into *given and adds the setting's bit to *mask. false and *err
 * "--flag: what is wrong; what is expected" (g_free). */
bool protocol_parse_option(const char *flag, const char *value, Protocol *given, unsigned *mask, char **err);
/* Copies into dst the settings of given whose bits are in mask. */
void protocol_apply(Protocol *dst, const Protocol *given, unsigned mask);

/* The command line's "Q" (both ends) or "Q_LOWER,Q_HIGHER" (each "SIZE" or
 * "inf") into out[PROTOCOL_FROM_LOWER], out[PROTOCOL_FROM_HIGHER]. false
 * and *why (static text "what is wrong; what is expected"). */
bool protocol_parse_control_queues(const char *s, uint64_t out[2], const char **why);

/* Reads a protocol mapping into *p (keys absent keep *p's values). false
 * and *err "file:line:col: what is wrong; what is expected". */
bool protocol_read(CfgNode *map, Protocol *p, char **err);

/* The YAML flow mapping protocol_read reads back (overhead to 9 digits), e.g.
 * "{eager_limit: 65536, handshake: none, overhead: 0s, segment: none}"
 * (g_free). */
char *protocol_format(const Protocol *p);

#endif
