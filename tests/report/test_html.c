/* SPDX-License-Identifier: MIT */
/* Tests of the HTML escaping (report/html_escape.c), each output compared
 * in full, plus a property over every two-byte input and random hostile
 * strings; and of the HTML reporter on a synthetic run: hostile messages
 * stay text, and 20,000 cases stay under 20 MB (the size is printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/result.h"
#include "report/html_escape.h"
#include "report/json.h"
#include "report/report.h"

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

static char *mem_take(mem *m) {
  assert_int_equal(fclose(m->f), 0);
  return m->buf;
}

static void expect_text(const char *in, size_t n, const char *want) {
  mem m;
  char *got;
  mem_open(&m);
  st__html_text_n(m.f, in, n);
  got = mem_take(&m);
  assert_string_equal(got, want);
  free(got);
}

static void expect_json(const char *in, const char *want) {
  mem m;
  char *got;
  mem_open(&m);
  st__html_json_string(m.f, in);
  got = mem_take(&m);
  assert_string_equal(got, want);
  free(got);
}

#define T(lit, want) expect_text(lit, sizeof lit - 1, want)

static void html_text__markup_and_quotes(void **state) {
  (void)state;
  T("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
  T("</pre>]]><!--", "&lt;/pre&gt;]]&gt;&lt;!--");
  T("a&amp;b \"q\" 'r'", "a&amp;amp;b &quot;q&quot; &#39;r&#39;");
  T("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;");
}

static void html_text__nul_and_invalid_utf8_become_replacement(void **state) {
  (void)state;
  T("a\0b", "a\xef\xbf\xbd"
            "b");
  /* A lone continuation byte, 0xff, an overlong '/', a truncated
   * sequence, an encoded surrogate: one U+FFFD per byte. */
  T("\x80", "\xef\xbf\xbd");
  T("\xff", "\xef\xbf\xbd");
  T("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");
  T("\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd");
  T("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  /* A C1 control (U+0085), well-formed but not text. */
  T("\xc2\x85", "\xef\xbf\xbd");
}

static void html_text__controls_as_pictures(void **state) {
  (void)state;
  T("\x01\x1b[31m\x1f\x7f", "&#x2401;&#x241B;[31m&#x241F;&#x2421;");
  T("tab\tnl\n", "tab\tnl\n");
  /* CRLF reads as a line end; a lone CR is shown. */
  T("a\r\nb\rc", "a\nb&#x240D;c");
}

static void html_text__valid_utf8_kept(void **state) {
  (void)state;
  T("caf\xc3\xa9 \xe2\x98\x85 \xf0\x9f\x98\x80 \xef\xbf\xbd",
    "caf\xc3\xa9 \xe2\x98\x85 \xf0\x9f\x98\x80 \xef\xbf\xbd");
}

static void html_text__null_writes_nothing(void **state) {
  mem m;
  char *got;
  (void)state;
  mem_open(&m);
  st__html_text(m.f, NULL);
  st__html_text(m.f, "<");
  got = mem_take(&m);
  assert_string_equal(got, "&lt;");
  free(got);
}

/* The output is UTF-8 with no byte that could start markup, end an
 * attribute value or be a control character (tab and newline apart). */
static void check_safe(const char *out, size_t n) {
  const unsigned char *p = (const unsigned char *)out;
  size_t i = 0;
  while (i < n) {
    uint32_t cp;
    size_t len = st__utf8_next(p + i, n - i, &cp);
    /* st__utf8_next reads a bad byte as a 1-byte U+FFFD. */
    assert_false(cp == 0xFFFD && len == 1);
    assert_true(cp != '<' && cp != '>' && cp != '"' && cp != '\'');
    assert_true(cp >= 0x20 || cp == '\t' || cp == '\n');
    assert_true(cp != 0x7F && !(cp >= 0x80 && cp <= 0x9F));
    if (cp == '&') /* only the references this escaper writes */
      assert_true(strncmp(out + i, "&amp;", 5) == 0 ||
                  strncmp(out + i, "&lt;", 4) == 0 ||
                  strncmp(out + i, "&gt;", 4) == 0 ||
                  strncmp(out + i, "&quot;", 6) == 0 ||
                  strncmp(out + i, "&#39;", 5) == 0 ||
                  strncmp(out + i, "&#x2", 4) == 0);
    i += len;
  }
}

