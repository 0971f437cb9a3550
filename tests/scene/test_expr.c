/* SPDX-License-Identifier: MIT */
/* Tests of the param expression grammar (harness/scene/expr.c): every
 * operator in both domains, precedence and associativity, exact and
 * inexact division, division by zero, int64 overflow (unary minus of
 * INT64_MIN and multiplication among them), literals, names through the
 * lookup, syntax errors with the offset of the offending token, the
 * nesting limit, and the syntax-only walk that lists names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "scene/expr.h"

/* N = 64, H = 1.5, BIG = INT64_MAX; ERR reports its own message. */
static int lookup(void *data, const char *name, st__expr_domain dom,
                  st__num *out, st__expr_error *err) {
  (void)data;
  (void)dom;
  if (strcmp(name, "N") == 0) {
    out->is_int = 1, out->i = 64, out->f = 64;
    return 0;
  }
  if (strcmp(name, "H") == 0) {
    out->is_int = 0, out->i = 0, out->f = 1.5;
    return 0;
  }
  if (strcmp(name, "BIG") == 0) {
    out->is_int = 1, out->i = INT64_MAX, out->f = (double)INT64_MAX;
    return 0;
  }
  if (strcmp(name, "ERR") == 0) {
    snprintf(err->message, sizeof err->message, "ERR is a list");
    return -1;
  }
  return -1;
}

static int64_t ival(const char *text) {
  st__num v;
  st__expr_error e;
  if (st__expr_eval(text, ST__EXPR_INT, lookup, NULL, &v, &e) != 0)
    fail_msg("%s: %s (at %zu)", text, e.message, e.offset);
  if (!v.is_int)
    fail_msg("%s: not an integer result", text);
  return v.i;
}

static double fval(const char *text) {
  st__num v;
  st__expr_error e;
  if (st__expr_eval(text, ST__EXPR_FLOAT, lookup, NULL, &v, &e) != 0)
    fail_msg("%s: %s (at %zu)", text, e.message, e.offset);
  return v.is_int ? (double)v.i : v.f;
}

/* text fails in dom with a message containing needle, at offset. */
static void fails(const char *text, st__expr_domain dom, size_t offset,
                  const char *needle) {
  st__num v;
  st__expr_error e;
  if (st__expr_eval(text, dom, lookup, NULL, &v, &e) == 0)
    fail_msg("%s: evaluated, expected an error '%s'", text, needle);
  if (strstr(e.message, needle) == NULL || e.offset != offset)
    fail_msg("%s: expected '%s' at %zu, got '%s' at %zu", text, needle, offset,
             e.message, e.offset);
}

static void expr_eval__every_integer_operator(void **state) {
  (void)state;
  assert_int_equal(ival("2 + 3"), 5);
  assert_int_equal(ival("2 - 3"), -1);
  assert_int_equal(ival("6 * 7"), 42);
  assert_int_equal(ival("12 / 4"), 3);
  assert_int_equal(ival("-12 / 4"), -3);
  assert_int_equal(ival("7 % 3"), 1);
  /* C's remainder: the sign of the dividend. */
  assert_int_equal(ival("-7 % 3"), -1);
  assert_int_equal(ival("7 % -3"), 1);
  assert_int_equal(ival("-5"), -5);
  assert_int_equal(ival("--5"), 5);
  assert_int_equal(ival("min(3, -4)"), -4);
  assert_int_equal(ival("max(3, -4)"), 3);
  assert_int_equal(ival("ceil_div(7, 2)"), 4);
  assert_int_equal(ival("ceil_div(8, 2)"), 4);
  assert_int_equal(ival("ceil_div(-7, 2)"), -3);
  assert_int_equal(ival("ceil_div(-7, -2)"), 4);
  assert_int_equal(ival("ceil_div(7, -2)"), -3);
  assert_int_equal(ival("ceil_div(0, 5)"), 0);
  assert_int_equal(ival("(2)"), 2);
  assert_int_equal(ival("N * 2"), 128);
  assert_int_equal(ival("ceil_div(N + 100, 128) * 128"), 256);
  assert_int_equal(ival("  N\t"), 64);
}

