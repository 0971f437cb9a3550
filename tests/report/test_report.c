/* SPDX-License-Identifier: MIT */
/* Tests of the CLI's reporters and escaping: JSON strings for any bytes,
 * YAML strings for TAP, shell quoting and the rerun command, the events
 * line, the TAP stream and the text summary, each compared in full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"
#include "case/result.h"
#include "report/autoload.h"
#include "report/json.h"
#include "report/report.h"
#include "report/xml.h"

/* A memory stream and its buffer: open, write, then take the text. */
typedef struct mem {
  char *buf;
  size_t len;
  FILE *f;
} mem;

static void mem_open(mem *m) {
  m->buf = NULL;
  m->len = 0;
  m->f = open_memstream(&m->buf, &m->len);
  assert_non_null(m->f);
}

/* Closes the stream; the caller frees the returned text. */
static char *mem_take(mem *m) {
  assert_int_equal(fclose(m->f), 0);
  return m->buf;
}

static void expect_json(const char *in, size_t n, const char *want) {
  mem m;
  char *got;
  mem_open(&m);
  st__json_string_n(m.f, in, n);
  got = mem_take(&m);
  assert_string_equal(got, want);
  free(got);
}

static void json_string__escapes_quotes_and_controls(void **state) {
  (void)state;
  expect_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
  expect_json("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
  expect_json("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
  /* An embedded NUL is a character like any other. */
  expect_json("a\0b", 3, "\"a\\u0000b\"");
}

static void json_string__invalid_utf8_becomes_replacement(void **state) {
  (void)state;
  expect_json("\xff", 1, "\"\\ufffd\"");
  /* Overlong '/', a UTF-16 surrogate, a truncated sequence, past U+10FFFF,
   * a lone continuation byte. */
  expect_json("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");
  expect_json("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
  expect_json("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\"");
  expect_json("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  expect_json("\x80z", 2, "\"\\ufffdz\"");
}

static void json_string__valid_utf8_kept(void **state) {
  (void)state;
  expect_json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
              "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  /* Line separators would split a JSON Lines record for some readers. */
  expect_json("\xe2\x80\xa8", 3, "\"\\u2028\"");
}

static void json_string__null_is_null(void **state) {
  mem m;
  char *got;
  (void)state;
  mem_open(&m);
  st__json_string(m.f, NULL);
  got = mem_take(&m);
  assert_string_equal(got, "null");
  free(got);
}

static void yaml_string__escapes(void **state) {
  mem m;
  char *got;
  (void)state;
  mem_open(&m);
  st__yaml_string(m.f, "say \"hi\"\\\n\t\x01\xff\xc2\x85\xc3\xa9");
  fputc(' ', m.f);
  st__yaml_string(m.f, "\xf0\x9f\x98\x80");
  fputc(' ', m.f);
  st__yaml_string(m.f, NULL);
  got = mem_take(&m);
  assert_string_equal(got, "\"say \\\"hi\\\"\\\\\\n\\t\\x01\\ufffd"
                           "\\u0085\\u00e9\" \"\\U0001f600\" ~");
  free(got);
}

static void expect_quote(const char *in, const char *want) {
  mem m;
  char *got;
  mem_open(&m);
  st__shell_quote(m.f, in);
  got = mem_take(&m);
  assert_string_equal(got, want);
  free(got);
}

static void shell_quote__safe_and_unsafe(void **state) {
  (void)state;
  expect_quote("scenes/add.yaml", "scenes/add.yaml");
  expect_quote("", "''");
  expect_quote("my scenes/a b.yaml", "'my scenes/a b.yaml'");
  expect_quote("it's", "'it'\\''s'");
  expect_quote("$HOME;*", "'$HOME;*'");
}

static void report_rerun__spec_form(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  (void)state;
  memset(&cfg, 0, sizeof cfg);
  mem_open(&m);
  st__report_rerun(m.f, &cfg, "vector_add", "small", 42, "cpu",
                   "scenes/add.yaml");
  fputc('\n', m.f);
  cfg.rerun_opts = " --rounds 3";
  st__report_rerun(m.f, &cfg, "s", "c", 0, "threads", "-odd name.yaml");
  got = mem_take(&m);
  assert_string_equal(got, "scenetest run --case 'vector_add::small' --seed 42 "
                           "--platform cpu scenes/add.yaml\n"
                           "scenetest run --case 's::c' --seed 0 --platform "
                           "threads --rounds 3 ./'-odd name.yaml'");
  free(got);
}

/* A failing result with a phase, a record and a load event. */
static st_case_result *make_result(st_case_status status, const char *msg) {
  st_case_result *r = st__case_result_new("vector_add", "small",
                                          "scenes/add.yaml", 12, "cpu", 7);
  st_event ev;
  const char *loaded[] = {"/usr/lib/libx.so"};

  assert_non_null(r);
  memset(&ev, 0, sizeof ev);
  ev.name = "args";
  ev.round = -1;
  ev.start_ns = 5;
  ev.dur_ns = 1200;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  ev.name = "golden";
  ev.start_ns = 1300;
  ev.dur_ns = 10;
  ev.loaded = loaded;
  ev.n_loaded = 1;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  memset(&ev, 0, sizeof ev);
  ev.name = "load";
  ev.round = -1;
  ev.object = "/usr/lib/libx.so";
  ev.phase = "golden";
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  memset(&ev, 0, sizeof ev);
  ev.name = "record";
  ev.round = -1;
  ev.start_ns = 1400;
  ev.dur_ns = 3;
  ev.emitted = 1;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  ev.name = "run";
  ev.round = 0;
  ev.start_ns = 1500;
  ev.dur_ns = 20;
  ev.emitted = 0;
  ev.device_ns = ev.copy_ns = ST_NS_NONE; /* a platform that reports none */
  ev.status = status == ST_CASE_PASS ? ST_PHASE_OK : ST_PHASE_FAIL;
  assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
  if (status != ST_CASE_PASS)
    st__case_result_set_status(r, status, "%s", msg);
  st__case_result_set_duration(r, 51000);
  st__case_result_set_pid(r, 4242);
  return r;
}

/* A case's env (docs/scene-format.md) as an object of strings, in order,
 * escaped like every string. */
static void events_write__env(void **state) {
  mem m;
  char *got;
  const char *kv[] = {"TORCH_DEVICE_BACKEND_AUTOLOAD", "0", "Q", "a\"b\n"};
  st_case_result *r = make_result(ST_CASE_PASS, NULL);
  (void)state;
  st__case_result_set_env(r, kv, 2);
  mem_open(&m);
  st__report_events_write(m.f, r);
  got = mem_take(&m);
  assert_non_null(strstr(got, ", \"record_stale\": false, \"env\": "
                              "{\"TORCH_DEVICE_BACKEND_AUTOLOAD\": \"0\", "
                              "\"Q\": \"a\\\"b\\n\"}, \"tags\": [], "
                              "\"mistrusted\": false, \"warnings\": [], "
                              "\"quarantine\": null, \"events\": ["));
  free(got);
  st_case_result_free(r);
}

/* A case's tags (docs/scene-format.md#tags) as a list, in order. */
static void events_write__tags(void **state) {
  mem m;
  char *got;
  const char *tags[] = {"gemm", "slow"};
  st_case_result *r = make_result(ST_CASE_PASS, NULL);
  (void)state;
  st__case_result_set_tags(r, tags, 2);
  mem_open(&m);
  st__report_events_write(m.f, r);
  got = mem_take(&m);
  assert_non_null(strstr(got, ", \"env\": {}, \"tags\": [\"gemm\", \"slow\"], "
                              "\"mistrusted\": false, "));
  free(got);
  st_case_result_free(r);
}

static void events_write__spec_fields(void **state) {
  mem m;
  char *got;
  st_case_result *r = make_result(ST_CASE_FAIL, "out: \"bad\"\n\xff");
  (void)state;
  mem_open(&m);
  st__report_events_write(m.f, r);
  got = mem_take(&m);
  assert_string_equal(
      got,
      "{\"scene\": \"vector_add\", \"case\": \"small\", \"platform\": "
      "\"cpu\", \"status\": \"fail\", \"message\": \"out: \\\"bad\\\"\\n"
      "\\ufffd\", \"output\": null, \"pid\": 4242, \"duration_ns\": 51000, "
      "\"record_stale\": "
      "false, \"env\": {}, \"tags\": [], \"mistrusted\": false, "
      "\"warnings\": [], \"quarantine\": null, \"events\": ["
      "{\"name\": \"args\", \"round\": null, \"start_ns\": 5, \"dur_ns\": "
      "1200, \"status\": \"ok\", \"loaded\": []}, "
      "{\"name\": \"golden\", \"round\": null, \"start_ns\": 1300, "
      "\"dur_ns\": 10, \"status\": \"ok\", \"loaded\": "
      "[\"/usr/lib/libx.so\"]}, "
      "{\"name\": \"load\", \"object\": \"/usr/lib/libx.so\", \"phase\": "
      "\"golden\"}, "
      "{\"name\": \"record\", \"round\": null, \"start_ns\": 1400, "
      "\"dur_ns\": 3, \"status\": \"ok\", \"loaded\": [], \"emitted\": "
      "true}, "
      "{\"name\": \"run\", \"round\": 0, \"start_ns\": 1500, \"dur_ns\": 20, "
      "\"status\": \"fail\", \"loaded\": []}]}\n");
  free(got);
  st_case_result_free(r);
}

static void events_write__pass_message_null(void **state) {
  mem m;
  char *got;
  st_case_result *r = make_result(ST_CASE_PASS, NULL);
  (void)state;
  mem_open(&m);
  st__report_events_write(m.f, r);
  got = mem_take(&m);
  assert_non_null(strstr(got, "\"status\": \"pass\", \"message\": null,"));
  free(got);
  st_case_result_free(r);
}

static void feed(const st_observer *obs, st_case_result **res, size_t n) {
  st_run_info ri = {"cpu", 7, 0};
  size_t i;
  ri.total = n;
  if (obs->run_begin)
    obs->run_begin(obs->data, &ri);
  for (i = 0; i < n; i++) {
    st_case_info ci;
    memset(&ci, 0, sizeof ci);
    ci.scene = st_case_result_scene(res[i]);
    ci.name = st_case_result_case(res[i]);
    ci.file = st_case_result_file(res[i]);
    ci.platform = "cpu";
    ci.seed = 7;
    ci.index = i;
    ci.total = n;
    if (obs->case_begin)
      obs->case_begin(obs->data, &ci);
    if (obs->case_end)
      obs->case_end(obs->data, &ci, res[i]);
  }
  if (obs->run_end)
    obs->run_end(obs->data, NULL);
}

static void report_tap__plan_points_and_yaml(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[3];
  (void)state;
  res[0] = make_result(ST_CASE_PASS, NULL);
  res[1] = make_result(ST_CASE_SKIP, "no fp16\non this m\xc3\xa4"
                                     "chine");
  res[2] = make_result(ST_CASE_FAIL, "out: 1 of 4 elements differ");
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  assert_int_equal(st__report_tap_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 3);
  st__report_tap_free(&obs);
  st__report_tap_free(&obs); /* a freed observer frees again safely */
  got = mem_take(&m);
  assert_string_equal(got, "TAP version 13\n"
                           "1..3\n"
                           "ok 1 - vector_add::small\n"
                           "ok 2 - vector_add::small # SKIP no fp16 on this "
                           "m\\u00e4chine\n"
                           "not ok 3 - vector_add::small\n"
                           "  ---\n"
                           "  message: \"out: 1 of 4 elements differ\"\n"
                           "  severity: fail\n"
                           "  data:\n"
                           "    platform: \"cpu\"\n"
                           "    seed: 7\n"
                           "    status: fail\n"
                           "    file: \"scenes/add.yaml\"\n"
                           "    line: 12\n"
                           "    rerun: \"scenetest run --case "
                           "'vector_add::small' --seed 7 --platform cpu "
                           "scenes/add.yaml\"\n"
                           "  ...\n"
                           "# 3 cases: 1 passed, 1 failed, 0 errors, 1 "
                           "skipped, 0 xfail, 0 xpass\n");
  free(got);
  for (size_t i = 0; i < 3; i++)
    st_case_result_free(res[i]);
}

static void report_tap__error_severity(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res = make_result(ST_CASE_ERROR, "BackendImplementation"
                                                   "Missing: x");
  (void)state;
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  assert_int_equal(st__report_tap_new(&cfg, &obs), ST_OK);
  feed(&obs, &res, 1);
  st__report_tap_free(&obs);
  got = mem_take(&m);
  assert_non_null(strstr(got, "not ok 1 - vector_add::small\n  ---\n"));
  assert_non_null(strstr(got, "  severity: error\n"));
  assert_non_null(strstr(got, "    status: error\n"));
  free(got);
  st_case_result_free(res);
}

static void report_tap_empty__skip_plan(void **state) {
  mem m;
  char *got;
  (void)state;
  mem_open(&m);
  st__report_tap_empty(m.f, "no cases selected");
  got = mem_take(&m);
  assert_string_equal(got, "TAP version 13\n1..0 # SKIP no cases selected\n");
  free(got);
}

static void report_text__plain_lines_and_totals(void **state) {
  mem m;
  char *got, *totals;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[3];
  (void)state;
  res[0] = make_result(ST_CASE_PASS, NULL);
  res[1] = make_result(ST_CASE_SKIP, "declined");
  res[2] = make_result(ST_CASE_FAIL, "line one\nline two");
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 3);
  st__report_text_free(&obs);
  got = mem_take(&m);
  totals = strstr(got, "3 cases:");
  assert_non_null(totals);
  *totals = '\0';
  assert_string_equal(got, "PASS  vector_add::small (51.0 us)\n"
                           "SKIP  vector_add::small (skipped: declined)\n"
                           "FAIL  vector_add::small (51.0 us)\n"
                           "      line one\n"
                           "      line two\n"
                           "      rerun: scenetest run --case "
                           "'vector_add::small' --seed 7 --platform cpu "
                           "scenes/add.yaml\n");
  assert_memory_equal(
      totals + 1, " cases: 1 passed, 1 failed, 0 errors, 1 skipped in ", 48);
  /* No escape sequence anywhere off a terminal. */
  assert_null(strchr(totals + 1, '\033'));
  free(got);
  for (size_t i = 0; i < 3; i++)
    st_case_result_free(res[i]);
}

/* A kernel's message cannot drive the terminal: control bytes other than
 * newline and tab are shown as \xNN, in a failure and in a skip reason;
 * xfail shows its first line after "expected failure:"; an xpass counts
 * in the totals. */
static void report_text__control_bytes_escaped_and_xfail(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[4];
  (void)state;
  res[0] = make_result(ST_CASE_FAIL, "bad\033[2J\rdata\tok\nnext\x7f");
  res[1] = make_result(ST_CASE_SKIP, "no\033]0;title\007");
  res[2] = make_result(ST_CASE_XFAIL, "first\nsecond");
  res[3] = make_result(ST_CASE_XPASS, "unexpected pass");
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 4);
  st__report_text_free(&obs);
  got = mem_take(&m);
  assert_null(strchr(got, '\033'));
  assert_null(strchr(got, '\r'));
  assert_null(strchr(got, '\007'));
  assert_non_null(strstr(got, "      bad\\x1b[2J\\x0ddata\tok\n"
                              "      next\\x7f\n"));
  assert_non_null(strstr(got, "(skipped: no\\x1b]0;title\\x07)\n"));
  assert_non_null(strstr(got, "XFAIL vector_add::small (51.0 us)\n"
                              "      expected failure: first\n"
                              "      second\n"));
  assert_non_null(strstr(got, "XPASS vector_add::small (51.0 us)\n"
                              "      unexpected pass\n      rerun: "));
  assert_non_null(strstr(got, "4 cases: 0 passed, 1 failed, 0 errors, 1 "
                              "skipped, 1 xfailed, 1 xpassed in "));
  free(got);
  for (size_t i = 0; i < 4; i++)
    st_case_result_free(res[i]);
}

#define SPACES23 "                       "

static void report_text__terminal_progress_and_colour(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[2];
  (void)state;
  res[0] = make_result(ST_CASE_PASS, NULL);
  res[1] = make_result(ST_CASE_ERROR, "boom");
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  cfg.tty = 1;
  cfg.color = 1;
  setenv("TERM", "xterm", 1);
  unsetenv("COLUMNS");
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 2);
  st__report_text_free(&obs);
  got = mem_take(&m);
  /* The progress text, the cursor back at column 0, then spaces over it
   * (23 columns) before the verdict. */
  assert_memory_equal(got,
                      "[1/2] vector_add::small\r" SPACES23 "\r\033[32mPASS "
                      "\033[0m vector_add::small",
                      strlen("[1/2] vector_add::small\r" SPACES23
                             "\r\033[32mPASS \033[0m vector_add::small"));
  assert_non_null(strstr(got, "[2/2] vector_add::small\r" SPACES23
                              "\r\033[1;31mERROR\033[0m vector_add::small"));
  assert_non_null(strstr(got, "\033[31m2 cases: 1 passed, 0 failed, 1 "
                              "error, 0 skipped\033[0m in "));
  free(got);
  for (size_t i = 0; i < 2; i++)
    st_case_result_free(res[i]);
}

