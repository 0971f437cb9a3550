/* SPDX-License-Identifier: MIT */
/* A scene's golden program (docs/torch.md; the model is scene/program.h):
 * `golden:` as a mapping, TorchScript inline or from a file, or a list of
 * ATen steps; and, once the cases are taken, what golden_platform and
 * golden_device may say beside it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/load.h"
#include "scene/program.h"

static const char *const golden_keys[] = {"torchscript", "file", "function",
                                          "steps", "returns"};
enum { G_TS, G_FILE, G_FUNCTION, G_STEPS, G_RETURNS, G_NKEYS };
static const char *const step_keys[] = {"op", "args", "out"};
enum { P_OP, P_ARGS, P_OUT, P_NKEYS };

/* A golden program's source file is read whole at load time (so `check`
 * can compile it); this bounds it. */
#define PROGRAM_FILE_MAX ((size_t)1 << 20)

/* Where line 1, column 1 of an inline source is: a block scalar's content
 * starts on the line after its indicator, at the indentation of its first
 * non-blank line; any other scalar at its own position (one past a
 * quote). */
static void source_start(const st__loader *L, const st__ynode *n, int *line,
                         int *col) {
  const char *p = L->buf, *end = L->buf + L->len;
  *line = n->line;
  *col = n->col;
  for (int l = 1; l < n->line && p < end; p++)
    if (*p == '\n')
      l++;
  if (p + n->col - 1 >= end)
    return;
  char c = p[n->col - 1];
  if (c == '"' || c == '\'') {
    (*col)++;
    return;
  }
  if (c != '|' && c != '>')
    return;
  *line = n->line + 1;
  for (int l = n->line; p < end; l++) {
    const char *q = memchr(p, '\n', (size_t)(end - p));
    if (q == NULL)
      break;
    p = q + 1;
    size_t ind = 0;
    while (p + ind < end && p[ind] == ' ')
      ind++;
    if (p + ind < end && p[ind] != '\n' && p[ind] != '\r') {
      *col = (int)ind + 1;
      return;
    }
    (void)l;
  }
}

/* `file:`: contained in the scene's directory as `file:` inits are, read
 * whole. Errors point at the path. */
static void take_program_file(st__loader *L, const st__ynode *n,
                              st__program *p) {
  st__init tmp;
  memset(&tmp, 0, sizeof tmp);
  st__schema_file(L, n, &tmp);
  if (tmp.path != NULL) {
    FILE *f = fopen(tmp.path, "rb");
    char *text = f ? malloc(PROGRAM_FILE_MAX + 1) : NULL;
    size_t got = text ? fread(text, 1, PROGRAM_FILE_MAX + 1, f) : 0;
    if (f == NULL)
      st__schema_error(L, n, "cannot open file '%.200s': %s", tmp.path_given,
                       strerror(errno));
    else if (text == NULL)
      L->oom = 1;
    else if (got > PROGRAM_FILE_MAX || memchr(text, '\0', got) != NULL)
      st__schema_error(L, n,
                       "file '%.200s' is %s; expected TorchScript source of at "
                       "most 1 MiB",
                       tmp.path_given,
                       got > PROGRAM_FILE_MAX ? "larger than 1 MiB"
                                              : "binary (a NUL "
                                                "byte)");
    else {
      text[got] = '\0';
      p->pub.source = text;
      text = NULL;
      const char *slash = strrchr(L->file, '/');
      if (tmp.path_given[0] == '/' || slash == NULL)
        p->src_file = st__schema_strdup(L, tmp.path_given);
      else if (asprintf(&p->src_file, "%.*s/%s", (int)(slash - L->file),
                        L->file, tmp.path_given) < 0)
        p->src_file = NULL, L->oom = 1;
      p->src_line = p->src_column = 1;
      p->in_file = 1;
    }
    free(text);
    if (f)
      fclose(f);
  }
  free(tmp.path);
  free(tmp.path_given);
}