static void expr_eval__precedence(void **state) {
  (void)state;
  assert_int_equal(ival("2 + 3 * 4"), 14);
  assert_int_equal(ival("(2 + 3) * 4"), 20);
  assert_int_equal(ival("2 * 3 + 4"), 10);
  assert_int_equal(ival("10 - 4 - 3"), 3); /* left to right */
  assert_int_equal(ival("64 / 4 / 2"), 8);
  assert_int_equal(ival("2 * -3"), -6);
  assert_int_equal(ival("-2 * 3"), -6);
  assert_int_equal(ival("-(2 + 3) * 2"), -10);
  assert_int_equal(ival("7 - 10 % 4"), 5);
  assert_int_equal(ival("1 + max(2, 3) * 2"), 7);
  assert_int_equal(ival("2*3+4*5"), 26);
}

static void expr_eval__float_domain(void **state) {
  (void)state;
  assert_true(fval("1 / 2") == 0.5);
  assert_true(fval("1e-5 * 2") == 2e-5);
  assert_true(fval("1.5 + 1") == 2.5);
  assert_true(fval("7 % 2.5") == 2.0);
  assert_true(fval("-7 % 2") == -1.0);
  assert_true(fval("ceil_div(7, 2)") == 4.0);
  assert_true(fval("min(1.5, 2)") == 1.5);
  assert_true(fval("max(1.5, 2)") == 2.0);
  assert_true(fval("H * 2") == 3.0);
  assert_true(fval("-H") == -1.5);
  assert_true(fval(".5") == 0.5);
  assert_true(fval("2E3") == 2000.0);
  /* Beyond int64 in double: no overflow error there. */
  assert_true(fval("BIG * 4") > 3e19);
}

/* A single operand comes back as it is, so that the field's own check
 * says what is wrong with it (a float in a shape, say). */
static void expr_eval__single_operand_unchanged(void **state) {
  (void)state;
  st__num v;
  st__expr_error e;
  assert_int_equal(st__expr_eval("H", ST__EXPR_INT, lookup, NULL, &v, &e), 0);
  assert_false(v.is_int);
  assert_true(v.f == 1.5);
  assert_int_equal(st__expr_eval("(2.5)", ST__EXPR_INT, lookup, NULL, &v, &e),
                   0);
  assert_true(!v.is_int && v.f == 2.5);
  assert_int_equal(st__expr_eval("3", ST__EXPR_FLOAT, lookup, NULL, &v, &e), 0);
  assert_true(v.is_int && v.i == 3);
}

static void expr_eval__exact_division(void **state) {
  (void)state;
  assert_int_equal(ival("N / 2"), 32);
  assert_int_equal(ival("0 / 7"), 0);
  fails("7 / 2", ST__EXPR_INT, 2, "7 / 2 leaves a remainder of 1");
  fails("N / 3", ST__EXPR_INT, 2, "64 / 3 leaves a remainder of 1");
  fails("-7 / 2", ST__EXPR_INT, 3, "-7 / 2 leaves a remainder of -1");
  /* The same text in double divides. */
  assert_true(fval("7 / 2") == 3.5);
}

static void expr_eval__division_by_zero(void **state) {
  (void)state;
  fails("1 / 0", ST__EXPR_INT, 2, "division by zero in 1 / 0");
  fails("1 % (N - 64)", ST__EXPR_INT, 2, "division by zero in 1 % 0");
  fails("ceil_div(N, 0)", ST__EXPR_INT, 0, "division by zero in ceil_div");
  fails("1.5 / 0", ST__EXPR_FLOAT, 4, "division by zero in 1.5 / 0");
  fails("1 % 0.0", ST__EXPR_FLOAT, 2, "division by zero");
  fails("ceil_div(1, 0)", ST__EXPR_FLOAT, 0, "division by zero");
}

