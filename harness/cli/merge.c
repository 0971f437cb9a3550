/* SPDX-License-Identifier: MIT */
/* `scenetest merge` (docs/cli.md#merge, docs/ci.md): the JSON reports or
 * --events files of several shards or jobs become one report. Each input
 * is read by jsondoc.c into a tree, its cases rebuilt as case results and
 * replayed, in input order and file order, into the very reporters `run`
 * uses (they are observers): no second implementation of any format. A
 * case present twice (same SCENE::CASE and iteration) is refused naming
 * both inputs; --repeat iterations stay apart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "case/result.h"
#include "cli/cli_internal.h"
#include "cli/jsondoc.h"
#include "cli/merge.h"
#include "report/json.h"

typedef struct input {
  const char *path;
  st__jval *vals;
  size_t n_vals;
  const st__jval *run;      /* the report's "run", NULL for events */
  const st__jval *autoload; /* the report's "autoload", NULL for events */
  char *record;             /* its first record without pid, rendered */
  char *fingerprint;        /* run.fingerprint rendered, or NULL */
} input;

typedef struct merged_case {
  st_case_result *res;
  size_t input;
  char *key; /* "scene::case@iteration" */
} merged_case;

typedef struct merge {
  input *in;
  size_t n_in;
  merged_case *cases;
  size_t n, cap;
  const char *output;
  int format;
  const char **reports;
  size_t n_reports;
  unsigned repeat;
} merge;

static int oom(void) {
  fputs("scenetest: error: internal error: out of memory merging\n", stderr);
  return 3;
}

/* "PATH:LINE:COL: error: ..." and 2. */
static int at_error(const char *path, const st__jval *v, const char *fmt,
                    const char *arg) {
  fprintf(stderr, "%s:%zu:%zu: error: ", path, v != NULL ? v->line : 1,
          v != NULL ? v->col : 1);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return 2;
}

/* Writes v as JSON (members in order) to f; skip: a member left out. */
static void put_json(FILE *f, const st__jval *v, const char *skip) {
  size_t i;
  int first = 1;
  switch (v->type) {
  case ST__J_NULL:
    fputs("null", f);
    break;
  case ST__J_BOOL:
    fputs(v->b ? "true" : "false", f);
    break;
  case ST__J_NUM:
    fputs(v->str, f);
    break;
  case ST__J_STR:
    st__json_string_n(f, v->str, v->len);
    break;
  case ST__J_ARR:
    fputc('[', f);
    for (i = 0; i < v->n; i++) {
      if (i > 0)
        fputs(", ", f);
      put_json(f, &v->items[i], NULL);
    }
    fputc(']', f);
    break;
  case ST__J_OBJ:
    fputc('{', f);
    for (i = 0; i < v->n; i++) {
      if (skip != NULL && strcmp(v->keys[i], skip) == 0)
        continue;
      if (!first)
        fputs(", ", f);
      first = 0;
      st__json_string(f, v->keys[i]);
      fputs(": ", f);
      put_json(f, &v->items[i], NULL);
    }
    fputc('}', f);
    break;
  }
}

static char *render(const st__jval *v, const char *skip) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f;
  if (v == NULL || v->type == ST__J_NULL)
    return NULL;
  if ((f = open_memstream(&buf, &len)) == NULL)
    return NULL;
  put_json(f, v, skip);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static const char *str_of(const st__jval *obj, const char *key) {
  const st__jval *v = st__json_get(obj, key);
  return v != NULL && v->type == ST__J_STR ? v->str : NULL;
}

