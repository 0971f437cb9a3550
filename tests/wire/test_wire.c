/* SPDX-License-Identifier: MIT */
/* The messages of wire/msg.h and the result frame of case/wire.h: each
 * encoder's output decodes to what was encoded; the same bytes cut short,
 * with bytes too many, or of another type are refused (or, for a result
 * frame, decode to nothing), never read past; and every message type is
 * one number of one enum. Level 3's MAP (case/level3/map_msg.h) too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <scenetest/op.h>

#include "case/level3/map_msg.h"
#include "case/result.h"
#include "case/wire.h"
#include "ops/ceiling.h"
#include "wire/frame.h"
#include "wire/msg.h"

/* The one frame at the front of b: its type and payload. */
static void one_frame(const st__wbuf *b, uint8_t *type, const char **payload,
                      size_t *plen) {
  size_t used;
  assert_false(b->oom);
  assert_int_equal(
      st__wire_next_frame(b->buf.data, b->buf.len, type, payload, plen, &used),
      1);
  assert_int_equal(used, b->buf.len);
}

static void st__msg__types_are_distinct(void **state) {
  static const int types[] = {
      ST__MSG_EVENT,          ST__MSG_LOG,         ST__MSG_RESULT,
      ST__MSG_BEGIN,          ST__MSG_PROBE_BEGIN, ST__MSG_PROBE_ERROR,
      ST__MSG_PROBE_PROVIDES, ST__MSG_PROBE_OPS,   ST__MSG_PROBE_DONE,
      ST__MSG_L3_MAP,         ST__MSG_L3_RUN,      ST__MSG_L3_RELEASE,
      ST__MSG_L3_REPLY,       ST__MSG_ZYGOTE_GO,   ST__MSG_ZYGOTE_SPARE};
  size_t i, j, n = sizeof types / sizeof types[0];
  (void)state;
  for (i = 0; i < n; i++) {
    /* A frame's type is a byte. */
    assert_true(types[i] > 0 && types[i] < 256);
    for (j = 0; j < i; j++)
      assert_int_not_equal(types[i], types[j]);
  }
}

static void st__msg_line__round_trip_and_truncated(void **state) {
  st__wbuf b;
  uint8_t type;
  const char *payload, *line;
  size_t plen, len;
  (void)state;
  st__wbuf_init(&b);
  st__msg_put_line(&b, ST__MSG_LOG, "a line\n", 7);
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_LOG);
  assert_int_equal(st__msg_get_line(payload, plen, &line, &len), 0);
  assert_int_equal(len, 7);
  assert_memory_equal(line, "a line\n", 7);
  /* Cut anywhere: the length announces more than is there. */
  for (size_t cut = 0; cut < plen; cut++)
    assert_int_equal(st__msg_get_line(payload, cut, &line, &len), -1);
  /* The frame itself, cut: not complete, so not taken. */
  for (size_t cut = 0; cut < b.buf.len; cut++) {
    size_t used;
    assert_int_equal(
        st__wire_next_frame(b.buf.data, cut, &type, &payload, &plen, &used), 0);
  }
  st__wbuf_free(&b);
}

static void st__msg_index__exactly_four_bytes(void **state) {
  st__wbuf b;
  uint8_t type;
  const char *payload;
  size_t plen;
  uint32_t v = 0;
  (void)state;
  st__wbuf_init(&b);
  st__msg_put_index(&b, ST__MSG_BEGIN, 0xfeedf00du);
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_BEGIN);
  assert_int_equal(plen, 4);
  assert_int_equal(st__msg_get_index(payload, plen, &v), 0);
  assert_int_equal(v, 0xfeedf00du);
  assert_int_equal(st__msg_get_index(payload, 3, &v), -1);
  /* Oversized: a u64 where a u32 belongs. */
  b.buf.len = 0;
  {
    size_t at = st__wire_frame_open(&b, ST__MSG_BEGIN);
    st__wbuf_u64(&b, 7);
    st__wire_frame_close(&b, at);
  }
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(st__msg_get_index(payload, plen, &v), -1);
  st__wbuf_free(&b);
}

static void st__msg_text__string_or_nothing(void **state) {
  st__wbuf b;
  uint8_t type;
  const char *payload;
  size_t plen;
  (void)state;
  st__wbuf_init(&b);
  st__msg_put_text(&b, ST__MSG_PROBE_OPS, "add\nmul\n");
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_PROBE_OPS);
  assert_string_equal(st__msg_get_text(payload, plen), "add\nmul\n");
  for (size_t cut = 0; cut < plen; cut++)
    assert_null(st__msg_get_text(payload, cut));
  b.buf.len = 0;
  st__msg_put_text(&b, ST__MSG_PROBE_DONE, NULL);
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_PROBE_DONE);
  assert_int_equal(plen, 0);
  assert_null(st__msg_get_text(payload, plen));
  st__wbuf_free(&b);
}

