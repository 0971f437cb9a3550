/* SPDX-License-Identifier: MIT */
/* Serialising what crosses a process boundary: a growable byte buffer with
 * fixed-width little-endian fields and length-prefixed strings (u32 length,
 * the bytes, a NUL; 0xffffffff for NULL), a bounds-checked reader, and the
 * encodings of st_event and st_case_result that an
 * isolated child sends its parent. Frames on a byte stream are
 * `u32 length | u8 type | payload`. Both ends are the same build, so the
 * format carries no version. */
#ifndef SCENETEST_HARNESS_WIRE_H
#define SCENETEST_HARNESS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/run.h>

/* A growing output buffer. A failed allocation sets oom and later writes
 * are dropped, so a writer checks once at the end. Owned by its user; free
 * with st__wbuf_free. */
typedef struct st__wbuf {
  char *data;
  size_t len;
  size_t cap;
  int oom;
} st__wbuf;

void st__wbuf_init(st__wbuf *b /* OUT */);
void st__wbuf_free(st__wbuf *b /* IN/OUT */);
/* Writes what b holds to fd (all of it, or nothing more on an error: the
 * frames are lost) and empties b; a buffer that ran out of memory is
 * emptied unwritten. Not thread-safe: callers hold their lock. */
void st__wbuf_drain(st__wbuf *b /* IN/OUT */, int fd);
void st__wbuf_bytes(st__wbuf *b /* IN/OUT */, const void *p /* IN */, size_t n);
void st__wbuf_u8(st__wbuf *b /* IN/OUT */, uint8_t v);
void st__wbuf_u32(st__wbuf *b /* IN/OUT */, uint32_t v);
void st__wbuf_u64(st__wbuf *b /* IN/OUT */, uint64_t v);
void st__wbuf_i32(st__wbuf *b /* IN/OUT */, int32_t v);
/* A string or NULL (length 0xffffffff). */
void st__wbuf_str(st__wbuf *b /* IN/OUT */,
                  const char *s /* IN, may be NULL */);

/* Reads fields out of p[0..len). Reading past the end, or a malformed
 * string, sets bad and returns zeroes/NULL from then on. */
typedef struct st__rbuf {
  const char *p;
  size_t len;
  size_t off;
  int bad;
} st__rbuf;

void st__rbuf_init(st__rbuf *r /* OUT */, const void *p /* IN */, size_t len);
uint8_t st__rbuf_u8(st__rbuf *r /* IN/OUT */);
uint32_t st__rbuf_u32(st__rbuf *r /* IN/OUT */);
uint64_t st__rbuf_u64(st__rbuf *r /* IN/OUT */);
int32_t st__rbuf_i32(st__rbuf *r /* IN/OUT */);
/* A malloc'd copy (caller frees) or NULL (a NULL string, or bad). */
char *st__rbuf_str(st__rbuf *r /* IN/OUT */);
/* The same string in place (strings are written with their NUL): valid as
 * long as the buffer, or NULL. */
const char *st__rbuf_strview(st__rbuf *r /* IN/OUT */);
/* A pointer into the buffer at the next n bytes, or NULL. */
const void *st__rbuf_bytes(st__rbuf *r /* IN/OUT */, size_t n);

/* One event, and its reverse: appends the decoded event to res. */
void st__wire_put_event(st__wbuf *b /* IN/OUT */, const st_event *ev /* IN */);
st_status st__wire_get_event(st__rbuf *r /* IN/OUT */,
                             st_case_result *res /* IN/OUT */) ST_WUR;
/* A whole case result (identity, verdict, output, events). */
void st__wire_put_result(st__wbuf *b /* IN/OUT */,
                         const st_case_result *res /* IN */);
/* A new result (caller frees) or NULL when malformed / out of memory. */
st_case_result *st__wire_get_result(st__rbuf *r /* IN/OUT */);

/* Appends a frame header for a payload of len bytes and type. */
void st__wire_frame(st__wbuf *out /* OUT */, uint8_t type,
                    const st__wbuf *payload /* IN */);
/* A frame encoded in place: st__wire_frame_open appends its header and
 * returns where it is; st__wire_frame_close patches its length once the
 * payload is there. */
size_t st__wire_frame_open(st__wbuf *b /* IN/OUT */, uint8_t type);
void st__wire_frame_close(st__wbuf *b /* IN/OUT */, size_t at);
/* A frame of one event (st__wire_put_event), and one of a line (u32
 * length, the bytes): what a child sends as phases end and log lines
 * come. Not thread-safe: callers hold their lock. */
void st__wire_event_frame(st__wbuf *b /* IN/OUT */, uint8_t type,
                          const st_event *ev /* IN */);
void st__wire_line_frame(st__wbuf *b /* IN/OUT */, uint8_t type,
                         const char *line /* IN */, size_t len);
/* Takes the first complete frame off the front of buf (len bytes):
 * returns 1 and sets *type, *payload, *plen, *used; 0 if incomplete. */
int st__wire_next_frame(const char *buf /* IN */, size_t len,
                        uint8_t *type /* OUT */, const char **payload /* OUT */,
                        size_t *plen /* OUT */, size_t *used /* OUT */);

#endif
