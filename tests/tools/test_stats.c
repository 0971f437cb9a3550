/* SPDX-License-Identifier: MIT */
/* Medians and the Mann-Whitney U test (docs/measuring.md#the-statistics)
 * against SciPy 1.10.1 (Debian's python3-scipy), values produced by:
 *
 *   /usr/bin/python3 -c 'from scipy.stats import mannwhitneyu
 *   r = mannwhitneyu(X, Y, alternative="two-sided", use_continuity=True,
 *                    method="auto"); print(repr(r.statistic),
 *                    "%.17g" % r.pvalue)'
 *
 * with X, Y as in each test (output pasted beside it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "tools/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_mwu(const double *x, size_t n1, const double *y, size_t n2,
                      double want_u, double want_p, st__mwu_method want_m) {
  double p = -1, u = -1;
  st__mwu_method m = (st__mwu_method)-1;
  assert_int_equal(st__stats_mwu(x, n1, y, n2, &p, &u, &m), ST_OK);
  assert_int_equal(m, want_m);
  assert_true(fabs(u - want_u) < 1e-9);
  if (fabs(p - want_p) > 1e-6)
    fail_msg("p = %.12g, SciPy says %.12g", p, want_p);
}

static void stats_median__odd_even_one(void **state) {
  double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
  (void)state;
  st__stats_sort(odd, 3);
  st__stats_sort(even, 4);
  assert_true(st__stats_median(odd, 3) == 3);
  assert_true(st__stats_median(even, 4) == 2.5); /* mean of 2 and 3 */
  assert_true(st__stats_median(one, 1) == 7);
  assert_true(isnan(st__stats_median(one, 0)));
}

/* exact_3_4: ([1,2,3], [4,5,6,7]) -> 0.0 0.057142857142857141 */
static void stats_mwu__exact_small(void **state) {
  const double x[] = {1, 2, 3}, y[] = {4, 5, 6, 7};
  (void)state;
  check_mwu(x, N(x), y, N(y), 0.0, 0.057142857142857141, ST__MWU_EXACT);
  /* The statistic is U of x; the p-value is symmetric. */
  check_mwu(y, N(y), x, N(x), 12.0, 0.057142857142857141, ST__MWU_EXACT);
}

/* exact_5_5: ([10,12,14,16,18], [11,13,21,23,25]) -> 7.0
 * 0.30952380952380953 */
static void stats_mwu__exact_five(void **state) {
  const double x[] = {10, 12, 14, 16, 18}, y[] = {11, 13, 21, 23, 25};
  (void)state;
  check_mwu(x, N(x), y, N(y), 7.0, 0.30952380952380953, ST__MWU_EXACT);
}

/* exact_8_20: ([1,3,...,15], [2,4,...,16,17..28]) -> 28.0
 * 0.0067822676518328687. SciPy's 'auto' takes the exact path whenever one
 * side has at most 8 samples and there is no tie (_mwu_choose_method:
 * asymptotic only when n1 > 8 and n2 > 8). */
static void stats_mwu__exact_when_one_side_is_eight(void **state) {
  const double x[] = {1, 3, 5, 7, 9, 11, 13, 15};
  const double y[] = {2,  4,  6,  8,  10, 12, 14, 16, 17, 18,
                      19, 20, 21, 22, 23, 24, 25, 26, 27, 28};
  (void)state;
  check_mwu(x, N(x), y, N(y), 28.0, 0.0067822676518328687, ST__MWU_EXACT);
}

/* asym_9_10: ([1..8, 9.5], [5.5,6.5,7.5,8.5,9,10..14]) -> 11.0
 * 0.0062330349697337795 */
static void stats_mwu__asymptotic(void **state) {
  const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9.5};
  const double y[] = {5.5, 6.5, 7.5, 8.5, 9, 10, 11, 12, 13, 14};
  (void)state;
  check_mwu(x, N(x), y, N(y), 11.0, 0.0062330349697337795, ST__MWU_ASYMPTOTIC);
}

/* far_12_12: (range(100,112), range(200,212)) -> 0.0
 * 3.6584553538971001e-05 */
static void stats_mwu__asymptotic_far_apart(void **state) {
  double x[12], y[12];
  size_t i;
  (void)state;
  for (i = 0; i < 12; i++) {
    x[i] = 100.0 + (double)i;
    y[i] = 200.0 + (double)i;
  }
  check_mwu(x, 12, y, 12, 0.0, 3.6584553538971001e-05, ST__MWU_ASYMPTOTIC);
}

/* ties_4_4: ([1,2,2,3], [2,3,3,4]) -> 3.0 0.1720337089218229;
 * ties_6_6: ([5,5,5,6,6,7], [6,7,7,8,8,8]) -> 3.0 0.016863794867059228.
 * A tie sends small samples to the normal approximation with the tie
 * term. */
static void stats_mwu__ties(void **state) {
  const double x[] = {1, 2, 2, 3}, y[] = {2, 3, 3, 4};
  const double a[] = {5, 5, 5, 6, 6, 7}, b[] = {6, 7, 7, 8, 8, 8};
  (void)state;
  check_mwu(x, N(x), y, N(y), 3.0, 0.1720337089218229, ST__MWU_ASYMPTOTIC);
  check_mwu(a, N(a), b, N(b), 3.0, 0.016863794867059228, ST__MWU_ASYMPTOTIC);
}

/* n1_1: ([1], [2]) -> 0.0 1; n1_tied: ([1], [1]) -> 0.5 1;
 * n1_vs_5: ([3], [1,2,4,5,6]) -> 2.0 1 */
static void stats_mwu__one_sample(void **state) {
  const double one[] = {1}, two[] = {2}, three[] = {3};
  const double five[] = {1, 2, 4, 5, 6};
  (void)state;
  check_mwu(one, 1, two, 1, 0.0, 1.0, ST__MWU_EXACT);
  /* All tied: s = 0, z = -inf, p clipped to 1, as numpy does it. */
  check_mwu(one, 1, one, 1, 0.5, 1.0, ST__MWU_ASYMPTOTIC);
  check_mwu(three, 1, five, N(five), 2.0, 1.0, ST__MWU_EXACT);
}

static void stats_mwu__empty_side(void **state) {
  const double x[] = {1};
  double p;
  (void)state;
  assert_int_equal(st__stats_mwu(x, 1, x, 0, &p, NULL, NULL), ST_EINVAL);
  assert_int_equal(st__stats_mwu(x, 0, x, 1, &p, NULL, NULL), ST_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stats_median__odd_even_one),
      cmocka_unit_test(stats_mwu__exact_small),
      cmocka_unit_test(stats_mwu__exact_five),
      cmocka_unit_test(stats_mwu__exact_when_one_side_is_eight),
      cmocka_unit_test(stats_mwu__asymptotic),
      cmocka_unit_test(stats_mwu__asymptotic_far_apart),
      cmocka_unit_test(stats_mwu__ties),
      cmocka_unit_test(stats_mwu__one_sample),
      cmocka_unit_test(stats_mwu__empty_side),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
