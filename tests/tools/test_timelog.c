/* SPDX-License-Identifier: MIT */
/* The TIMING log parser (docs/measuring.md#the-phase-line,
 * docs/measuring.md#the-phase-line): phase lines and records wherever the token
 * sits in a line, the raw field's escaping read back exactly, and every
 * malformed form refused with a column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/record.h>

#include "case/record.h"
#include "tools/timelog.h"

static st__tl_kind parse(const char *s, st__tl_line *l) {
  return st__timelog_parse(s, strlen(s), l);
}

/* Asserts that a name the parser took holds exactly want. */
static void assert_text(st__tl_text t, const char *want) {
  assert_int_equal(t.n, strlen(want));
  assert_memory_equal(t.s, want, t.n);
}

static void timelog_parse__phase_with_prefix(void **state) {
  st__tl_line l;
  (void)state;
  assert_int_equal(
      parse("2026-12-01T18:00:00.123Z job#7 | [TIMING] phase pid=4242 "
            "scene=vector_add case=small name=run round=1 dur_ns=51000 "
            "status=ok\r\n",
            &l),
      ST__TL_PHASE);
  assert_int_equal(l.u.phase.pid, 4242);
  assert_text(l.u.phase.scene, "vector_add");
  assert_text(l.u.phase.kase, "small");
  assert_text(l.u.phase.name, "run");
  assert_int_equal(l.u.phase.round, 1);
  assert_true(l.u.phase.dur_ns == 51000);
  assert_string_equal(l.u.phase.status, "ok");
  assert_false(l.u.phase.has_device);
  assert_int_equal(l.u.phase.iter, 0);
}

static void timelog_parse__phase_optional_fields(void **state) {
  st__tl_line l;
  (void)state;
  assert_int_equal(parse("[TIMING] phase pid=1 scene=s case=c@3 name=run "
                         "round=0 dur_ns=18446744073709551615 status=fail "
                         "device_ns=7 copy_ns=9 iter=3 future=field",
                         &l),
                   ST__TL_PHASE);
  assert_text(l.u.phase.kase, "c"); /* the @k suffix dropped */
  assert_true(l.u.phase.dur_ns == UINT64_MAX);
  assert_true(l.u.phase.has_device && l.u.phase.device_ns == 7);
  assert_true(l.u.phase.has_copy && l.u.phase.copy_ns == 9);
  assert_int_equal(l.u.phase.iter, 3);
  assert_string_equal(l.u.phase.status, "fail");
  assert_int_equal(parse("[TIMING] phase pid=1 scene=s case=c name=args "
                         "round=- dur_ns=5 status=ok",
                         &l),
                   ST__TL_PHASE);
  assert_int_equal(l.u.phase.round, -1);
}

static void timelog_parse__not_timing(void **state) {
  st__tl_line l;
  (void)state;
  assert_int_equal(parse("PASS  vector_add::small (1.0 us)", &l), ST__TL_NONE);
  assert_int_equal(parse("[WARNING] phase pid=1", &l), ST__TL_NONE);
  assert_int_equal(parse("[TIMING] something else entirely", &l), ST__TL_NONE);
  assert_int_equal(parse("[TIMING]phase pid=1", &l), ST__TL_NONE);
  assert_int_equal(parse("", &l), ST__TL_NONE);
}

static void expect_bad(const char *line, size_t column) {
  st__tl_line l;
  if (parse(line, &l) != ST__TL_BAD)
    fail_msg("accepted: %s", line);
  assert_non_null(l.error);
  if (column != 0 && l.column != column)
    fail_msg("column %zu, expected %zu (%s): %s", l.column, column, l.error,
             line);
}

static void timelog_parse__bad_phase(void **state) {
  (void)state;
  /* "[TIMING] phase " is 15 bytes: the first field starts at column 16. */
  expect_bad("[TIMING] phase pid scene=s", 19);
  expect_bad("[TIMING] phase pid=-1 scene=s case=c name=run round=0 "
             "dur_ns=1 status=ok",
             20);
  expect_bad("[TIMING] phase pid=1 scene=s case=c name=run round=0 "
             "dur_ns=18446744073709551616 status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 scene=s case=c name=run round=0 "
             "dur_ns=1 status=maybe",
             0);
  expect_bad("[TIMING] phase pid=1 scene=s case=c name=run round=x "
             "dur_ns=1 status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 scene=s case=c name=run round=0 "
             "status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 pid=2 scene=s case=c name=run round=0 "
             "dur_ns=1 status=ok",
             22);
  expect_bad("[TIMING] phase pid=1 scene= case=c name=run round=0 "
             "dur_ns=1 status=ok",
             0);
}

