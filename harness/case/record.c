/* SPDX-License-Identifier: MIT */
/* The autoload record: torch's reading of TORCH_DEVICE_BACKEND_AUTOLOAD,
 * the watched modules the dynamic loader has loaded, and the once-per-
 * process emission (keyed by pid, so a forked child that dispatches emits
 * its own line). The record is diagnostic: it never sets the variable and
 * never changes behaviour. */
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>
#include <scenetest/record.h>
#include <scenetest/testing_hooks.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "base/util.h"
#include "case/record.h"

#include "base/loadwatch.h"

struct st_watch {
  char *name;
  char **globs;
  size_t n_globs;
};

/* The built-in watched modules (docs/measuring.md#watching-more-modules). */
static const char *const torch_globs[] = {"libtorch.so*", "libtorch_cpu.so*"};
static const char *const torch_npu_globs[] = {"libtorch_npu.so*"};

static const struct {
  const char *name;
  const char *field;
  const char *const *globs;
  size_t n;
} builtin_watch[] = {
    {"torch", "torch_imported", torch_globs, 2},
    {"torch_npu", "torch_npu_loaded", torch_npu_globs, 1},
};
#define N_BUILTIN ST__ARRAY_SIZE(builtin_watch)

st_autoload_setting st_autoload_classify(const char *value) {
  if (value == NULL)
    return ST_AUTOLOAD_UNSET;
  if (strcmp(value, "0") == 0)
    return ST_AUTOLOAD_ZERO;
  if (strcmp(value, "1") == 0)
    return ST_AUTOLOAD_ONE;
  return ST_AUTOLOAD_INVALID;
}

const char *st_autoload_setting_name(st_autoload_setting s) {
  switch (s) {
  case ST_AUTOLOAD_UNSET:
    return "unset";
  case ST_AUTOLOAD_ZERO:
    return "0";
  case ST_AUTOLOAD_ONE:
    return "1";
  case ST_AUTOLOAD_INVALID:
    return "invalid";
  }
  return "invalid";
}

int st_autoload_effective(const char *value) {
  /* torch's own predicate, torch/__init__.py,
   * torch._is_device_backend_autoload_enabled():
   *     return os.getenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") == "1"
   * So unset and exactly "1" enable autoload; everything else ("0",
   * "true", "yes", "", " 1", "01", "1\n") disables it. */
  return value == NULL || strcmp(value, "1") == 0;
}

size_t st__timing_escape(const char *value, size_t len, char *out) {
  size_t i, o = 0;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)value[i];
    /* C's short escapes for these five, at the same index. */
    static const char plain[] = "\\\"\n\t\r", escaped[] = "\\\"ntr";
    const char *hit = c != 0 ? strchr(plain, c) : NULL;
    if (hit != NULL) {
      out[o++] = '\\';
      out[o++] = escaped[hit - plain];
    } else if (c < 0x20 || c >= 0x7f) {
      snprintf(out + o, 5, "\\%03o", c);
      o += 4;
    } else {
      out[o++] = (char)c;
    }
  }
  out[o] = '\0';
  return o;
}

const char *st__timing_name(const char *name, char **heap) {
  size_t len = strlen(name), i;
  *heap = NULL;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c == ' ' || c == '"' || c == '\\' || c < 0x20 || c > 0x7e)
      break;
  }
  if (i == len && len > 0)
    return name;
  *heap = malloc(4 * len + 3);
  if (*heap == NULL)
    return NULL;
  (*heap)[0] = '"';
  size_t o = 1 + st__timing_escape(name, len, *heap + 1);
  (*heap)[o++] = '"';
  (*heap)[o] = '\0';
  return *heap;
}

void st_autoload_format_raw(const char *value, char *buf, size_t size) {
  /* First 64 bytes, then "..." inside the quotes; escaped after
   * truncation. Worst case 64 * 4 + 3 + 2 + 1 bytes. */
  char tmp[512];
  size_t o = 0, len;
  if (value == NULL) {
    snprintf(buf, size, "-");
    return;
  }
  len = strlen(value);
  tmp[o++] = '"';
  o += st__timing_escape(value, len < 64 ? len : 64, tmp + o);
  if (len > 64) {
    memcpy(tmp + o, "...", 3);
    o += 3;
  }
  tmp[o++] = '"';
  tmp[o] = '\0';
  snprintf(buf, size, "%s", tmp);
}

static const char *basename_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int globs_match(char *const *globs, size_t n, const char *path) {
  const char *base = basename_of(path);
  size_t i;
  for (i = 0; i < n; i++)
    if (fnmatch(globs[i], base, 0) == 0)
      return 1;
  return 0;
}

