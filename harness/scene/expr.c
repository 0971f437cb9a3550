/* SPDX-License-Identifier: MIT */
/* Param expressions (docs/scene-format.md#params-expressions-and-lists):
 * a recursive-descent parser that evaluates as it goes, in the integer
 * domain (int64, every overflow and every inexact division an error) or
 * in double. The same walk without evaluation checks the syntax at load
 * time and lists the names an expression uses. Grammar:
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := '-' unary | primary
 *   primary := NUMBER | NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
 *   FUNC    := min | max | ceil_div
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/expr.h"

/* Parentheses and unary minus nest at most this deep: the parser
 * recurses, and a scene must not be able to exhaust the stack. */
#define MAX_NEST 64

typedef struct val {
  st__num n;
  size_t at; /* offset of the operand's first token, for messages */
} val;

typedef struct parser {
  const char *s;
  size_t pos;
  int eval; /* 0: syntax only */
  st__expr_domain dom;
  st__expr_lookup lookup;
  st__expr_name_fn name_fn;
  void *data;
  st__expr_error *err;
  int depth;
  int failed;
} parser;

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void) {
  c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

double st__strtod_c(const char *s, char **end) {
  pthread_once(&c_locale_once, c_locale_init);
  if (c_locale == (locale_t)0)
    return strtod(s, end);
  return strtod_l(s, end, c_locale);
}

void st__num_str(const st__num *n, char *buf, size_t size) {
  if (n->is_int) {
    snprintf(buf, size, "%" PRId64, n->i);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, n->f);
    if (st__strtod_c(buf, NULL) == n->f || isnan(n->f))
      return;
  }
}

static void fail(parser *p, size_t at, const char *fmt, ...) ST_PRINTF(3, 4);
static void fail(parser *p, size_t at, const char *fmt, ...) {
  va_list ap;
  char msg[200];
  if (p->failed)
    return; /* the first cause wins */
  p->failed = 1;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err->offset = at;
  p->err->elsewhere = 0;
  int head =
      snprintf(p->err->message, sizeof p->err->message, "expression '%.80s%s'",
               p->s, strlen(p->s) > 80 ? "..." : "");
  p->err->head = head > 0 ? (size_t)head : 0;
  snprintf(p->err->message + p->err->head,
           sizeof p->err->message - p->err->head, ": %s", msg);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static void skip(parser *p) {
  while (is_space(p->s[p->pos]))
    p->pos++;
}

/* What stands at the current position, for "got ..." in messages. */
static void got(const parser *p, char *buf, size_t size) {
  const char *t = p->s + p->pos;
  size_t n = 0;
  if (*t == '\0') {
    snprintf(buf, size, "the end");
    return;
  }
  if (is_alpha(*t) || is_digit(*t) || *t == '.') {
    while (is_alpha(t[n]) || is_digit(t[n]) || t[n] == '.')
      n++;
  } else if ((unsigned char)*t < 0x20 || (unsigned char)*t >= 0x7f) {
    /* One byte of a character: shown as a byte, never as half of one. */
    snprintf(buf, size, "the byte 0x%02x", (unsigned char)*t);
    return;
  } else if (*t == '\'') {
    snprintf(buf, size, "\"'\"");
    return;
  } else {
    n = 1;
  }
  snprintf(buf, size, "'%.*s'", (int)(n > 40 ? 40 : n), t);
}

static int expect_char(parser *p, char c) {
  char g[64];
  skip(p);
  if (p->s[p->pos] == c) {
    p->pos++;
    return 0;
  }
  got(p, g, sizeof g);
  fail(p, p->pos, "expected '%c', got %s", c, g);
  return -1;
}

static int parse_expr(parser *p, val *out);

static int parse_number(parser *p, val *out) {
  size_t start = p->pos, i = p->pos;
  int decimal = 0;
  const char *s = p->s;
  while (is_digit(s[i]))
    i++;
  if (s[i] == '.') {
    decimal = 1;
    i++;
    while (is_digit(s[i]))
      i++;
  }
  if ((s[i] == 'e' || s[i] == 'E') &&
      (is_digit(s[i + 1]) ||
       ((s[i + 1] == '+' || s[i + 1] == '-') && is_digit(s[i + 2])))) {
    decimal = 1;
    i += 2;
    while (is_digit(s[i]))
      i++;
  }
  if (is_alpha(s[i]) || s[i] == '.' || (i - start == 1 && s[start] == '.')) {
    while (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '.')
      i++;
    fail(p, start,
         "'%.*s' is not a number; expected digits, a '.' and an "
         "exponent (1.5, 1e-5)",
         (int)(i - start > 40 ? 40 : i - start), s + start);
    return -1;
  }
  char buf[400];
  if (i - start >= sizeof buf) {
    fail(p, start, "a number of %zu characters; expected at most %zu",
         i - start, sizeof buf - 1);
    return -1;
  }
  memcpy(buf, s + start, i - start);
  buf[i - start] = '\0';
  p->pos = i;
  out->at = start;
  if (!decimal) {
    errno = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE) {
      fail(p, start, "the integer %s overflows int64", buf);
      return -1;
    }
    out->n.is_int = 1;
    out->n.i = v;
    out->n.f = (double)v;
    return 0;
  }
  double d = st__strtod_c(buf, NULL);
  if (isinf(d)) {
    fail(p, start, "the number %s is out of the range of a double", buf);
    return -1;
  }
  out->n.is_int = 0;
  out->n.i = 0;
  out->n.f = d;
  return 0;
}

