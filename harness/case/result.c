/* SPDX-License-Identifier: MIT */
/* Case and run results: what a case did (status, message, captured output)
 * and its events, deep-copied so they outlive the run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "case/result.h"
#include "scene/quarantine.h"

/* A result is kept for every case until the run's reports are written
 * (200,000 of them in a big suite, issue 14), so it is one allocation
 * holding its identity strings (scene, case, file, platform: `names`
 * below), its events in an array grown in small steps, and phase names
 * that point at constants rather than copies. */
struct st_case_result {
  const char *scene; /* these four point into names[] */
  const char *kase;
  const char *file;
  const char *platform;
  int line;
  uint64_t seed;
  st_case_status status;
  char *message;
  char *output;
  uint64_t duration_ns;
  long pid;
  int record_stale;
  unsigned iteration; /* 1-based */
  char *record;       /* the record line this case emitted, or NULL */
  char *env;          /* the case's env: n_env names and values, each
                         NUL-terminated, one after another; or NULL */
  size_t n_env;
  char *warnings;             /* one a line, or NULL */
  char *mistrust;             /* the reason, or NULL */
  st__quarantine *quarantine; /* for the reports (sched.c); or NULL */
  int quarantine_applies;
  char *tags; /* the case's tags: n_tags names, packed as env */
  size_t n_tags;
  st__bench_measured *bench; /* `scenetest bench`'s, or NULL */
  st_event *events;
  size_t n_events;
  size_t cap_events;
  char names[]; /* scene, case, file, platform, each NUL-terminated */
};