/* A step argument: a number, a bool, a name or string, a list of ints. */
static int take_step_value(st__loader *L, const st__ynode *n,
                           st_program_value *v, int64_t **ints) {
  memset(v, 0, sizeof *v);
  if (n->kind == ST__YN_SCALAR &&
      (n->sk == ST__YS_INT || n->sk == ST__YS_BOOL)) {
    v->kind = n->sk == ST__YS_INT ? ST_PROGRAM_INT : ST_PROGRAM_BOOL;
    v->i = n->i;
    v->f = n->f;
    return 0;
  }
  if (n->kind == ST__YN_SCALAR && n->sk == ST__YS_FLOAT) {
    v->kind = ST_PROGRAM_FLOAT;
    v->f = n->f;
    return 0;
  }
  if (st__ynode_is_str(n)) {
    v->kind = st__schema_ident_ok(n->str, n->len) ? ST_PROGRAM_NAME
                                                  : ST_PROGRAM_STRING;
    v->text = n->str;
    return 0;
  }
  if (n->kind == ST__YN_SEQ) {
    *ints = st__schema_seq_alloc(L, n, sizeof **ints);
    if (*ints == NULL)
      return -1;
    for (size_t i = 0; i < n->n; i++) {
      if (n->kids[i]->kind != ST__YN_SCALAR || n->kids[i]->sk != ST__YS_INT) {
        st__schema_expected(L, n->kids[i], "an integer", "args");
        return -1;
      }
      (*ints)[i] = n->kids[i]->i;
    }
    v->kind = ST_PROGRAM_INTS;
    v->ints = *ints;
    v->n_ints = n->n;
    return 0;
  }
  st__schema_expected(L, n,
                      "a value name, a number, true or false, a string or a "
                      "list of integers",
                      "args");
  return -1;
}

static void take_step(st__loader *L, const st__ynode *n, st__program *p) {
  const st__ynode *v[P_NKEYS];
  if (n->kind != ST__YN_MAP) {
    st__schema_expected(
        L, n, "a step mapping {op: aten::NAME, args: {...}, out: NAME}",
        "steps");
    return;
  }
  st__schema_fields(L, n, "step", step_keys, P_NKEYS, v, NULL);
  st__schema_require(L, n, "step", "op", v[P_OP]);
  if (v[P_OP] == NULL)
    return;
  const st__ynode *op = v[P_OP];
  if (!st__ynode_is_str(op) || strncmp(op->str, "aten::", 6) != 0 ||
      op->len <= 6) {
    st__schema_expected(L, op, "an ATen operator (aten::NAME[.OVERLOAD])",
                        "op");
    return;
  }
  if (st__program_add_step(p, op->str, n->line, n->col) < 0) {
    L->oom = 1;
    return;
  }
  if (v[P_ARGS] && v[P_ARGS]->kind != ST__YN_MAP)
    st__schema_expected(L, v[P_ARGS],
                        "a mapping of schema argument names to values", "args");
  else
    for (size_t i = 0; v[P_ARGS] && i + 1 < v[P_ARGS]->n; i += 2) {
      const st__ynode *k = v[P_ARGS]->kids[i];
      st_program_value val;
      int64_t *ints = NULL;
      if (!st__schema_ident_valid(L, k, "args"))
        continue;
      if (take_step_value(L, v[P_ARGS]->kids[i + 1], &val, &ints) == 0 &&
          st__program_add_arg(p, k->str, &val) < 0)
        L->oom = 1;
      free(ints);
    }
  const st__ynode *out = v[P_OUT];
  if (out && out->kind == ST__YN_SEQ) {
    for (size_t i = 0; i < out->n; i++)
      if (st__schema_ident_valid(L, out->kids[i], "out") &&
          st__program_add_out(p, out->kids[i]->str) < 0)
        L->oom = 1;
  } else if (out && st__schema_ident_valid(L, out, "out") &&
             st__program_add_out(p, out->str) < 0) {
    L->oom = 1;
  }
}

/* `golden:` as a mapping: a TorchScript program (inline or from a file)
 * or a list of ATen steps. The golden op becomes ST_PROGRAM_OP. */