static void expr_eval__int64_overflow(void **state) {
  (void)state;
  fails("9223372036854775807 + 1", ST__EXPR_INT, 20, "overflows int64");
  fails("BIG + 1", ST__EXPR_INT, 4, "9223372036854775807 + 1 overflows");
  fails("-BIG - 2", ST__EXPR_INT, 5, "overflows int64");
  fails("3037000500 * 3037000500", ST__EXPR_INT, 11,
        "3037000500 * 3037000500 overflows int64");
  fails("BIG * -2", ST__EXPR_INT, 4, "overflows int64");
  /* Unary minus of INT64_MIN: the one negation int64 cannot hold. */
  fails("-(-BIG - 1)", ST__EXPR_INT, 0,
        "-(-9223372036854775808) overflows int64");
  fails("(-BIG - 1) / -1", ST__EXPR_INT, 11, "overflows int64");
  fails("ceil_div(-BIG - 1, -1)", ST__EXPR_INT, 0, "overflows int64");
  fails("9223372036854775808", ST__EXPR_INT, 0,
        "the integer 9223372036854775808 overflows int64");
  /* The edges themselves fit. */
  assert_int_equal(ival("-BIG - 1"), INT64_MIN);
  assert_int_equal(ival("BIG"), INT64_MAX);
  assert_int_equal(ival("(-BIG - 1) % -1"), 0);
  assert_int_equal(ival("3037000499 * 3037000499"), 9223372030926249001);
}

static void expr_eval__integer_operands_only(void **state) {
  (void)state;
  fails("1.5 * 2", ST__EXPR_INT, 0, "1.5 is not an integer");
  fails("2 * H", ST__EXPR_INT, 4, "1.5 is not an integer");
  fails("-H", ST__EXPR_INT, 1, "1.5 is not an integer");
  fails("min(1, 2.0)", ST__EXPR_INT, 7, "2 is not an integer");
}

static void expr_eval__names(void **state) {
  (void)state;
  fails("N + Q", ST__EXPR_INT, 4, "unknown name 'Q'");
  /* The lookup's own message stands, at the name's token. */
  fails("2 * ERR", ST__EXPR_INT, 4, "ERR is a list");
  st__num v;
  st__expr_error e;
  assert_int_not_equal(st__expr_eval("N", ST__EXPR_INT, NULL, NULL, &v, &e), 0);
  assert_non_null(strstr(e.message, "unknown name 'N'"));
  /* A lookup's message has no "expression '...'" head; an arithmetic
   * error's head ends where the caller may insert the case. */
  assert_int_not_equal(
      st__expr_eval("2 * ERR", ST__EXPR_INT, lookup, NULL, &v, &e), 0);
  assert_int_equal(e.head, 0);
  assert_int_not_equal(
      st__expr_eval("N / 0", ST__EXPR_INT, lookup, NULL, &v, &e), 0);
  assert_int_equal(e.head, strlen("expression 'N / 0'"));
  assert_string_equal(e.message + e.head, ": division by zero in 64 / 0");
}

static void expr_eval__syntax_errors(void **state) {
  (void)state;
  fails("", ST__EXPR_INT, 0, "empty");
  fails("   ", ST__EXPR_INT, 0, "empty");
  fails("1 +", ST__EXPR_INT, 3,
        "expected a number, a name, '-' or '(', got "
        "the end");
  fails("(1", ST__EXPR_INT, 2, "expected ')', got the end");
  fails("1 2", ST__EXPR_INT, 2,
        "expected an operator (+ - * / %) or the end, "
        "got '2'");
  fails("2x", ST__EXPR_INT, 0, "'2x' is not a number");
  fails("1..2", ST__EXPR_INT, 0, "'1..2' is not a number");
  fails("foo(1, 2)", ST__EXPR_INT, 0, "unknown function 'foo'");
  fails("min(1)", ST__EXPR_INT, 5, "expected ',', got ')'");
  fails("max(1, 2", ST__EXPR_INT, 8, "expected ')', got the end");
  fails("*3", ST__EXPR_INT, 0, "got '*'");
  fails("N + +3", ST__EXPR_INT, 4, "got '+'");
  fails("N ; 3", ST__EXPR_INT, 2, "got ';'");
  fails("N \xc3\xa9", ST__EXPR_INT, 2, "got the byte 0xc3");
  fails("'N'", ST__EXPR_INT, 0, "got \"'\"");
  fails("1e999", ST__EXPR_FLOAT, 0, "out of the range of a double");
  /* Every message names the expression. */
  fails("1 +", ST__EXPR_INT, 3, "expression '1 +': ");
}

