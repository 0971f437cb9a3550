/* SPDX-License-Identifier: MIT */
/* The storage of a scene's golden program (program.h): the public
 * st_program's strings and arrays, grown one step, arg or return at a
 * time as the loader reads them, and freed as one. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "scene/program.h"
#include "scene/scene.h"

st__program *st__program_new(st_program_kind kind) {
  st__program *p = st__zalloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->pub.size = sizeof p->pub;
  p->pub.kind = kind;
  return p;
}

/* Grows *arr (n elements of size bytes) by one zeroed element. */
static void *grow(void *arr, size_t n, size_t size) {
  char *q = st__array_resize(arr, n + 1, size);
  if (q != NULL)
    memset(q + n * size, 0, size);
  return q;
}

static void free_step(st_program_step *s) {
  for (size_t i = 0; i < s->n_args; i++) {
    st_program_arg *a = (st_program_arg *)&s->args[i];
    free((char *)a->name);
    free((char *)a->value.text);
    free((int64_t *)a->value.ints);
  }
  free((st_program_arg *)s->args);
  for (size_t i = 0; i < s->n_outs; i++)
    free((char *)s->outs[i]);
  free((char **)s->outs);
  free((char *)s->op);
}

void st__program_free(st__program *p) {
  if (p == NULL)
    return;
  free((char *)p->pub.source);
  free((char *)p->pub.function);
  for (size_t i = 0; i < p->pub.n_steps; i++)
    free_step((st_program_step *)&p->pub.steps[i]);
  free((st_program_step *)p->pub.steps);
  for (size_t i = 0; i < p->pub.n_returns; i++) {
    free((char *)p->pub.returns[i].output);
    free((char *)p->pub.returns[i].value);
  }
  free((st_program_return *)p->pub.returns);
  free(p->src_file);
  free(p->step_line);
  free(p->step_column);
  free(p);
}

long st__program_add_step(st__program *p, const char *op, int line,
                          int column) {
  size_t n = p->pub.n_steps;
  st_program_step *steps = grow((void *)p->pub.steps, n, sizeof *steps);
  if (steps == NULL)
    return -1;
  p->pub.steps = steps;
  int *l = st__array_resize(p->step_line, n + 1, sizeof *l);
  if (l == NULL)
    return -1;
  p->step_line = l;
  int *c = st__array_resize(p->step_column, n + 1, sizeof *c);
  if (c == NULL)
    return -1;
  p->step_column = c;
  if ((steps[n].op = strdup(op)) == NULL)
    return -1;
  l[n] = line;
  c[n] = column;
  p->pub.n_steps = n + 1;
  return (long)n;
}

int st__program_add_arg(st__program *p, const char *name,
                        const st_program_value *value) {
  st_program_step *s = (st_program_step *)&p->pub.steps[p->pub.n_steps - 1];
  st_program_arg *args = grow((void *)s->args, s->n_args, sizeof *args);
  if (args == NULL)
    return -1;
  s->args = args;
  st_program_arg *a = &args[s->n_args];
  a->value = *value;
  a->value.text = NULL;
  a->value.ints = NULL;
  a->value.n_ints = 0;
  s->n_args++;
  if ((a->name = strdup(name)) == NULL)
    return -1;
  if (value->text != NULL && (a->value.text = strdup(value->text)) == NULL)
    return -1;
  if (value->n_ints > 0) {
    int64_t *v = malloc(value->n_ints * sizeof *v);
    if (v == NULL)
      return -1;
    memcpy(v, value->ints, value->n_ints * sizeof *v);
    a->value.ints = v;
    a->value.n_ints = value->n_ints;
  }
  return 0;
}

int st__program_add_out(st__program *p, const char *name) {
  st_program_step *s = (st_program_step *)&p->pub.steps[p->pub.n_steps - 1];
  char **outs = grow((void *)s->outs, s->n_outs, sizeof *outs);
  if (outs == NULL)
    return -1;
  s->outs = (const char *const *)outs;
  if ((outs[s->n_outs] = strdup(name)) == NULL)
    return -1;
  s->n_outs++;
  return 0;
}

int st__program_add_return(st__program *p, const char *output,
                           const char *value) {
  size_t n = p->pub.n_returns;
  st_program_return *r = grow((void *)p->pub.returns, n, sizeof *r);
  if (r == NULL)
    return -1;
  p->pub.returns = r;
  p->pub.has_returns = 1;
  r[n].output = strdup(output);
  r[n].value = strdup(value);
  p->pub.n_returns = n + 1;
  return r[n].output && r[n].value ? 0 : -1;
}

void st__program_source_pos(const st__program *p, int line, int column,
                            int *out_line, int *out_column) {
  *out_line = p->src_line + (line > 0 ? line - 1 : 0);
  /* Only the first line of inline source is not indented like the rest
   * when it is written on the key's line (a quoted scalar); block
   * scalars, the usual form, have one indentation throughout. */
  *out_column = column > 0 ? p->src_column + column - 1 : 0;
}
