/* SPDX-License-Identifier: MIT */
/* The text reporter: one line per case (PASS/FAIL/ERROR/SKIP, with the
 * message, captured output and rerun command of a failure), then a totals
 * line. On a terminal it also keeps a progress line ("[12/200]
 * scene::case") at the bottom, clipped to the terminal's width, and log
 * lines print above it (as ninja does): the reporter takes the logger's
 * hook and, for each line, erases the progress line, lets the line out and
 * draws the progress line again. The first autoload record of each
 * distinct condition is shown in words ("autoload: ...") when it is
 * logged, which is during the first case's record phase: the record is not
 * known before. Colours the verdicts unless NO_COLOR is set (the CLI
 * decides tty and colour and passes them in the config); TERM=dumb gets no
 * progress line. The progress line is erased by overwriting it with
 * spaces, so that without colour nothing on the terminal is an escape
 * sequence. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/safe_text.h"
#include "base/util.h"
#include "base/log_sink.h"
#include "report/report.h"
#include "report/trust.h"

#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define BOLD_RED "\033[1;31m"
#define RESET "\033[0m"

#define SEEN_MAX 16

typedef struct text_state {
  st__report_config cfg;
  /* The logger's hook runs on whichever thread logs: every write to the
   * terminal takes the lock. */
  pthread_mutex_t lock;
  int hooked;   /* this state is the logger's hook */
  int smart;    /* a terminal that can redraw (TERM is not dumb) */
  size_t total; /* guarded by: lock (as every field below) */
  unsigned repeat;
  size_t started;
  size_t counts[6];     /* by st_case_status */
  uint64_t t0;          /* run begin, CLOCK_MONOTONIC ns */
  int progress;         /* a progress line is on screen */
  size_t drawn;         /* its width in columns */
  char line[512];       /* its text, unclipped */
  char *seen[SEEN_MAX]; /* autoload conditions shown (records without pid) */
  size_t n_seen;
} text_state;

static void put_duration(FILE *out, uint64_t ns) {
  if (ns < UINT64_C(1000000))
    fprintf(out, "%.1f us", (double)ns / 1e3);
  else if (ns < UINT64_C(1000000000))
    fprintf(out, "%.2f ms", (double)ns / 1e6);
  else
    fprintf(out, "%.3f s", (double)ns / 1e9);
}

/* The terminal's width: TIOCGWINSZ on the report stream, else $COLUMNS,
 * else 80. */
