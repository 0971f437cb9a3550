/* SPDX-License-Identifier: MIT */
/* The bench's arithmetic (docs/bench.md): the round budget against a fake
 * clock (each limit binding in turn), the order statistics on known
 * samples, the work model of every built-in op against a hand count, and
 * the table's rows taken from a run's results (docs/bench.md#supervision). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "case/bench.h"
#include "case/result.h"
#include "ops/backends.h"
#include "ops/ceiling.h"
#include "ops/work.h"

#define MS 1000000ull

static st__bench_config defaults(void) {
  st__bench_config c;
  memset(&c, 0, sizeof c);
  c.warmup_ns = 25 * MS;
  c.min_time_ns = 100 * MS;
  c.max_time_ns = 10000 * MS;
  c.min_rounds = 10;
  c.max_rounds = 1000;
  return c;
}

/* Rounds the loop runs when each round takes round_ns of the fake clock. */
static uint64_t rounds_with(const st__bench_config *c, uint64_t round_ns) {
  uint64_t n = 0, t = 0;
  while (st__bench_more(c, n, t)) {
    n++;
    t += round_ns;
  }
  return n;
}

static void test_budget_min_rounds_binds(void **state) {
  st__bench_config c = defaults();
  (void)state;
  /* 50 ms a round: 100 ms after 2 rounds, but 10 rounds at least. */
  assert_int_equal(rounds_with(&c, 50 * MS), 10);
}

static void test_budget_min_time_binds(void **state) {
  st__bench_config c = defaults();
  (void)state;
  /* 1 ms a round: 10 rounds in 10 ms, then until 100 ms. */
  assert_int_equal(rounds_with(&c, 1 * MS), 100);
}

static void test_budget_max_rounds_caps(void **state) {
  st__bench_config c = defaults();
  (void)state;
  /* 1 us a round: 100 ms would take 100,000 rounds; 1000 at most. */
  assert_int_equal(rounds_with(&c, 1000), 1000);
}

static void test_budget_max_time_caps(void **state) {
  st__bench_config c = defaults();
  (void)state;
  /* 3 s a round: 10 rounds would take 30 s; the loop stops once 10 s
   * have passed (after 4 rounds: 12 s). */
  assert_int_equal(rounds_with(&c, 3000 * MS), 4);
  /* A round longer than the whole budget: one round. */
  assert_int_equal(rounds_with(&c, 20000 * MS), 1);
}

static void test_stats_known_samples(void **state) {
  double odd[] = {5, 1, 4, 2, 3}, even[] = {40, 10, 30, 20}, one[] = {7};
  st__bench_stats s;
  (void)state;
  st__bench_stats_of(odd, 5, &s);
  assert_int_equal(s.rounds, 5);
  assert_float_equal(s.min, 1, 1e-12);
  assert_float_equal(s.median, 3, 1e-12);
  assert_float_equal(s.p10, 1.4, 1e-12);
  assert_float_equal(s.p90, 4.6, 1e-12);
  st__bench_stats_of(even, 4, &s);
  assert_float_equal(s.median, 25, 1e-12);
  assert_float_equal(s.p10, 13, 1e-12);
  assert_float_equal(s.p90, 37, 1e-12);
  st__bench_stats_of(one, 1, &s);
  assert_float_equal(s.median, 7, 1e-12);
  assert_float_equal(s.p10, 7, 1e-12);
  assert_float_equal(s.p90, 7, 1e-12);
  st__bench_stats_of(NULL, 0, &s);
  assert_int_equal(s.rounds, 0);
}

/* A float32 tensor of a plan. */
static st__rarg tensor(const char *name, st_role role, int64_t r, int64_t c) {
  st__rarg a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.is_tensor = 1;
  a.dtype = ST_DTYPE_FLOAT32;
  a.role = role;
  a.ndim = c > 0 ? 2 : 1;
  a.shape[0] = r;
  a.shape[1] = c;
  a.numel = (size_t)(r * (c > 0 ? c : 1));
  a.nbytes = a.numel * 4;
  return a;
}

typedef struct hand {
  const char *op;
  st__rarg t[3];
  size_t n;
  double flops, bytes;
} hand;