static void timelog_parse__long_and_binary_lines(void **state) {
  size_t n = 100000, i;
  char *buf = malloc(n + 64);
  st__tl_line l;
  (void)state;
  assert_non_null(buf);
  /* A line that lacks fields is refused, however long its scene. */
  strcpy(buf, "[TIMING] phase scene=");
  for (i = strlen(buf); i < n; i++)
    buf[i] = 'x';
  strcpy(buf + n, " pid=1");
  assert_int_equal(st__timelog_parse(buf, strlen(buf), &l), ST__TL_BAD);
  /* NUL bytes before the token do not end the line. */
  {
    static const char nul_before[] = "a\0b [TIMING] phase pid=1 scene=s "
                                     "case=c name=run round=0 dur_ns=2 "
                                     "status=ok";
    assert_int_equal(st__timelog_parse(nul_before, sizeof nul_before - 1, &l),
                     ST__TL_PHASE);
  }
  assert_true(l.u.phase.dur_ns == 2);
  /* A NUL byte inside a value is refused. */
  {
    static const char nul_inside[] = "[TIMING] phase pid=1 scene=s\0t "
                                     "case=c name=run round=0 dur_ns=2 "
                                     "status=ok";
    assert_int_equal(st__timelog_parse(nul_inside, sizeof nul_inside - 1, &l),
                     ST__TL_BAD);
  }
  free(buf);
}

/* A matrix case's name is as long as its values make it: a phase line
 * with a 4,000-byte case name (and a 300-byte scene) is read whole, the
 * "@k" suffix still dropped. */
static void timelog_parse__case_name_longer_than_255_bytes(void **state) {
  size_t n = 4000, i;
  char *line = malloc(n + 600), *p;
  st__tl_line l;
  (void)state;
  assert_non_null(line);
  p = line + sprintf(line, "[TIMING] phase pid=7 scene=");
  for (i = 0; i < 300; i++)
    *p++ = 's';
  p += sprintf(p, " case=grid[");
  for (i = 0; i < n - 6; i++)
    *p++ = (char)('a' + i % 26);
  p += sprintf(p, "]@2 name=run round=0 dur_ns=5 status=ok");
  assert_int_equal(st__timelog_parse(line, (size_t)(p - line), &l),
                   ST__TL_PHASE);
  assert_int_equal(l.u.phase.scene.n, 300);
  assert_int_equal(l.u.phase.kase.n, n);
  assert_memory_equal(l.u.phase.kase.s, "grid[abc", 8);
  assert_int_equal(l.u.phase.kase.s[n - 1], ']');
  assert_text(l.u.phase.name, "run");
  free(line);
}

static void timelog_parse__record(void **state) {
  st__tl_line l;
  (void)state;
  assert_int_equal(
      parse("ci> [TIMING] torch_backend_autoload setting=0 raw=\"0\" "
            "effective=disabled torch_imported=true torch_npu_loaded=false "
            "pid=4242\n",
            &l),
      ST__TL_RECORD);
  assert_string_equal(l.u.record.setting, "0");
  assert_string_equal(l.u.record.raw, "\"0\"");
  assert_string_equal(l.u.record.value, "0");
  assert_string_equal(l.u.record.effective, "disabled");
  assert_int_equal(l.u.record.n_modules, 2);
  assert_string_equal(l.u.record.modules[0].field, "torch_imported");
  assert_true(l.u.record.modules[0].loaded);
  assert_string_equal(l.u.record.modules[1].field, "torch_npu_loaded");
  assert_false(l.u.record.modules[1].loaded);
  assert_int_equal(l.u.record.pid, 4242);

  assert_int_equal(parse("[TIMING] torch_backend_autoload setting=unset "
                         "raw=- effective=enabled torch_imported=false "
                         "torch_npu_loaded=false acl_loaded=true pid=1",
                         &l),
                   ST__TL_RECORD);
  assert_string_equal(l.u.record.raw, "-");
  assert_int_equal(l.u.record.n_modules, 3);
  assert_string_equal(l.u.record.modules[2].field, "acl_loaded");
  assert_true(l.u.record.modules[2].loaded);
}

