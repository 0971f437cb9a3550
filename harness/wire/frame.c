/* SPDX-License-Identifier: MIT */
/* The framing of wire/frame.h: the output buffer on st__buf, the
 * bounds-checked reader, frames. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "base/proc.h"
#include "wire/frame.h"

#define NULL_STR 0xffffffffu

void st__wbuf_init(st__wbuf *b) {
  st__buf_init(&b->buf, SIZE_MAX);
  b->oom = 0;
}

void st__wbuf_free(st__wbuf *b) {
  if (b == NULL)
    return;
  st__buf_free(&b->buf);
  b->oom = 0;
}

void st__wbuf_drain(st__wbuf *b, int fd) {
  /* A failed write (no space) loses the frames: the reader then knows
   * less of the case (a child that ended without its result). */
  if (!b->oom && b->buf.len > 0 &&
      st__proc_write_all(fd, b->buf.data, b->buf.len) != ST_OK) {
  }
  b->buf.len = 0;
}

void st__wbuf_bytes(st__wbuf *b, const void *p, size_t n) {
  if (b->oom || n == 0)
    return;
  if (n <= b->buf.cap - b->buf.len) {
    /* The common case, a field into room already there: no call out. */
    memcpy(b->buf.data + b->buf.len, p, n);
    b->buf.len += n;
    return;
  }
  if (st__buf_add(&b->buf, p, n) != ST_OK)
    b->oom = 1;
}

void st__wbuf_u8(st__wbuf *b, uint8_t v) { st__wbuf_bytes(b, &v, 1); }

void st__wbuf_u32(st__wbuf *b, uint32_t v) {
  uint32_t le = htole32(v); /* little-endian on every host */
  st__wbuf_bytes(b, &le, 4);
}

void st__wbuf_u64(st__wbuf *b, uint64_t v) {
  st__wbuf_u32(b, (uint32_t)v);
  st__wbuf_u32(b, (uint32_t)(v >> 32));
}

void st__wbuf_i32(st__wbuf *b, int32_t v) { st__wbuf_u32(b, (uint32_t)v); }

char *st__wbuf_room(st__wbuf *b, size_t n) {
  char *p;
  if (b->oom)
    return NULL;
  if (n > b->buf.cap - b->buf.len && st__buf_reserve(&b->buf, n) != ST_OK) {
    b->oom = 1;
    return NULL;
  }
  p = b->buf.data + b->buf.len;
  b->buf.len += n;
  return p;
}

char *st__wire_put32(char *p, uint32_t v) {
  uint32_t le = htole32(v);
  memcpy(p, &le, 4);
  return p + 4;
}

char *st__wire_put64(char *p, uint64_t v) {
  p = st__wire_put32(p, (uint32_t)v);
  return st__wire_put32(p, (uint32_t)(v >> 32));
}

size_t st__wire_str_size(const char *s, size_t *n) {
  if (s == NULL) {
    *n = NULL_STR;
    return 4;
  }
  *n = strlen(s);
  if (*n >= NULL_STR)
    *n = NULL_STR - 1;
  return 4 + *n + 1;
}

/* With its NUL, so that a reader can use it in place. */
char *st__wire_put_str(char *p, const char *s, size_t n) {
  p = st__wire_put32(p, (uint32_t)n);
  if (n == NULL_STR)
    return p;
  memcpy(p, s, n);
  p[n] = '\0';
  return p + n + 1;
}

void st__wbuf_str(st__wbuf *b, const char *s) {
  size_t n;
  char *p = st__wbuf_room(b, st__wire_str_size(s, &n));
  if (p != NULL)
    (void)st__wire_put_str(p, s, n);
}

void st__rbuf_init(st__rbuf *r, const void *p, size_t len) {
  r->p = p;
  r->len = len;
  r->off = 0;
  r->bad = 0;
}

const void *st__rbuf_bytes(st__rbuf *r, size_t n) {
  const void *p;
  if (r->bad || n > r->len - r->off) {
    r->bad = 1;
    return NULL;
  }
  p = r->p + r->off;
  r->off += n;
  return p;
}

uint8_t st__rbuf_u8(st__rbuf *r) {
  const unsigned char *p = st__rbuf_bytes(r, 1);
  return p ? p[0] : 0;
}

uint32_t st__rbuf_u32(st__rbuf *r) {
  const unsigned char *p = st__rbuf_bytes(r, 4);
  uint32_t v;
  if (p == NULL)
    return 0;
  memcpy(&v, p, 4);
  return le32toh(v);
}

uint64_t st__rbuf_u64(st__rbuf *r) {
  uint64_t lo = st__rbuf_u32(r);
  uint64_t hi = st__rbuf_u32(r);
  return lo | (hi << 32);
}

int32_t st__rbuf_i32(st__rbuf *r) { return (int32_t)st__rbuf_u32(r); }

const char *st__rbuf_strview(st__rbuf *r) {
  uint32_t n = st__rbuf_u32(r);
  const char *p;
  if (r->bad || n == NULL_STR)
    return NULL;
  p = st__rbuf_bytes(r, (size_t)n + 1);
  if (p == NULL || memchr(p, '\0', n) != NULL || p[n] != '\0') {
    r->bad = 1;
    return NULL;
  }
  return p;
}

char *st__rbuf_str(st__rbuf *r) {
  const char *p = st__rbuf_strview(r);
  size_t n;
  char *s;
  if (p == NULL)
    return NULL;
  n = strlen(p);
  s = malloc(n + 1);
  if (s == NULL) {
    r->bad = 1;
    return NULL;
  }
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

size_t st__wire_frame_open(st__wbuf *b, uint8_t type) {
  size_t at = b->buf.len;
  char *p = st__wbuf_room(b, 5);
  if (p != NULL) {
    memset(p, 0, 4);
    p[4] = (char)type;
  }
  return at;
}

void st__wire_frame_close(st__wbuf *b, size_t at) {
  size_t n = b->buf.len - at - 5, i;
  if (b->oom)
    return;
  for (i = 0; i < 4; i++)
    b->buf.data[at + i] = (char)(unsigned char)((uint32_t)n >> (8 * i));
}

int st__wire_next_frame(const char *buf, size_t len, uint8_t *type,
                        const char **payload, size_t *plen, size_t *used) {
  st__rbuf r;
  uint32_t n;
  if (len < 5)
    return 0;
  st__rbuf_init(&r, buf, len);
  n = st__rbuf_u32(&r);
  if ((size_t)n > len - 5)
    return 0;
  *type = st__rbuf_u8(&r);
  *payload = buf + 5;
  *plen = n;
  *used = 5 + (size_t)n;
  return 1;
}
