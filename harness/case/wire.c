/* SPDX-License-Identifier: MIT */
/* The byte encodings of wire.h: buffers, readers, events, case results
 * and frames, used by isolation (harness/isolate.c) to carry a child's
 * result to its parent. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/proc.h"
#include "case/result.h"
#include "case/wire.h"

#define NULL_STR 0xffffffffu

void st__wbuf_init(st__wbuf *b) { memset(b, 0, sizeof *b); }

void st__wbuf_free(st__wbuf *b) {
  if (b == NULL)
    return;
  free(b->data);
  memset(b, 0, sizeof *b);
}

void st__wbuf_drain(st__wbuf *b, int fd) {
  /* A failed write (no space) loses the frames: the reader then knows
   * less of the case (a child that ended without its result). */
  if (!b->oom && b->len > 0 &&
      st__proc_write_all(fd, b->data, b->len) != ST_OK) {
  }
  b->len = 0;
}

void st__wbuf_bytes(st__wbuf *b, const void *p, size_t n) {
  if (b->oom || n == 0)
    return;
  if (n <= b->cap - b->len) {
    /* The common case, a field into room already there: no call out. */
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return;
  }
  /* The growth is base/buf.c's (one growable buffer in the project); the
   * wire keeps its sticky oom flag on top, so a writer checks once. */
  st__buf view = {b->data, b->len, b->cap, SIZE_MAX};
  if (st__buf_add(&view, p, n) != ST_OK) {
    b->oom = 1;
    return;
  }
  b->data = view.data;
  b->len = view.len;
  b->cap = view.cap;
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

/* Room for n more bytes at the end of b, counted as written: where to
 * write them, or NULL (b is then oom). */
static char *wbuf_room(st__wbuf *b, size_t n) {
  char *p;
  if (b->oom)
    return NULL;
  if (n > b->cap - b->len) {
    st__buf view = {b->data, b->len, b->cap, SIZE_MAX};
    if (st__buf_reserve(&view, n) != ST_OK) {
      b->oom = 1;
      return NULL;
    }
    b->data = view.data;
    b->cap = view.cap;
  }
  p = b->data + b->len;
  b->len += n;
  return p;
}

static char *put32(char *p, uint32_t v) {
  uint32_t le = htole32(v);
  memcpy(p, &le, 4);
  return p + 4;
}

static char *put64(char *p, uint64_t v) {
  p = put32(p, (uint32_t)v);
  return put32(p, (uint32_t)(v >> 32));
}

/* The encoded size of a string (st__wbuf_str's), its length in *n. */
static size_t str_size(const char *s, size_t *n) {
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
static char *put_str(char *p, const char *s, size_t n) {
  p = put32(p, (uint32_t)n);
  if (n == NULL_STR)
    return p;
  memcpy(p, s, n);
  p[n] = '\0';
  return p + n + 1;
}

void st__wbuf_str(st__wbuf *b, const char *s) {
  size_t n;
  char *p = wbuf_room(b, str_size(s, &n));
  if (p != NULL)
    (void)put_str(p, s, n);
}

/* Six of these a case, twice (the journal, the result): sized first and
 * written in one piece, the same bytes as field by field. */
void st__wire_put_event(st__wbuf *b, const st_event *ev) {
  size_t i, ln, lo, lp, total;
  char *p;
  total = str_size(ev->name, &ln) + str_size(ev->object, &lo) +
          str_size(ev->phase, &lp) + 4 + 8 + 8 + 4 + 4 + 4 + 8 + 8;
  for (i = 0; i < ev->n_loaded; i++) {
    size_t n;
    total += str_size(ev->loaded[i], &n);
  }
  if ((p = wbuf_room(b, total)) == NULL)
    return;
  p = put_str(p, ev->name, ln);
  p = put32(p, (uint32_t)ev->round);
  p = put64(p, ev->start_ns);
  p = put64(p, ev->dur_ns);
  p = put32(p, (uint32_t)(int32_t)ev->status);
  p = put32(p, (uint32_t)ev->n_loaded);
  for (i = 0; i < ev->n_loaded; i++) {
    size_t n;
    (void)str_size(ev->loaded[i], &n);
    p = put_str(p, ev->loaded[i], n);
  }
  p = put_str(p, ev->object, lo);
  p = put_str(p, ev->phase, lp);
  p = put32(p, (uint32_t)ev->emitted);
  p = put64(p, ev->device_ns);
  (void)put64(p, ev->copy_ns);
}

/* Decoded in place (strings point into r's buffer; add_event copies them):
 * no allocation but the event's own, and the loaded list's when there is
 * one. */
st_status st__wire_get_event(st__rbuf *r, st_case_result *res) {
  st_event ev;
  const char **loaded = NULL;
  const char *name, *object = NULL, *phase = NULL;
  uint32_t n, i;
  st_status s = ST_EINVAL;

  memset(&ev, 0, sizeof ev);
  name = st__rbuf_strview(r);
  ev.round = st__rbuf_i32(r);
  ev.start_ns = st__rbuf_u64(r);
  ev.dur_ns = st__rbuf_u64(r);
  ev.status = (st_phase_status)st__rbuf_i32(r);
  n = st__rbuf_u32(r);
  /* Each string takes at least 4 bytes: a count beyond that is corrupt. */
  if (r->bad || name == NULL || n > (r->len - r->off) / 4)
    goto out;
  if (n > 0) {
    loaded = calloc(n, sizeof *loaded);
    if (loaded == NULL)
      goto out;
  }
  for (i = 0; i < n; i++)
    loaded[i] = st__rbuf_strview(r);
  object = st__rbuf_strview(r);
  phase = st__rbuf_strview(r);
  ev.emitted = st__rbuf_i32(r);
  ev.device_ns = st__rbuf_u64(r);
  ev.copy_ns = st__rbuf_u64(r);
  if (r->bad)
    goto out;
  for (i = 0; i < n; i++)
    if (loaded[i] == NULL)
      goto out;
  ev.name = name;
  ev.loaded = loaded;
  ev.n_loaded = n;
  ev.object = object;
  ev.phase = phase;
  s = st__case_result_add_event(res, &ev);
out:
  free(loaded);
  return s;
}

void st__wire_put_result(st__wbuf *b, const st_case_result *res) {
  size_t i, n = st_case_result_event_count(res), l[9], total;
  const char *s[9];
  char *p;
  s[0] = st_case_result_scene(res);
  s[1] = st_case_result_case(res);
  s[2] = st_case_result_file(res);
  s[3] = st_case_result_platform(res);
  s[4] = st_case_result_message(res);
  s[5] = st_case_result_output(res);
  s[6] = st__case_result_record(res);
  s[7] = st__case_result_warnings(res);
  s[8] = st__case_result_mistrust(res);
  /* Sized first and written in one piece, as st__wire_put_event is. */
  total = 4 + 8 + 4 + 8 + 8 + 4 + 4;
  for (i = 0; i < 9; i++)
    total += str_size(s[i], &l[i]);
  if ((p = wbuf_room(b, total)) == NULL)
    return;
  p = put_str(p, s[0], l[0]);
  p = put_str(p, s[1], l[1]);
  p = put_str(p, s[2], l[2]);
  p = put32(p, (uint32_t)st_case_result_line(res));
  p = put_str(p, s[3], l[3]);
  p = put64(p, st_case_result_seed(res));
  p = put32(p, (uint32_t)(int32_t)st_case_result_status(res));
  p = put_str(p, s[4], l[4]);
  p = put_str(p, s[5], l[5]);
  p = put64(p, st_case_result_duration_ns(res));
  p = put64(p, (uint64_t)st_case_result_pid(res));
  p = put32(p, (uint32_t)st_case_result_record_stale(res));
  p = put_str(p, s[6], l[6]);
  p = put_str(p, s[7], l[7]);
  p = put_str(p, s[8], l[8]);
  (void)put32(p, (uint32_t)n);
  for (i = 0; i < n; i++)
    st__wire_put_event(b, st_case_result_event(res, i));
}

st_case_result *st__wire_get_result(st__rbuf *r) {
  const char *scene = st__rbuf_strview(r), *kase = st__rbuf_strview(r);
  const char *file = st__rbuf_strview(r);
  int line = st__rbuf_i32(r);
  const char *platform = st__rbuf_strview(r);
  uint64_t seed = st__rbuf_u64(r);
  st_case_status status = (st_case_status)st__rbuf_i32(r);
  const char *message = st__rbuf_strview(r), *output = st__rbuf_strview(r);
  uint64_t duration = st__rbuf_u64(r);
  long pid = (long)st__rbuf_u64(r);
  int stale = st__rbuf_i32(r);
  const char *record = st__rbuf_strview(r);
  const char *warnings = st__rbuf_strview(r);
  const char *mistrust = st__rbuf_strview(r);
  uint32_t n = st__rbuf_u32(r), i;
  st_case_result *res = NULL;

  if (r->bad)
    return NULL;
  res = st__case_result_new(scene, kase, file, line, platform, seed);
  if (res == NULL)
    return NULL;
  if (message != NULL)
    st__case_result_set_status(res, status, "%s", message);
  else
    st__case_result_set_status(res, status, NULL);
  if (output != NULL)
    st__case_result_set_output(res, output, strlen(output));
  st__case_result_set_duration(res, duration);
  st__case_result_set_pid(res, pid);
  st__case_result_set_record_stale(res, stale);
  st__case_result_set_record(res, record);
  st__case_result_set_trust(res, warnings, mistrust);
  for (i = 0; i < n; i++)
    if (st__wire_get_event(r, res) != ST_OK) {
      st_case_result_free(res);
      res = NULL;
      break;
    }
  return res;
}

void st__wire_frame(st__wbuf *out, uint8_t type, const st__wbuf *payload) {
  st__wbuf_u32(out, (uint32_t)payload->len);
  st__wbuf_u8(out, type);
  st__wbuf_bytes(out, payload->data, payload->len);
}

size_t st__wire_frame_open(st__wbuf *b, uint8_t type) {
  size_t at = b->len;
  char *p = wbuf_room(b, 5);
  if (p != NULL) {
    memset(p, 0, 4);
    p[4] = (char)type;
  }
  return at;
}

void st__wire_frame_close(st__wbuf *b, size_t at) {
  size_t n = b->len - at - 5, i;
  if (b->oom)
    return;
  for (i = 0; i < 4; i++)
    b->data[at + i] = (char)(unsigned char)((uint32_t)n >> (8 * i));
}

void st__wire_event_frame(st__wbuf *b, uint8_t type, const st_event *ev) {
  size_t at = st__wire_frame_open(b, type);
  st__wire_put_event(b, ev);
  st__wire_frame_close(b, at);
}

void st__wire_line_frame(st__wbuf *b, uint8_t type, const char *line,
                         size_t len) {
  size_t at = st__wire_frame_open(b, type);
  st__wbuf_u32(b, (uint32_t)len);
  st__wbuf_bytes(b, line, len);
  st__wire_frame_close(b, at);
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