/* The raw escaping of docs/measuring.md#the-autoload-record, read back: \\ \"
 * \n \t \r, \ooo for the other bytes below 0x20 and from 0x7f, spaces as they
 * are. */
static void timelog_parse__raw_escapes(void **state) {
  st__tl_line l;
  (void)state;
  assert_int_equal(
      parse("[TIMING] torch_backend_autoload setting=invalid "
            "raw=\"a b\\\\c\\\"d\\n\\t\\r\\001\\177\\377\" effective=disabled "
            "torch_imported=false torch_npu_loaded=false pid=7",
            &l),
      ST__TL_RECORD);
  assert_int_equal(l.u.record.value_len, 13);
  assert_memory_equal(l.u.record.value, "a b\\c\"d\n\t\r\001\177\377", 13);
  assert_false(l.u.record.truncated);
  assert_string_equal(l.u.record.raw,
                      "\"a b\\\\c\\\"d\\n\\t\\r\\001\\177\\377\"");
  /* An empty value (invalid setting, docs/measuring.md#the-autoload-record). */
  assert_int_equal(parse("[TIMING] torch_backend_autoload setting=invalid "
                         "raw=\"\" effective=disabled torch_imported=false "
                         "torch_npu_loaded=false pid=7",
                         &l),
                   ST__TL_RECORD);
  assert_int_equal(l.u.record.value_len, 0);
}

/* What record.c prints, read back: every byte value 1..255, values of 0 to
 * 70 bytes (truncated past 64). The printer is the library's own
 * st_autoload_format_raw. */
static void timelog_parse__raw_round_trip(void **state) {
  char value[80], raw[512], line[1024];
  st__tl_line l;
  size_t len, i, b;
  (void)state;
  for (b = 1; b < 256; b++) {
    for (len = 0; len <= 70; len += 7) {
      for (i = 0; i < len; i++)
        value[i] = (char)(i % 3 == 0 ? b : (size_t)'a' + i % 26);
      value[len] = '\0';
      st_autoload_format_raw(value, raw, sizeof raw);
      snprintf(line, sizeof line,
               "x [TIMING] torch_backend_autoload setting=invalid raw=%s "
               "effective=disabled torch_imported=false "
               "torch_npu_loaded=false pid=3",
               raw);
      if (parse(line, &l) != ST__TL_RECORD)
        fail_msg("byte %zu, length %zu: %s at %zu: %s", b, len, l.error,
                 l.column, line);
      assert_string_equal(l.u.record.raw, raw);
      assert_int_equal(l.u.record.truncated, len > 64);
      assert_int_equal(l.u.record.value_len, len > 64 ? (size_t)64 : len);
      assert_memory_equal(l.u.record.value, value, len > 64 ? (size_t)64 : len);
    }
  }
}

/* A scene= or case= value with a space (a matrix case named by an
 * expression, docs/scene-format.md#matrix-cases), a quote, a backslash
 * or a control byte is printed quoted (case/record.c st__timing_name)
 * and read back whole; a plain name stays bare. */
static void timelog_parse__quoted_names(void **state) {
  static const char *const names[] = {"rows[M=2 * TILE]",
                                      "a\"b",
                                      "back\\slash",
                                      "tab\there",
                                      "grid[X=max(A, B),Y=1]",
                                      "\x01\x7f\xc3\xa9",
                                      "plain[N=4]"};
  char line[1024];
  st__tl_line l;
  (void)state;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *hs, *hc;
    const char *qs = st__timing_name("my scene", &hs);
    const char *qc = st__timing_name(names[i], &hc);
    assert_non_null(qs);
    assert_non_null(qc);
    snprintf(line, sizeof line,
             "[TIMING] phase pid=1 scene=%s case=%s name=run round=0 "
             "dur_ns=5 status=ok",
             qs, qc);
    if (parse(line, &l) != ST__TL_PHASE)
      fail_msg("%s at %zu: %s", l.error, l.column, line);
    assert_text(l.u.phase.scene, "my scene");
    assert_text(l.u.phase.kase, names[i]);
    assert_int_equal(hc == NULL, i == 6); /* only plain[N=4] is bare */
    free(hs);
    free(hc);
  }
  /* Unterminated, unknown escape, a bare quote inside, nothing after. */
  expect_bad("[TIMING] phase pid=1 scene=\"s t case=c name=run round=0 "
             "dur_ns=1 status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 scene=\"s\\q\" case=c name=run round=0 "
             "dur_ns=1 status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 scene=s case=\"a\"b\" name=run round=0 "
             "dur_ns=1 status=ok",
             0);
  expect_bad("[TIMING] phase pid=1 scene=s case=\"\" name=run round=0 "
             "dur_ns=1 status=ok",
             0);
}