int st_watch_match(const st_watch *list, size_t count, const char *path,
                   const char **name) {
  size_t i;
  for (i = 0; i < N_BUILTIN; i++)
    if (globs_match((char *const *)builtin_watch[i].globs, builtin_watch[i].n,
                    path)) {
      if (name)
        *name = builtin_watch[i].name;
      return 1;
    }
  for (i = 0; i < count; i++)
    if (globs_match(list[i].globs, list[i].n_globs, path)) {
      if (name)
        *name = list[i].name;
      return 1;
    }
  return 0;
}

static void watch_clear(st_watch *w) {
  size_t i;
  for (i = 0; i < w->n_globs; i++)
    free(w->globs[i]);
  free(w->globs);
  free(w->name);
  memset(w, 0, sizeof *w);
}

static int valid_ident(const char *s, size_t n) {
  size_t i;
  if (n == 0 || n > 128)
    return 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
      return 0;
  }
  return 1;
}

st_status st_watch_parse(const char *spec, st_watch **list, size_t *count,
                         st_error *err) {
  const char *eq = strchr(spec, '=');
  const char *p;
  st_watch w = {0};
  st_watch *grown;
  size_t i;

  if (eq == NULL || !valid_ident(spec, (size_t)(eq - spec)))
    return st_error_set(err, ST_EUSAGE,
                        "--watch '%s': expected NAME=GLOB[,GLOB...] with NAME "
                        "an identifier",
                        spec);
  for (i = 0; i < N_BUILTIN; i++)
    if (strlen(builtin_watch[i].name) == (size_t)(eq - spec) &&
        strncmp(builtin_watch[i].name, spec, (size_t)(eq - spec)) == 0)
      return st_error_set(err, ST_EUSAGE,
                          "--watch '%s': '%s' is watched already (built in)",
                          spec, builtin_watch[i].name);
  for (i = 0; i < *count; i++)
    if (strlen((*list)[i].name) == (size_t)(eq - spec) &&
        strncmp((*list)[i].name, spec, (size_t)(eq - spec)) == 0)
      return st_error_set(err, ST_EUSAGE,
                          "--watch '%s': module '%s' given twice", spec,
                          (*list)[i].name);
  w.name = strndup(spec, (size_t)(eq - spec));
  if (w.name == NULL)
    goto oom;
  for (p = eq + 1;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char **g;
    if (len == 0) {
      watch_clear(&w);
      return st_error_set(err, ST_EUSAGE,
                          "--watch '%s': expected a non-empty glob", spec);
    }
    g = st__array_resize(w.globs, w.n_globs + 1, sizeof *g);
    if (g == NULL)
      goto oom;
    w.globs = g;
    w.globs[w.n_globs] = strndup(p, len);
    if (w.globs[w.n_globs] == NULL)
      goto oom;
    w.n_globs++;
    if (comma == NULL)
      break;
    p = comma + 1;
  }
  grown = st__array_resize(*list, *count + 1, sizeof *grown);
  if (grown == NULL)
    goto oom;
  grown[*count] = w;
  *list = grown;
  (*count)++;
  return ST_OK;
oom:
  watch_clear(&w);
  return st_error_set(err, ST_ENOMEM, "out of memory");
}

void st_watch_list_free(st_watch *list, size_t count) {
  size_t i;
  if (list == NULL)
    return;
  for (i = 0; i < count; i++)
    watch_clear(&list[i]);
  free(list);
}

typedef struct loaded_ctx {
  const st_watch *list;
  size_t count;
  int builtin[N_BUILTIN];
  int *user; /* count entries */
} loaded_ctx;

static int loaded_cb(const char *path, void *data) {
  loaded_ctx *c = data;
  size_t i;
  for (i = 0; i < N_BUILTIN; i++)
    if (globs_match((char *const *)builtin_watch[i].globs, builtin_watch[i].n,
                    path))
      c->builtin[i] = 1;
  for (i = 0; i < c->count; i++)
    if (globs_match(c->list[i].globs, c->list[i].n_globs, path))
      c->user[i] = 1;
  return 0;
}

