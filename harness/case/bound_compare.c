/* SPDX-License-Identifier: MIT */
/* The compare of an output under `tolerance: bound`
 * (case/bound_compare.h). Element at a time: the bound differs per
 * element, and a bound check is rarer than the allclose one. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bound.h"
#include "case/bound_compare.h"
#include "case/compare.h"

#define TABLE_ROWS 8

double st__bound_at(const st__rarg *ra, const double *magsum,
                    const double *nterm, size_t i, double actual,
                    double expected) {
  double g = ra->bound_gamma;
  if (nterm != NULL && !(nterm[i] >= 0 && nterm[i] < 0x1p63))
    return NAN; /* a NaN or infinite row */
  if (nterm != NULL && !st__bound_gamma((uint64_t)nterm[i], ra->bound_uc, &g))
    return NAN;
  return st__bound_allowed(ra->bound_factor, g, magsum[i], ra->bound_uo, actual,
                           expected, ra->atol);
}

static int close_with(double a, double e, double allowed, int equal_nan) {
  const double d = fabs(a - e);
  return a == e || (d <= DBL_MAX && d <= allowed) ||
         (equal_nan && isnan(a) && isnan(e));
}

int st__bound_close(const st__rarg *ra, const st_tensor *a, const st_tensor *e,
                    const double *magsum, const double *nterm, size_t i) {
  const double x = st_tensor_get_f64(a, i), y = st_tensor_get_f64(e, i);
  return close_with(x, y, st__bound_at(ra, magsum, nterm, i, x, y),
                    ra->equal_nan);
}

static int same_layout(const st_tensor *a, const st_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->numel != b->numel)
    return 0;
  for (int d = 0; d < a->ndim && d < ST_MAX_DIMS; d++)
    if (a->shape[d] != b->shape[d])
      return 0;
  return 1;
}

/* "n 1024, gamma(n) 6.1e-05" or "n per element (softmax)", then the
 * compute dtype, bound_factor and atol. */
static void params_str(const st__rarg *ra, char *buf, size_t size) {
  char n[96];
  if (ra->bound_softmax)
    snprintf(n, sizeof n, "n per element (softmax)");
  else
    snprintf(n, sizeof n, "n %llu, gamma(n) %.6g",
             (unsigned long long)ra->bound_n, ra->bound_gamma);
  int ec, eo;
  (void)frexp(ra->bound_uc, &ec);
  (void)frexp(ra->bound_uo, &eo);
  snprintf(buf, size,
           "tolerance bound: %s, u_c 2^%d, u_o 2^%d, bound_factor %g, atol %g",
           n, ec - 1, eo - 1, ra->bound_factor, ra->atol);
}

typedef struct bound_pass {
  const st__rarg *ra;
  const st_tensor *a, *e;
  const double *magsum, *nterm;
} bound_pass;

static int bound_pass_at(const void *data, size_t i) {
  const bound_pass *b = data;
  return st__bound_close(b->ra, b->a, b->e, b->magsum, b->nterm, i);
}

st_status st__bound_compare(const st__rarg *ra, const st_tensor *a,
                            const st_tensor *e, const double *magsum,
                            const double *nterm, char *msg, size_t size) {
  size_t first;
  double maxd;
  if (msg != NULL && size > 0)
    msg[0] = '\0';
  if (!same_layout(a, e) || magsum == NULL) {
    if (msg != NULL && size > 0)
      snprintf(msg, size, "tensor '%s': %s", ra->name,
               magsum == NULL ? "tolerance: bound without golden's magnitude "
                                "sums"
                              : "cannot compare: dtype or shape differs");
    return ST_EINVAL;
  }
  const bound_pass bp = {ra, a, e, magsum, nterm};
  const size_t count =
      st__compare_scan(a, e, bound_pass_at, &bp, &first, &maxd);
  if (count == 0)
    return ST_OK;
  if (msg != NULL && size > 0) {
    char index[ST__INDEX_CHARS], va[ST__VALUE_CHARS], ve[ST__VALUE_CHARS],
        p[200];
    const double x = st_tensor_get_f64(a, first),
                 y = st_tensor_get_f64(e, first);
    st__element_strs(a, e, first, 0, index, va, ve);
    params_str(ra, p, sizeof p);
    snprintf(msg, size,
             "tensor '%s': %zu of %zu elements differ; first at %s: actual "
             "%s, expected %s, bound %.6g; max abs diff %.9g; %s",
             ra->name, count, a->numel, index, va, ve,
             st__bound_at(ra, magsum, nterm, first, x, y), maxd, p);
  }
  return ST_EMISMATCH;
}