/* A narrow terminal: the progress line is cut at width - 1 columns. */
static void report_text__progress_clipped_to_width(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[1];
  (void)state;
  res[0] = make_result(ST_CASE_PASS, NULL);
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  cfg.tty = 1;
  setenv("TERM", "xterm", 1);
  setenv("COLUMNS", "12", 1); /* a memory stream has no window size */
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 1);
  st__report_text_free(&obs);
  unsetenv("COLUMNS");
  got = mem_take(&m);
  assert_memory_equal(got, "[1/1] vecto\r           \rPASS ",
                      strlen("[1/1] vecto\r           \rPASS "));
  assert_null(strchr(got, '\033')); /* no colour asked: no escape at all */
  free(got);
  st_case_result_free(res[0]);
}

/* TERM=dumb: no progress line, no carriage return, no escape. */
static void report_text__dumb_terminal(void **state) {
  mem m;
  char *got;
  st__report_config cfg;
  st_observer obs;
  st_case_result *res[1];
  (void)state;
  res[0] = make_result(ST_CASE_PASS, NULL);
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  cfg.tty = 1;
  setenv("TERM", "dumb", 1);
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  feed(&obs, res, 1);
  st__report_text_free(&obs);
  setenv("TERM", "xterm", 1);
  got = mem_take(&m);
  assert_memory_equal(got, "PASS  vector_add::small", 23);
  assert_null(strchr(got, '\033'));
  assert_null(strchr(got, '\r'));
  free(got);
  st_case_result_free(res[0]);
}