/* One event object into res: 0, 2 (said) or 3. */
static int add_event(const char *path, const st__jval *e, st_case_result *res) {
  st_event ev;
  const char **loaded = NULL;
  const st__jval *l = st__json_get(e, "loaded"), *round;
  uint64_t u;
  size_t i;

  memset(&ev, 0, sizeof ev);
  ev.device_ns = ST_NS_NONE;
  ev.copy_ns = ST_NS_NONE;
  ev.round = -1;
  if (e->type != ST__J_OBJ || (ev.name = str_of(e, "name")) == NULL)
    return at_error(path, e, "merge: an event needs %s", "\"name\" (a string)");
  if (strcmp(ev.name, "load") == 0) {
    ev.object = str_of(e, "object");
    ev.phase = str_of(e, "phase");
    if (ev.object == NULL || ev.phase == NULL)
      return at_error(path, e, "merge: a load event needs %s",
                      "\"object\" and \"phase\" (strings)");
  } else {
    if (!st__phase_status_parse(str_of(e, "status"), &ev.status))
      return at_error(path, e, "merge: an event needs %s",
                      "\"status\" (ok, fail, error or skip)");
    if (st__json_u64(st__json_get(e, "start_ns"), &u))
      ev.start_ns = u;
    if (st__json_u64(st__json_get(e, "dur_ns"), &u))
      ev.dur_ns = u;
    round = st__json_get(e, "round");
    if (round != NULL && st__json_u64(round, &u) && u < 1000000000u)
      ev.round = (int)u;
    if (st__json_u64(st__json_get(e, "device_ns"), &u))
      ev.device_ns = u;
    if (st__json_u64(st__json_get(e, "copy_ns"), &u))
      ev.copy_ns = u;
    ev.emitted = st__json_get(e, "emitted") != NULL &&
                 st__json_get(e, "emitted")->type == ST__J_BOOL &&
                 st__json_get(e, "emitted")->b;
    if (l != NULL && l->type == ST__J_ARR && l->n > 0) {
      if ((loaded = malloc(l->n * sizeof *loaded)) == NULL)
        return oom();
      for (i = 0; i < l->n; i++) {
        if (l->items[i].type != ST__J_STR) {
          free(loaded);
          return at_error(path, &l->items[i], "merge: %s",
                          "\"loaded\" holds strings");
        }
        loaded[ev.n_loaded++] = l->items[i].str;
      }
      ev.loaded = loaded;
    }
  }
  i = st__case_result_add_event(res, &ev) == ST_OK;
  free(loaded);
  return i ? 0 : oom();
}

/* The env object into res: 0 or 2. */
static int add_env(const char *path, const st__jval *env, st_case_result *res) {
  const char **kv;
  size_t i;
  if (env == NULL || env->type != ST__J_OBJ || env->n == 0)
    return 0;
  if ((kv = calloc(env->n * 2, sizeof *kv)) == NULL)
    return oom();
  for (i = 0; i < env->n; i++) {
    if (env->items[i].type != ST__J_STR) {
      free(kv);
      return at_error(path, &env->items[i], "merge: %s",
                      "\"env\" values are strings");
    }
    kv[2 * i] = env->keys[i];
    kv[2 * i + 1] = env->items[i].str;
  }
  st__case_result_set_env(res, kv, env->n);
  free(kv);
  return 0;
}