void st__bound_detail(FILE *out, const st__rarg *ra, const st_tensor *a,
                      const st_tensor *e, const double *magsum,
                      const double *nterm) {
  static const char *const head[6] = {"index",    "actual", "expected",
                                      "abs diff", "bound",  "diff/bound"};
  size_t count = 0, first = 0, worst_abs = 0, worst_frac = 0;
  size_t rows[TABLE_ROWS];
  double max_abs = -1, max_frac = -1;
  char cell[TABLE_ROWS][6][ST_MAX_DIMS * 24 + 4];
  int width[5] = {14, 16, 16, 12, 12};
  for (size_t i = 0; i < a->numel; i++) {
    if (st__bound_close(ra, a, e, magsum, nterm, i))
      continue;
    const double x = st_tensor_get_f64(a, i), y = st_tensor_get_f64(e, i);
    const double d = fabs(x - y), b = st__bound_at(ra, magsum, nterm, i, x, y);
    const double f = d / b;
    if (count < TABLE_ROWS)
      rows[count] = i;
    if (count++ == 0)
      first = i;
    /* A NaN is the greatest, the first one (as torch.max). */
    if (max_abs < 0 || (!isnan(max_abs) && (isnan(d) || d > max_abs)))
      max_abs = d, worst_abs = i;
    if (max_frac < 0 || (!isnan(max_frac) && (isnan(f) || f > max_frac)))
      max_frac = f, worst_frac = i;
  }
  if (count == 0)
    return;
  char ix[ST__INDEX_CHARS], va[ST__VALUE_CHARS], ve[ST__VALUE_CHARS], p[200];
  params_str(ra, p, sizeof p);
  st__detail_head(out, ra->name, a, e, p, ra->equal_nan, count, first);
  st__element_strs(a, e, worst_abs, 1, ix, va, ve);
  fprintf(out,
          "\n  Greatest absolute difference: %.9g at index %s (up to %.6g "
          "allowed there): actual %s, expected %s",
          max_abs, ix,
          st__bound_at(ra, magsum, nterm, worst_abs,
                       st_tensor_get_f64(a, worst_abs),
                       st_tensor_get_f64(e, worst_abs)),
          va, ve);
  st__format_torch_index(a, worst_frac, ix, sizeof ix);
  fprintf(out, "\n  Greatest fraction of the bound: %.6g at index %s", max_frac,
          ix);
  const size_t nr = count < TABLE_ROWS ? count : TABLE_ROWS;
  for (size_t k = 0; k < nr; k++) {
    const size_t i = rows[k];
    const double x = st_tensor_get_f64(a, i), y = st_tensor_get_f64(e, i);
    const double d = fabs(x - y), b = st__bound_at(ra, magsum, nterm, i, x, y);
    st__format_torch_index(a, i, cell[k][0], sizeof cell[k][0]);
    st__compare_value_str(a, i, cell[k][1], sizeof cell[k][1]);
    st__compare_value_str(e, i, cell[k][2], sizeof cell[k][2]);
    snprintf(cell[k][3], sizeof cell[k][3], "%.6g", d);
    snprintf(cell[k][4], sizeof cell[k][4], "%.6g", b);
    snprintf(cell[k][5], sizeof cell[k][5], "%.6g", d / b);
    for (int c = 0; c < 5; c++)
      if ((int)strlen(cell[k][c]) + 1 > width[c])
        width[c] = (int)strlen(cell[k][c]) + 1;
  }
  fprintf(out, "\n  %-*s %-*s %-*s %-*s %-*s %s", width[0], head[0], width[1],
          head[1], width[2], head[2], width[3], head[3], width[4], head[4],
          head[5]);
  for (size_t k = 0; k < nr; k++)
    fprintf(out, "\n  %-*s %-*s %-*s %-*s %-*s %s", width[0], cell[k][0],
            width[1], cell[k][1], width[2], cell[k][2], width[3], cell[k][3],
            width[4], cell[k][4], cell[k][5]);
  if (count > TABLE_ROWS)
    fprintf(out, "\n  ... %zu more", count - TABLE_ROWS);
}

st_status st__bound_tensor(const st__rarg *ra, const st_tensor *a,
                           const st_tensor *e, const double *magsum,
                           const double *nterm, st_tensor *out) {
  double *v = malloc((a->numel ? a->numel : 1) * sizeof *v);
  if (v == NULL)
    return ST_ENOMEM;
  for (size_t i = 0; i < a->numel; i++)
    v[i] = st__bound_at(ra, magsum, nterm, i, st_tensor_get_f64(a, i),
                        st_tensor_get_f64(e, i));
  *out = *a;
  out->dtype = ST_DTYPE_FLOAT64;
  out->data = v;
  out->nbytes = a->numel * sizeof *v;
  return ST_OK;
}
