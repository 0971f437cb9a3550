/* SPDX-License-Identifier: MIT */
/* Rehost and the segment pool: every non-empty tensor in its own segment;
 * empty tensors skipped; aliasing arguments refused before any segment is
 * made, naming both; the k-th segment failing releases the first k-1 and
 * leaves the arguments exactly as they were (for every k); release is LIFO
 * and restores the original buffers before commit; segments are reused
 * across cases and the idle cap is enforced. Also the wire encoding of a
 * case result, which isolation sends across a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "case/level3/rehost.h"
#include "case/tbuf.h"
#include "case/result.h"
#include "case/wire.h"

/* An argset of n float32 tensors named t0.., tensor i with sizes[i]
 * elements filled with i + element/1000. */
static void make_args(st__argset *a, const size_t *sizes, size_t n) {
  size_t i, k;
  static const char *const names[] = {"t0", "t1", "t2", "t3", "t4", "t5"};
  memset(a, 0, sizeof *a);
  a->tensors = calloc(n, sizeof *a->tensors);
  assert_non_null(a->tensors);
  a->n_tensors = n;
  for (i = 0; i < n; i++) {
    st_tensor *t = &a->tensors[i];
    t->name = names[i];
    t->dtype = ST_DTYPE_FLOAT32;
    t->ndim = 1;
    t->shape[0] = (int64_t)sizes[i];
    t->numel = sizes[i];
    t->nbytes = sizes[i] * 4;
    if (t->nbytes > 0) {
      float *p = st__tbuf_alloc(t->nbytes);
      assert_non_null(p);
      for (k = 0; k < sizes[i]; k++)
        p[k] = (float)i + (float)k / 1000.0f;
      t->data = p;
    }
  }
}

static size_t live_segments(void) {
  size_t in_use, idle;
  st__seg_pool_stats(&in_use, &idle, NULL);
  return in_use + idle;
}

static size_t in_use_segments(void) {
  size_t in_use;
  st__seg_pool_stats(&in_use, NULL, NULL);
  return in_use;
}

static int teardown(void **state) {
  (void)state;
  st__rehost_fail_at = 0;
  st__seg_pool_set_cap(ST__SEG_POOL_CAP_BYTES, ST__SEG_POOL_CAP_COUNT);
  st__seg_pool_drain();
  return 0;
}

static void rehost_args__each_tensor_own_segment_empty_skipped(void **state) {
  static const size_t sizes[] = {1000, 0, 17, 0};
  st__argset a;
  st__rehost rh;
  st_error err;
  (void)state;
  st_error_clear(&err);
  make_args(&a, sizes, 4);
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_OK);
  assert_int_equal(rh.n, 2);
  assert_int_equal(rh.tensor[0], 0);
  assert_int_equal(rh.tensor[1], 2);
  assert_ptr_not_equal(rh.segs[0], rh.segs[1]);
  assert_int_not_equal(rh.segs[0]->fd, rh.segs[1]->fd);
  assert_ptr_equal(a.tensors[0].data,
                   (char *)rh.segs[0]->map + ST__SEG_DATA_AT);
  assert_ptr_equal(a.tensors[2].data,
                   (char *)rh.segs[1]->map + ST__SEG_DATA_AT);
  assert_null(a.tensors[1].data);
  assert_null(a.tensors[3].data);
  assert_true(((float *)a.tensors[2].data)[16] == 2.0f + 16.0f / 1000.0f);
  assert_int_equal(in_use_segments(), 2);
  st__rehost_commit(&rh, &a);
  st__rehost_release(&rh, &a);
  assert_int_equal(in_use_segments(), 0);
  /* After commit the case's buffers were the segments: nothing left. */
  assert_null(a.tensors[0].data);
  st__argset_free(&a);
}

/* A tensor in its segment sits between guard zones (rehost.h): untouched
 * they pass; a write before the start and past the end are both seen, how
 * far each went, and the zones are re-armed for the next round. */
static void rehost_check__zones_around_each_tensor(void **state) {
  static const size_t sizes[] = {25, 3}; /* elements: 100 and 12 bytes */
  st__argset a;
  st__rehost rh;
  st__tbuf_damage d;
  st_error err;
  unsigned char *p;
  (void)state;
  st_error_clear(&err);
  make_args(&a, sizes, 2);
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_OK);
  assert_int_equal(st__rehost_check(&rh, 0, 100, &d), 0);
  assert_int_equal(st__rehost_check(&rh, 1, 12, &d), 0);
  p = a.tensors[0].data;
  p[0] = 0x11;
  p[99] = 0x11;
  assert_int_equal(st__rehost_check(&rh, 0, 100, &d), 0);
  p[-2] = 0x11;
  p[100 + 11] = 0x11;
  assert_int_equal(st__rehost_check(&rh, 0, 100, &d), 1);
  assert_int_equal(d.before, 2);
  assert_int_equal(d.after, 12);
  assert_int_equal(st__rehost_check(&rh, 0, 100, &d), 0);
  assert_int_equal(st__rehost_check(&rh, 1, 12, &d), 0);
  st__rehost_commit(&rh, &a);
  st__rehost_release(&rh, &a);
  st__argset_free(&a);
}