/* An integer-domain operand must be an integer. */
static int need_int(parser *p, const val *v) {
  char nb[64];
  if (!p->eval || p->dom != ST__EXPR_INT || v->n.is_int)
    return 0;
  st__num_str(&v->n, nb, sizeof nb);
  fail(p, v->at,
       "%s is not an integer; expected integer operands in an "
       "integer field",
       nb);
  return -1;
}

static double as_f(const st__num *n) { return n->is_int ? (double)n->i : n->f; }

static void set_int(val *v, int64_t i) {
  v->n.is_int = 1;
  v->n.i = i;
  v->n.f = (double)i;
}

static void set_f(val *v, double f) {
  v->n.is_int = 0;
  v->n.i = 0;
  v->n.f = f;
}

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_MIN, OP_MAX, OP_CEIL_DIV };
static const char *const op_text[] = {"+", "-",   "*",   "/",
                                      "%", "min", "max", "ceil_div"};

/* "7 / 2" or "ceil_div(7, 2)", for messages. */
static void op_str(int op, const val *a, const val *b, char *buf, size_t size) {
  char x[64], y[64];
  st__num_str(&a->n, x, sizeof x);
  st__num_str(&b->n, y, sizeof y);
  if (op >= OP_MIN)
    snprintf(buf, size, "%s(%s, %s)", op_text[op], x, y);
  else
    snprintf(buf, size, "%s %s %s", x, op_text[op], y);
}

static int apply_int(parser *p, int op, size_t at, val *a, const val *b) {
  int64_t x = a->n.i, y = b->n.i, r = 0;
  int ovf = 0;
  char ob[160];
  switch (op) {
  case OP_ADD:
    ovf = __builtin_add_overflow(x, y, &r);
    break;
  case OP_SUB:
    ovf = __builtin_sub_overflow(x, y, &r);
    break;
  case OP_MUL:
    ovf = __builtin_mul_overflow(x, y, &r);
    break;
  case OP_MIN:
    r = x < y ? x : y;
    break;
  case OP_MAX:
    r = x > y ? x : y;
    break;
  default: /* the divisions */
    if (y == 0) {
      op_str(op, a, b, ob, sizeof ob);
      fail(p, at, "division by zero in %s", ob);
      return -1;
    }
    if (x == INT64_MIN && y == -1) {
      /* The one quotient int64 cannot hold; its remainder is 0 (C's %
       * on these operands is undefined, so never computed). */
      ovf = op != OP_REM;
      r = 0;
      break;
    }
    r = op == OP_REM ? x % y : x / y;
    if (op == OP_DIV && x % y != 0) {
      fail(p, at,
           "%" PRId64 " / %" PRId64 " leaves a remainder of %" PRId64
           "; expected an exact division in an integer field (ceil_div(a, "
           "b) rounds up)",
           x, y, x % y);
      return -1;
    }
    /* C's quotient truncates; round up when the exact one is positive
     * and not whole. */
    if (op == OP_CEIL_DIV && x % y != 0 && ((x < 0) == (y < 0)))
      r++;
    break;
  }
  if (ovf) {
    op_str(op, a, b, ob, sizeof ob);
    fail(p, at, "%s overflows int64", ob);
    return -1;
  }
  set_int(a, r);
  return 0;
}