void st__load_golden(st__loader *L, const st__ynode *n, st_scene *s) {
  const st__ynode *v[G_NKEYS], *k[G_NKEYS];
  st__schema_fields(L, n, "golden", golden_keys, G_NKEYS, v, k);
  int forms = (v[G_TS] != NULL) + (v[G_FILE] != NULL) + (v[G_STEPS] != NULL);
  if (forms != 1) {
    st__schema_error(L, n,
                     "%s in golden; expected exactly one of torchscript, file "
                     "and steps",
                     forms ? "more than one program" : "no program");
    return;
  }
  st__program *p =
      st__program_new(v[G_STEPS] ? ST_PROGRAM_STEPS : ST_PROGRAM_TORCHSCRIPT);
  if (p == NULL) {
    L->oom = 1;
    return;
  }
  s->program = p;
  p->line = p->function_line = p->returns_line = n->line;
  p->column = p->function_column = p->returns_column = n->col;
  if (v[G_STEPS] && v[G_FUNCTION])
    st__schema_error(L, k[G_FUNCTION],
                     "'function' names a TorchScript function; "
                     "expected it with torchscript or file, not steps");
  if (!v[G_STEPS] && v[G_RETURNS])
    st__schema_error(
        L, k[G_RETURNS],
        "'returns' maps outputs to the values of steps; "
        "expected it with steps (a TorchScript function returns them)");
  if (v[G_TS]) {
    if (!st__ynode_is_str(v[G_TS]) || v[G_TS]->len == 0)
      st__schema_expected(L, v[G_TS], "TorchScript source", "torchscript");
    else {
      p->pub.source = st__schema_strdup(L, v[G_TS]->str);
      p->src_file = st__schema_strdup(L, L->file);
      source_start(L, v[G_TS], &p->src_line, &p->src_column);
    }
  }
  if (v[G_FILE])
    take_program_file(L, v[G_FILE], p);
  if (!v[G_STEPS]) {
    p->pub.function = v[G_FUNCTION]
                          ? st__schema_ident(L, v[G_FUNCTION], "function")
                          : st__schema_strdup(L, "golden");
    if (v[G_FUNCTION]) {
      p->function_line = v[G_FUNCTION]->line;
      p->function_column = v[G_FUNCTION]->col;
    }
    return;
  }
  if (v[G_STEPS]->kind != ST__YN_SEQ || v[G_STEPS]->n == 0)
    st__schema_expected(L, v[G_STEPS], "a non-empty list of steps", "steps");
  else
    for (size_t i = 0; i < v[G_STEPS]->n; i++)
      take_step(L, v[G_STEPS]->kids[i], p);
  const st__ynode *r = v[G_RETURNS];
  if (r == NULL)
    return;
  p->returns_line = r->line;
  p->returns_column = r->col;
  if (r->kind != ST__YN_MAP) {
    st__schema_expected(L, r, "a mapping of output names to value names",
                        "returns");
    return;
  }
  p->pub.has_returns = 1;
  for (size_t i = 0; i + 1 < r->n; i += 2)
    if (st__schema_ident_valid(L, r->kids[i], "returns") &&
        st__schema_ident_valid(L, r->kids[i + 1], "returns") &&
        st__program_add_return(p, r->kids[i]->str, r->kids[i + 1]->str) < 0)
      L->oom = 1;
}

/* A golden program is computed by torch whatever --golden-platform says;
 * a golden_platform naming another backend contradicts it. golden_device
 * says where a program runs: without one it means nothing. */
void st__load_golden_check(st__loader *L, const st_scene *s,
                           const st__ynode *gp, const st__ynode *dev) {
  if (s->program == NULL) {
    if (dev)
      st__schema_error(
          L, dev,
          "'golden_device' says where a golden program runs; "
          "expected it only with golden: {torchscript|file|steps: ...}");
    for (size_t i = 0; i < s->n_cases; i++)
      if (s->cases[i].golden_device != ST__DEVICE_UNSET)
        st__schema_error_at(
            L, s->cases[i].line, s->cases[i].column,
            "case '%s' sets 'golden_device', which says where a golden "
            "program runs; expected it only with golden: "
            "{torchscript|file|steps: ...}",
            s->cases[i].name ? s->cases[i].name : "?");
    return;
  }
  if (s->golden_platform && strcmp(s->golden_platform, "torch") != 0)
    st__schema_error(
        L, gp,
        "golden_platform '%s' contradicts the golden program, which "
        "torch computes; expected torch or no golden_platform",
        s->golden_platform);
  for (size_t i = 0; i < s->n_cases; i++) {
    const st__case *c = &s->cases[i];
    if (c->golden_platform && strcmp(c->golden_platform, "torch") != 0)
      st__schema_error_at(
          L, c->line, c->column,
          "case '%s': golden_platform '%s' contradicts the golden program, "
          "which torch computes; expected torch or no golden_platform",
          c->name ? c->name : "?", c->golden_platform);
  }
}