static void rehost_args__aliasing_rejected_before_any_segment(void **state) {
  static const size_t sizes[] = {64, 64, 64};
  st__argset a;
  st__rehost rh;
  st_error err;
  void *orig[3];
  size_t before = live_segments(), i;
  (void)state;
  st_error_clear(&err);
  make_args(&a, sizes, 3);
  for (i = 0; i < 3; i++)
    orig[i] = a.tensors[i].data;
  /* t2 views the second half of t0 (as arguments built through the
   * library API may). */
  a.tensors[2].data = (char *)orig[0] + 128;
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_EINVAL);
  assert_non_null(strstr(err.message, "'t0' and 't2'"));
  assert_int_equal(live_segments(), before);
  assert_int_equal(rh.n, 0);
  for (i = 0; i < 2; i++)
    assert_ptr_equal(a.tensors[i].data, orig[i]);
  a.tensors[2].data = orig[2];
  st__argset_free(&a);
}

/* Adjacent ranges are not aliasing. */
static void rehost_args__adjacent_ranges_accepted(void **state) {
  static const size_t sizes[] = {64, 64};
  st__argset a;
  st__rehost rh;
  st_error err;
  void *orig1;
  (void)state;
  st_error_clear(&err);
  make_args(&a, sizes, 2);
  orig1 = a.tensors[1].data;
  a.tensors[0].nbytes = 128;
  a.tensors[1].data = (char *)a.tensors[0].data + 128;
  a.tensors[1].nbytes = 128;
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_OK);
  st__rehost_release(&rh, &a); /* before commit: a rollback */
  a.tensors[1].data = orig1;
  a.tensors[1].nbytes = 256;
  st__argset_free(&a);
}

static void rehost_args__kth_segment_fails_rolls_back(void **state) {
  static const size_t sizes[] = {100, 0, 2000, 3, 50};
  st__argset a;
  st__rehost rh;
  st_error err;
  void *orig[5];
  int k;
  size_t i;
  (void)state;
  make_args(&a, sizes, 5);
  for (i = 0; i < 5; i++)
    orig[i] = a.tensors[i].data;
  /* Four non-empty tensors: fail the first, second, third and fourth
   * segment in turn. */
  for (k = 1; k <= 4; k++) {
    st_error_clear(&err);
    st__rehost_fail_at = k;
    assert_int_equal(st__rehost_args(&a, &rh, &err), ST_ENOMEM);
    assert_non_null(strstr(err.message, "injected"));
    assert_int_equal(st__rehost_fail_at, 0);
    assert_int_equal(rh.n, 0);
    assert_int_equal(in_use_segments(), 0);
    for (i = 0; i < 5; i++) {
      size_t e;
      assert_ptr_equal(a.tensors[i].data, orig[i]);
      for (e = 0; e < sizes[i]; e++)
        assert_true(((float *)a.tensors[i].data)[e] ==
                    (float)i + (float)e / 1000.0f);
    }
  }
  /* The k-1 released ones went back to the pool and are used again. */
  st_error_clear(&err);
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_OK);
  assert_int_equal(rh.n, 4);
  assert_int_equal(live_segments(), 4);
  st__rehost_release(&rh, &a);
  for (i = 0; i < 5; i++)
    assert_ptr_equal(a.tensors[i].data, orig[i]);
  st__argset_free(&a);
}

static void rehost_release__lifo_and_restores_before_commit(void **state) {
  static const size_t sizes[] = {10, 20, 30};
  st__argset a;
  st__rehost rh;
  st_error err;
  st__seg *segs[3];
  void *orig[3];
  size_t i;
  (void)state;
  st_error_clear(&err);
  make_args(&a, sizes, 3);
  for (i = 0; i < 3; i++)
    orig[i] = a.tensors[i].data;
  assert_int_equal(st__rehost_args(&a, &rh, &err), ST_OK);
  for (i = 0; i < 3; i++)
    segs[i] = rh.segs[i];
  st__rehost_release(&rh, &a);
  /* The pool stamps each release: the last made was released first. */
  assert_true(segs[2]->last_used < segs[1]->last_used);
  assert_true(segs[1]->last_used < segs[0]->last_used);
  for (i = 0; i < 3; i++)
    assert_ptr_equal(a.tensors[i].data, orig[i]);
  st__argset_free(&a);
}

static void seg_acquire__pooled_segment_reused(void **state) {
  st__seg *s1, *s2, *s3;
  st_error err;
  uint64_t id;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st__seg_acquire(100000, &s1, &err), ST_OK);
  id = s1->id;
  memset(s1->map, 0x5a, 100000);
  st__seg_release(s1);
  assert_int_equal(st__seg_acquire(99000, &s2, &err), ST_OK);
  assert_int_equal(s2->id, id);
  /* Far smaller: not handed a segment many times its size. */
  assert_int_equal(st__seg_acquire(10, &s3, &err), ST_OK);
  assert_int_not_equal(s3->id, id);
  st__seg_release(s3);
  st__seg_release(s2);
}