static int apply_float(parser *p, int op, size_t at, val *a, const val *b) {
  double x = as_f(&a->n), y = as_f(&b->n), r;
  char ob[160];
  if ((op == OP_DIV || op == OP_REM || op == OP_CEIL_DIV) && y == 0) {
    op_str(op, a, b, ob, sizeof ob);
    fail(p, at, "division by zero in %s", ob);
    return -1;
  }
  switch (op) {
  case OP_ADD:
    r = x + y;
    break;
  case OP_SUB:
    r = x - y;
    break;
  case OP_MUL:
    r = x * y;
    break;
  case OP_DIV:
    r = x / y;
    break;
  case OP_REM:
    r = fmod(x, y); /* the sign of the dividend, as C's % */
    break;
  case OP_MIN:
    r = fmin(x, y);
    break;
  case OP_MAX:
    r = fmax(x, y);
    break;
  default:
    r = ceil(x / y);
    break;
  }
  set_f(a, r);
  return 0;
}

/* a = a OP b; at is the operator's offset. */
static int apply(parser *p, int op, size_t at, val *a, const val *b) {
  if (!p->eval)
    return 0;
  if (need_int(p, a) != 0 || need_int(p, b) != 0)
    return -1;
  return p->dom == ST__EXPR_INT ? apply_int(p, op, at, a, b)
                                : apply_float(p, op, at, a, b);
}

static int parse_call(parser *p, int op, size_t at, val *out) {
  val b;
  p->pos++; /* '(' */
  if (parse_expr(p, out) != 0 || expect_char(p, ',') != 0 ||
      parse_expr(p, &b) != 0 || expect_char(p, ')') != 0)
    return -1;
  if (apply(p, op, at, out, &b) != 0)
    return -1;
  out->at = at;
  return 0;
}

static int parse_name(parser *p, val *out) {
  size_t start = p->pos, n;
  char name[ST__EXPR_NAME_MAX + 1];
  while (is_alpha(p->s[p->pos]) || is_digit(p->s[p->pos]))
    p->pos++;
  n = p->pos - start;
  if (n > ST__EXPR_NAME_MAX) {
    fail(p, start, "a name of %zu characters; expected at most %d", n,
         ST__EXPR_NAME_MAX);
    return -1;
  }
  memcpy(name, p->s + start, n);
  name[n] = '\0';
  skip(p);
  if (p->s[p->pos] == '(') {
    static const int ops[] = {OP_MIN, OP_MAX, OP_CEIL_DIV};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
      if (strcmp(name, op_text[ops[i]]) == 0)
        return parse_call(p, ops[i], start, out);
    fail(p, start, "unknown function '%s'; expected min, max or ceil_div",
         name);
    return -1;
  }
  out->at = start;
  set_int(out, 0);
  if (!p->eval) {
    if (p->name_fn == NULL)
      return 0;
    p->err->message[0] = '\0';
    if (p->name_fn(p->data, name, start, p->err) == 0)
      return 0;
    p->failed = 1;
    p->err->offset = start;
    p->err->elsewhere = 0;
    return -1;
  }
  p->err->message[0] = '\0';
  p->err->elsewhere = 0;
  p->err->head = 0;
  if (p->lookup != NULL &&
      p->lookup(p->data, name, p->dom, &out->n, p->err) == 0)
    return 0;
  p->failed = 1;
  p->err->offset = start;
  if (p->err->message[0] == '\0')
    snprintf(p->err->message, sizeof p->err->message,
             "unknown name '%s' in expression '%.80s'", name, p->s);
  return -1;
}