static void html_text__every_byte_pair_and_random_bytes_are_safe(void **state) {
  unsigned a, b, k;
  uint64_t x = 0x9E3779B97F4A7C15u;
  (void)state;
  for (a = 0; a < 256; a++)
    for (b = 0; b < 256; b++) {
      char in[2], *got;
      mem m;
      in[0] = (char)a;
      in[1] = (char)b;
      mem_open(&m);
      st__html_text_n(m.f, in, 2);
      got = mem_take(&m);
      check_safe(got, m.len);
      free(got);
    }
  for (k = 0; k < 2000; k++) {
    char in[64], *got;
    mem m;
    size_t i;
    for (i = 0; i < sizeof in; i++) {
      x ^= x << 13; /* xorshift64 */
      x ^= x >> 7;
      x ^= x << 17;
      in[i] = (char)(x >> 24);
    }
    mem_open(&m);
    st__html_text_n(m.f, in, sizeof in);
    got = mem_take(&m);
    check_safe(got, m.len);
    free(got);
  }
}

static void html_json_string__safe_in_a_script_block(void **state) {
  (void)state;
  expect_json("</script><!--&", "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
  expect_json("q\"b\\s\n\t\x01\x7f", "\"q\\\"b\\\\s\\n\\t\\u0001\\u007f\"");
  expect_json("bad\xff ok\xc3\xa9", "\"bad\\ufffd ok\xc3\xa9\"");
  expect_json("\xe2\x80\xa8", "\"\\u2028\"");
  expect_json(NULL, "null");
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  const char *p = hay;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += strlen(needle);
  }
  return n;
}

#define HOSTILE "<script>alert(1)</script></pre>]]>\x01 bad\xff"

/* A run of n cases of 12 phase events each (args, golden, record, three
 * rounds of reset, run, compare), one in a hundred failing with a hostile
 * message and output. */
static st_run_result *synthetic_run(size_t n) {
  static const char *const once[] = {"args", "golden", "record"};
  static const char *const round[] = {"reset", "run", "compare"};
  st_run_result *run = st__run_result_new(n);
  size_t i, k;
  assert_non_null(run);
  for (i = 0; i < n; i++) {
    char scene[32], kase[32];
    st_case_result *r;
    uint64_t t = 1000000000u + i * 5000000u;
    snprintf(scene, sizeof scene, "scene_%04zu", i / 10);
    snprintf(kase, sizeof kase, "case_%02zu", i % 10);
    r = st__case_result_new(scene, kase, "scenes/s.yaml", 3, "cpu", 0);
    assert_non_null(r);
    for (k = 0; k < 12; k++) {
      st_event ev;
      memset(&ev, 0, sizeof ev);
      ev.name = k < 3 ? once[k] : round[(k - 3) % 3];
      ev.round = k < 3 ? -1 : (int)(k - 3) / 3;
      ev.start_ns = t;
      ev.dur_ns = 10000u + 997u * k + (i % 13) * 131u;
      ev.status = ST_PHASE_OK;
      ev.emitted = k == 2 && i == 0;
      if (i % 100 == 7 && k == 11)
        ev.status = ST_PHASE_FAIL;
      t += ev.dur_ns + 200;
      assert_int_equal(st__case_result_add_event(r, &ev), ST_OK);
    }
    if (i % 100 == 7) {
      st__case_result_set_status(r, ST_CASE_FAIL, "%s", HOSTILE);
      st__case_result_set_output(r, HOSTILE, strlen(HOSTILE));
    }
    st__case_result_set_duration(r, t - 1000000000u - i * 5000000u);
    st__run_result_set(run, i, r);
  }
  return run;
}

static char *render(const st_run_result *run, size_t *len) {
  static char *argv[] = {"scenetest", "run", "--format", "html", HOSTILE};
  st__report_config cfg;
  st_observer obs;
  st_run_info info;
  mem m;
  mem_open(&m);
  memset(&cfg, 0, sizeof cfg);
  cfg.out = m.f;
  cfg.argc = 5;
  cfg.argv = argv;
  assert_int_equal(st__report_html_new(&cfg, &obs), ST_OK);
  memset(&info, 0, sizeof info);
  info.platform = "cpu";
  info.total = st_run_result_count(run);
  obs.run_begin(obs.data, &info);
  obs.run_end(obs.data, run);
  st__report_html_free(&obs);
  *len = 0;
  {
    char *s = mem_take(&m);
    *len = m.len;
    return s;
  }
}

