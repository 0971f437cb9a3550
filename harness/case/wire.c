/* SPDX-License-Identifier: MIT */
/* The byte encodings of a case's events and result (case/wire.h), on the
 * framing of wire/frame.h: what an isolated or a supervised child sends
 * its parent. */
#include <stdlib.h>
#include <string.h>

#include "case/result.h"
#include "case/wire.h"
#include "ops/ceiling.h"

/* Six of these a case, twice (the journal, the result): sized first and
 * written in one piece, the same bytes as field by field. */
void st__wire_put_event(st__wbuf *b, const st_event *ev) {
  size_t i, ln, lo, lp, total;
  char *p;
  total = st__wire_str_size(ev->name, &ln) +
          st__wire_str_size(ev->object, &lo) +
          st__wire_str_size(ev->phase, &lp) + 4 + 8 + 8 + 4 + 4 + 4 + 8 + 8;
  for (i = 0; i < ev->n_loaded; i++) {
    size_t n;
    total += st__wire_str_size(ev->loaded[i], &n);
  }
  if ((p = st__wbuf_room(b, total)) == NULL)
    return;
  p = st__wire_put_str(p, ev->name, ln);
  p = st__wire_put32(p, (uint32_t)ev->round);
  p = st__wire_put64(p, ev->start_ns);
  p = st__wire_put64(p, ev->dur_ns);
  p = st__wire_put32(p, (uint32_t)(int32_t)ev->status);
  p = st__wire_put32(p, (uint32_t)ev->n_loaded);
  for (i = 0; i < ev->n_loaded; i++) {
    size_t n;
    (void)st__wire_str_size(ev->loaded[i], &n);
    p = st__wire_put_str(p, ev->loaded[i], n);
  }
  p = st__wire_put_str(p, ev->object, lo);
  p = st__wire_put_str(p, ev->phase, lp);
  p = st__wire_put32(p, (uint32_t)ev->emitted);
  p = st__wire_put64(p, ev->device_ns);
  (void)st__wire_put64(p, ev->copy_ns);
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
    total += st__wire_str_size(s[i], &l[i]);
  if ((p = st__wbuf_room(b, total)) == NULL)
    return;
  p = st__wire_put_str(p, s[0], l[0]);
  p = st__wire_put_str(p, s[1], l[1]);
  p = st__wire_put_str(p, s[2], l[2]);
  p = st__wire_put32(p, (uint32_t)st_case_result_line(res));
  p = st__wire_put_str(p, s[3], l[3]);
  p = st__wire_put64(p, st_case_result_seed(res));
  p = st__wire_put32(p, (uint32_t)(int32_t)st_case_result_status(res));
  p = st__wire_put_str(p, s[4], l[4]);
  p = st__wire_put_str(p, s[5], l[5]);
  p = st__wire_put64(p, st_case_result_duration_ns(res));
  p = st__wire_put64(p, (uint64_t)st_case_result_pid(res));
  p = st__wire_put32(p, (uint32_t)st_case_result_record_stale(res));
  p = st__wire_put_str(p, s[6], l[6]);
  p = st__wire_put_str(p, s[7], l[7]);
  p = st__wire_put_str(p, s[8], l[8]);
  (void)st__wire_put32(p, (uint32_t)n);
  for (i = 0; i < n; i++)
    st__wire_put_event(b, st_case_result_event(res, i));
  st__wire_put_bench(b, st__case_result_bench(res));
}

static void put_f64(st__wbuf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  st__wbuf_u64(b, u);
}

static double get_f64(st__rbuf *r) {
  uint64_t u = st__rbuf_u64(r);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

void st__wire_put_bench(st__wbuf *b, const st__bench_measured *m) {
  st__wbuf_u32(b, m != NULL);
  if (m == NULL)
    return;
  st__wbuf_u64(b, m->stats.rounds);
  put_f64(b, m->stats.median);
  put_f64(b, m->stats.min);
  put_f64(b, m->stats.p10);
  put_f64(b, m->stats.p90);
  st__wbuf_u32(b, (uint32_t)m->device_time);
  st__wbuf_u32(b, (uint32_t)m->dclass);
  st__wbuf_u32(b, (uint32_t)m->has_flops);
  st__wbuf_u32(b, (uint32_t)m->has_bytes);
  put_f64(b, m->flops);
  put_f64(b, m->bytes);
}

/* The flags are 0 or 1 and the dtype class one of the table's: the CLI
 * indexes the ceilings with it. */
st_status st__wire_get_bench(st__rbuf *r, st_case_result *res) {
  st__bench_measured m;
  uint32_t has = st__rbuf_u32(r), dev, dclass, hf, hb;
  if (r->bad || has > 1)
    return ST_EINVAL;
  if (has == 0)
    return ST_OK;
  m.stats.rounds = st__rbuf_u64(r);
  m.stats.median = get_f64(r);
  m.stats.min = get_f64(r);
  m.stats.p10 = get_f64(r);
  m.stats.p90 = get_f64(r);
  dev = st__rbuf_u32(r);
  dclass = st__rbuf_u32(r);
  hf = st__rbuf_u32(r);
  hb = st__rbuf_u32(r);
  m.flops = get_f64(r);
  m.bytes = get_f64(r);
  if (r->bad || dev > 1 || dclass >= ST__DCLASS_COUNT || hf > 1 || hb > 1)
    return ST_EINVAL;
  m.device_time = (int)dev;
  m.dclass = (int)dclass;
  m.has_flops = (int)hf;
  m.has_bytes = (int)hb;
  return st__case_result_set_bench(res, &m);
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
      return NULL;
    }
  if (st__wire_get_bench(r, res) != ST_OK) {
    st_case_result_free(res);
    return NULL;
  }
  return res;
}

void st__wire_event_frame(st__wbuf *b, const st_event *ev) {
  size_t at = st__wire_frame_open(b, ST__MSG_EVENT);
  st__wire_put_event(b, ev);
  st__wire_frame_close(b, at);
}

void st__wire_result_frame(st__wbuf *b, uint32_t index,
                           const st_case_result *res) {
  size_t at = st__wire_frame_open(b, ST__MSG_RESULT);
  st__wbuf_u32(b, index);
  st__wire_put_result(b, res);
  st__wire_frame_close(b, at);
}

st_case_result *st__wire_get_result_frame(const char *payload, size_t plen,
                                          uint32_t *index) {
  st__rbuf rb;
  st_case_result *r;
  st__rbuf_init(&rb, payload, plen);
  *index = st__rbuf_u32(&rb);
  r = st__wire_get_result(&rb);
  return r;
}