/* On a terminal the logger's lines go through the reporter: a record
 * is shown once per condition in words, above the progress line, which is
 * drawn again after it; the log line itself still reaches the log fd. */
static void report_text__log_lines_and_record_words(void **state) {
  mem m;
  char *got, logbuf[2048];
  st__report_config cfg;
  st_observer obs;
  st_run_info ri = {"cpu", 7, 1};
  st_case_info ci;
  int fds[2];
  ssize_t n;
  static const char rec[] =
      "torch_backend_autoload setting=invalid raw=\"a pid=1\" "
      "effective=disabled torch_imported=false torch_npu_loaded=false "
      "acl_loaded=true pid=%d";
  (void)state;
  assert_int_equal(pipe(fds), 0);
  st_log_set_fd(fds[1]);
  st_log_set_level(ST_LOG_TIMING);
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  cfg.tty = 1;
  setenv("TERM", "xterm", 1);
  assert_int_equal(st__report_text_new(&cfg, &obs), ST_OK);
  memset(&ci, 0, sizeof ci);
  ci.scene = "s";
  ci.name = "c";
  ci.total = 1;
  obs.run_begin(obs.data, &ri);
  obs.case_begin(obs.data, &ci);
  st__log_timing(rec, 9);
  st__log_timing(rec, 10); /* the same condition: no words again */
  st__log_timing("phase pid=9 scene=s case=c");
  st__report_text_free(&obs);
  st_log_set_fd(2);
  close(fds[1]);
  got = mem_take(&m);
  assert_string_equal(
      got, "[1/1] s::c\r          \r"
           "autoload: TORCH_DEVICE_BACKEND_AUTOLOAD=\"a pid=1\", torch "
           "device-backend autoload disabled; torch not imported, torch_npu "
           "not loaded, acl loaded (pid 9)\n"
           "[1/1] s::c\r");
  n = read(fds[0], logbuf, sizeof logbuf - 1);
  close(fds[0]);
  assert_true(n > 0);
  logbuf[n] = '\0';
  assert_non_null(strstr(logbuf, "acl_loaded=true pid=9\n[TIMING] "));
  assert_non_null(strstr(logbuf, "pid=10\n[TIMING] phase pid=9"));
  free(got);
}