static void test_work_every_builtin_op(void **state) {
  const st_role I = ST_ROLE_INPUT, O = ST_ROLE_OUTPUT, IO = ST_ROLE_INOUT;
  /* Hand counts: N = 12 elements (3 x 4) unless said; bytes = inputs
   * read once + outputs written once, the inout (axpy's y) as both. */
  const hand hands[] = {
      {"copy", {tensor("x", I, 3, 4), tensor("y", O, 3, 4)}, 2, 0, 96},
      {"add",
       {tensor("a", I, 3, 4), tensor("b", I, 3, 4), tensor("out", O, 3, 4)},
       3,
       12,
       144},
      {"sub",
       {tensor("a", I, 3, 4), tensor("b", I, 3, 4), tensor("out", O, 3, 4)},
       3,
       12,
       144},
      {"mul",
       {tensor("a", I, 3, 4), tensor("b", I, 3, 4), tensor("out", O, 3, 4)},
       3,
       12,
       144},
      {"scale", {tensor("x", I, 3, 4), tensor("y", O, 3, 4)}, 2, 12, 96},
      {"axpy", {tensor("x", I, 3, 4), tensor("y", IO, 3, 4)}, 2, 24, 144},
      {"relu", {tensor("x", I, 3, 4), tensor("y", O, 3, 4)}, 2, 12, 96},
      /* a[3,4] b[4,5] c[3,5]: 2*M*N*K = 120; (12 + 20 + 15) * 4 bytes. */
      {"matmul",
       {tensor("a", I, 3, 4), tensor("b", I, 4, 5), tensor("c", O, 3, 5)},
       3,
       120,
       188},
      /* 5 per input element. */
      {"softmax", {tensor("x", I, 3, 4), tensor("y", O, 3, 4)}, 2, 60, 96},
      /* One per input element, one element out. */
      {"reduce_sum", {tensor("x", I, 3, 4), tensor("out", O, 1, 0)}, 2, 12, 52},
      {"transpose", {tensor("x", I, 3, 4), tensor("y", O, 4, 3)}, 2, 0, 96},
  };
  const size_t n_hands = sizeof hands / sizeof hands[0];
  size_t i, j, n_ops = 0;
  (void)state;
  for (i = 0; st__builtin_ops[i] != NULL; i++) {
    const hand *h = NULL;
    st__plan plan;
    st__rarg args[3];
    double flops = -1;
    for (j = 0; j < n_hands; j++)
      if (strcmp(hands[j].op, st__builtin_ops[i]) == 0)
        h = &hands[j];
    /* A built-in op without a hand count here fails the test. */
    assert_non_null(h);
    memcpy(args, h->t, sizeof args);
    memset(&plan, 0, sizeof plan);
    plan.args = args;
    plan.n_args = plan.n_tensors = h->n;
    assert_int_equal(st__work_flops(h->op, &plan, &flops), 1);
    assert_float_equal(flops, h->flops, 0);
    assert_float_equal(st__work_bytes(&plan), h->bytes, 0);
    n_ops++;
  }
  assert_int_equal(n_ops, n_hands);
}

static void test_work_unknown_op(void **state) {
  st__rarg a = tensor("x", ST_ROLE_INPUT, 2, 0);
  st__plan plan;
  double flops = 42;
  (void)state;
  memset(&plan, 0, sizeof plan);
  plan.args = &a;
  plan.n_args = plan.n_tensors = 1;
  assert_int_equal(st__work_flops("my_plugin_op", &plan, &flops), 0);
  assert_float_equal(flops, 42, 0);
  /* matmul on a plan without its second operand: no model. */
  assert_int_equal(st__work_flops("matmul", &plan, &flops), 0);
}

