/* SPDX-License-Identifier: MIT */
/* Medians and the Mann-Whitney U test, computed as SciPy 1.10 computes
 * them (scipy/stats/_mannwhitneyu.py), so that `compare` and a user
 * checking it in Python get the same p-value:
 *   - ranks: average ranks of the pooled sample; U1 = R1 - n1(n1+1)/2,
 *     U2 = n1 n2 - U1, two-sided U = max(U1, U2), p = 2 sf(U), clipped
 *     to [0, 1];
 *   - exact: sf(U) = P(U >= k) = cdf(n1 n2 - k) of the null distribution
 *     (symmetric), whose counts are the coefficients of the Gaussian
 *     binomial [n1+n2 choose m]_q (m = min(n1, n2)), computed exactly in
 *     integers;
 *   - asymptotic (_get_mwu_z): z = (U - n1 n2/2 - 0.5) / s with
 *     s = sqrt(n1 n2/12 ((n+1) - sum(t^3 - t)/(n(n-1)))), p = 2 norm.sf(z).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/stats.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void st__stats_sort(double *v, size_t n) {
  if (n > 1)
    qsort(v, n, sizeof *v, cmp_double);
}

double st__stats_median(const double *s, size_t n) {
  if (n == 0)
    return NAN;
  if (n % 2 == 1)
    return s[n / 2];
  return (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

typedef struct tagged {
  double v;
  int from_x;
} tagged;

static int cmp_tagged(const void *a, const void *b) {
  return cmp_double(&((const tagged *)a)->v, &((const tagged *)b)->v);
}

/* Exact counts need integers wider than 64 bits once C(n1+n2, m) passes
 * 2^64 (m = 8 and the other side near 800); gcc and clang have them. */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 count_t;
#else
typedef uint64_t count_t;
#endif

/* Coefficients c[0..m*n] of the Gaussian binomial [m+n choose m]_q: c[k]
 * is the number of arrangements with U = k. The product of (1 - q^(n+i))
 * over i = 1..m, divided by each (1 - q^i): ring operations only, so the
 * arithmetic is exact modulo 2^bits, and the results (each at most
 * C(m+n, m)) are exact while they fit. */
static count_t *gaussian_binomial(size_t m, size_t n) {
  size_t deg = m * n, i, k;
  count_t *c = calloc(deg + 1, sizeof *c);
  if (c == NULL)
    return NULL;
  c[0] = 1;
  for (i = 1; i <= m; i++) {
    size_t a = n + i;
    /* times (1 - q^a), truncated at deg (the final result has degree deg
     * and truncated power-series arithmetic is exact below it) */
    for (k = deg; k >= a; k--) {
      c[k] -= c[k - a];
      if (k == a)
        break;
    }
  }
  for (i = 1; i <= m; i++)
    for (k = i; k <= deg; k++)
      c[k] += c[k - i]; /* divided by (1 - q^i) */
  return c;
}

/* P(U >= k) under the null, as SciPy: cdf(m n - k). */
static st_status exact_sf(size_t n1, size_t n2, double u, double *sf) {
  size_t m = n1 < n2 ? n1 : n2, n = n1 < n2 ? n2 : n1;
  size_t deg = m * n, kc, k;
  long double below = 0, total = 0;
  count_t *c;

  if (n != 0 && m > SIZE_MAX / n / 2 / sizeof(count_t))
    return ST_ENOMEM;
  c = gaussian_binomial(m, n);
  if (c == NULL)
    return ST_ENOMEM;
  /* U of untied data is an integer; SciPy passes U.astype(int). */
  kc = deg - (size_t)u;
  for (k = 0; k <= deg; k++) {
    total += (long double)c[k];
    if (k <= kc)
      below += (long double)c[k];
  }
  free(c);
  *sf = (double)(below / total);
  return ST_OK;
}

st_status st__stats_mwu(const double *x, size_t n1, const double *y, size_t n2,
                        double *p, double *u1_out, st__mwu_method *method_out) {
  size_t n = n1 + n2, i, j;
  tagged *all;
  double r1 = 0, tie_term = 0, u1, u2, u, pv;
  int ties = 0;
  st__mwu_method method;

  if (n1 == 0 || n2 == 0)
    return ST_EINVAL;
  all = malloc(n * sizeof *all);
  if (all == NULL)
    return ST_ENOMEM;
  for (i = 0; i < n1; i++) {
    all[i].v = x[i];
    all[i].from_x = 1;
  }
  for (i = 0; i < n2; i++) {
    all[n1 + i].v = y[i];
    all[n1 + i].from_x = 0;
  }
  qsort(all, n, sizeof *all, cmp_tagged);
  /* Average ranks over each run of equal values (1-based). */
  for (i = 0; i < n; i = j) {
    size_t in_x = 0;
    double t, rank;
    for (j = i; j < n && all[j].v == all[i].v; j++)
      in_x += (size_t)all[j].from_x;
    t = (double)(j - i);
    rank = ((double)(i + 1) + (double)j) / 2.0;
    r1 += rank * (double)in_x;
    if (j - i > 1) {
      ties = 1;
      tie_term += t * t * t - t;
    }
  }
  free(all);
  u1 = r1 - (double)n1 * ((double)n1 + 1) / 2.0;
  u2 = (double)n1 * (double)n2 - u1;
  u = u1 > u2 ? u1 : u2;
  method = (n1 > 8 && n2 > 8) || ties ? ST__MWU_ASYMPTOTIC : ST__MWU_EXACT;
  if (method == ST__MWU_EXACT) {
    double sf;
    st_status rc = exact_sf(n1, n2, u, &sf);
    if (rc != ST_OK)
      return rc;
    pv = 2.0 * sf;
  } else {
    double nn = (double)n;
    double s = sqrt((double)n1 * (double)n2 / 12.0 *
                    ((nn + 1) - tie_term / (nn * (nn - 1))));
    double num = u - (double)n1 * (double)n2 / 2.0 - 0.5;
    double z;
    /* numpy's division: x/0 is +-inf, 0/0 nan (every value tied). */
    if (s > 0)
      z = num / s;
    else if (num > 0)
      z = INFINITY;
    else if (num < 0)
      z = -INFINITY;
    else
      z = NAN;
    /* norm.sf(z) = erfc(z / sqrt 2) / 2 */
    pv = 2.0 * (0.5 * erfc(z / sqrt(2.0)));
  }
  if (pv > 1)
    pv = 1;
  if (pv < 0)
    pv = 0;
  *p = pv;
  if (u1_out != NULL)
    *u1_out = u1;
  if (method_out != NULL)
    *method_out = method;
  return ST_OK;
}