static void st__msg_l3_run__round_trip_wrong_type_and_sizes(void **state) {
  st__wbuf b;
  st__msg_l3_run in = {7, 2, 5}, out;
  char raw[32];
  (void)state;
  st__wbuf_init(&b);
  st__msg_l3_run_put(&b, &in);
  assert_int_equal(b.buf.len, 16);
  assert_int_equal(st__msg_l3_type(b.buf.data, b.buf.len), ST__MSG_L3_RUN);
  memset(&out, 0, sizeof out);
  assert_int_equal(st__msg_l3_run_get(b.buf.data, b.buf.len, &out), 0);
  assert_int_equal(out.round, 7);
  assert_int_equal(out.shard_index, 2);
  assert_int_equal(out.shard_count, 5);
  assert_int_equal(st__msg_l3_run_get(b.buf.data, 15, &out), -1);
  memcpy(raw, b.buf.data, 16);
  memset(raw + 16, 0, 4);
  assert_int_equal(st__msg_l3_run_get(raw, 20, &out), -1);
  /* A RELEASE is not a RUN. */
  b.buf.len = 0;
  st__msg_l3_release_put(&b);
  assert_int_equal(st__msg_l3_type(b.buf.data, b.buf.len), ST__MSG_L3_RELEASE);
  assert_int_equal(st__msg_l3_run_get(b.buf.data, b.buf.len, &out), -1);
  assert_int_equal(st__msg_l3_type(b.buf.data, 3), 0);
  st__wbuf_free(&b);
}

static void st__msg_l3_reply__round_trip_budget_and_cut(void **state) {
  st__wbuf b;
  char *loaded[3] = {"/lib/a.so", "/lib/b.so", "/lib/c.so"};
  st__msg_l3_reply in, out;
  (void)state;
  memset(&in, 0, sizeof in);
  in.status = ST_EKERNEL;
  in.lookup = 1;
  in.message = "no kernel";
  in.loaded = loaded;
  in.n_loaded = 3;
  in.device_ns = 11;
  in.copy_ns = 22;
  st__wbuf_init(&b);
  st__msg_l3_reply_put(&b, &in, 1000);
  assert_int_equal(st__msg_l3_reply_get(b.buf.data, b.buf.len, &out), 0);
  assert_int_equal(out.status, ST_EKERNEL);
  assert_int_equal(out.lookup, 1);
  assert_string_equal(out.message, "no kernel");
  assert_int_equal(out.n_loaded, 3);
  assert_string_equal(out.loaded[2], "/lib/c.so");
  assert_int_equal(out.device_ns, 11);
  assert_int_equal(out.copy_ns, 22);
  st__msg_l3_reply_free(&out);
  /* A budget for two paths (13 bytes each with their length). */
  b.buf.len = 0;
  st__msg_l3_reply_put(&b, &in, 26);
  assert_int_equal(st__msg_l3_reply_get(b.buf.data, b.buf.len, &out), 0);
  assert_int_equal(out.n_loaded, 2);
  st__msg_l3_reply_free(&out);
  /* Cut in its paths: what came is kept, the device times are not. */
  b.buf.len = 0;
  st__msg_l3_reply_put(&b, &in, 1000);
  assert_int_equal(st__msg_l3_reply_get(b.buf.data, b.buf.len - 30, &out), 0);
  assert_int_equal(out.n_loaded, 2);
  assert_true(out.device_ns == ST_NS_NONE && out.copy_ns == ST_NS_NONE);
  st__msg_l3_reply_free(&out);
  /* Every cut decodes within bounds (ASan checks), or is refused. */
  for (size_t cut = 0; cut < b.buf.len; cut++) {
    int rc = st__msg_l3_reply_get(b.buf.data, cut, &out);
    assert_int_equal(rc, cut < 4 ? -1 : 0);
    st__msg_l3_reply_free(&out);
  }
  /* A RUN is not a reply. */
  b.buf.len = 0;
  {
    st__msg_l3_run run = {0, 0, 1};
    st__msg_l3_run_put(&b, &run);
  }
  assert_int_equal(st__msg_l3_reply_get(b.buf.data, b.buf.len, &out), -1);
  st__msg_l3_reply_free(&out);
  st__wbuf_free(&b);
}