void st_record_format(const st_watch *list, size_t count, char *buf,
                      size_t size) {
  const char *value = getenv(ST_AUTOLOAD_ENV);
  char raw[512];
  loaded_ctx c;
  int user_small[16];
  size_t i, used;
  int w;

  memset(&c, 0, sizeof c);
  c.list = list;
  c.count = count;
  c.user = count <= 16 ? user_small : calloc(count, sizeof *c.user);
  if (c.user == NULL) {
    c.count = 0;
    c.user = user_small;
  }
  memset(c.user, 0, (c.count <= 16 ? 16 : c.count) * sizeof *c.user);
  /* Read from the loader now, never from what the harness remembers. */
  st__loadwatch_each(loaded_cb, &c);
  st_autoload_format_raw(value, raw, sizeof raw);
  w = snprintf(buf, size,
               "torch_backend_autoload setting=%s raw=%s effective=%s "
               "torch_imported=%s torch_npu_loaded=%s",
               st_autoload_setting_name(st_autoload_classify(value)), raw,
               st_autoload_effective(value) ? "enabled" : "disabled",
               c.builtin[0] ? "true" : "false",
               c.builtin[1] ? "true" : "false");
  used = w < 0 ? 0 : (size_t)w;
  for (i = 0; i < c.count && used < size; i++) {
    w = snprintf(buf + used, size - used, " %s_loaded=%s", list[i].name,
                 c.user[i] ? "true" : "false");
    used += w < 0 ? 0 : (size_t)w;
  }
  if (used < size)
    snprintf(buf + used, size - used, " pid=%ld", (long)st__proc_pid());
  if (c.user != user_small)
    free(c.user);
}

static pthread_mutex_t emit_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t emitted_pid; /* guarded by: emit_lock; 0 = not emitted */
/* The environment of the last emission and its line without " pid=N"
 * (docs/measuring.md: one line per process per distinct environment);
 * owned. NULL: the base environment, or not known. */
static char *emitted_env;  /* guarded by: emit_lock */
static char *emitted_cond; /* guarded by: emit_lock */

static int same_env(const char *a, const char *b) {
  return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* The line without its pid field: what two records are compared on. */
static size_t cond_len(const char *line) {
  const char *pid = strstr(line, " pid=");
  return pid != NULL ? (size_t)(pid - line) : strlen(line);
}

static void remember(const char *env_key, const char *line) {
  free(emitted_env);
  free(emitted_cond);
  emitted_env = env_key != NULL && env_key[0] ? strdup(env_key) : NULL;
  emitted_cond = strndup(line, cond_len(line));
}

int st__record_emit_env(const st_watch *list, size_t count, int track,
                        const char *env_key, char *keep, size_t size) {
  pid_t self = st__proc_pid();
  char buf[4096];
  char *line = keep != NULL ? keep : buf;
  size_t cap = keep != NULL ? size : sizeof buf;
  int emit, formatted = 0;

  if (keep != NULL && size > 0)
    keep[0] = '\0';
  pthread_mutex_lock(&emit_lock);
  /* Keyed by pid: a forked child inherits the parent's state but is a
   * process of its own that has not emitted yet. */
  emit = emitted_pid != self;
  if (!emit && track && !same_env(env_key, emitted_env)) {
    /* Another environment than the last line's: a new line only when the
     * record reads differently under it. */
    st_record_format(list, count, line, cap);
    formatted = 1;
    emit = emitted_cond == NULL || cond_len(line) != strlen(emitted_cond) ||
           strncmp(line, emitted_cond, cond_len(line)) != 0;
    if (!emit) {
      /* The same record: this environment is the last line's too. */
      free(emitted_env);
      emitted_env = env_key != NULL && env_key[0] ? strdup(env_key) : NULL;
    }
  }
  if (emit) {
    /* Formatted only to be logged, kept or compared: an isolated child
     * that formats a line the level drops only pays for it (page faults,
     * under --isolate). */
    int need = keep != NULL || st_log_enabled(ST_LOG_TIMING) || track;
    if (need && !formatted)
      st_record_format(list, count, line, cap);
    if (st_log_enabled(ST_LOG_TIMING))
      st__log_timing("%s", line);
    if (track)
      remember(env_key, line);
    emitted_pid = self;
  }
  if (!emit && keep != NULL && size > 0)
    keep[0] = '\0';
  pthread_mutex_unlock(&emit_lock);
  return emit;
}

int st__record_emit_line(const st_watch *list, size_t count, char *keep,
                         size_t size) {
  return st__record_emit_env(list, count, 0, NULL, keep, size);
}

int st_record_emit(const st_watch *list, size_t count) {
  return st__record_emit_line(list, count, NULL, 0);
}

void st_record_reset(void) {
  pthread_mutex_lock(&emit_lock);
  emitted_pid = 0;
  free(emitted_env);
  free(emitted_cond);
  emitted_env = emitted_cond = NULL;
  pthread_mutex_unlock(&emit_lock);
}
