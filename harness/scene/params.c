/* SPDX-License-Identifier: MIT */
/* A case's params as values
 * (docs/scene-format.md#params-expressions-and-lists): st__val_eval reads a
 * number, a param name or an expression through the one grammar of
 * scene/expr.c, following derived params into their own expressions (in the
 * domain of the field that uses them) and reporting every problem at the token
 * it is about; st__val_list gives the list param a whole-list field names;
 * st__case_param_use marks what a field reaches, for the unused-param warning.
 */
#include <stdio.h>
#include <string.h>

#include "scene/params.h"

int st__val_column(const st__val *v, size_t off) {
  if (v->text_column <= 0 || off > (size_t)1 << 20)
    return v->column;
  return v->text_column + (int)off;
}

const st__param *st__case_param(const st__case *k, const char *name) {
  for (size_t i = 0; i < k->n_params; i++)
    if (k->params[i].name && strcmp(k->params[i].name, name) == 0)
      return &k->params[i];
  return NULL;
}

typedef struct ectx {
  const st__case *k;
  const char *what;
  size_t depth; /* derived params being evaluated: past n_params, a cycle */
  int *dep;
  st__val_error *err;
} ectx;

static int eval_in(ectx *c, const st__val *v, const st__param *via,
                   st__expr_domain dom, st__num *out);

static const char *kname(const st__case *k) { return k->name ? k->name : "?"; }

static int lookup(void *data, const char *name, st__expr_domain dom,
                  st__num *out, st__expr_error *xe) {
  ectx *c = data;
  const st__param *p = st__case_param(c->k, name);
  *c->dep = 1;
  if (p == NULL) {
    snprintf(xe->message, sizeof xe->message,
             "'%s' is not a param of case '%s'; expected a number or the "
             "name of a param",
             name, kname(c->k));
    return -1;
  }
  if (p->is_list) {
    snprintf(xe->message, sizeof xe->message,
             "param '%s' of case '%s' is a list of %zu numbers; expected a "
             "number (a list param stands only for a whole list: shape, "
             "values, ints)",
             name, kname(c->k), p->n_list);
    return -1;
  }
  if (p->is_str) {
    snprintf(xe->message, sizeof xe->message,
             "param '%s' of case '%s' is the dtype '%s'; expected a number",
             name, kname(c->k), p->str);
    return -1;
  }
  if (p->expr.kind != ST__VAL_NAME) {
    *out = p->num;
    return 0;
  }
  if (c->depth >= c->k->n_params) {
    snprintf(xe->message, sizeof xe->message,
             "'%s' refers back to itself through the params' "
             "expressions; expected params that end in numbers",
             name);
    return -1;
  }
  c->depth++;
  int rc = eval_in(c, &p->expr, p, dom, out);
  c->depth--;
  if (rc != 0)
    xe->elsewhere = 1; /* eval_in told it at the derived param */
  return rc;
}

/* v's value, or -1 with c->err; via is the param whose expression v is
 * (NULL for a field). */
static int eval_in(ectx *c, const st__val *v, const st__param *via,
                   st__expr_domain dom, st__num *out) {
  st__expr_error xe;
  if (v->kind == ST__VAL_NUM) {
    *out = v->num;
    return 0;
  }
  c->err->line = v->line;
  c->err->column = v->column;
  if (v->kind != ST__VAL_NAME || v->name == NULL) {
    snprintf(c->err->message, sizeof c->err->message,
             "%s: expected a number, a param name or an expression", c->what);
    return -1;
  }
  if (st__expr_eval(v->name, dom, lookup, c, out, &xe) == 0)
    return 0;
  if (xe.elsewhere)
    return -1;
  c->err->column = st__val_column(v, xe.offset);
  if (via != NULL)
    snprintf(c->err->message, sizeof c->err->message,
             "%s: param '%s' of case '%s': %s", c->what, via->name, kname(c->k),
             xe.message);
  else if (*c->dep && xe.head > 0)
    snprintf(c->err->message, sizeof c->err->message, "%s: %.*s in case '%s'%s",
             c->what, (int)xe.head, xe.message, kname(c->k),
             xe.message + xe.head);
  else
    snprintf(c->err->message, sizeof c->err->message, "%s: %s", c->what,
             xe.message);
  return -1;
}

int st__val_eval(const st__case *k, const st__val *v, st__expr_domain domain,
                 const char *what, st__num *out, int *dep, st__val_error *err) {
  ectx c;
  int local = 0;
  memset(&c, 0, sizeof c);
  c.k = k;
  c.what = what;
  c.dep = dep ? dep : &local;
  c.err = err;
  return eval_in(&c, v, NULL, domain, out);
}

int st__val_list(const st__case *k, const st__val *v, const char *what,
                 const st__param **out, st__val_error *err) {
  const st__param *p =
      v->kind == ST__VAL_NAME ? st__case_param(k, v->name) : NULL;
  err->line = v->line;
  err->column = v->column;
  if (p == NULL) {
    snprintf(err->message, sizeof err->message,
             "%s: '%s' is not a param of case '%s'; expected a list or the "
             "name of a list param",
             what, v->name ? v->name : "?", kname(k));
    return -1;
  }
  if (!p->is_list) {
    snprintf(err->message, sizeof err->message,
             "%s: param '%s' of case '%s' is %s, not a list; expected the "
             "name of a list param (lens: [33, 17, 128])",
             what, p->name, kname(k), p->is_str ? "a dtype" : "a number");
    return -1;
  }
  *out = p;
  return 0;
}

static int use_name(void *data, const char *name, size_t offset,
                    st__expr_error *err) {
  (void)offset;
  (void)err;
  st__case_param_use(data, name);
  return 0;
}

void st__case_val_use(st__case *k, const st__val *v) {
  st__expr_error xe;
  if (v->kind == ST__VAL_NAME && v->name)
    (void)st__expr_check(v->name, use_name, k, &xe);
}

void st__case_param_use(st__case *k, const char *name) {
  st__param *p = (st__param *)st__case_param(k, name);
  if (p == NULL || p->used)
    return;
  p->used = 1; /* before the walk: a cycle ends here */
  st__case_val_use(k, &p->expr);
  for (size_t i = 0; p->list && i < p->n_list; i++)
    st__case_val_use(k, &p->list[i]);
}