struct st_run_result {
  st_case_result **cases;
  size_t count;
  int interrupted; /* the signal that stopped the run, or 0 */
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The message of a case whose own message could not be copied: static, so
 * that running out of memory never loses the reason a case did not pass
 * (SQLite keeps a static "out of memory" message for the same purpose). */
static char oom_message[] = "out of memory";

static void message_free(char *m) {
  if (m != oom_message)
    free(m);
}

/* Takes a copy of message as the case's; when there is no memory for it,
 * the case is an error saying so. */
static void message_set(st_case_result *r, const char *message) {
  message_free(r->message);
  r->message = dup_or_null(message);
  if (message != NULL && r->message == NULL) {
    r->status = ST_CASE_ERROR;
    r->message = oom_message;
  }
}

/* Copies s (NULL as "") to *at and returns the copy, *at moved past it. */
static const char *names_put(char **at /* IN/OUT */, const char *s,
                             size_t len) {
  char *p = *at;
  if (len > 0)
    memcpy(p, s, len);
  p[len] = '\0';
  *at = p + len + 1;
  return p;
}

st_case_result *st__case_result_new(const char *scene, const char *kase,
                                    const char *file, int line,
                                    const char *platform, uint64_t seed) {
  const char *in[4];
  size_t len[4], total = 0, k;
  st_case_result *r;
  char *at;
  in[0] = scene ? scene : "";
  in[1] = kase ? kase : "";
  in[2] = file ? file : "";
  in[3] = platform ? platform : "";
  for (k = 0; k < 4; k++) {
    len[k] = strlen(in[k]);
    if (len[k] > SIZE_MAX / 8)
      return NULL;
    total += len[k] + 1;
  }
  r = calloc(1, sizeof *r + total);
  if (r == NULL)
    return NULL;
  at = r->names;
  r->scene = names_put(&at, in[0], len[0]);
  r->kase = names_put(&at, in[1], len[1]);
  r->file = names_put(&at, in[2], len[2]);
  r->platform = names_put(&at, in[3], len[3]);
  r->line = line;
  r->seed = seed;
  r->status = ST_CASE_PASS;
  r->iteration = 1;
  return r;
}

/* The names a case's phases have (docs/api.md#results-and-events), kept as
 * constants: an event names one of them (or another name, copied, for what a
 * future executor adds), so that a result does not hold a heap copy of "run"
 * per event. */
static const char *const phase_names[] = {
    "args",    "golden", "record", "reset",   "run",
    "compare", "load",   "rehost", "release",
};

/* Six times a case in each process that builds its result (twice when
 * supervised): the first byte rules out most names before a strcmp. */
static const char *phase_const(const char *name) {
  size_t i;
  for (i = 0; i < ST__ARRAY_SIZE(phase_names); i++)
    if (name[0] == phase_names[i][0] && strcmp(name, phase_names[i]) == 0)
      return phase_names[i];
  return NULL;
}

static int is_phase_const(const char *name) {
  size_t i;
  for (i = 0; i < ST__ARRAY_SIZE(phase_names); i++)
    if (name == phase_names[i])
      return 1;
  return 0;
}

static const char *name_dup(const char *name) {
  const char *c;
  if (name == NULL)
    return NULL;
  c = phase_const(name);
  return c != NULL ? c : strdup(name);
}

static void name_free(const char *name) {
  if (name != NULL && !is_phase_const(name))
    free((char *)name);
}

static void event_free(st_event *ev) {
  size_t i;
  for (i = 0; i < ev->n_loaded; i++)
    free((char *)ev->loaded[i]);
  free((void *)ev->loaded);
  name_free(ev->name);
  free((char *)ev->object);
  name_free(ev->phase);
}

void st_case_result_free(st_case_result *r) {
  size_t i;
  if (r == NULL)
    return;
  for (i = 0; i < r->n_events; i++)
    event_free(&r->events[i]);
  free(r->events);
  message_free(r->message);
  free(r->output);
  free(r->record);
  free(r->env);
  free(r->warnings);
  free(r->mistrust);
  st__quarantine_free(r->quarantine);
  free(r->tags);
  free(r->bench);
  free(r);
}

st_status st__case_result_set_bench(st_case_result *r,
                                    const st__bench_measured *m) {
  free(r->bench);
  r->bench = NULL;
  if (m == NULL)
    return ST_OK;
  if ((r->bench = malloc(sizeof *r->bench)) == NULL)
    return ST_ENOMEM;
  *r->bench = *m;
  return ST_OK;
}

const st__bench_measured *st__case_result_bench(const st_case_result *r) {
  return r->bench;
}

/* The n strings of s packed end to end, each with its NUL, in one
 * allocation; NULL when n is 0 or out of memory (which loses only this
 * copy for the reports). */
static char *pack(const char *const *s, size_t n) {
  size_t len = 0, i;
  char *packed, *p;
  for (i = 0; i < n; i++)
    len += strlen(s[i]) + 1;
  if (n == 0 || (packed = malloc(len)) == NULL)
    return NULL;
  for (i = 0, p = packed; i < n; i++)
    p = stpcpy(p, s[i]) + 1;
  return packed;
}

/* String k of what pack packed. */
static const char *unpack(const char *p, size_t k) {
  while (k-- > 0)
    p += strlen(p) + 1;
  return p;
}

void st__case_result_set_env(st_case_result *r, const char *const *kv,
                             size_t n) {
  free(r->env);
  r->env = pack(kv, 2 * n);
  r->n_env = r->env != NULL ? n : 0;
}

size_t st__case_result_env(const st_case_result *r, size_t i, const char **name,
                           const char **value) {
  if (i >= r->n_env)
    return r->n_env;
  *name = unpack(r->env, 2 * i);
  *value = unpack(*name, 1);
  return r->n_env;
}

void st__case_result_set_tags(st_case_result *r, const char *const *tags,
                              size_t n) {
  free(r->tags);
  r->tags = pack(tags, n);
  r->n_tags = r->tags != NULL ? n : 0;
}

size_t st__case_result_tag(const st_case_result *r, size_t i,
                           const char **name) {
  if (i >= r->n_tags)
    return r->n_tags;
  *name = unpack(r->tags, i);
  return r->n_tags;
}

st_status st__case_result_add_event(st_case_result *r, const st_event *ev) {
  st_event *e;
  size_t i;
  char **loaded = NULL;

  if (r->n_events == r->cap_events) {
    /* Small steps: a level-2 case has 5 to 7 events, and every byte of
     * slack is kept for every case of the run. */
    size_t cap = r->cap_events ? r->cap_events + r->cap_events / 2 : 6;
    st_event *p = st__array_resize(r->events, cap, sizeof *p);
    if (p == NULL)
      return ST_ENOMEM;
    r->events = p;
    r->cap_events = cap;
  }
  e = &r->events[r->n_events];
  *e = *ev;
  e->name = name_dup(ev->name);
  e->object = dup_or_null(ev->object);
  e->phase = name_dup(ev->phase);
  e->loaded = NULL;
  e->n_loaded = 0;
  if (ev->n_loaded > 0) {
    loaded = calloc(ev->n_loaded, sizeof *loaded);
    if (loaded != NULL)
      for (i = 0; i < ev->n_loaded; i++)
        loaded[i] = dup_or_null(ev->loaded[i]);
    e->loaded = (const char *const *)loaded;
    e->n_loaded = loaded ? ev->n_loaded : 0;
  }
  if (e->name == NULL || (ev->object && !e->object) ||
      (ev->phase && !e->phase) || (ev->n_loaded > 0 && loaded == NULL)) {
    event_free(e);
    return ST_ENOMEM;
  }
  for (i = 0; i < e->n_loaded; i++)
    if (e->loaded[i] == NULL) {
      event_free(e);
      return ST_ENOMEM;
    }
  r->n_events++;
  return ST_OK;
}

void st__case_result_set_status(st_case_result *r, st_case_status status,
                                const char *fmt, ...) {
  /* The first cause wins, for status and message alike (STYLE.md, as
   * SQLite keeps its first error): once a case did not pass, a later
   * failure is derived from the first (a compare after a kernel error, an
   * out-of-memory while recording it) and must not replace its verdict. */
  if (r->status != ST_CASE_PASS)
    return;
  r->status = status;
  if (fmt != NULL && r->message == NULL) {
    va_list ap;
    char buf[2048];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    message_set(r, buf);
  }
}

void st__case_result_override(st_case_result *r, st_case_status status,
                              const char *message) {
  r->status = status;
  message_set(r, message);
}

void st__case_result_set_output(st_case_result *r, const char *text,
                                size_t length) {
  free(r->output);
  r->output = NULL;
  if (text == NULL)
    return;
  {
    /* A NUL byte a kernel printed would end the string and lose what
     * follows (its stderr, say): each becomes U+FFFD, as the reports do
     * with every byte they cannot carry. */
    size_t i, nuls = 0, k = 0;
    for (i = 0; i < length; i++)
      nuls += text[i] == '\0';
    if (nuls > (SIZE_MAX - 1 - length) / 2)
      return;
    r->output = malloc(length + 2 * nuls + 1);
    if (r->output == NULL)
      return;
    for (i = 0; i < length; i++) {
      if (text[i] != '\0') {
        r->output[k++] = text[i];
        continue;
      }
      memcpy(r->output + k, "\xef\xbf\xbd", 3);
      k += 3;
    }
    r->output[k] = '\0';
  }
}

void st__case_result_set_duration(st_case_result *r, uint64_t ns) {
  r->duration_ns = ns;
}
void st__case_result_set_pid(st_case_result *r, long pid) { r->pid = pid; }
void st__case_result_set_record_stale(st_case_result *r, int stale) {
  r->record_stale = stale;
}
void st__case_result_set_iteration(st_case_result *r, unsigned iteration) {
  if (r != NULL)
    r->iteration = iteration;
}
void st__case_result_set_record(st_case_result *r, const char *line) {
  free(r->record);
  /* Out of memory loses only this diagnostic copy: the line itself was
   * logged. */
  r->record = line != NULL ? strdup(line) : NULL;
}
const char *st__case_result_record(const st_case_result *r) {
  return r->record;
}
unsigned st_case_result_iteration(const st_case_result *r) {
  return r->iteration;
}

const char *st_case_result_scene(const st_case_result *r) { return r->scene; }
const char *st_case_result_case(const st_case_result *r) { return r->kase; }
const char *st_case_result_file(const st_case_result *r) { return r->file; }
int st_case_result_line(const st_case_result *r) { return r->line; }
const char *st_case_result_platform(const st_case_result *r) {
  return r->platform;
}
uint64_t st_case_result_seed(const st_case_result *r) { return r->seed; }
st_case_status st_case_result_status(const st_case_result *r) {
  return r->status;
}
const char *st_case_result_message(const st_case_result *r) {
  return r->message;
}
const char *st_case_result_output(const st_case_result *r) { return r->output; }
uint64_t st_case_result_duration_ns(const st_case_result *r) {
  return r->duration_ns;
}
long st_case_result_pid(const st_case_result *r) { return r->pid; }
int st_case_result_record_stale(const st_case_result *r) {
  return r->record_stale;
}
size_t st_case_result_event_count(const st_case_result *r) {
  return r->n_events;
}
const st_event *st_case_result_event(const st_case_result *r, size_t i) {
  return i < r->n_events ? &r->events[i] : NULL;
}

/* The names of the statuses, indexed by their (numbered, never
 * renumbered) values: what the name functions print and the parse
 * functions read back. */
static const char *const case_status_names[] = {
    [ST_CASE_PASS] = "pass",   [ST_CASE_FAIL] = "fail",
    [ST_CASE_ERROR] = "error", [ST_CASE_SKIP] = "skip",
    [ST_CASE_XFAIL] = "xfail", [ST_CASE_XPASS] = "xpass"};
static const char *const phase_status_names[] = {[ST_PHASE_OK] = "ok",
                                                 [ST_PHASE_FAIL] = "fail",
                                                 [ST_PHASE_ERROR] = "error",
                                                 [ST_PHASE_SKIP] = "skip"};

static const char *name_at(const char *const *names, size_t n, int k) {
  return k >= 0 && (size_t)k < n ? names[k] : "unknown";
}

/* The index of s (may be NULL) in names, or -1. */
static int index_of(const char *s, const char *const *names, size_t n) {
  for (size_t i = 0; s != NULL && i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return (int)i;
  return -1;
}

const char *st_case_status_name(st_case_status s) {
  return name_at(case_status_names, ST__ARRAY_SIZE(case_status_names), (int)s);
}

int st__case_status_parse(const char *s, st_case_status *out) {
  const int k =
      index_of(s, case_status_names, ST__ARRAY_SIZE(case_status_names));
  if (k >= 0)
    *out = (st_case_status)k;
  return k >= 0;
}

void st__case_result_apply_expect(st_case_result *r) {
  /* docs/scene-format.md#expected-failures, as pytest's xfail(strict=True):
   * error and skip stay. */
  if (r->status == ST_CASE_FAIL)
    r->status = ST_CASE_XFAIL;
  else if (r->status == ST_CASE_PASS)
    st__case_result_override(r, ST_CASE_XPASS,
                             "unexpected pass: the case is marked expect: "
                             "fail");
}

void st__case_result_apply_expect_error(st_case_result *r,
                                        const char *kernel_error,
                                        const char *text) {
  char msg[2 * ST_OP_MESSAGE_MAX + 256];
  if (r->status == ST_CASE_PASS || r->status == ST_CASE_FAIL) {
    snprintf(msg, sizeof msg,
             "expected an error%s%s%s, but the kernel's call reported none",
             text ? " whose message contains '" : "", text ? text : "",
             text ? "'" : "");
    st__case_result_override(r, ST_CASE_FAIL, msg);
    return;
  }
  if (r->status != ST_CASE_ERROR || kernel_error == NULL)
    return;
  if (text == NULL || strstr(kernel_error, text) != NULL) {
    snprintf(msg, sizeof msg, "the kernel reported the expected error: %s",
             kernel_error);
    st__case_result_override(r, ST_CASE_PASS, msg);
    return;
  }
  snprintf(msg, sizeof msg,
           "expected an error whose message contains '%s'; the kernel's "
           "error was: '%s'",
           text, kernel_error);
  st__case_result_override(r, ST_CASE_FAIL, msg);
}

void st__case_result_apply_quarantine(st_case_result *r,
                                      const st__quarantine *q, int applies,
                                      int expired) {
  char msg[4096];
  if (q == NULL)
    return;
  if (applies) {
    if (r->status == ST_CASE_FAIL) {
      r->status = ST_CASE_XFAIL;
    } else if (r->status == ST_CASE_PASS && q->strict) {
      snprintf(msg, sizeof msg,
               "unexpected pass: the case is quarantined until %s (%s); "
               "remove the quarantine",
               q->until, q->reason);
      st__case_result_override(r, ST_CASE_XPASS, msg);
    } else if (r->status == ST_CASE_PASS) {
      st__case_result_add_warning(r, "passes: remove the quarantine");
    }
    return;
  }
  if (expired && (r->status == ST_CASE_FAIL || r->status == ST_CASE_ERROR)) {
    snprintf(msg, sizeof msg, "quarantine expired on %s: %s: %s", q->until,
             q->reason, r->message != NULL ? r->message : "");
    st__case_result_override(r, r->status, msg);
  }
}

void st__case_result_set_quarantine(st_case_result *r, const st__quarantine *q,
                                    int applies) {
  int oom = 0;
  st__quarantine_free(r->quarantine);
  r->quarantine = st__quarantine_copy(q, &oom);
  r->quarantine_applies = applies;
}

const st__quarantine *st__case_result_quarantine(const st_case_result *r,
                                                 int *applies) {
  if (applies != NULL)
    *applies = r->quarantine_applies;
  return r->quarantine;
}

void st__case_result_add_warning(st_case_result *r, const char *text) {
  size_t old = r->warnings != NULL ? strlen(r->warnings) : 0;
  size_t n = strlen(text);
  char *p = st__array_resize(r->warnings, old + n + 2, 1);
  if (p == NULL)
    return;
  if (old > 0)
    p[old++] = '\n';
  memcpy(p + old, text, n + 1);
  r->warnings = p;
}

const char *st__case_result_warnings(const st_case_result *r) {
  return r->warnings;
}

void st__case_result_set_mistrust(st_case_result *r, const char *reason) {
  char w[1024];
  free(r->mistrust);
  r->mistrust = dup_or_null(reason);
  snprintf(w, sizeof w, "mistrusted: %s", reason);
  st__case_result_add_warning(r, w);
}

void st__case_result_set_trust(st_case_result *r, const char *warnings,
                               const char *mistrust) {
  free(r->warnings);
  free(r->mistrust);
  r->warnings = dup_or_null(warnings);
  r->mistrust = dup_or_null(mistrust);
}

const char *st__case_result_mistrust(const st_case_result *r) {
  return r->mistrust;
}

const char *st_phase_status_name(st_phase_status s) {
  return name_at(phase_status_names, ST__ARRAY_SIZE(phase_status_names),
                 (int)s);
}

int st__phase_status_parse(const char *s, st_phase_status *out) {
  const int k =
      index_of(s, phase_status_names, ST__ARRAY_SIZE(phase_status_names));
  if (k >= 0)
    *out = (st_phase_status)k;
  return k >= 0;
}

st_run_result *st__run_result_new(size_t count) {
  st_run_result *run = calloc(1, sizeof *run);
  if (run == NULL)
    return NULL;
  run->cases = calloc(count ? count : 1, sizeof *run->cases);
  if (run->cases == NULL) {
    free(run);
    return NULL;
  }
  run->count = count;
  return run;
}

void st__run_result_set(st_run_result *run, size_t index, st_case_result *res) {
  st_case_result_free(run->cases[index]);
  run->cases[index] = res;
}

void st_run_result_free(st_run_result *run) {
  size_t i;
  if (run == NULL)
    return;
  for (i = 0; i < run->count; i++)
    st_case_result_free(run->cases[i]);
  free(run->cases);
  free(run);
}

size_t st_run_result_count(const st_run_result *run) { return run->count; }

st_case_result *st__run_result_at(st_run_result *run, size_t i) {
  return i < run->count ? run->cases[i] : NULL;
}

const st_case_result *st_run_result_get(const st_run_result *run, size_t i) {
  return i < run->count ? run->cases[i] : NULL;
}

size_t st_run_result_count_status(const st_run_result *run,
                                  st_case_status status) {
  size_t i, n = 0;
  for (i = 0; i < run->count; i++)
    if (run->cases[i] != NULL && run->cases[i]->status == status)
      n++;
  return n;
}

void st__run_result_set_interrupted(st_run_result *run, int sig) {
  run->interrupted = sig;
}

int st_run_result_interrupted(const st_run_result *run) {
  return run->interrupted;
}

int st_run_result_exit_code(const st_run_result *run) {
  size_t i;
  /* A case without a result is not a pass (docs/cli.md#exit-status: no path
   * exits 0 unless every selected case passed or was skipped). */
  for (i = 0; i < run->count; i++)
    if (run->cases[i] == NULL)
      return 1;
  if (run->interrupted)
    return 1;
  return (st_run_result_count_status(run, ST_CASE_FAIL) +
          st_run_result_count_status(run, ST_CASE_ERROR) +
          st_run_result_count_status(run, ST_CASE_XPASS)) > 0
             ? 1
             : 0;
}
