/* SPDX-License-Identifier: MIT */
/* The bench's HTML page (bench_html.h): the fingerprint, the ceilings,
 * a roofline chart as inline SVG (arithmetic intensity in FLOP/byte
 * against GFLOP/s, both log scale; for each dtype class with a FLOP
 * ceiling, its roof min(bandwidth x intensity, peak); one point a case
 * with FLOPs and bytes, failing and suspicious points marked) and the
 * table. No script: the page is the same in every browser. */
#include <math.h>
#include <string.h>

#include "cli/bench_html.h"
#include "report/html_escape.h"

#define W 720.0
#define H 420.0
#define L 70.0 /* left margin */
#define B 50.0 /* bottom margin */
#define T 20.0
#define R 20.0

typedef struct axes {
  double x0, x1, y0, y1; /* log10 bounds */
} axes;

static double px(const axes *a, double x) {
  return L + (log10(x) - a->x0) / (a->x1 - a->x0) * (W - L - R);
}

static double py(const axes *a, double y) {
  return H - B - (log10(y) - a->y0) / (a->y1 - a->y0) * (H - B - T);
}

static void widen(double v, double *lo, double *hi) {
  if (!(v > 0) || isinf(v))
    return;
  if (log10(v) < *lo)
    *lo = log10(v);
  if (log10(v) > *hi)
    *hi = log10(v);
}

static const char *const colors[] = {"#6a3d9a", "#1f78b4", "#33a02c", "#ff7f00",
                                     "#b15928"};

/* Axes that hold every point and every drawn roof's ridge and peak,
 * whole decades with one to spare on each side. */
static void fit_axes(axes *ap, const st__bench_case *cs, size_t n,
                     const st__bench_figures *fs, const st__ceilings *cl,
                     const int *used) {
  axes a = {INFINITY, -INFINITY, INFINITY, -INFINITY};
  double bw = cl->bytes_per_s * 1e-9;
  size_t i;
  int k;
  for (i = 0; i < n; i++)
    if (!isnan(fs[i].gflops) && cs[i].m.bytes > 0 && cs[i].m.flops > 0) {
      widen(cs[i].m.flops / cs[i].m.bytes, &a.x0, &a.x1);
      widen(fs[i].gflops, &a.y0, &a.y1);
    }
  for (k = 0; k < ST__DCLASS_COUNT; k++)
    if (used[k] && cl->flops_per_s[k] > 0) {
      widen(cl->flops_per_s[k] * 1e-9, &a.y0, &a.y1);
      if (bw > 0)
        widen(cl->flops_per_s[k] * 1e-9 / bw, &a.x0, &a.x1);
    }
  if (!isfinite(a.x0)) {
    a.x0 = -2;
    a.x1 = 2;
  }
  if (!isfinite(a.y0)) {
    a.y0 = -2;
    a.y1 = 2;
  }
  a.x0 = floor(a.x0) - 1;
  a.x1 = ceil(a.x1) + 1;
  a.y0 = floor(a.y0) - 1;
  a.y1 = ceil(a.y1) + 1;
  *ap = a;
}

static void roofline(FILE *f, const st__bench_case *cs, size_t n,
                     const st__bench_figures *fs, const st__ceilings *cl) {
  axes a;
  double bw = cl->bytes_per_s * 1e-9; /* GB/s */
  size_t i;
  int k, tick, used[ST__DCLASS_COUNT] = {0}, any = 0;

  /* The roofs of the dtype classes the cases have (all without one). */
  for (i = 0; i < n; i++)
    if (!isnan(fs[i].gflops))
      used[cs[i].m.dclass % ST__DCLASS_COUNT] = any = 1;
  if (!any)
    for (k = 0; k < ST__DCLASS_COUNT; k++)
      used[k] = 1;
  fit_axes(&a, cs, n, fs, cl, used);
  fprintf(f,
          "<svg id=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" "
          "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "fill=\"none\" stroke=\"#999\"/>\n",
          W, H, W, H, L, T, W - L - R, H - B - T);
  for (tick = (int)a.x0; tick <= (int)a.x1; tick++)
    fprintf(f,
            "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
            "text-anchor=\"middle\">1e%d</text>\n",
            px(&a, pow(10, tick)), H - B + 16, tick);
  for (tick = (int)a.y0; tick <= (int)a.y1; tick++)
    fprintf(f,
            "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
            "text-anchor=\"end\">1e%d</text>\n",
            L - 6, py(&a, pow(10, tick)) + 4, tick);
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
          "text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n"
          "<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 14 %.1f)\">GFLOP/s</text>\n",
          L + (W - L - R) / 2, H - 12, T + (H - B - T) / 2,
          T + (H - B - T) / 2);
  /* The roofs: bandwidth x intensity up to each class's peak. */
  for (k = 0; k < ST__DCLASS_COUNT; k++) {
    double peak = cl->flops_per_s[k] * 1e-9, xl = pow(10, a.x0),
           xr = pow(10, a.x1), ridge;
    if (!used[k] || !(peak > 0))
      continue;
    ridge = bw > 0 ? peak / bw : xl;
    if (ridge < xl)
      ridge = xl;
    fprintf(f,
            "<polyline class=\"ceiling\" data-class=\"%s\" fill=\"none\" "
            "stroke=\"%s\" stroke-width=\"1.5\" points=\"",
            st__dclass_name((st__dclass)k), colors[k]);
    if (bw > 0 && bw * xl < peak)
      fprintf(f, "%.1f,%.1f ", px(&a, xl), py(&a, bw * xl));
    fprintf(f, "%.1f,%.1f %.1f,%.1f\"/>\n", px(&a, ridge), py(&a, peak),
            px(&a, xr), py(&a, peak));
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" "
            "text-anchor=\"end\">%s %.3g GFLOP/s</text>\n",
            px(&a, xr) - 4, py(&a, peak) - 4, colors[k],
            st__dclass_name((st__dclass)k), peak);
  }
  for (i = 0; i < n; i++) {
    const st__bench_case *c = &cs[i];
    const st__bench_figures *g = &fs[i];
    const char *cls = g->suspicious               ? "point suspicious"
                      : c->status == ST_CASE_PASS ? "point"
                                                  : "point failing";
    if (isnan(g->gflops) || !(c->m.bytes > 0) || !(c->m.flops > 0))
      continue;
    fprintf(f,
            "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
            "fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"><title>",
            cls, px(&a, c->m.flops / c->m.bytes), py(&a, g->gflops),
            colors[c->m.dclass % ST__DCLASS_COUNT],
            g->suspicious               ? "#e31a1c"
            : c->status == ST_CASE_PASS ? "none"
                                        : "#000");
    st__html_text(f, c->scene);
    fputs("::", f);
    st__html_text(f, c->kase);
    fprintf(f, ": %.4g GFLOP/s%s</title></circle>\n", g->gflops,
            g->suspicious ? " (suspicious)" : "");
  }
  fputs("</svg>\n", f);
}

