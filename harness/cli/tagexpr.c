/* SPDX-License-Identifier: MIT */
/* The --tag and -k expression grammar (tagexpr.h), pinned to pytest's
 * src/_pytest/mark/expression.py:
 *
 *   expr     := and_expr ('or' and_expr)*
 *   and_expr := not_expr ('and' not_expr)*
 *   not_expr := 'not' not_expr | '(' expr ')' | name
 *
 * compiled to postfix so that evaluating a case is a loop over an array
 * (thousands of cases are filtered with one expression). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/tagexpr.h"

enum { OP_NAME, OP_NOT, OP_AND, OP_OR };
enum { T_END, T_LPAREN, T_RPAREN, T_NAME, T_AND, T_OR, T_NOT };

typedef struct op {
  int kind;
  char *name; /* OP_NAME: owned */
} op;

struct st__tagexpr {
  op *ops;
  size_t n;
  size_t depth; /* the deepest the evaluation stack gets */
};

typedef struct parser {
  const char *text;
  size_t pos; /* of the current token */
  size_t len; /* of the current token */
  int tok;
  struct st__tagexpr *e;
  size_t cap, depth, max_depth;
  size_t nesting;
  int failed; /* -1 syntax, -2 memory */
  size_t column;
  char *msg;
  size_t size;
} parser;

static int name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("_.-:+[]=,/\\", c) != NULL);
}

static void next(parser *p) {
  const char *t = p->text;
  size_t i = p->pos + p->len;
  while (t[i] == ' ' || t[i] == '\t')
    i++;
  p->pos = i;
  p->len = 0;
  if (t[i] == '\0') {
    p->tok = T_END;
  } else if (t[i] == '(' || t[i] == ')') {
    p->tok = t[i] == '(' ? T_LPAREN : T_RPAREN;
    p->len = 1;
  } else if (name_char(t[i])) {
    while (name_char(t[i + p->len]))
      p->len++;
    p->tok = T_NAME;
    if (p->len == 3 && strncmp(t + i, "and", 3) == 0)
      p->tok = T_AND;
    else if (p->len == 2 && strncmp(t + i, "or", 2) == 0)
      p->tok = T_OR;
    else if (p->len == 3 && strncmp(t + i, "not", 3) == 0)
      p->tok = T_NOT;
  } else {
    p->tok = -1; /* a character no token starts with */
    p->len = 1;
  }
}

static void fail(parser *p, const char *expected) {
  char got[64];
  if (p->failed)
    return;
  if (p->tok == T_END)
    snprintf(got, sizeof got, "the end of the expression");
  else if (p->tok == -1 && (unsigned char)p->text[p->pos] < 0x20)
    snprintf(got, sizeof got, "the byte 0x%02x",
             (unsigned char)p->text[p->pos]);
  else
    snprintf(got, sizeof got, "'%.*s'", (int)(p->len > 40 ? 40 : p->len),
             p->text + p->pos);
  p->failed = -1;
  p->column = p->pos + 1;
  snprintf(p->msg, p->size, "expected %s, got %s", expected, got);
}

static void emit(parser *p, int kind, const char *name, size_t len) {
  op *o;
  if (p->failed)
    return;
  op *g = st__array_grow(p->e->ops, &p->cap, p->e->n, sizeof *g, 8);
  if (g == NULL) {
    p->failed = -2;
    return;
  }
  p->e->ops = g;
  o = &p->e->ops[p->e->n];
  o->kind = kind;
  o->name = NULL;
  if (kind == OP_NAME) {
    if ((o->name = strndup(name, len)) == NULL) {
      p->failed = -2;
      return;
    }
    if (++p->depth > p->max_depth)
      p->max_depth = p->depth;
  } else if (kind != OP_NOT) {
    p->depth--;
  }
  p->e->n++;
}

static void parse_or(parser *p);

/* Deeper than this is refused: the parser recurses once a level. */
#define MAX_NESTING 200

static void parse_not(parser *p) {
  if (p->failed)
    return;
  if (++p->nesting > MAX_NESTING) {
    p->failed = -1;
    p->column = p->pos + 1;
    snprintf(p->msg, p->size, "nested more than %d deep", MAX_NESTING);
    return;
  }
  if (p->tok == T_NOT) {
    next(p);
    parse_not(p);
    emit(p, OP_NOT, NULL, 0);
  } else if (p->tok == T_LPAREN) {
    next(p);
    parse_or(p);
    if (!p->failed && p->tok != T_RPAREN)
      fail(p, "'and', 'or' or ')'");
    next(p);
  } else if (p->tok == T_NAME) {
    emit(p, OP_NAME, p->text + p->pos, p->len);
    next(p);
  } else {
    fail(p, "a name, 'not' or '('");
  }
  p->nesting--;
}

static void parse_level(parser *p, int level);

/* An operand at precedence level 0 (or) or 1 (and). */
static void operand(parser *p, int level) {
  if (level == 0)
    parse_level(p, 1);
  else
    parse_not(p);
}

/* or (level 0) or and (level 1): operands joined by the level's
 * operator, left to right. */
static void parse_level(parser *p, int level) {
  operand(p, level);
  while (!p->failed && p->tok == (level == 0 ? T_OR : T_AND)) {
    next(p);
    operand(p, level);
    emit(p, level == 0 ? OP_OR : OP_AND, NULL, 0);
  }
}

static void parse_or(parser *p) { parse_level(p, 0); }

int st__tagexpr_parse(const char *text, st__tagexpr **out, size_t *column,
                      char *msg, size_t size) {
  parser p;

  *out = NULL;
  *column = 0;
  if (size > 0)
    msg[0] = '\0';
  memset(&p, 0, sizeof p);
  p.text = text;
  p.msg = msg;
  p.size = size;
  if ((p.e = calloc(1, sizeof *p.e)) == NULL)
    return -2;
  next(&p);
  parse_or(&p);
  if (!p.failed && p.tok != T_END)
    fail(&p, "'and', 'or' or the end of the expression");
  if (p.failed) {
    *column = p.column;
    st__tagexpr_free(p.e);
    return p.failed;
  }
  p.e->depth = p.max_depth;
  *out = p.e;
  return 0;
}

int st__tagexpr_eval(const st__tagexpr *e,
                     int (*has)(void *data, const char *name), void *data) {
  char small[64] = {1}, *stack = small;
  size_t sp = 0, i;
  int v;

  if (e->depth > sizeof small && (stack = malloc(e->depth)) == NULL)
    return 0; /* out of memory: the case is left out */
  for (i = 0; i < e->n; i++) {
    switch (e->ops[i].kind) {
    case OP_NAME:
      stack[sp++] = (char)(has(data, e->ops[i].name) != 0);
      break;
    case OP_NOT:
      stack[sp - 1] = (char)!stack[sp - 1];
      break;
    case OP_AND:
      sp--;
      stack[sp - 1] = (char)(stack[sp - 1] && stack[sp]);
      break;
    default:
      sp--;
      stack[sp - 1] = (char)(stack[sp - 1] || stack[sp]);
      break;
    }
  }
  v = e->n > 0 ? stack[0] : 1;
  if (stack != small)
    free(stack);
  return v;
}

void st__tagexpr_free(st__tagexpr *e) {
  if (e == NULL)
    return;
  for (size_t i = 0; i < e->n; i++)
    free(e->ops[i].name);
  free(e->ops);
  free(e);
}