static void expr_eval__nesting_limit(void **state) {
  (void)state;
  char deep[300];
  size_t n = 0;
  for (int i = 0; i < 100; i++)
    deep[n++] = '(';
  deep[n++] = '1';
  for (int i = 0; i < 100; i++)
    deep[n++] = ')';
  deep[n] = '\0';
  fails(deep, ST__EXPR_INT, 64, "nested deeper than 64 levels");
  memset(deep, '-', 200);
  strcpy(deep + 200, "1");
  fails(deep, ST__EXPR_INT, 64, "nested deeper than 64 levels");
  assert_int_equal(ival("((((((((((1))))))))))"), 1);
}

typedef struct seen {
  char names[8][32];
  size_t offsets[8];
  int n;
  const char *refuse;
} seen;

static int note_name(void *data, const char *name, size_t offset,
                     st__expr_error *err) {
  seen *s = data;
  if (s->refuse && strcmp(name, s->refuse) == 0) {
    snprintf(err->message, sizeof err->message, "no %s here", name);
    return -1;
  }
  if (s->n < 8) {
    snprintf(s->names[s->n], sizeof s->names[s->n], "%s", name);
    s->offsets[s->n++] = offset;
  }
  return 0;
}

/* The syntax-only walk: no evaluation (so no division error), each name
 * once per use in written order, function names left out. */
static void expr_check__lists_names(void **state) {
  (void)state;
  seen s;
  st__expr_error e;
  memset(&s, 0, sizeof s);
  assert_int_equal(
      st__expr_check("ceil_div(A, 0) + min(B, A) / 7", note_name, &s, &e), 0);
  assert_int_equal(s.n, 3);
  assert_string_equal(s.names[0], "A");
  assert_string_equal(s.names[1], "B");
  assert_string_equal(s.names[2], "A");
  assert_int_equal(s.offsets[0], 9);
  assert_int_equal(s.offsets[1], 21);
  memset(&s, 0, sizeof s);
  s.refuse = "B";
  assert_int_not_equal(st__expr_check("A * B", note_name, &s, &e), 0);
  assert_string_equal(e.message, "no B here");
  assert_int_equal(e.offset, 4);
  assert_int_not_equal(st__expr_check("A *", NULL, NULL, &e), 0);
  assert_int_equal(e.offset, 3);
  assert_int_equal(st__expr_check("99 / 0", NULL, NULL, &e), 0);
}

static void expr_is_name__one_name_only(void **state) {
  (void)state;
  assert_true(st__expr_is_name("N"));
  assert_true(st__expr_is_name(" N_2 "));
  assert_false(st__expr_is_name("N * 2"));
  assert_false(st__expr_is_name("2"));
  assert_false(st__expr_is_name(""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(expr_eval__every_integer_operator),
      cmocka_unit_test(expr_eval__precedence),
      cmocka_unit_test(expr_eval__float_domain),
      cmocka_unit_test(expr_eval__single_operand_unchanged),
      cmocka_unit_test(expr_eval__exact_division),
      cmocka_unit_test(expr_eval__division_by_zero),
      cmocka_unit_test(expr_eval__int64_overflow),
      cmocka_unit_test(expr_eval__integer_operands_only),
      cmocka_unit_test(expr_eval__names),
      cmocka_unit_test(expr_eval__syntax_errors),
      cmocka_unit_test(expr_eval__nesting_limit),
      cmocka_unit_test(expr_check__lists_names),
      cmocka_unit_test(expr_is_name__one_name_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