/* Builds one case of input k; *out NULL on error. 0, 2 or 3. */
static int build_case(merge *m, size_t k, const st__jval *c, unsigned iter,
                      st_case_result **out) {
  const char *path = m->in[k].path, *scene = str_of(c, "scene"),
             *kase = str_of(c, "case"), *platform = str_of(c, "platform");
  const st__jval *events = st__json_get(c, "events"),
                 *stale = st__json_get(c, "record_stale");
  st_case_status status;
  st_case_result *res;
  uint64_t u, seed = 0;
  size_t i;
  int rc;

  *out = NULL;
  if (c->type != ST__J_OBJ)
    return at_error(path, c, "merge: %s", "expected a case object");
  if (scene == NULL || kase == NULL || scene[0] == '\0' || kase[0] == '\0')
    return at_error(path, c, "merge: a case needs %s",
                    "\"scene\" and \"case\" (non-empty strings)");
  if (!st__case_status_parse(str_of(c, "status"), &status))
    return at_error(path, c, "merge: a case needs %s",
                    "\"status\" (pass, fail, error, skip, xfail or xpass)");
  if (!st__json_u64(st__json_get(c, "duration_ns"), &u))
    return at_error(path, c, "merge: a case needs %s",
                    "\"duration_ns\" (a non-negative integer)");
  if (m->in[k].run != NULL)
    st__json_u64(st__json_get(m->in[k].run, "seed"), &seed);
  /* The reports do not record a case's scene file: the rerun command a
   * report prints names SCENES, for the user to replace
   * (docs/cli.md#merge). */
  res = st__case_result_new(scene, kase, "SCENES", 0,
                            platform != NULL ? platform : "cpu", seed);
  if (res == NULL)
    return oom();
  st__case_result_set_duration(res, u);
  st__case_result_override(res, status, str_of(c, "message"));
  if (str_of(c, "output") != NULL)
    st__case_result_set_output(res, str_of(c, "output"),
                               st__json_get(c, "output")->len);
  if (st__json_u64(st__json_get(c, "pid"), &u) && u <= 0x7fffffffu)
    st__case_result_set_pid(res, (long)u);
  st__case_result_set_record_stale(
      res, stale != NULL && stale->type == ST__J_BOOL && stale->b);
  st__case_result_set_iteration(res, iter);
  if ((rc = add_env(path, st__json_get(c, "env"), res)) != 0)
    goto bad;
  if (events != NULL && events->type != ST__J_ARR) {
    rc = at_error(path, events, "merge: %s", "\"events\" is an array");
    goto bad;
  }
  for (i = 0; events != NULL && i < events->n; i++)
    if ((rc = add_event(path, &events->items[i], res)) != 0)
      goto bad;
  *out = res;
  return 0;
bad:
  st_case_result_free(res);
  return rc;
}

static int add_case(merge *m, size_t k, st_case_result *res) {
  char key[64];
  merged_case *mc;
  size_t len;
  mc = st__array_grow(m->cases, &m->cap, m->n, sizeof *mc, 64);
  if (mc == NULL)
    return -1;
  m->cases = mc;
  mc = &m->cases[m->n];
  snprintf(key, sizeof key, "@%u", st_case_result_iteration(res));
  len = strlen(st_case_result_scene(res)) + strlen(st_case_result_case(res)) +
        strlen(key) + 3;
  if ((mc->key = malloc(len)) == NULL)
    return -1;
  snprintf(mc->key, len, "%s::%s%s", st_case_result_scene(res),
           st_case_result_case(res), key);
  mc->res = res;
  mc->input = k;
  m->n++;
  if (st_case_result_iteration(res) > m->repeat)
    m->repeat = st_case_result_iteration(res);
  return 0;
}

/* The iteration of an events case: its occurrence count in the input. */
static unsigned occurrence(const merge *m, size_t k, size_t first,
                           const char *scene, const char *kase) {
  size_t i;
  unsigned seen = 1;
  for (i = first; i < m->n; i++)
    if (m->cases[i].input == k &&
        strcmp(st_case_result_scene(m->cases[i].res), scene) == 0 &&
        strcmp(st_case_result_case(m->cases[i].res), kase) == 0)
      seen++;
  return seen;
}

/* The autoload record line (docs/measuring.md#the-autoload-record's form) of a
 * report's record object. */
static char *record_line(const st__jval *r) {
  char *buf = NULL;
  size_t len = 0, i;
  const st__jval *mods = st__json_get(r, "modules");
  uint64_t pid = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL)
    return NULL;
  fputs("torch_backend_autoload", f);
  for (i = 0; i < r->n; i++)
    if (r->items[i].type == ST__J_STR)
      fprintf(f, " %s=%s", r->keys[i], r->items[i].str);
  for (i = 0; mods != NULL && mods->type == ST__J_OBJ && i < mods->n; i++)
    fprintf(f,
            strcmp(mods->keys[i], "torch") == 0 ? " %s_imported=%s"
                                                : " %s_loaded=%s",
            mods->keys[i],
            mods->items[i].type == ST__J_BOOL && mods->items[i].b ? "true"
                                                                  : "false");
  st__json_u64(st__json_get(r, "pid"), &pid);
  fprintf(f, " pid=%llu", (unsigned long long)pid);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* The report's records onto the first case of input k with each one's
 * pid (else its first case), so that the reporters find them. */