static int parse_unary(parser *p, val *out) {
  char g[64];
  skip(p);
  if (++p->depth > MAX_NEST) {
    fail(p, p->pos, "nested deeper than %d levels", MAX_NEST);
    return -1;
  }
  size_t at = p->pos;
  char c = p->s[at];
  int rc = 0;
  if (c == '-') {
    p->pos++;
    rc = parse_unary(p, out);
    if (rc == 0 && p->eval) {
      if (need_int(p, out) != 0) {
        rc = -1;
      } else if (p->dom == ST__EXPR_INT) {
        if (out->n.i == INT64_MIN) {
          fail(p, at, "-(%" PRId64 ") overflows int64", out->n.i);
          rc = -1;
        } else {
          set_int(out, -out->n.i);
        }
      } else {
        set_f(out, -as_f(&out->n));
      }
    }
    out->at = at;
  } else if (c == '(') {
    p->pos++;
    rc = parse_expr(p, out);
    if (rc == 0)
      rc = expect_char(p, ')');
    out->at = at;
  } else if (is_digit(c) || c == '.') {
    rc = parse_number(p, out);
  } else if (is_alpha(c)) {
    rc = parse_name(p, out);
  } else {
    got(p, g, sizeof g);
    fail(p, at, "expected a number, a name, '-' or '(', got %s", g);
    rc = -1;
  }
  p->depth--;
  return rc;
}

/* The operator c stands for at precedence level (0: + and -, 1: *, /
 * and %), or -1. */
static int op_of(char c, int level) {
  if (level == 0)
    return c == '+' ? OP_ADD : c == '-' ? OP_SUB : -1;
  return c == '*' ? OP_MUL : c == '/' ? OP_DIV : c == '%' ? OP_REM : -1;
}

static int parse_level(parser *p, int level, val *out);

/* An operand at precedence level 0 (a term) or 1 (a unary). */
static int operand(parser *p, int level, val *out) {
  return level == 0 ? parse_level(p, 1, out) : parse_unary(p, out);
}

/* expr (level 0) or term (level 1) of the grammar above: operands joined
 * by the level's operators, left to right. */
static int parse_level(parser *p, int level, val *out) {
  if (operand(p, level, out) != 0)
    return -1;
  for (;;) {
    skip(p);
    const int op = op_of(p->s[p->pos], level);
    if (op < 0)
      return 0;
    size_t at = p->pos++;
    val b;
    if (operand(p, level, &b) != 0 || apply(p, op, at, out, &b) != 0)
      return -1;
  }
}

static int parse_expr(parser *p, val *out) { return parse_level(p, 0, out); }

static int run(parser *p, st__num *out) {
  val v;
  char g[64];
  memset(&v, 0, sizeof v);
  skip(p);
  if (p->s[p->pos] == '\0') {
    fail(p, 0, "empty; expected a number, a name or an expression");
    return -1;
  }
  if (parse_expr(p, &v) != 0)
    return -1;
  skip(p);
  if (p->s[p->pos] != '\0') {
    got(p, g, sizeof g);
    fail(p, p->pos, "expected an operator (+ - * / %%) or the end, got %s", g);
    return -1;
  }
  if (out)
    *out = v.n;
  return 0;
}

int st__expr_eval(const char *text, st__expr_domain domain,
                  st__expr_lookup lookup, void *data, st__num *out,
                  st__expr_error *err) {
  parser p;
  memset(&p, 0, sizeof p);
  memset(err, 0, sizeof *err);
  p.s = text;
  p.eval = 1;
  p.dom = domain;
  p.lookup = lookup;
  p.data = data;
  p.err = err;
  return run(&p, out);
}

int st__expr_check(const char *text, st__expr_name_fn fn, void *data,
                   st__expr_error *err) {
  parser p;
  memset(&p, 0, sizeof p);
  memset(err, 0, sizeof *err);
  p.s = text;
  p.name_fn = fn;
  p.data = data;
  p.err = err;
  return run(&p, NULL);
}

int st__expr_is_name(const char *text) {
  size_t i = 0;
  while (is_space(text[i]))
    i++;
  if (!is_alpha(text[i]))
    return 0;
  while (is_alpha(text[i]) || is_digit(text[i]))
    i++;
  while (is_space(text[i]))
    i++;
  return text[i] == '\0';
}
