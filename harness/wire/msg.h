/* SPDX-License-Identifier: MIT */
/* Every message a process of the harness sends another
 * (docs/reliability.md#the-process-model), in one enum, and an encoder
 * and a decoder for each message that needs nothing above this layer. The
 * case result and its events are encoded by case/wire.h (they are the
 * case's types); level 3's MAP, which lays out a case's tensors, by
 * case/level3/map_msg.h. Every decoder is bounds-checked: a truncated, an
 * oversized or a wrong-typed message is refused (-1), never read past.
 *
 * Who sends what:
 *   a case child (isolate's result file; supervise's socket and journal):
 *     ST__MSG_EVENT, ST__MSG_LOG, ST__MSG_RESULT, ST__MSG_BEGIN, as frames
 *     (wire/frame.h), a supervised child's writes in an envelope
 *     (wire/envelope.h);
 *   the plugin probe (cli/probe.c) to the CLI: ST__MSG_PROBE_*, as frames;
 *   the level-3 pool to its workers and back (case/level3/workers.c):
 *     ST__MSG_L3_*, one datagram each, starting with its type as a u32;
 *   the zygote (run/zygote.c) and the scheduler: ST__MSG_ZYGOTE_*, fixed
 *     size, encoded without allocating (a zygote allocates nothing).
 * The supervisor's case indices to its child are bare u32s on their own
 * socket (st__msg_put_case). Thread-safety: any thread, one
 * per buffer. */
#ifndef SCENETEST_HARNESS_WIRE_MSG_H
#define SCENETEST_HARNESS_WIRE_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

typedef enum st__msg {
  ST__MSG_EVENT = 1,        /* case child: one event (st__wire_put_event) */
  ST__MSG_LOG = 2,          /* case child: one log line (u32 length, bytes) */
  ST__MSG_RESULT = 3,       /* case child: u32 case index, the result (with the
                               bench's figures of the case, if any) */
  ST__MSG_BEGIN = 4,        /* supervised child, live runs: u32 case index */
  ST__MSG_PROBE_BEGIN = 16, /* u32 plugin index: loading it now */
  ST__MSG_PROBE_ERROR = 17, /* string: the load's message */
  ST__MSG_PROBE_PROVIDES = 18, /* string: platforms and backends */
  ST__MSG_PROBE_OPS = 19,      /* string: every op pattern registered */
  ST__MSG_PROBE_DONE = 20,     /* empty */
  ST__MSG_L3_MAP = 32,         /* pool -> worker: a case's layout */
  ST__MSG_L3_RUN = 33,         /* pool -> worker: st__msg_l3_run */
  ST__MSG_L3_RELEASE = 34,     /* pool -> worker: empty */
  ST__MSG_L3_REPLY = 35,       /* worker -> pool: st__msg_l3_reply */
  ST__MSG_ZYGOTE_GO = 48,      /* scheduler -> spare: st__msg_zygote_go */
  ST__MSG_ZYGOTE_SPARE = 49,   /* zygote -> scheduler: a spare's pid */
} st__msg;

/* ---- frames of a case child, the probe -------------------------------- */

/* A line frame: u32 length, the bytes (ST__MSG_LOG). */
void st__msg_put_line(st__wbuf *b /* IN/OUT */, uint8_t type,
                      const char *line /* IN */, size_t len);
/* The line of a line frame's payload, in place; -1 when malformed. */
int st__msg_get_line(const char *payload /* IN */, size_t plen,
                     const char **line /* OUT */, size_t *len /* OUT */);
/* A frame of one u32 (ST__MSG_BEGIN, ST__MSG_PROBE_BEGIN): exactly 4
 * bytes, -1 otherwise. */
void st__msg_put_index(st__wbuf *b /* IN/OUT */, uint8_t type, uint32_t v);
int st__msg_get_index(const char *payload /* IN */, size_t plen,
                      uint32_t *v /* OUT */);
/* A frame of one string, or of nothing when s is NULL (ST__MSG_PROBE_*).
 * st__msg_get_text: the string in place, or NULL when malformed. */