static void attach_records(merge *m, size_t k, size_t first) {
  const st__jval *a = m->in[k].autoload;
  size_t i, j;
  for (i = 0; a != NULL && a->type == ST__J_ARR && i < a->n; i++) {
    uint64_t pid = 0;
    st_case_result *target = NULL;
    char *line;
    if (a->items[i].type != ST__J_OBJ)
      continue;
    st__json_u64(st__json_get(&a->items[i], "pid"), &pid);
    for (j = first; j < m->n && target == NULL; j++)
      if ((uint64_t)st_case_result_pid(m->cases[j].res) == pid &&
          st__case_result_record(m->cases[j].res) == NULL)
        target = m->cases[j].res;
    for (j = first; j < m->n && target == NULL; j++)
      if (st__case_result_record(m->cases[j].res) == NULL)
        target = m->cases[j].res;
    if (target == NULL || (line = record_line(&a->items[i])) == NULL)
      continue;
    st__case_result_set_record(target, line);
    free(line);
  }
}

/* Reads input k: 0, 2 or 3. */
static int read_input(merge *m, size_t k) {
  input *in = &m->in[k];
  char *text;
  size_t len, i, first = m->n;
  st__jerr err;
  const st__jval *cases;
  int rc;

  if ((rc = st__cli_read_report("merge", in->path, &text, &len)) != 0)
    return rc;
  rc = st__json_parse(text, len, &in->vals, &in->n_vals, &err);
  free(text);
  if (rc == ST__JSON_NOMEM)
    return oom();
  if (rc != 0) {
    fprintf(stderr,
            "%s:%zu:%zu: error: merge: not JSON: expected %s (a JSON report "
            "or --events file of scenetest)\n",
            in->path, err.line, err.col, err.expected);
    return 2;
  }
  if (in->n_vals == 1 && st__json_get(&in->vals[0], "format_version")) {
    const st__jval *doc = &in->vals[0];
    cases = st__json_get(doc, "cases");
    in->run = st__json_get(doc, "run");
    in->autoload = st__json_get(doc, "autoload");
    if (cases == NULL || cases->type != ST__J_ARR)
      return at_error(in->path, doc, "merge: %s",
                      "a JSON report needs \"cases\" (an array)");
    if (in->run == NULL || in->run->type != ST__J_OBJ)
      return at_error(in->path, doc, "merge: %s",
                      "a JSON report needs \"run\" (an object)");
    if (in->autoload != NULL && in->autoload->type == ST__J_ARR &&
        in->autoload->n > 0)
      in->record = render(&in->autoload->items[0], "pid");
    in->fingerprint = render(st__json_get(in->run, "fingerprint"), NULL);
  } else {
    cases = NULL;
  }
  for (i = 0; i < (cases != NULL ? cases->n : in->n_vals); i++) {
    const st__jval *c = cases != NULL ? &cases->items[i] : &in->vals[i];
    st_case_result *res;
    uint64_t iter = 1;
    if (cases != NULL) {
      if (!st__json_u64(st__json_get(c, "iteration"), &iter) || iter < 1 ||
          iter > 1000000)
        return at_error(in->path, c, "merge: a case needs %s",
                        "\"iteration\" (an integer from 1)");
    } else if (c->type == ST__J_OBJ && str_of(c, "scene") != NULL &&
               str_of(c, "case") != NULL) {
      iter = occurrence(m, k, first, str_of(c, "scene"), str_of(c, "case"));
    }
    if ((rc = build_case(m, k, c, (unsigned)iter, &res)) != 0)
      return rc;
    if (add_case(m, k, res) != 0) {
      st_case_result_free(res);
      return oom();
    }
  }
  attach_records(m, k, first);
  return 0;
}

static int cmp_key(const void *a, const void *b) {
  const merged_case *x = *(merged_case *const *)a,
                    *y = *(merged_case *const *)b;
  int c = strcmp(x->key, y->key);
  if (c != 0)
    return c;
  return x->input < y->input ? -1 : x->input > y->input;
}