static void st__msg_case__little_endian_u32(void **state) {
  unsigned char b[ST__MSG_CASE_SIZE];
  static const unsigned char want[] = {0x04, 0x03, 0x02, 0x01};
  (void)state;
  st__msg_put_case(b, 0x01020304u);
  assert_memory_equal(b, want, sizeof want);
  assert_int_equal(st__msg_get_case(b), 0x01020304u);
}

static void st__msg_zygote__round_trip_wrong_type_and_size(void **state) {
  unsigned char go[ST__MSG_ZYGOTE_GO_SIZE], sp[ST__MSG_ZYGOTE_SPARE_SIZE];
  st__msg_zygote_go g = {((uint64_t)1 << 40) + 3, 9}, g2;
  st__msg_zygote_spare s = {-1, 24}, s2;
  (void)state;
  st__msg_zygote_go_put(go, &g);
  assert_int_equal(st__msg_zygote_go_get(go, sizeof go, &g2), 0);
  assert_true(g2.index == g.index && g2.slot == 9);
  assert_int_equal(st__msg_zygote_go_get(go, sizeof go - 1, &g2), -1);
  st__msg_zygote_spare_put(sp, &s);
  assert_int_equal(st__msg_zygote_spare_get(sp, sizeof sp, &s2), 0);
  assert_true(s2.pid == -1 && s2.err == 24);
  assert_int_equal(st__msg_zygote_spare_get(sp, sizeof sp + 1, &s2), -1);
  /* Each refuses the other's bytes (12 of a GO are not a SPARE). */
  assert_int_equal(st__msg_zygote_spare_get(go, sizeof sp, &s2), -1);
  memset(go, 0, sizeof go);
  memcpy(go, sp, sizeof sp);
  assert_int_equal(st__msg_zygote_go_get(go, sizeof go, &g2), -1);
}

static void st__wire_result_frame__round_trip_and_truncated(void **state) {
  st_case_result *r = st__case_result_new("sc", "case", "f.yaml", 4, "cpu", 9);
  st_case_result *back;
  st__wbuf b;
  uint8_t type;
  const char *payload;
  size_t plen;
  uint32_t index = 0;
  (void)state;
  assert_non_null(r);
  st__case_result_set_status(r, ST_CASE_FAIL, "%s", "mismatch");
  st__wbuf_init(&b);
  st__wire_result_frame(&b, 41, r);
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_RESULT);
  back = st__wire_get_result_frame(payload, plen, &index);
  assert_non_null(back);
  assert_int_equal(index, 41);
  assert_string_equal(st_case_result_case(back), "case");
  assert_string_equal(st_case_result_message(back), "mismatch");
  assert_int_equal(st_case_result_status(back), ST_CASE_FAIL);
  st_case_result_free(back);
  for (size_t cut = 0; cut < plen; cut++)
    assert_null(st__wire_get_result_frame(payload, cut, &index));
  st__wbuf_free(&b);
  st_case_result_free(r);
}

/* The bench's figures of a case (docs/bench.md) cross with its result, to
 * the bit; a result without them decodes without them; every cut is
 * refused, and so are a presence flag or a work flag other than 0 and 1
 * and a dtype class out of the ceilings' table (the parent indexes it). */