void st__msg_put_text(st__wbuf *b /* IN/OUT */, uint8_t type,
                      const char *s /* IN, may be NULL */);
const char *st__msg_get_text(const char *payload /* IN */, size_t plen);

/* ---- the supervisor's case indices ----------------------------------- */

/* One case index as the supervisor sends it to its child: 4 bytes,
 * little-endian, no type (the socket carries nothing else). */
#define ST__MSG_CASE_SIZE 4u
void st__msg_put_case(unsigned char *p /* OUT: CASE_SIZE bytes */,
                      uint32_t index);
uint32_t st__msg_get_case(const unsigned char *p /* IN: CASE_SIZE bytes */);

/* ---- level 3 ---------------------------------------------------------- */

/* The largest datagram either side sends; the default AF_UNIX send
 * buffer (about 208 KiB) must hold it. */
#define ST__MSG_L3_MAX ((size_t)160 << 10)

/* The type of a level-3 datagram (its first u32), 0 when too short. */
uint32_t st__msg_l3_type(const char *p /* IN */, size_t len);

typedef struct st__msg_l3_run {
  uint32_t round; /* for diagnostics only */
  uint32_t shard_index, shard_count;
} st__msg_l3_run;
void st__msg_l3_run_put(st__wbuf *b /* IN/OUT */,
                        const st__msg_l3_run *m /* IN */);
int st__msg_l3_run_get(const char *p /* IN */, size_t len,
                       st__msg_l3_run *m /* OUT */);
void st__msg_l3_release_put(st__wbuf *b /* IN/OUT */);

/* A worker's reply. Decoded, message and loaded[i] are malloc'd (free
 * with st__msg_l3_reply_free); a reply cut after its message keeps what
 * came (loaded so far) and reports no device times (ST_NS_NONE). */
typedef struct st__msg_l3_reply {
  int32_t status;
  int32_t lookup; /* 1: the kernel's lookup failed */
  char *message;  /* decoded: may be NULL */
  char **loaded;
  size_t n_loaded;
  uint64_t device_ns, copy_ns;
} st__msg_l3_reply;
/* Writes the reply, with as many of loaded as fit in budget bytes (a
 * plugin that pulls in hundreds of libraries reports the ones that fit). */
void st__msg_l3_reply_put(st__wbuf *b /* IN/OUT */,
                          const st__msg_l3_reply *m /* IN */, size_t budget);
/* 0, or -1 when p is no reply (its type or its head); out of memory sets
 * *oom and keeps what was decoded. */
int st__msg_l3_reply_get(const char *p /* IN */, size_t len,
                         st__msg_l3_reply *m /* OUT */);
void st__msg_l3_reply_free(st__msg_l3_reply *m /* IN/OUT */);

/* ---- the zygote ------------------------------------------------------- */

/* Fixed-size messages, encoded into the caller's bytes. */
#define ST__MSG_ZYGOTE_GO_SIZE 20u
#define ST__MSG_ZYGOTE_SPARE_SIZE 12u
typedef struct st__msg_zygote_go {
  uint64_t index, slot; /* the case, the slot it runs in */
} st__msg_zygote_go;
typedef struct st__msg_zygote_spare {
  int32_t pid; /* > 0, or -1 */
  int32_t err; /* errno when pid is -1 */
} st__msg_zygote_spare;
void st__msg_zygote_go_put(unsigned char *p /* OUT: GO_SIZE bytes */,
                           const st__msg_zygote_go *m /* IN */);
int st__msg_zygote_go_get(const unsigned char *p /* IN */, size_t len,
                          st__msg_zygote_go *m /* OUT */);
void st__msg_zygote_spare_put(unsigned char *p /* OUT: SPARE_SIZE bytes */,
                              const st__msg_zygote_spare *m /* IN */);
int st__msg_zygote_spare_get(const unsigned char *p /* IN */, size_t len,
                             st__msg_zygote_spare *m /* OUT */);

#endif
