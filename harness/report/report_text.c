/* SPDX-License-Identifier: MIT */
/* The text reporter: one line per case (PASS/FAIL/ERROR/SKIP, with the
 * message, captured output and rerun command of a failure), then a totals
 * line. On a terminal it also redraws a progress line ("[12/200]
 * scene::case") while cases run, and colours the verdicts unless NO_COLOR
 * is set (the CLI decides both and passes them in the config). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define BOLD_RED "\033[1;31m"
#define RESET "\033[0m"

typedef struct text_state {
  st__report_config cfg;
  size_t total;
  size_t started;
  size_t counts[4]; /* by st_case_status */
  uint64_t t0;      /* run begin, CLOCK_MONOTONIC ns */
  int progress;     /* a progress line is on screen */
} text_state;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void put_duration(FILE *out, uint64_t ns) {
  if (ns < UINT64_C(1000000))
    fprintf(out, "%.1f us", (double)ns / 1e3);
  else if (ns < UINT64_C(1000000000))
    fprintf(out, "%.2f ms", (double)ns / 1e6);
  else
    fprintf(out, "%.3f s", (double)ns / 1e9);
}

static void clear_progress(text_state *st) {
  if (st->progress) {
    /* Carriage return, then erase to the end of the line (ECMA-48 EL). */
    fputs("\r\033[K", st->cfg.out);
    st->progress = 0;
  }
}

/* Writes every line of s indented, so a multi-line message stays inside
 * its case's block. */
static void put_indented(FILE *out, const char *indent, const char *s) {
  fputs(indent, out);
  for (; *s != '\0'; s++) {
    fputc(*s, out);
    if (*s == '\n' && s[1] != '\0')
      fputs(indent, out);
  }
  if (s[-1] != '\n')
    fputc('\n', out);
}

static void text_run_begin(void *data, const st_run_info *info) {
  text_state *st = data;
  st->total = info->total;
  st->t0 = now_ns();
}

static void text_case_begin(void *data, const st_case_info *info) {
  text_state *st = data;
  st->started++;
  if (st->total == 0)
    st->total = info->total;
  if (!st->cfg.tty)
    return;
  clear_progress(st);
  /* The cursor goes back to column 0 after the progress text: a log line
   * written to the same terminal meanwhile (TIMING lines are longer than
   * this one) then overwrites it instead of being glued to its end. */
  fprintf(st->cfg.out, "\033[K[%zu/%zu] %s::%s\r", st->started, st->total,
          info->scene, info->name);
  st->progress = 1;
  fflush(st->cfg.out);
}

static void text_case_end(void *data, const st_case_info *info,
                          const st_case_result *res) {
  static const char *const labels[] = {"PASS ", "FAIL ", "ERROR", "SKIP "};
  static const char *const colors[] = {GREEN, RED, BOLD_RED, YELLOW};
  text_state *st = data;
  FILE *out = st->cfg.out;
  st_case_status status = st_case_result_status(res);
  const char *msg = st_case_result_message(res);
  const char *output = st_case_result_output(res);

  (void)info;
  if ((unsigned)status > ST_CASE_SKIP)
    status = ST_CASE_ERROR;
  st->counts[status]++;
  clear_progress(st);
  if (st->cfg.color)
    fprintf(out, "%s%s%s", colors[status], labels[status], RESET);
  else
    fputs(labels[status], out);
  fprintf(out, " %s::%s", st_case_result_scene(res), st_case_result_case(res));
  if (status == ST_CASE_SKIP) {
    fputs(" (skipped", out);
    if (msg != NULL && msg[0] != '\0')
      fprintf(out, ": %s", msg);
    fputs(")\n", out);
  } else {
    fputs(" (", out);
    put_duration(out, st_case_result_duration_ns(res));
    fputs(")\n", out);
  }
  if (status == ST_CASE_FAIL || status == ST_CASE_ERROR) {
    if (msg != NULL && msg[0] != '\0')
      put_indented(out, "      ", msg);
    if (output != NULL && output[0] != '\0') {
      fputs("      output:\n", out);
      put_indented(out, "        ", output);
    }
    fputs("      rerun: ", out);
    st__report_rerun(out, &st->cfg, st_case_result_scene(res),
                     st_case_result_case(res), st_case_result_seed(res),
                     st_case_result_platform(res), st_case_result_file(res));
    fputc('\n', out);
  }
  fflush(out);
}

static void text_run_end(void *data, const st_run_result *result) {
  text_state *st = data;
  FILE *out = st->cfg.out;
  size_t done = st->counts[0] + st->counts[1] + st->counts[2] + st->counts[3];
  int bad = st->counts[ST_CASE_FAIL] + st->counts[ST_CASE_ERROR] > 0;

  (void)result;
  clear_progress(st);
  if (st->cfg.color)
    fputs(bad ? RED : GREEN, out);
  fprintf(out, "%zu case%s: %zu passed, %zu failed, %zu error%s, %zu skipped",
          done, done == 1 ? "" : "s", st->counts[ST_CASE_PASS],
          st->counts[ST_CASE_FAIL], st->counts[ST_CASE_ERROR],
          st->counts[ST_CASE_ERROR] == 1 ? "" : "s", st->counts[ST_CASE_SKIP]);
  if (st->cfg.color)
    fputs(RESET, out);
  fputs(" in ", out);
  put_duration(out, now_ns() - st->t0);
  fputc('\n', out);
  fflush(out);
}

st_status st__report_text_new(const st__report_config *cfg, st_observer *obs) {
  text_state *st = calloc(1, sizeof *st);

  memset(obs, 0, sizeof *obs);
  if (st == NULL)
    return ST_ENOMEM;
  st->cfg = *cfg;
  st->t0 = now_ns();
  obs->data = st;
  obs->run_begin = text_run_begin;
  obs->case_begin = text_case_begin;
  obs->case_end = text_case_end;
  obs->run_end = text_run_end;
  return ST_OK;
}

void st__report_text_free(st_observer *obs) {
  if (obs == NULL)
    return;
  free(obs->data);
  obs->data = NULL;
}