static void expect_xml(const char *in, int attr, const char *want) {
  mem m;
  char *got;
  mem_open(&m);
  st__xml_escape(m.f, in, attr);
  got = mem_take(&m);
  assert_string_equal(got, want);
  free(got);
}

static void xml_escape__markup_cdata_end_and_line_ends(void **state) {
  (void)state;
  expect_xml("a<b>&c]]>\"'", 0, "a&lt;b&gt;&amp;c]]&gt;\"'");
  expect_xml("a<b>&c]]>\"'", 1, "a&lt;b&gt;&amp;c]]&gt;&quot;'");
  /* Text keeps tab and newline; attributes get references, so that
   * attribute-value normalisation does not turn them into spaces. CR is
   * a reference in both (line-end normalisation). */
  expect_xml("t\tn\nr\r", 0, "t\tn\nr&#13;");
  expect_xml("t\tn\nr\r", 1, "t&#9;n&#10;r&#13;");
  expect_xml(NULL, 0, "");
}

static void
xml_escape__characters_xml_forbids_become_replacement(void **state) {
  (void)state;
  /* C0 controls, U+FFFE and U+FFFF are not XML 1.0 characters; invalid
   * UTF-8 (a lone continuation, a surrogate, an overlong form) is
   * replaced byte by byte, as the JSON writer does. */
  expect_xml("\x01\x1b\x7f", 0, "\xef\xbf\xbd\xef\xbf\xbd\x7f");
  expect_xml("\xef\xbf\xbe\xef\xbf\xbf", 1, "\xef\xbf\xbd\xef\xbf\xbd");
  expect_xml("\x80", 0, "\xef\xbf\xbd");
  expect_xml("\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  expect_xml("\xc0\xaf", 0, "\xef\xbf\xbd\xef\xbf\xbd");
  /* Valid text past ASCII is kept as it is. */
  expect_xml("caf\xc3\xa9 \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

static void report_case_id__repeat_suffix(void **state) {
  char *id;
  (void)state;
  id = st__report_case_id("s", "c", 3, 1, 0);
  assert_string_equal(id, "s::c");
  free(id);
  id = st__report_case_id("s", "c", 3, 4, 0);
  assert_string_equal(id, "s::c@3");
  free(id);
  id = st__report_case_id("s", "c[N=7]", 2, 2, 1);
  assert_string_equal(id, "c[N=7]@2");
  free(id);
}

static void records_distinct__every_field_but_pid(void **state) {
  st_run_result *run = st__run_result_new(4);
  st__record *recs = NULL;
  size_t n = 0, i;
  char buf[32];
  const char *lines[] = {
      "torch_backend_autoload setting=invalid raw=\"a \\\"b\\\" c\" "
      "effective=disabled torch_imported=false torch_npu_loaded=true "
      "mylib_loaded=true pid=11",
      /* the same conditions in another process: not distinct */
      "torch_backend_autoload setting=invalid raw=\"a \\\"b\\\" c\" "
      "effective=disabled torch_imported=false torch_npu_loaded=true "
      "mylib_loaded=true pid=12",
      NULL, /* a case that did not emit */
      "torch_backend_autoload setting=unset raw=- effective=enabled "
      "torch_imported=true torch_npu_loaded=false mylib_loaded=false pid=13"};
  (void)state;
  assert_non_null(run);
  for (i = 0; i < 4; i++) {
    st_case_result *r = make_result(ST_CASE_PASS, NULL);
    st__case_result_set_record(r, lines[i]);
    st__run_result_set(run, i, r);
  }
  assert_int_equal(st__records_distinct(run, &recs, &n), ST_OK);
  assert_int_equal(n, 2);
  assert_int_equal(recs[0].pid, 11);
  assert_int_equal(recs[1].pid, 13);
  assert_int_equal(recs[0].n, 6);
  assert_string_equal(recs[0].fields[0].key, "setting");
  assert_string_equal(recs[0].fields[0].value, "invalid");
  assert_string_equal(recs[0].fields[1].key, "raw");
  assert_string_equal(recs[0].fields[1].value, "\"a \\\"b\\\" c\"");
  assert_string_equal(recs[0].fields[5].key, "mylib_loaded");
  assert_string_equal(recs[1].fields[1].value, "-");
  assert_string_equal(st__record_module("torch_imported", buf, sizeof buf),
                      "torch");
  assert_string_equal(st__record_module("torch_npu_loaded", buf, sizeof buf),
                      "torch_npu");
  assert_null(st__record_module("effective", buf, sizeof buf));
  st__records_free(recs, n);
  st_run_result_free(run);
}

static void run_all(st_observer *obs, st_run_result *run,
                    const st_run_info *info) {
  obs->run_begin(obs->data, info);
  obs->run_end(obs->data, run);
}

static void report_junit__suites_cases_and_properties(void **state) {
  st_run_result *run = st__run_result_new(3);
  st__report_config cfg;
  st_observer obs;
  st_run_info info;
  mem m;
  char *got;
  (void)state;
  st__run_result_set(run, 0, make_result(ST_CASE_PASS, NULL));
  st__run_result_set(run, 1, make_result(ST_CASE_FAIL, "bad <x>"));
  st__run_result_set(run, 2, make_result(ST_CASE_SKIP, "declined"));
  st__case_result_set_iteration(st__run_result_at(run, 1), 2);
  memset(&info, 0, sizeof info);
  info.platform = "cpu";
  info.seed = 7;
  info.total = 3;
  info.repeat = 2;
  info.shard_index = 1;
  info.shard_total = 3;
  info.shuffle = 1;
  info.shuffle_seed = 99;
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  assert_int_equal(st__report_junit_new(&cfg, &obs), ST_OK);
  run_all(&obs, run, &info);
  st__report_junit_free(&obs);
  got = mem_take(&m);
  assert_non_null(strstr(got,
                         "<testsuites name=\"scenetest\" tests=\"3\" "
                         "failures=\"1\" errors=\"0\" time=\"0.000153\">"));
  assert_non_null(strstr(got, "<testsuite name=\"vector_add\" tests=\"3\" "
                              "failures=\"1\" errors=\"0\" skipped=\"1\" "
                              "time=\"0.000153\" timestamp=\""));
  assert_non_null(
      strstr(got, "<property name=\"shard\" value=\"1/3\"/>\n"
                  "      <property name=\"repeat\" value=\"2\"/>\n"
                  "      <property name=\"shuffle_seed\" value=\"99\"/>\n"
                  "      <property name=\"autoload.distinct\" value=\"0\"/>"));
  assert_non_null(strstr(got,
                         "<testcase classname=\"vector_add\" name=\"small@1\" "
                         "time=\"0.000051\"/>"));
  assert_non_null(strstr(
      got, "<testcase classname=\"vector_add\" name=\"small@2\" "
           "time=\"0.000051\">\n      <failure type=\"mismatch\" "
           "message=\"bad &lt;x&gt;\">bad &lt;x&gt;\nrerun: scenetest run"));
  assert_non_null(strstr(got, "<skipped message=\"declined\"/>"));
  assert_null(strstr(got, " file=\"scenes/add.yaml\" line="));
  free(got);
  st_run_result_free(run);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(xml_escape__markup_cdata_end_and_line_ends),
      cmocka_unit_test(xml_escape__characters_xml_forbids_become_replacement),
      cmocka_unit_test(report_case_id__repeat_suffix),
      cmocka_unit_test(records_distinct__every_field_but_pid),
      cmocka_unit_test(report_junit__suites_cases_and_properties),
      cmocka_unit_test(json_string__escapes_quotes_and_controls),
      cmocka_unit_test(json_string__invalid_utf8_becomes_replacement),
      cmocka_unit_test(json_string__valid_utf8_kept),
      cmocka_unit_test(json_string__null_is_null),
      cmocka_unit_test(yaml_string__escapes),
      cmocka_unit_test(shell_quote__safe_and_unsafe),
      cmocka_unit_test(report_rerun__spec_form),
      cmocka_unit_test(events_write__spec_fields),
      cmocka_unit_test(events_write__tags),
      cmocka_unit_test(events_write__env),
      cmocka_unit_test(events_write__pass_message_null),
      cmocka_unit_test(report_tap__plan_points_and_yaml),
      cmocka_unit_test(report_tap__error_severity),
      cmocka_unit_test(report_tap_empty__skip_plan),
      cmocka_unit_test(report_text__plain_lines_and_totals),
      cmocka_unit_test(report_text__control_bytes_escaped_and_xfail),
      cmocka_unit_test(report_text__terminal_progress_and_colour),
      cmocka_unit_test(report_text__progress_clipped_to_width),
      cmocka_unit_test(report_text__dumb_terminal),
      cmocka_unit_test(report_text__log_lines_and_record_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