static void test_dclass(void **state) {
  (void)state;
  assert_int_equal(st__dclass_of(ST_DTYPE_FLOAT64), ST__DCLASS_FLOAT64);
  assert_int_equal(st__dclass_of(ST_DTYPE_FLOAT32), ST__DCLASS_FLOAT32);
  assert_int_equal(st__dclass_of(ST_DTYPE_FLOAT16), ST__DCLASS_HALF);
  assert_int_equal(st__dclass_of(ST_DTYPE_BFLOAT16), ST__DCLASS_HALF);
  assert_int_equal(st__dclass_of(ST_DTYPE_FLOAT8_E5M2), ST__DCLASS_FLOAT8);
  assert_int_equal(st__dclass_of(ST_DTYPE_INT8), ST__DCLASS_INT);
  assert_string_equal(st__dclass_name(ST__DCLASS_HALF), "half");
}

/* A row for each benched result and each that did not pass, in order,
 * with the result's names, status, message and measurements; none for a
 * pass or a skip that was not benched (a level-3 case, say), nor for a
 * case with no result. */
static void test_rows_from_results(void **state) {
  static const struct {
    const char *name;
    st_case_status status;
    int benched;
  } in[] = {{"timed", ST_CASE_PASS, 1},    {"l3pass", ST_CASE_PASS, 0},
            {"crashed", ST_CASE_ERROR, 0}, {"skipped", ST_CASE_SKIP, 0},
            {"mismatch", ST_CASE_FAIL, 1}, {"l3fail", ST_CASE_FAIL, 0},
            {"xpass", ST_CASE_XPASS, 0},   {"noresult", ST_CASE_PASS, 0}};
  static const char *const want[] = {"timed", "crashed", "mismatch", "l3fail",
                                     "xpass"};
  size_t n_in = sizeof in / sizeof in[0], n = 99, i;
  st_run_result *run = st__run_result_new(n_in);
  st__bench_case *rows;
  st__bench_measured m;
  int oom = 1;
  (void)state;
  assert_non_null(run);
  memset(&m, 0, sizeof m);
  m.stats.rounds = 5;
  m.stats.median = 250.0;
  m.dclass = ST__DCLASS_FLOAT32;
  for (i = 0; i + 1 < n_in; i++) {
    st_case_result *r =
        st__case_result_new("sc", in[i].name, "f.yaml", 1, "cpu", 0);
    assert_non_null(r);
    st__case_result_set_status(r, in[i].status,
                               in[i].status == ST_CASE_PASS ? NULL : "why %s",
                               in[i].name);
    if (in[i].benched)
      assert_int_equal(st__case_result_set_bench(r, &m), ST_OK);
    st__run_result_set(run, i, r);
  }
  rows = st__bench_rows(run, &n, &oom);
  assert_int_equal(oom, 0);
  assert_int_equal(n, sizeof want / sizeof want[0]);
  for (i = 0; i < n; i++) {
    assert_string_equal(rows[i].kase, want[i]);
    assert_string_equal(rows[i].scene, "sc");
    assert_string_equal(rows[i].platform, "cpu");
  }
  assert_int_equal(rows[0].status, ST_CASE_PASS);
  assert_null(rows[0].message);
  assert_int_equal(rows[0].m.stats.rounds, 5);
  assert_true(rows[0].m.stats.median == 250.0);
  assert_int_equal(rows[1].status, ST_CASE_ERROR);
  assert_string_equal(rows[1].message, "why crashed");
  assert_int_equal(rows[1].m.stats.rounds, 0);
  assert_int_equal(rows[2].m.stats.rounds, 5);
  assert_int_equal(rows[3].m.stats.rounds, 0);
  free(rows);
  st_run_result_free(run);
  /* No rows: NULL, not out of memory. */
  run = st__run_result_new(0);
  assert_non_null(run);
  assert_null(st__bench_rows(run, &n, &oom));
  assert_int_equal(n, 0);
  assert_int_equal(oom, 0);
  st_run_result_free(run);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_min_rounds_binds),
      cmocka_unit_test(test_budget_min_time_binds),
      cmocka_unit_test(test_budget_max_rounds_caps),
      cmocka_unit_test(test_budget_max_time_caps),
      cmocka_unit_test(test_stats_known_samples),
      cmocka_unit_test(test_work_every_builtin_op),
      cmocka_unit_test(test_work_unknown_op),
      cmocka_unit_test(test_dclass),
      cmocka_unit_test(test_rows_from_results),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
