/* SPDX-License-Identifier: MIT */
/* The framing every child protocol uses
 * (docs/reliability.md#the-process-model): a growable output buffer with
 * fixed-width little-endian fields and length-prefixed strings (u32 length, the
 * bytes, a NUL; 0xffffffff for NULL), a bounds-checked reader, and frames on a
 * byte stream, `u32 length | u8 type | payload`, the type one of wire/msg.h's.
 * Both ends are the same build, so the format carries no version. What a
 * supervised child writes also goes in an envelope (wire/envelope.h).
 * Thread-safety: one thread per buffer or reader. */
#ifndef SCENETEST_HARNESS_WIRE_FRAME_H
#define SCENETEST_HARNESS_WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/common.h>

#include "base/buf.h"

/* A growing output buffer: base/buf.h's st__buf (no cap) with a sticky
 * out-of-memory flag. A failed allocation sets oom and later writes are
 * dropped, so a writer checks once at the end. Owned by its user; free
 * with st__wbuf_free. */
typedef struct st__wbuf {
  st__buf buf;
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
/* Room for n more bytes at the end of b, counted as written: where to
 * write them, or NULL (b is then oom). For encoders that size a record
 * first and write it in one piece with the st__wire_put* below. */
char *st__wbuf_room(st__wbuf *b /* IN/OUT */, size_t n);

/* Writing into room st__wbuf_room gave: each returns the byte after what
 * it wrote. st__wire_str_size is a string's encoded size, its length in
 * *n for st__wire_put_str. */
char *st__wire_put32(char *p /* OUT */, uint32_t v);
char *st__wire_put64(char *p /* OUT */, uint64_t v);
size_t st__wire_str_size(const char *s /* IN, may be NULL */,
                         size_t *n /* OUT */);
char *st__wire_put_str(char *p /* OUT */, const char *s /* IN */, size_t n);

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

/* A frame encoded in place: st__wire_frame_open appends its header and
 * returns where it is; st__wire_frame_close patches its length once the
 * payload is there. */
size_t st__wire_frame_open(st__wbuf *b /* IN/OUT */, uint8_t type);
void st__wire_frame_close(st__wbuf *b /* IN/OUT */, size_t at);
/* Takes the first complete frame off the front of buf (len bytes):
 * returns 1 and sets *type, *payload, *plen, *used; 0 if incomplete. */
int st__wire_next_frame(const char *buf /* IN */, size_t len,
                        uint8_t *type /* OUT */, const char **payload /* OUT */,
                        size_t *plen /* OUT */, size_t *used /* OUT */);

#endif