static size_t term_width(const text_state *st) {
  struct winsize ws;
  const char *cols = getenv("COLUMNS");
  int fd = fileno(st->cfg.out);
  if (fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  if (cols != NULL && atoi(cols) > 0)
    return (size_t)atoi(cols);
  return 80;
}

/* The cursor is at column 0 of the progress line (see draw_progress):
 * overwrite it with spaces and come back. */
static void clear_progress(text_state *st) {
  size_t i;
  if (!st->progress)
    return;
  for (i = 0; i < st->drawn; i++)
    fputc(' ', st->cfg.out);
  fputc('\r', st->cfg.out);
  st->progress = 0;
}

/* Draws st->line clipped to width - 1 columns (a full last column would
 * wrap on some terminals), counting UTF-8 lead bytes as columns, and
 * leaves the cursor at column 0: output that reaches the terminal behind
 * the logger's back (a kernel writing to fd 2) then overwrites the
 * progress text instead of being glued to its end. */
static void draw_progress(text_state *st) {
  size_t width = term_width(st), cols = 0, i;
  const char *p = st->line;
  if (width > 1)
    width--;
  for (i = 0; p[i] != '\0'; i++) {
    int lead = ((unsigned char)p[i] & 0xc0) != 0x80;
    if (lead && cols == width)
      break;
    cols += (size_t)lead;
  }
  fwrite(p, 1, i, st->cfg.out);
  fputc('\r', st->cfg.out);
  st->drawn = cols;
  st->progress = 1;
}

/* The index just past the double-quoted string (backslash escapes,
 * docs/measuring.md#the-autoload-record) that starts at s[i], or len when it is
 * not closed. */
static size_t skip_quoted(const char *s, size_t len, size_t i) {
  for (i++; i < len && s[i] != '"'; i++)
    if (s[i] == '\\' && i + 1 < len)
      i++;
  return i < len ? i + 1 : len;
}

/* The value of KEY= in a record line: *v, *n (quotes included for raw).
 * 0 when absent. raw's value is a double-quoted string with backslash
 * escapes (docs/measuring.md#the-autoload-record) and may hold spaces. */
static int record_field(const char *s, size_t len, const char *key,
                        const char **v, size_t *n) {
  size_t k = strlen(key), i = 0;
  while (i < len) {
    size_t b = i;
    if (len - i > k && memcmp(s + i, key, k) == 0 && s[i + k] == '=' &&
        (i == 0 || s[i - 1] == ' ')) {
      i += k + 1;
      b = i;
      if (i < len && s[i] == '"') {
        i = skip_quoted(s, len, i);
      } else {
        while (i < len && s[i] != ' ')
          i++;
      }
      *v = s + b;
      *n = i - b;
      return 1;
    }
    if (s[i] == '"') /* skip a quoted value whole */
      i = skip_quoted(s, len, i);
    else
      i++;
  }
  return 0;
}

static int field_is(const char *s, size_t len, const char *key,
                    const char *want) {
  const char *v;
  size_t n;
  return record_field(s, len, key, &v, &n) && n == strlen(want) &&
         memcmp(v, want, n) == 0;
}

/* "autoload: ..." in words for a record line, or nothing when this
 * condition was shown already. Returns a malloc'd line or NULL. */
static char *record_words(text_state *st, const char *line, size_t len) {
  static const char tag[] = "[TIMING] torch_backend_autoload ";
  const char *s, *v, *pid_at;
  size_t n, i, slen;
  char *key = NULL, *out = NULL;
  size_t outlen = 0;
  FILE *f;

  if (len < sizeof tag - 1 || memcmp(line, tag, sizeof tag - 1) != 0)
    return NULL;
  s = line + sizeof tag - 1;
  slen = len - (sizeof tag - 1);
  while (slen > 0 && (s[slen - 1] == '\n' || s[slen - 1] == '\r'))
    slen--;
  /* The condition is the record without its pid. */
  pid_at = NULL;
  if (record_field(s, slen, "pid", &v, &n))
    pid_at = v - 4;
  n = pid_at != NULL && pid_at > s ? (size_t)(pid_at - s) : slen;
  for (i = 0; i < st->n_seen; i++)
    if (strlen(st->seen[i]) == n && memcmp(st->seen[i], s, n) == 0)
      return NULL;
  if (st->n_seen < SEEN_MAX && (key = malloc(n + 1)) != NULL) {
    memcpy(key, s, n);
    key[n] = '\0';
    st->seen[st->n_seen++] = key;
  }
  if ((f = open_memstream(&out, &outlen)) == NULL)
    return NULL;
  fputs("autoload: ", f);
  if (field_is(s, slen, "setting", "unset"))
    fputs("TORCH_DEVICE_BACKEND_AUTOLOAD unset", f);
  else if (record_field(s, slen, "raw", &v, &n))
    fprintf(f, "TORCH_DEVICE_BACKEND_AUTOLOAD=%.*s", (int)n, v);
  fputs(field_is(s, slen, "effective", "enabled")
            ? ", torch autoloads device backends"
            : ", torch device-backend autoload disabled",
        f);
  fputs(field_is(s, slen, "torch_imported", "true") ? "; torch imported"
                                                    : "; torch not imported",
        f);
  /* Every other NAME_loaded field, in order. */
  for (i = 0; i < slen;) {
    size_t b = i, e;
    while (i < slen && s[i] != ' ' && s[i] != '=')
      i++;
    e = i;
    if (i < slen && s[i] == '=') {
      i++;
      if (i < slen && s[i] == '"')
        i = skip_quoted(s, slen, i);
      while (i < slen && s[i] != ' ')
        i++;
    }
    if (e - b > 7 && memcmp(s + e - 7, "_loaded", 7) == 0 && e < slen) {
      int yes = slen - e > 4 && memcmp(s + e, "=true", 5) == 0;
      fprintf(f, ", %.*s %s", (int)(e - b - 7), s + b,
              yes ? "loaded" : "not loaded");
    }
    while (i < slen && s[i] == ' ')
      i++;
  }
  if (record_field(s, slen, "pid", &v, &n))
    fprintf(f, " (pid %.*s)", (int)n, v);
  fputc('\n', f);
  if (fclose(f) != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* The logger's hook: a log line (and, for a new autoload condition, its
 * words) above the progress line. */
static void text_log_line(void *data, int level, const char *line, size_t len,
                          int to_terminal) {
  text_state *st = data;
  int had, log_is_tty;
  char *words;

  (void)level;
  pthread_mutex_lock(&st->lock);
  words = record_words(st, line, len);
  had = st->progress;
  log_is_tty = isatty(st__log_fd());
  if ((to_terminal && log_is_tty) || words != NULL)
    clear_progress(st);
  fflush(st->cfg.out);
  if (to_terminal)
    st__log_emit(line, len);
  if (words != NULL)
    fputs(words, st->cfg.out);
  if (had && !st->progress)
    draw_progress(st);
  fflush(st->cfg.out);
  pthread_mutex_unlock(&st->lock);
  free(words);
}

/* A one-line field (a skip reason, an expected failure's first line):
 * docs/reliability.md, every control byte escaped, and the [TIMING]
 * token too (base/safe_text.h). */
static void put_escaped_line(FILE *out, const char *s) {
  st__safe_text_put(out, s, strlen(s), 0);
}

/* Writes every line of s indented, so a multi-line message stays inside
 * its case's block; each line escaped as base/safe_text.h says (a
 * kernel's message or printed output may hold escape sequences that
 * would move the cursor, clear the screen or retitle the terminal, or a
 * line that a reader of the log would take for a phase line). */
static void put_indented(FILE *out, const char *indent, const char *s) {
  for (;;) {
    size_t n = strcspn(s, "\n");
    fputs(indent, out);
    st__safe_text_put(out, s, n, ST__SAFE_KEEP_LINES);
    fputc('\n', out);
    if (s[n] == '\0' || s[n + 1] == '\0')
      break;
    s += n + 1;
  }
}

static void text_run_begin(void *data, const st_run_info *info) {
  text_state *st = data;
  pthread_mutex_lock(&st->lock);
  st->total = info->total;
  st->repeat = info->repeat;
  st->t0 = st__now_ns();
  /* The seed of a shuffled order and the shard, so the run can be
   * replayed (docs/cli.md#sharding). */
  st__report_run_header(st->cfg.out, "", info);
  pthread_mutex_unlock(&st->lock);
}

static void text_case_begin(void *data, const st_case_info *info) {
  text_state *st = data;
  pthread_mutex_lock(&st->lock);
  st->started++;
  if (st->total == 0)
    st->total = info->total;
  if (st->smart) {
    clear_progress(st);
    snprintf(st->line, sizeof st->line, "[%zu/%zu] %s::%s", st->started,
             st->total, info->scene, info->name);
    draw_progress(st);
    fflush(st->cfg.out);
  }
  pthread_mutex_unlock(&st->lock);
}

/* -q (docs/cli.md): what passed, was skipped or failed as expected is
 * left out; the progress line and the summary stay. */
static int quiet_status(st_case_status s) {
  return s == ST_CASE_PASS || s == ST_CASE_SKIP || s == ST_CASE_XFAIL;
}

/* -v (docs/cli.md): a passing case's phase times ("phases: args 1.0 us,
 * golden 2.0 us, ...", each phase summed over its rounds, in first-seen
 * order) and its captured output. */
static void put_verbose(FILE *out, const st_case_result *res,
                        const char *output) {
  size_t i, j, n = st_case_result_event_count(res), k = 0;
  const char *names[32];
  uint64_t sums[32];
  for (i = 0; i < n; i++) {
    const st_event *e = st_case_result_event(res, i);
    if (e == NULL || e->name == NULL || strcmp(e->name, "load") == 0)
      continue;
    for (j = 0; j < k && strcmp(names[j], e->name) != 0; j++)
      ;
    if (j == k) {
      if (k == 32)
        continue;
      names[k] = e->name;
      sums[k++] = 0;
    }
    sums[j] += e->dur_ns;
  }
  if (k > 0) {
    fputs("      phases:", out);
    for (j = 0; j < k; j++) {
      fprintf(out, "%s %s ", j > 0 ? "," : "", names[j]);
      put_duration(out, sums[j]);
    }
    fputc('\n', out);
  }
  if (output != NULL && output[0] != '\0') {
    fputs("      output:\n", out);
    put_indented(out, "        ", output);
  }
}

static void text_case_end(void *data, const st_case_info *info,
                          const st_case_result *res) {
  static const char *const labels[] = {"PASS ", "FAIL ", "ERROR",
                                       "SKIP ", "XFAIL", "XPASS"};
  static const char *const colors[] = {GREEN,  RED,    BOLD_RED,
                                       YELLOW, YELLOW, RED};
  text_state *st = data;
  FILE *out = st->cfg.out;
  st_case_status status = st_case_result_status(res);
  const char *msg = st_case_result_message(res);
  const char *output = st_case_result_output(res);
  char *id;

  if ((unsigned)status > ST_CASE_XPASS)
    status = ST_CASE_ERROR;
  pthread_mutex_lock(&st->lock);
  st->counts[status]++;
  if (st->cfg.verbosity < 0 && quiet_status(status)) {
    pthread_mutex_unlock(&st->lock);
    return;
  }
  clear_progress(st);
  if (st->cfg.color)
    fprintf(out, "%s%s%s", colors[status], labels[status], RESET);
  else
    fputs(labels[status], out);
  id = st__report_case_id(info->scene, info->name, info->iteration, st->repeat,
                          0);
  fprintf(out, " %s", id != NULL ? id : info->name);
  free(id);
  if (status == ST_CASE_SKIP) {
    fputs(" (skipped", out);
    if (msg != NULL && msg[0] != '\0') {
      fputs(": ", out);
      put_escaped_line(out, msg);
    }
    fputs(")\n", out);
  } else {
    fputs(" (", out);
    put_duration(out, st_case_result_duration_ns(res));
    fputs(")\n", out);
  }
  if (status == ST_CASE_XFAIL && msg != NULL && msg[0] != '\0') {
    size_t n = strcspn(msg, "\n");
    char *first = strndup(msg, n);
    fputs("      expected failure: ", out);
    put_escaped_line(out, first != NULL ? first : "");
    fputc('\n', out);
    free(first);
    if (msg[n] == '\n' && msg[n + 1] != '\0')
      put_indented(out, "      ", msg + n + 1);
  }
  if (st->cfg.verbosity > 0 && status == ST_CASE_PASS)
    put_verbose(out, res, output);
  if (status == ST_CASE_FAIL || status == ST_CASE_ERROR ||
      status == ST_CASE_XPASS) {
    if (msg != NULL && msg[0] != '\0')
      put_indented(out, "      ", msg);
    if (output != NULL && output[0] != '\0') {
      fputs("      output:\n", out);
      put_indented(out, "        ", output);
    }
    fputs("      rerun: ", out);
    st__report_rerun(out, &st->cfg, st_case_result_scene(res),
                     st_case_result_case(res), st_case_result_seed(res),
                     st_case_result_platform(res), st_case_result_file(res));
    fputc('\n', out);
  }
  st__report_warnings(out, "      ", res);
  fflush(out);
  pthread_mutex_unlock(&st->lock);
}

/* Cases an interrupt left unrun. */
static size_t not_run(const st_run_result *result) {
  size_t i, n = 0;
  for (i = 0; i < st_run_result_count(result); i++) {
    const st_case_result *r = st_run_result_get(result, i);
    const char *m = r != NULL ? st_case_result_message(r) : NULL;
    if (r != NULL && st_case_result_status(r) == ST_CASE_SKIP && m != NULL &&
        strcmp(m, "not run: interrupted") == 0)
      n++;
  }
  return n;
}

static void text_run_end(void *data, const st_run_result *result) {
  text_state *st = data;
  FILE *out = st->cfg.out;
  size_t done = st->counts[0] + st->counts[1] + st->counts[2] + st->counts[3] +
                st->counts[4] + st->counts[5];
  int bad = st->counts[ST_CASE_FAIL] + st->counts[ST_CASE_ERROR] +
                st->counts[ST_CASE_XPASS] >
            0;

  pthread_mutex_lock(&st->lock);
  clear_progress(st);
  st__durations_text(out, result, st->cfg.durations, "");
  if (result != NULL && st_run_result_interrupted(result))
    fprintf(out,
            "interrupted by %s: the case that was running is an "
            "error, the %zu not run are skipped\n",
            st_run_result_interrupted(result) == SIGINT ? "SIGINT" : "SIGTERM",
            not_run(result));
  (void)st__report_quarantine_list(out, "quarantined cases:\n", "  ", result);
  if (st->cfg.color)
    fputs(bad ? RED : GREEN, out);
  fprintf(out, "%zu case%s: %zu passed, %zu failed, %zu error%s, %zu skipped",
          done, done == 1 ? "" : "s", st->counts[ST_CASE_PASS],
          st->counts[ST_CASE_FAIL], st->counts[ST_CASE_ERROR],
          st->counts[ST_CASE_ERROR] == 1 ? "" : "s", st->counts[ST_CASE_SKIP]);
  /* Only when there are any, so that a suite without expect: fail reads
   * as before. */
  if (st->counts[ST_CASE_XFAIL] + st->counts[ST_CASE_XPASS] > 0)
    fprintf(out, ", %zu xfailed, %zu xpassed", st->counts[ST_CASE_XFAIL],
            st->counts[ST_CASE_XPASS]);
  if (st->cfg.color)
    fputs(RESET, out);
  fputs(" in ", out);
  /* merge: the inputs' time, not the replay's. */
  put_duration(out, st->cfg.merge_elapsed_ns != 0 ? st->cfg.merge_elapsed_ns
                                                  : st__now_ns() - st->t0);
  fputc('\n', out);
  fflush(out);
  pthread_mutex_unlock(&st->lock);
}

st_status st__report_text_new(const st__report_config *cfg, st_observer *obs) {
  text_state *st = st__report_state_new(obs, sizeof *st);

  if (st == NULL)
    return ST_ENOMEM;
  const char *term = getenv("TERM");

  st->cfg = *cfg;
  st->t0 = st__now_ns();
  pthread_mutex_init(&st->lock, NULL);
  st->smart = cfg->tty && (term == NULL || strcmp(term, "dumb") != 0);
  /* On a terminal, log lines go through the reporter (above the progress
   * line) and records are shown in words. */
  if (cfg->tty) {
    st__log_set_hook(text_log_line, st);
    st->hooked = 1;
  }
  obs->run_begin = text_run_begin;
  obs->case_begin = text_case_begin;
  obs->case_end = text_case_end;
  obs->run_end = text_run_end;
  return ST_OK;
}

void st__report_text_free(st_observer *obs) {
  text_state *st;
  size_t i;
  if (obs == NULL || obs->data == NULL)
    return;
  st = obs->data;
  if (st->hooked)
    st__log_set_hook(NULL, NULL);
  for (i = 0; i < st->n_seen; i++)
    free(st->seen[i]);
  pthread_mutex_destroy(&st->lock);
  free(obs->data);
  obs->data = NULL;
}