static void cell(FILE *f, double v, const char *fmt) {
  fputs("<td>", f);
  if (isnan(v))
    fputs("-", f);
  else
    fprintf(f, fmt, v);
  fputs("</td>", f);
}

void st__bench_html(FILE *f, const st__bench_case *cs, size_t n,
                    const st__bench_figures *fs, const st__ceilings *cl,
                    const st__fingerprint *fp) {
  size_t i;
  int k;
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        "<title>scenetest bench</title><style>"
        "body{font-family:sans-serif;margin:1.5em}"
        "table{border-collapse:collapse}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:right}"
        "td:first-child,th:first-child{text-align:left}"
        "tr.suspicious td{background:#fde0e0}tr.failing td{color:#a00}"
        "</style></head><body>\n<h1>scenetest bench</h1>\n"
        "<table id=\"fingerprint\">",
        f);
  for (i = 0; i < fp->n; i++) {
    fputs("<tr><th>", f);
    st__html_text(f, fp->key[i]);
    fputs("</th><td>", f);
    st__html_text(f, fp->value[i]);
    fputs("</td></tr>", f);
  }
  fputs("</table>\n<h2>Ceilings</h2>\n<table id=\"ceilings\"><tr><th>"
        "memory</th>",
        f);
  cell(f, cl->bytes_per_s > 0 ? cl->bytes_per_s * 1e-9 : NAN, "%.3f GB/s");
  fputs("</tr>", f);
  for (k = 0; k < ST__DCLASS_COUNT; k++) {
    fprintf(f, "<tr><th>%s</th>", st__dclass_name((st__dclass)k));
    cell(f, cl->flops_per_s[k] > 0 ? cl->flops_per_s[k] * 1e-9 : NAN,
         "%.3f GFLOP/s");
    fputs("</tr>", f);
  }
  fputs("</table>\n<h2>Roofline</h2>\n", f);
  roofline(f, cs, n, fs, cl);
  fputs("<h2>Cases</h2>\n<table id=\"cases\"><tr><th>case</th><th>status"
        "</th><th>rounds</th><th>median ns</th><th>min ns</th><th>p10 ns"
        "</th><th>p90 ns</th><th>GFLOP/s</th><th>GB/s</th><th>% FLOP "
        "ceiling</th><th>% bandwidth</th><th>bound</th><th>flags</th>"
        "<th>message</th></tr>\n",
        f);
  for (i = 0; i < n; i++) {
    const st__bench_case *c = &cs[i];
    const st__bench_figures *g = &fs[i];
    int t = c->m.stats.rounds > 0;
    fprintf(f, "<tr class=\"%s\"><td>",
            g->suspicious               ? "suspicious"
            : c->status == ST_CASE_PASS ? "case"
                                        : "failing");
    st__html_text(f, c->scene);
    fputs("::", f);
    st__html_text(f, c->kase);
    fprintf(f, "</td><td>%s</td><td>%llu</td>", st_case_status_name(c->status),
            (unsigned long long)c->m.stats.rounds);
    cell(f, t ? c->m.stats.median : NAN, "%.0f");
    cell(f, t ? c->m.stats.min : NAN, "%.0f");
    cell(f, t ? c->m.stats.p10 : NAN, "%.0f");
    cell(f, t ? c->m.stats.p90 : NAN, "%.0f");
    cell(f, g->gflops, "%.4g");
    cell(f, g->gbps, "%.4g");
    cell(f, g->flops_fr * 100, "%.1f%%");
    cell(f, g->bytes_fr * 100, "%.1f%%");
    fprintf(f, "<td>%s</td><td>%s%s</td><td class=\"message\">",
            g->bound ? g->bound : "-", g->suspicious ? "suspicious " : "",
            c->m.device_time ? "device" : "");
    if (c->message != NULL)
      st__html_text(f, c->message);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
}
