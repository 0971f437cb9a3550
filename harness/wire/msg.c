/* SPDX-License-Identifier: MIT */
/* The encoders and decoders of wire/msg.h. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/op.h>

#include "wire/msg.h"

void st__msg_put_line(st__wbuf *b, uint8_t type, const char *line, size_t len) {
  size_t at = st__wire_frame_open(b, type);
  st__wbuf_u32(b, (uint32_t)len);
  st__wbuf_bytes(b, line, len);
  st__wire_frame_close(b, at);
}

int st__msg_get_line(const char *payload, size_t plen, const char **line,
                     size_t *len) {
  st__rbuf rb;
  st__rbuf_init(&rb, payload, plen);
  *len = st__rbuf_u32(&rb);
  *line = st__rbuf_bytes(&rb, *len);
  return rb.bad ? -1 : 0;
}

void st__msg_put_index(st__wbuf *b, uint8_t type, uint32_t v) {
  size_t at = st__wire_frame_open(b, type);
  st__wbuf_u32(b, v);
  st__wire_frame_close(b, at);
}

int st__msg_get_index(const char *payload, size_t plen, uint32_t *v) {
  st__rbuf rb;
  if (plen != 4)
    return -1;
  st__rbuf_init(&rb, payload, plen);
  *v = st__rbuf_u32(&rb);
  return 0;
}

void st__msg_put_text(st__wbuf *b, uint8_t type, const char *s) {
  size_t at = st__wire_frame_open(b, type);
  if (s != NULL)
    st__wbuf_str(b, s);
  st__wire_frame_close(b, at);
}

const char *st__msg_get_text(const char *payload, size_t plen) {
  st__rbuf rb;
  st__rbuf_init(&rb, payload, plen);
  return st__rbuf_strview(&rb);
}

/* ---- level 3 ---------------------------------------------------------- */

uint32_t st__msg_l3_type(const char *p, size_t len) {
  st__rbuf rb;
  st__rbuf_init(&rb, p, len);
  return st__rbuf_u32(&rb);
}

void st__msg_l3_run_put(st__wbuf *b, const st__msg_l3_run *m) {
  st__wbuf_u32(b, ST__MSG_L3_RUN);
  st__wbuf_u32(b, m->round);
  st__wbuf_u32(b, m->shard_index);
  st__wbuf_u32(b, m->shard_count);
}

int st__msg_l3_run_get(const char *p, size_t len, st__msg_l3_run *m) {
  st__rbuf rb;
  st__rbuf_init(&rb, p, len);
  if (st__rbuf_u32(&rb) != ST__MSG_L3_RUN || len != 16)
    return -1;
  m->round = st__rbuf_u32(&rb);
  m->shard_index = st__rbuf_u32(&rb);
  m->shard_count = st__rbuf_u32(&rb);
  return 0;
}

void st__msg_l3_release_put(st__wbuf *b) {
  st__wbuf_u32(b, ST__MSG_L3_RELEASE);
}

void st__msg_l3_reply_put(st__wbuf *b, const st__msg_l3_reply *m,
                          size_t budget) {
  size_t i, used = 0, n = 0;
  st__wbuf_u32(b, ST__MSG_L3_REPLY);
  st__wbuf_i32(b, m->status);
  st__wbuf_i32(b, m->lookup);
  st__wbuf_str(b, m->message);
  for (i = 0; i < m->n_loaded; i++) {
    if (used + strlen(m->loaded[i]) + 4 > budget)
      break;
    used += strlen(m->loaded[i]) + 4;
    n++;
  }
  st__wbuf_u32(b, (uint32_t)n);
  for (i = 0; i < n; i++)
    st__wbuf_str(b, m->loaded[i]);
  st__wbuf_u64(b, m->device_ns);
  st__wbuf_u64(b, m->copy_ns);
}

int st__msg_l3_reply_get(const char *p, size_t len, st__msg_l3_reply *m) {
  st__rbuf rb;
  uint32_t k, nl;
  memset(m, 0, sizeof *m);
  m->device_ns = m->copy_ns = ST_NS_NONE;
  st__rbuf_init(&rb, p, len);
  if (st__rbuf_u32(&rb) != ST__MSG_L3_REPLY)
    return -1;
  m->status = st__rbuf_i32(&rb);
  m->lookup = st__rbuf_i32(&rb);
  m->message = st__rbuf_str(&rb);
  nl = st__rbuf_u32(&rb);
  /* Each path takes at least 4 bytes: a count beyond that is cut. */
  if (!rb.bad && nl > (rb.len - rb.off) / 4)
    nl = (uint32_t)((rb.len - rb.off) / 4);
  if (!rb.bad && nl > 0 && (m->loaded = calloc(nl, sizeof *m->loaded)) == NULL)
    nl = 0;
  for (k = 0; k < nl && !rb.bad; k++) {
    char *path = st__rbuf_str(&rb);
    if (path != NULL)
      m->loaded[m->n_loaded++] = path;
  }
  m->device_ns = st__rbuf_u64(&rb);
  m->copy_ns = st__rbuf_u64(&rb);
  if (rb.bad)
    m->device_ns = m->copy_ns = ST_NS_NONE;
  return 0;
}

void st__msg_l3_reply_free(st__msg_l3_reply *m) {
  size_t i;
  free(m->message);
  for (i = 0; i < m->n_loaded; i++)
    free(m->loaded[i]);
  free(m->loaded);
  memset(m, 0, sizeof *m);
}

/* ---- fixed-size messages ---------------------------------------------- */

static unsigned char *put32(unsigned char *p, uint32_t v) {
  uint32_t le = htole32(v);
  memcpy(p, &le, 4);
  return p + 4;
}

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return le32toh(v);
}

void st__msg_put_case(unsigned char *p, uint32_t index) {
  (void)put32(p, index);
}

uint32_t st__msg_get_case(const unsigned char *p) { return get32(p); }

static uint64_t get64(const unsigned char *p) {
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void st__msg_zygote_go_put(unsigned char *p, const st__msg_zygote_go *m) {
  p = put32(p, ST__MSG_ZYGOTE_GO);
  p = put32(p, (uint32_t)m->index);
  p = put32(p, (uint32_t)(m->index >> 32));
  p = put32(p, (uint32_t)m->slot);
  (void)put32(p, (uint32_t)(m->slot >> 32));
}

int st__msg_zygote_go_get(const unsigned char *p, size_t len,
                          st__msg_zygote_go *m) {
  if (len != ST__MSG_ZYGOTE_GO_SIZE || get32(p) != ST__MSG_ZYGOTE_GO)
    return -1;
  m->index = get64(p + 4);
  m->slot = get64(p + 12);
  return 0;
}

void st__msg_zygote_spare_put(unsigned char *p, const st__msg_zygote_spare *m) {
  p = put32(p, ST__MSG_ZYGOTE_SPARE);
  p = put32(p, (uint32_t)m->pid);
  (void)put32(p, (uint32_t)m->err);
}

int st__msg_zygote_spare_get(const unsigned char *p, size_t len,
                             st__msg_zygote_spare *m) {
  if (len != ST__MSG_ZYGOTE_SPARE_SIZE || get32(p) != ST__MSG_ZYGOTE_SPARE)
    return -1;
  m->pid = (int32_t)get32(p + 4);
  m->err = (int32_t)get32(p + 8);
  return 0;
}