/* A case present twice: 2 naming it and both inputs. */
static int refuse_duplicates(const merge *m) {
  merged_case **sorted = malloc((m->n + 1) * sizeof *sorted);
  size_t i;
  int rc = 0;
  if (sorted == NULL)
    return oom();
  for (i = 0; i < m->n; i++)
    sorted[i] = &m->cases[i];
  qsort(sorted, m->n, sizeof *sorted, cmp_key);
  for (i = 1; i < m->n && rc == 0; i++) {
    if (strcmp(sorted[i - 1]->key, sorted[i]->key) != 0)
      continue;
    rc = st__cli_usage(
        "merge: case '%.*s' (iteration %u) is in both '%s' and '%s'; merge "
        "the reports of disjoint shards, or of --repeat iterations",
        (int)(strrchr(sorted[i]->key, '@') - sorted[i]->key), sorted[i]->key,
        st_case_result_iteration(sorted[i]->res),
        m->in[sorted[i - 1]->input].path, m->in[sorted[i]->input].path);
  }
  free(sorted);
  return rc;
}

static const char *record_of(const input *in) { return in->record; }
static const char *fingerprint_of(const input *in) { return in->fingerprint; }

/* The first input whose text (text_of: record or fingerprint) is set, and
 * the first later one whose text differs from it: 1 with *x and *y, or 0. */
static int differ(const merge *m, const char *(*text_of)(const input *),
                  size_t *x, size_t *y) {
  size_t i, a = m->n_in;
  for (i = 0; i < m->n_in; i++) {
    const char *t = text_of(&m->in[i]);
    if (t == NULL)
      continue;
    if (a == m->n_in) {
      a = i;
    } else if (strcmp(text_of(&m->in[a]), t) != 0) {
      *x = a;
      *y = i;
      return 1;
    }
  }
  return 0;
}

/* Warns once when the inputs' records or fingerprints differ. */
static void warn_differences(const merge *m) {
  size_t x, y;
  if (differ(m, record_of, &x, &y))
    fprintf(stderr,
            "scenetest: warning: merge: the autoload records of '%s' "
            "and '%s' differ: the shards ran in different environments\n",
            m->in[x].path, m->in[y].path);
  if (differ(m, fingerprint_of, &x, &y))
    fprintf(stderr,
            "scenetest: warning: merge: the fingerprints of '%s' and "
            "'%s' differ\n",
            m->in[x].path, m->in[y].path);
}