static void report_html__hostile_message_stays_text(void **state) {
  st_run_result *run = synthetic_run(200);
  size_t len;
  char *page = render(run, &len);
  (void)state;
  /* The page's own two script elements, and nothing a message opened. */
  assert_int_equal(count(page, "<script"), 2);
  assert_int_equal(count(page, "</script"), 2);
  assert_int_equal(count(page, "</pre>]]"), 0);
  assert_int_equal(count(page, "<pre class=\"msg\">&lt;script&gt;alert(1)"
                               "&lt;/script&gt;&lt;/pre&gt;]]&gt;&#x2401; "
                               "bad\xef\xbf\xbd</pre>"),
                   2);
  /* Failures (2 of 200) are articles; every case is a row of the data
   * block, the failures marked. */
  assert_int_equal(count(page, "<article class=\"fail\""), 2);
  assert_int_equal(count(page, "\n[\"scene_"), 200);
  assert_int_equal(count(page, ",\"cpu\",1]"), 2);
  assert_true(strstr(page, "<b data-count=\"fail\">2</b>") != NULL);
  assert_true(strstr(page, "<b data-count=\"pass\">198</b>") != NULL);
  free(page);
  st_run_result_free(run);
}

static void report_html__20000_cases_under_20_mb(void **state) {
  st_run_result *run = synthetic_run(20000);
  size_t len;
  char *page = render(run, &len);
  (void)state;
  print_message("# 20000 cases, 12 events each, 200 failing: %zu bytes "
                "(%.2f MB)\n",
                len, (double)len / 1e6);
  assert_true(len < 20u * 1000u * 1000u);
  assert_int_equal(count(page, "<script"), 2);
  free(page);
  st_run_result_free(run);
}

/* The header of a 3-case run whose cases kept these record lines (NULL:
 * none), as the emitting case of each process does. */
static char *render_records(const char *const lines[3]) {
  st_run_result *run = synthetic_run(3);
  size_t len, i;
  char *page;
  for (i = 0; i < 3; i++)
    if (lines[i] != NULL)
      st__case_result_set_record((st_case_result *)st_run_result_get(run, i),
                                 lines[i]);
  page = render(run, &len);
  st_run_result_free(run);
  return page;
}

#define REC(setting, raw, torch, pid)                                          \
  "torch_backend_autoload setting=" setting " raw=" raw                        \
  " effective=enabled torch_imported=" torch                                   \
  " torch_npu_loaded=false pid=" pid

/* A crash's replacement child (or a -j or --isolate child) that starts at a
 * case whose golden loads torch lazily records torch_imported=true where
 * the first child, which started at a case without torch, recorded false:
 * one environment, two records, no "different conditions" banner. */
static void
report_html__records_differing_in_modules_only_no_banner(void **state) {
  static const char *const lines[3] = {REC("unset", "-", "false", "10"), NULL,
                                       REC("unset", "-", "true", "11")};
  char *page = render_records(lines);
  (void)state;
  assert_null(strstr(page, "id=\"conditions\""));
  assert_null(strstr(page, "different autoload conditions"));
  assert_int_equal(count(page, "<h2>Autoload records</h2>"), 1);
  assert_int_equal(count(page, "<p class=\"none\" id=\"moments\">"), 1);
  assert_int_equal(count(page, " pid=10</pre>"), 1);
  assert_int_equal(count(page, " pid=11</pre>"), 1);
  free(page);
}

/* Records that differ in the setting (and in pid only) keep the banner,
 * which counts the settings. */
static void report_html__records_differing_in_setting_banner(void **state) {
  static const char *const lines[3] = {REC("unset", "-", "false", "10"),
                                       REC("0", "\"0\"", "true", "11"),
                                       REC("unset", "-", "false", "12")};
  static const char *const same[3] = {REC("unset", "-", "true", "10"),
                                      REC("unset", "-", "true", "11"), NULL};
  char *page = render_records(lines);
  (void)state;
  assert_int_equal(count(page, "<div class=\"banner\" id=\"conditions\">The "
                               "processes of this run reported 2 different "
                               "autoload conditions.</div>"),
                   1);
  assert_null(strstr(page, "id=\"moments\""));
  free(page);
  page = render_records(same);
  assert_int_equal(count(page, "<h2>Autoload record</h2>"), 1);
  assert_null(strstr(page, "id=\"conditions\""));
  assert_null(strstr(page, "id=\"moments\""));
  free(page);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(html_text__markup_and_quotes),
      cmocka_unit_test(html_text__nul_and_invalid_utf8_become_replacement),
      cmocka_unit_test(html_text__controls_as_pictures),
      cmocka_unit_test(html_text__valid_utf8_kept),
      cmocka_unit_test(html_text__null_writes_nothing),
      cmocka_unit_test(html_text__every_byte_pair_and_random_bytes_are_safe),
      cmocka_unit_test(html_json_string__safe_in_a_script_block),
      cmocka_unit_test(report_html__hostile_message_stays_text),
      cmocka_unit_test(report_html__20000_cases_under_20_mb),
      cmocka_unit_test(
          report_html__records_differing_in_modules_only_no_banner),
      cmocka_unit_test(report_html__records_differing_in_setting_banner),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