static void seg_release__idle_cap_enforced(void **state) {
  st__seg *s[3];
  st_error err;
  size_t idle, bytes, i;
  (void)state;
  st_error_clear(&err);
  st__seg_pool_drain();
  st__seg_pool_set_cap((size_t)1 << 20, 2);
  for (i = 0; i < 3; i++)
    assert_int_equal(st__seg_acquire(4096, &s[i], &err), ST_OK);
  for (i = 0; i < 3; i++)
    st__seg_release(s[i]);
  st__seg_pool_stats(NULL, &idle, &bytes);
  assert_int_equal(idle, 2);
  /* A segment over the byte cap is not kept at all. */
  assert_int_equal(st__seg_acquire((size_t)2 << 20, &s[0], &err), ST_OK);
  st__seg_release(s[0]);
  st__seg_pool_stats(NULL, &idle, &bytes);
  assert_true(bytes <= ((size_t)1 << 20));
}

static void wire_result__round_trip(void **state) {
  st_case_result *r = st__case_result_new("s", "c", "f.yaml", 7, "cpu", 42);
  st_case_result *back;
  st_event ev;
  const char *loaded[] = {"/lib/a.so", "worker 1: /lib/b.so"};
  st__wbuf b;
  st__rbuf rd;
  (void)state;
  assert_non_null(r);
  memset(&ev, 0, sizeof ev);
  ev.name = "run";
  ev.round = 2;
  ev.start_ns = 123456789012345ull;
  ev.dur_ns = 77;
  ev.status = ST_PHASE_FAIL;
  ev.loaded = loaded;
  ev.n_loaded = 2;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  memset(&ev, 0, sizeof ev);
  ev.name = "load";
  ev.round = -1;
  ev.object = "/lib/a.so";
  ev.phase = "run";
  ev.emitted = 1;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  st__case_result_set_status(r, ST_CASE_FAIL, "mismatch in 'out'");
  st__case_result_set_output(r, "printed\n", 8);
  st__case_result_set_pid(r, 4242);
  st__case_result_set_duration(r, 999);
  st__case_result_set_record_stale(r, 1);
  st__wbuf_init(&b);
  st__wire_put_result(&b, r);
  assert_false(b.oom);
  st__rbuf_init(&rd, b.buf.data, b.buf.len);
  back = st__wire_get_result(&rd);
  assert_non_null(back);
  assert_int_equal(rd.off, b.buf.len);
  assert_string_equal(st_case_result_scene(back), "s");
  assert_string_equal(st_case_result_case(back), "c");
  assert_string_equal(st_case_result_file(back), "f.yaml");
  assert_int_equal(st_case_result_line(back), 7);
  assert_int_equal(st_case_result_seed(back), 42);
  assert_int_equal(st_case_result_status(back), ST_CASE_FAIL);
  assert_string_equal(st_case_result_message(back), "mismatch in 'out'");
  assert_string_equal(st_case_result_output(back), "printed\n");
  assert_int_equal(st_case_result_pid(back), 4242);
  assert_int_equal(st_case_result_duration_ns(back), 999);
  assert_int_equal(st_case_result_record_stale(back), 1);
  assert_int_equal(st_case_result_event_count(back), 2);
  assert_string_equal(st_case_result_event(back, 0)->name, "run");
  assert_int_equal(st_case_result_event(back, 0)->round, 2);
  assert_int_equal(st_case_result_event(back, 0)->start_ns, 123456789012345ull);
  assert_int_equal(st_case_result_event(back, 0)->status, ST_PHASE_FAIL);
  assert_int_equal(st_case_result_event(back, 0)->n_loaded, 2);
  assert_string_equal(st_case_result_event(back, 0)->loaded[1],
                      "worker 1: /lib/b.so");
  assert_null(st_case_result_event(back, 0)->object);
  assert_string_equal(st_case_result_event(back, 1)->object, "/lib/a.so");
  assert_string_equal(st_case_result_event(back, 1)->phase, "run");
  assert_int_equal(st_case_result_event(back, 1)->emitted, 1);
  /* Every truncation is refused, never read past. */
  {
    size_t cut;
    for (cut = 0; cut < b.buf.len; cut += 7) {
      st_case_result *partial;
      st__rbuf_init(&rd, b.buf.data, cut);
      partial = st__wire_get_result(&rd);
      assert_null(partial);
    }
  }
  st__wbuf_free(&b);
  st_case_result_free(back);
  st_case_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_teardown(fn, teardown)
      T(rehost_args__each_tensor_own_segment_empty_skipped),
      T(rehost_args__aliasing_rejected_before_any_segment),
      T(rehost_check__zones_around_each_tensor),
      T(rehost_args__adjacent_ranges_accepted),
      T(rehost_args__kth_segment_fails_rolls_back),
      T(rehost_release__lifo_and_restores_before_commit),
      T(seg_acquire__pooled_segment_reused),
      T(seg_release__idle_cap_enforced),
      T(wire_result__round_trip),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