/* The merged JSON's "inputs" list. NULL out of memory. */
static char *inputs_json(const merge *m) {
  char *buf = NULL;
  size_t len = 0, i;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL)
    return NULL;
  fputc('[', f);
  for (i = 0; i < m->n_in; i++) {
    const input *in = &m->in[i];
    const st__jval *shard =
        in->run != NULL ? st__json_get(in->run, "shard") : NULL;
    fputs(i > 0 ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
    st__json_string(f, in->path);
    fputs(", \"shard\": ", f);
    if (shard != NULL)
      put_json(f, shard, NULL);
    else
      fputs("null", f);
    fputs(", \"record\": ", f);
    if (in->autoload != NULL && in->autoload->type == ST__J_ARR &&
        in->autoload->n > 0)
      put_json(f, &in->autoload->items[0], NULL);
    else
      fputs("null", f);
    fprintf(f, ", \"fingerprint\": %s}",
            in->fingerprint != NULL ? in->fingerprint : "null");
  }
  fputs(m->n_in > 0 ? "\n  ]" : "]", f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* Replays the merged cases into the observers as a run would. */
static void replay(const merge *m, st_observer *obs, size_t n_obs,
                   st_run_result *run, const char *platform, uint64_t seed) {
  st_run_info info;
  size_t i, j, e;

  memset(&info, 0, sizeof info);
  info.platform = platform;
  info.seed = seed;
  info.total = m->n;
  info.repeat = m->repeat > 0 ? m->repeat : 1;
  for (j = 0; j < n_obs; j++)
    if (obs[j].run_begin != NULL)
      obs[j].run_begin(obs[j].data, &info);
  for (i = 0; i < m->n; i++) {
    const st_case_result *res = m->cases[i].res;
    st_case_info ci;
    memset(&ci, 0, sizeof ci);
    ci.scene = st_case_result_scene(res);
    ci.name = st_case_result_case(res);
    ci.file = st_case_result_file(res);
    ci.platform = st_case_result_platform(res);
    ci.seed = seed;
    ci.index = i;
    ci.total = m->n;
    ci.iteration = st_case_result_iteration(res);
    for (j = 0; j < n_obs; j++) {
      if (obs[j].case_begin != NULL)
        obs[j].case_begin(obs[j].data, &ci);
      for (e = 0; e < st_case_result_event_count(res); e++) {
        const st_event *ev = st_case_result_event(res, e);
        if (strcmp(ev->name, "load") == 0)
          continue;
        if (obs[j].phase_begin != NULL)
          obs[j].phase_begin(obs[j].data, &ci, ev->name, ev->round);
        if (obs[j].phase_end != NULL)
          obs[j].phase_end(obs[j].data, &ci, ev);
      }
      if (obs[j].case_finish != NULL)
        obs[j].case_finish(obs[j].data, &ci, res);
      if (obs[j].case_end != NULL)
        obs[j].case_end(obs[j].data, &ci, res);
    }
  }
  for (j = 0; j < n_obs; j++)
    if (obs[j].run_end != NULL)
      obs[j].run_end(obs[j].data, run);
}

/* The command line: 0 or 2. */
static int parse_args(merge *m, int argc, char **argv) {
  int i, opts = 1;
  m->format = -1;
  m->reports = calloc((size_t)argc, sizeof *m->reports);
  m->in = calloc((size_t)argc, sizeof *m->in);
  if (m->reports == NULL || m->in == NULL)
    return oom();
  for (i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (opts && strcmp(a, "--") == 0) {
      opts = 0;
    } else if (opts &&
               (strcmp(a, "--format") == 0 || strcmp(a, "--output") == 0 ||
                strcmp(a, "--report") == 0)) {
      const char *v = i + 1 < argc ? argv[++i] : NULL;
      if (v == NULL || v[0] == '\0')
        return st__cli_usage("merge: %s needs a value", a);
      if (strcmp(a, "--format") == 0) {
        char names[128];
        if ((m->format = st__report_format_find(v)) < 0)
          return st__cli_usage("merge: --format must be %s (got '%s')",
                               st__report_format_names(names, sizeof names,
                                                       ST__FMT_ALL, ", ",
                                                       " or "),
                               v);
      } else if (strcmp(a, "--output") == 0) {
        m->output = v;
      } else {
        const char *colon = strchr(v, ':');
        char name[16];
        int fmt = -1;
        if (colon != NULL && (size_t)(colon - v) < sizeof name) {
          snprintf(name, sizeof name, "%.*s", (int)(colon - v), v);
          fmt = st__report_format_find(name);
        }
        if (fmt < 0 || !st__report_formats[fmt].report || colon[1] == '\0') {
          char names[128];
          return st__cli_usage(
              "merge: --report must be FORMAT:PATH with FORMAT %s (got '%s')",
              st__report_format_names(names, sizeof names, ST__FMT_REPORT, ", ",
                                      " or "),
              v);
        }
        m->reports[m->n_reports++] = v;
      }
    } else if (opts && a[0] == '-' && a[1] != '\0') {
      return st__cli_usage("merge: unknown option '%s' (merge takes "
                           "--report, --format and --output)",
                           a);
    } else {
      m->in[m->n_in++].path = a;
    }
  }
  if (m->n_in == 0)
    return st__cli_usage("merge: no input; usage: scenetest merge [--report "
                         "FORMAT:PATH]... [--format F] [--output PATH] "
                         "INPUT...");
  return 0;
}

/* The outputs, checked against each other and the inputs, opened. */
static int open_outputs(merge *m, st__output *out, size_t *n_out,
                        const st__report_config *cfg) {
  st__reserved *res = calloc(m->n_in + 1, sizeof *res);
  size_t i;
  int rc;
  if (res == NULL)
    return oom();
  out[0].fmt = m->format >= 0
                   ? m->format
                   : st__report_format_find(
                         m->output == NULL && isatty(1) ? "text" : "tap");
  out[0].path = m->output;
  out[0].source = "--output";
  *n_out = 1;
  for (i = 0; i < m->n_reports; i++) {
    const char *colon = strchr(m->reports[i], ':');
    char name[16];
    snprintf(name, sizeof name, "%.*s", (int)(colon - m->reports[i]),
             m->reports[i]);
    out[*n_out].fmt = st__report_format_find(name);
    out[*n_out].path = colon + 1;
    out[*n_out].source = "--report";
    (*n_out)++;
  }
  for (i = 0; i < m->n_in; i++) {
    res[i].what = "merge input";
    res[i].path = m->in[i].path;
  }
  rc = st__outputs_check(out, n_out, res, m->n_in);
  free(res);
  if (rc != 0)
    return rc;
  return st__outputs_open(out, *n_out, cfg);
}

/* The platform of the inputs' runs when they agree, else "mixed". */
static const char *common_platform(const merge *m) {
  const char *p = NULL;
  size_t i;
  for (i = 0; i < m->n; i++) {
    const char *q = st_case_result_platform(m->cases[i].res);
    if (p == NULL)
      p = q;
    else if (strcmp(p, q) != 0)
      return "mixed";
  }
  return p != NULL ? p : "cpu";
}

int st__cli_merge_main(int argc, char **argv) {
  merge m;
  st__output *out = NULL;
  st_observer *obs = NULL;
  st_run_result *run = NULL;
  st__report_config cfg;
  size_t n_out = 0, i, n_obs = 0;
  uint64_t seed = 0;
  char *inputs = NULL;
  int status;

  memset(&m, 0, sizeof m);
  if ((status = parse_args(&m, argc, argv)) != 0)
    goto done;
  for (i = 0; i < m.n_in && status == 0; i++)
    status = read_input(&m, i);
  if (status == 0)
    status = refuse_duplicates(&m);
  if (status != 0)
    goto done;
  warn_differences(&m);
  for (i = 0; i < m.n_in; i++)
    if (m.in[i].run != NULL &&
        st__json_u64(st__json_get(m.in[i].run, "seed"), &seed))
      break;
  out = calloc(m.n_reports + 1, sizeof *out);
  obs = calloc(m.n_reports + 1, sizeof *obs);
  run = st__run_result_new(m.n);
  inputs = inputs_json(&m);
  if (out == NULL || obs == NULL || run == NULL || inputs == NULL) {
    status = oom();
    goto done;
  }
  memset(&cfg, 0, sizeof cfg);
  cfg.argv0 = argv[0];
  cfg.argc = argc;
  cfg.argv = argv;
  cfg.merge_inputs = inputs;
  for (i = 0; i < m.n; i++)
    cfg.merge_elapsed_ns += st_case_result_duration_ns(m.cases[i].res);
  if (cfg.merge_elapsed_ns == 0)
    cfg.merge_elapsed_ns = 1;
  if ((status = open_outputs(&m, out, &n_out, &cfg)) != 0)
    goto done;
  for (i = 0; i < n_out; i++)
    obs[n_obs++] = out[i].obs;
  /* The run result owns the cases from here; m.cases still points at
   * them for the replay. */
  for (i = 0; i < m.n; i++)
    st__run_result_set(run, i, m.cases[i].res);
  replay(&m, obs, n_obs, run, common_platform(&m), seed);
  for (i = 0; i < m.n; i++)
    m.cases[i].res = NULL;
  status = st_run_result_exit_code(run) != 0 ? 1 : 0;
done:
  if (n_out > 0) {
    int close_status = st__outputs_close(out, n_out);
    if (close_status != 0)
      status = close_status;
  }
  free(out);
  free(obs);
  free(inputs);
  st_run_result_free(run);
  for (i = 0; i < m.n; i++) {
    st_case_result_free(m.cases[i].res);
    free(m.cases[i].key);
  }
  free(m.cases);
  for (i = 0; i < m.n_in; i++) {
    st__json_free(m.in[i].vals, m.in[i].n_vals);
    free(m.in[i].record);
    free(m.in[i].fingerprint);
  }
  free(m.in);
  free(m.reports);
  return status;
}