static void timelog_parse__raw_truncated(void **state) {
  char line[512];
  st__tl_line l;
  (void)state;
  snprintf(line, sizeof line,
           "[TIMING] torch_backend_autoload setting=invalid raw=\"%s...\" "
           "effective=disabled torch_imported=false torch_npu_loaded=false "
           "pid=7",
           "0123456789012345678901234567890123456789012345678901234567890123");
  assert_int_equal(parse(line, &l), ST__TL_RECORD);
  assert_true(l.u.record.truncated);
  assert_int_equal(l.u.record.value_len, 64);
  /* 65 bytes and no "...": the printer never writes that. */
  snprintf(line, sizeof line,
           "[TIMING] torch_backend_autoload setting=invalid raw=\"%s\" "
           "effective=disabled torch_imported=false torch_npu_loaded=false "
           "pid=7",
           "01234567890123456789012345678901234567890123456789012345678901234");
  assert_int_equal(parse(line, &l), ST__TL_BAD);
}

static void timelog_parse__bad_record(void **state) {
  static const char *const bad[] = {
      /* unknown setting */
      "setting=2 raw=\"2\" effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* raw missing its quotes */
      "setting=0 raw=0 effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* unterminated */
      "setting=0 raw=\"0 effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* an escape the printer never writes */
      "setting=invalid raw=\"\\x41\" effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* octal for a printable byte */
      "setting=invalid raw=\"\\101\" effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* octal out of range */
      "setting=invalid raw=\"\\400\" effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* a short octal at the end */
      "setting=invalid raw=\"\\01",
      /* a raw tab byte */
      "setting=invalid raw=\"\t\" effective=disabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* unset with a value / set without one */
      "setting=unset raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      "setting=1 raw=- effective=enabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* effective */
      "setting=1 raw=\"1\" effective=maybe torch_imported=false "
      "torch_npu_loaded=false pid=1",
      /* a boolean */
      "setting=1 raw=\"1\" effective=enabled torch_imported=yes "
      "torch_npu_loaded=false pid=1",
      /* a required field missing */
      "setting=1 raw=\"1\" effective=enabled torch_npu_loaded=false pid=1",
      /* not a NAME_loaded field */
      "setting=1 raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false acl=true pid=1",
      /* a duplicate module */
      "setting=1 raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false torch_npu_loaded=true pid=1",
      /* no pid / text after it / a bad pid */
      "setting=1 raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false",
      "setting=1 raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false pid=1 extra",
      "setting=1 raw=\"1\" effective=enabled torch_imported=false "
      "torch_npu_loaded=false pid=x",
      /* text glued to the closing quote */
      "setting=1 raw=\"1\"x effective=enabled torch_imported=false "
      "torch_npu_loaded=false pid=1",
  };
  char line[1024];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(line, sizeof line, "[TIMING] torch_backend_autoload %s", bad[i]);
    expect_bad(line, 0);
  }
}

static void timelog_parse__too_many_modules(void **state) {
  char line[4096];
  size_t used, i;
  (void)state;
  used = (size_t)snprintf(line, sizeof line,
                          "[TIMING] torch_backend_autoload setting=1 "
                          "raw=\"1\" effective=enabled torch_imported=false "
                          "torch_npu_loaded=false");
  for (i = 0; i < ST__TL_MODULES_MAX; i++)
    used += (size_t)snprintf(line + used, sizeof line - used,
                             " m%zu_loaded=true", i);
  snprintf(line + used, sizeof line - used, " pid=1");
  expect_bad(line, 0);
}