static void st__wire_result_frame__bench_round_trip_and_refused(void **state) {
  st_case_result *r = st__case_result_new("sc", "case", "f.yaml", 4, "cpu", 9);
  st_case_result *back;
  const st__bench_measured *got;
  st__bench_measured m = {{12, 1500.5, 1000.0, 1100.25, 2000.75},
                          1,
                          ST__DCLASS_COUNT - 1,
                          1,
                          0,
                          2048.0,
                          0.0};
  st__wbuf b;
  uint8_t type;
  const char *payload;
  char *bad;
  size_t plen, tail;
  uint32_t index = 0;
  (void)state;
  assert_non_null(r);
  /* Without figures: none come back, and the flag is the last 4 bytes. */
  st__wbuf_init(&b);
  st__wire_result_frame(&b, 3, r);
  one_frame(&b, &type, &payload, &plen);
  back = st__wire_get_result_frame(payload, plen, &index);
  assert_non_null(back);
  assert_null(st__case_result_bench(back));
  st_case_result_free(back);
  tail = plen;
  st__wbuf_free(&b);

  assert_int_equal(st__case_result_set_bench(r, &m), ST_OK);
  st__wbuf_init(&b);
  st__wire_result_frame(&b, 7, r);
  one_frame(&b, &type, &payload, &plen);
  assert_int_equal(type, ST__MSG_RESULT);
  /* The flag, 5 x 8 bytes of stats, 4 x 4 of flags and class, 2 x 8. */
  assert_int_equal(plen, tail + 40 + 16 + 16);
  back = st__wire_get_result_frame(payload, plen, &index);
  assert_non_null(back);
  assert_int_equal(index, 7);
  got = st__case_result_bench(back);
  assert_non_null(got);
  assert_memory_equal(&got->stats, &m.stats, sizeof m.stats);
  assert_int_equal(got->device_time, 1);
  assert_int_equal(got->dclass, ST__DCLASS_COUNT - 1);
  assert_int_equal(got->has_flops, 1);
  assert_int_equal(got->has_bytes, 0);
  assert_true(got->flops == 2048.0 && got->bytes == 0.0);
  st_case_result_free(back);
  for (size_t cut = 0; cut < plen; cut++)
    assert_null(st__wire_get_result_frame(payload, cut, &index));

  /* Field offsets from the end: bytes, flops (8 each), has_bytes,
   * has_flops, dclass, device_time (4 each), the stats (40), the flag. */
  bad = malloc(plen);
  assert_non_null(bad);
  {
    static const struct {
      size_t from_end;
      uint32_t value;
    } cases[] = {
        {16 + 16 + 40 + 4, 2},       /* presence flag */
        {16 + 4, 2},                 /* has_bytes */
        {16 + 8, 2},                 /* has_flops */
        {16 + 12, ST__DCLASS_COUNT}, /* dclass: one past the table */
        {16 + 12, 0xffffffffu},      /* dclass: -1 */
        {16 + 16, 2},                /* device_time */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      uint32_t v = cases[k].value;
      unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                             (unsigned char)(v >> 16),
                             (unsigned char)(v >> 24)};
      memcpy(bad, payload, plen);
      memcpy(bad + plen - cases[k].from_end, le, 4);
      assert_null(st__wire_get_result_frame(bad, plen, &index));
    }
  }
  free(bad);
  st__wbuf_free(&b);
  st_case_result_free(r);
}

/* A case of two tensors (the second in a segment), a scalar, a scratch
 * segment and one env pair. */
static void map_case(st__wcase *wc, st__argset *a, st__rehost *rh,
                     st__seg segs[2], st_tensor t[2], st_scalar *sc,
                     size_t *tensor_of, st__seg **seg_list) {
  static const char *const env[] = {"OMP_NUM_THREADS", "2"};
  memset(wc, 0, sizeof *wc);
  memset(a, 0, sizeof *a);
  memset(rh, 0, sizeof *rh);
  memset(segs, 0, 2 * sizeof *segs);
  memset(t, 0, 2 * sizeof *t);
  memset(sc, 0, sizeof *sc);
  t[0].name = "x";
  t[0].dtype = ST_DTYPE_FLOAT32;
  t[0].ndim = 2;
  t[0].shape[0] = 3;
  t[0].shape[1] = 4;
  t[0].numel = 12;
  t[0].nbytes = 48;
  t[1].name = "y";
  t[1].dtype = ST_DTYPE_FLOAT32;
  t[1].role = ST_ROLE_OUTPUT;
  t[1].ndim = 1;
  t[1].shape[0] = 12;
  t[1].numel = 12;
  t[1].nbytes = 48;
  sc->name = "alpha";
  sc->dtype = ST_DTYPE_FLOAT64;
  sc->f = 0.5;
  a->tensors = t;
  a->n_tensors = 2;
  a->scalars = sc;
  a->n_scalars = 1;
  segs[0].id = 77;
  segs[0].fd = 5;
  segs[0].size = 4096;
  segs[1].id = 78;
  segs[1].fd = 6;
  segs[1].size = 8192;
  seg_list[0] = &segs[0];
  *tensor_of = 1;
  rh->segs = seg_list;
  rh->tensor = tensor_of;
  rh->n = 1;
  wc->op = "add";
  wc->backend = "cpu";
  wc->args = a;
  wc->rh = rh;
  wc->max_threads = 3;
  wc->scratch = &segs[1];
  wc->n_blocks = 4;
  wc->reduce = 1;
  wc->env = env;
  wc->n_env = 1;
}