static void timelog_record_same__every_field_but_pid(void **state) {
  static const char *const base =
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
      "effective=disabled torch_imported=false torch_npu_loaded=false "
      "acl_loaded=false pid=%d";
  static const char *const other[] = {
      "[TIMING] torch_backend_autoload setting=invalid raw=\"00\" "
      "effective=disabled torch_imported=false torch_npu_loaded=false "
      "acl_loaded=false pid=1",
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" effective=enabled "
      "torch_imported=false torch_npu_loaded=false acl_loaded=false pid=1",
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
      "effective=disabled torch_imported=true torch_npu_loaded=false "
      "acl_loaded=false pid=1",
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
      "effective=disabled torch_imported=false torch_npu_loaded=true "
      "acl_loaded=false pid=1",
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
      "effective=disabled torch_imported=false torch_npu_loaded=false "
      "acl_loaded=true pid=1",
      "[TIMING] torch_backend_autoload setting=0 raw=\"0\" "
      "effective=disabled torch_imported=false torch_npu_loaded=false "
      "pid=1",
  };
  char line[512];
  st__tl_line a, b;
  size_t i;
  (void)state;
  snprintf(line, sizeof line, base, 1);
  assert_int_equal(parse(line, &a), ST__TL_RECORD);
  snprintf(line, sizeof line, base, 2);
  assert_int_equal(parse(line, &b), ST__TL_RECORD);
  assert_true(st__timelog_record_same(&a.u.record, &b.u.record));
  /* The same modules watched in another order: the same conditions. */
  assert_int_equal(parse("[TIMING] torch_backend_autoload setting=0 "
                         "raw=\"0\" effective=disabled torch_imported=false "
                         "torch_npu_loaded=false x_loaded=true "
                         "y_loaded=false pid=1",
                         &b),
                   ST__TL_RECORD);
  {
    st__tl_line c;
    assert_int_equal(parse("[TIMING] torch_backend_autoload setting=0 "
                           "raw=\"0\" effective=disabled "
                           "torch_imported=false torch_npu_loaded=false "
                           "y_loaded=false x_loaded=true pid=2",
                           &c),
                     ST__TL_RECORD);
    assert_true(st__timelog_record_same(&b.u.record, &c.u.record));
  }
  for (i = 0; i < sizeof other / sizeof other[0]; i++) {
    assert_int_equal(parse(other[i], &b), ST__TL_RECORD);
    if (st__timelog_record_same(&a.u.record, &b.u.record))
      fail_msg("same: %s", other[i]);
  }
}

/* A quoted name decodes into the line's own buffer: up to
 * ST__TL_QNAME_MAX bytes, a longer one is a bad line (docs/measuring.md). */
static void timelog_parse__quoted_name_bound(void **state) {
  const size_t lens[2] = {ST__TL_QNAME_MAX, ST__TL_QNAME_MAX + 1};
  (void)state;
  for (int k = 0; k < 2; k++) {
    size_t n = lens[k], o = 0;
    char *line = malloc(n + 200);
    st__tl_line *l = malloc(sizeof *l);
    assert_non_null(line);
    assert_non_null(l);
    o += (size_t)sprintf(line, "[TIMING] phase pid=1 scene=s case=\"");
    for (size_t i = 0; i < n; i++)
      line[o++] = i % 2 ? ' ' : 'a';
    o += (size_t)sprintf(line + o, "\" name=run round=0 dur_ns=5 status=ok");
    if (k == 0) {
      assert_int_equal(st__timelog_parse(line, o, l), ST__TL_PHASE);
      assert_int_equal(l->u.phase.kase.n, n);
    } else {
      assert_int_equal(st__timelog_parse(line, o, l), ST__TL_BAD);
    }
    free(l);
    free(line);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(timelog_parse__phase_with_prefix),
      cmocka_unit_test(timelog_parse__phase_optional_fields),
      cmocka_unit_test(timelog_parse__not_timing),
      cmocka_unit_test(timelog_parse__bad_phase),
      cmocka_unit_test(timelog_parse__long_and_binary_lines),
      cmocka_unit_test(timelog_parse__case_name_longer_than_255_bytes),
      cmocka_unit_test(timelog_parse__record),
      cmocka_unit_test(timelog_parse__raw_escapes),
      cmocka_unit_test(timelog_parse__raw_round_trip),
      cmocka_unit_test(timelog_parse__quoted_names),
      cmocka_unit_test(timelog_parse__quoted_name_bound),
      cmocka_unit_test(timelog_parse__raw_truncated),
      cmocka_unit_test(timelog_parse__bad_record),
      cmocka_unit_test(timelog_parse__too_many_modules),
      cmocka_unit_test(timelog_record_same__every_field_but_pid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