static void st__l3_map__round_trip_cut_long_and_wrong_type(void **state) {
  st__wcase wc;
  st__argset a;
  st__rehost rh;
  st__seg segs[2], *seg_list[1];
  st_tensor t[2];
  st_scalar sc;
  size_t tensor_of, nfds = 0;
  int fds[4];
  st__wbuf b;
  st__l3_map m;
  char *longer;
  (void)state;
  map_case(&wc, &a, &rh, segs, t, &sc, &tensor_of, seg_list);
  st__wbuf_init(&b);
  st__l3_map_put(&b, &wc, 5, fds, &nfds);
  assert_false(b.oom);
  assert_int_equal(nfds, 2);
  assert_int_equal(fds[0], 5);
  assert_int_equal(fds[1], 6);
  assert_int_equal(st__msg_l3_type(b.buf.data, b.buf.len), ST__MSG_L3_MAP);
  assert_int_equal(st__l3_map_get(b.buf.data, b.buf.len, &m), 0);
  assert_string_equal(m.op, "add");
  assert_string_equal(m.backend, "cpu");
  assert_int_equal(m.max_threads, 3);
  assert_int_equal(m.reduce, 1);
  assert_int_equal(m.n_blocks, 4);
  assert_int_equal(m.scratch_id, 78);
  assert_int_equal(m.n_segs, 2);
  assert_true(m.segs[0].id == 77 && m.segs[0].size == 4096);
  assert_true(m.segs[1].id == 78 && m.segs[1].size == 8192);
  assert_int_equal(m.n_tensors, 2);
  assert_string_equal(m.tensors[0].name, "x");
  assert_int_equal(m.tensors[0].ndim, 2);
  assert_int_equal(m.tensors[0].shape[1], 4);
  assert_int_equal(m.tensor_seg[0], 0);
  assert_int_equal(m.tensors[1].role, ST_ROLE_OUTPUT);
  assert_int_equal(m.tensor_seg[1], 77);
  assert_null(m.tensors[1].data);
  assert_int_equal(m.n_scalars, 1);
  assert_string_equal(m.scalars[0].name, "alpha");
  assert_true(m.scalars[0].f == 0.5);
  assert_int_equal(m.shard_count, 5);
  assert_int_equal(m.n_env, 1);
  assert_string_equal(m.env[0], "OMP_NUM_THREADS");
  assert_string_equal(m.env[1], "2");
  st__l3_map_free(&m);
  assert_null(m.op);
  /* Cut anywhere: refused, m empty, nothing read past the cut (ASan). */
  for (size_t cut = 0; cut < b.buf.len; cut++) {
    assert_int_equal(st__l3_map_get(b.buf.data, cut, &m), -1);
    assert_null(m.tensors);
  }
  /* A byte too many: refused. */
  longer = malloc(b.buf.len + 1);
  assert_non_null(longer);
  memcpy(longer, b.buf.data, b.buf.len);
  longer[b.buf.len] = 0;
  assert_int_equal(st__l3_map_get(longer, b.buf.len + 1, &m), -1);
  /* A dimension count out of range (x's ndim, after its name and two
   * i32s): refused. */
  {
    size_t at =
        (size_t)((char *)memmem(b.buf.data, b.buf.len, "x", 2) - b.buf.data) +
        2 + 8;
    memcpy(longer, b.buf.data, b.buf.len);
    longer[at] = (char)(ST_MAX_DIMS + 1);
    assert_int_equal(st__l3_map_get(longer, b.buf.len, &m), -1);
  }
  free(longer);
  /* A RUN is no MAP. */
  b.buf.len = 0;
  {
    st__msg_l3_run run = {0, 0, 1};
    st__msg_l3_run_put(&b, &run);
  }
  assert_int_equal(st__l3_map_get(b.buf.data, b.buf.len, &m), -1);
  st__wbuf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__msg__types_are_distinct),
      cmocka_unit_test(st__msg_line__round_trip_and_truncated),
      cmocka_unit_test(st__msg_index__exactly_four_bytes),
      cmocka_unit_test(st__msg_text__string_or_nothing),
      cmocka_unit_test(st__msg_l3_run__round_trip_wrong_type_and_sizes),
      cmocka_unit_test(st__msg_l3_reply__round_trip_budget_and_cut),
      cmocka_unit_test(st__msg_case__little_endian_u32),
      cmocka_unit_test(st__msg_zygote__round_trip_wrong_type_and_size),
      cmocka_unit_test(st__wire_result_frame__round_trip_and_truncated),
      cmocka_unit_test(st__wire_result_frame__bench_round_trip_and_refused),
      cmocka_unit_test(st__l3_map__round_trip_cut_long_and_wrong_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
