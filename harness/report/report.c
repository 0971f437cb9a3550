/* SPDX-License-Identifier: MIT */
/* What the reporters share: shell quoting and the command that reruns one
 * case, printed by the text and TAP reports on a failure (docs/cli.md#tap). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/safe_text.h"
#include "report/report.h"

static int shell_safe(const char *s) {
  if (*s == '\0')
    return 0;
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || strchr("_./:=@%+,-", c) != NULL))
      return 0;
  }
  return 1;
}

/* Whether s holds a byte a terminal acts on (C0 or C1 controls, DEL) or
 * the [TIMING] token: such a word is printed in ANSI-C quotes. */
static int needs_ansi_c(const char *s) {
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f ||
        (c == 0xc2 && (unsigned char)s[1] >= 0x80 &&
         (unsigned char)s[1] <= 0x9f) ||
        (c == '[' && st__safe_text_mark_at(s, strlen(s))))
      return 1;
  }
  return 0;
}

/* docs/cli.md: a word with control bytes (a scene path holding a newline
 * or an OSC sequence) in ANSI-C quotes, $'...' (bash, zsh, ksh, POSIX.1
 * 2024's sh), with each such byte as \xHH: the printed command is one
 * line, changes nothing on the terminal, and pastes as the same bytes.
 * Otherwise single quotes, in which a POSIX shell takes every byte
 * literally except the closing quote itself, written as '\'' (close,
 * escaped quote, reopen). */
static void quote(FILE *out, const char *s, int always) {
  if (!always && shell_safe(s)) {
    fputs(s, out);
    return;
  }
  if (needs_ansi_c(s)) {
    fputs("$'", out);
    for (; *s != '\0'; s++) {
      unsigned char c = (unsigned char)*s;
      if (c == '\\' || c == '\'')
        fprintf(out, "\\%c", c);
      else if (c < 0x20 || c == 0x7f || c >= 0x80 ||
               (c == '[' && st__safe_text_mark_at(s, strlen(s))))
        fprintf(out, "\\x%02x", c);
      else
        fputc(c, out);
    }
    fputc('\'', out);
    return;
  }
  fputc('\'', out);
  for (; *s != '\0'; s++) {
    if (*s == '\'')
      fputs("'\\''", out);
    else
      fputc(*s, out);
  }
  fputc('\'', out);
}

void st__shell_quote(FILE *out, const char *s) { quote(out, s, 0); }

void st__report_rerun(FILE *out, const st__report_config *cfg,
                      const char *scene, const char *kase, uint64_t seed,
                      const char *platform, const char *file) {
  size_t ns = strlen(scene), nk = strlen(kase);
  char *id = malloc(ns + nk + 3);
  /* Scene names are identifiers; a matrix case's name, NAME[P=v,...],
   * holds brackets, which are glob characters to a shell but not inside
   * quotes, and which the selector matches literally before any glob
   * (docs/scene-format.md#matrix-cases). Always quoted, so that the command
   * reads as docs/cli.md#selection shows. */
  /* docs/cli.md#output: the program as it was invoked, so the command works
   * from where the user is. */
  st__shell_quote(out,
                  cfg != NULL && cfg->argv0 != NULL ? cfg->argv0 : "scenetest");
  fputs(" run --case ", out);
  if (id != NULL) {
    memcpy(id, scene, ns);
    memcpy(id + ns, "::", 2);
    memcpy(id + ns + 2, kase, nk + 1);
    quote(out, id, 1);
    free(id);
  } else {
    fputs("''", out); /* out of memory: a command that selects nothing */
  }
  fprintf(out, " --seed %" PRIu64 " --platform ", seed);
  st__shell_quote(out, platform);
  if (cfg != NULL && cfg->rerun_opts != NULL)
    fputs(cfg->rerun_opts, out);
  fputc(' ', out);
  /* A file name starting with '-' would read as an option. */
  if (file[0] == '-')
    fputs("./", out);
  st__shell_quote(out, file);
}

char *st__report_case_id(const char *scene, const char *kase,
                         unsigned iteration, unsigned repeat, int kase_only) {
  char *id = NULL;
  int n;
  if (repeat > 1)
    n = kase_only ? asprintf(&id, "%s@%u", kase, iteration)
                  : asprintf(&id, "%s::%s@%u", scene, kase, iteration);
  else
    n = kase_only ? asprintf(&id, "%s", kase)
                  : asprintf(&id, "%s::%s", scene, kase);
  return n < 0 ? NULL : id;
}

void st__report_run_header(FILE *out, const char *prefix,
                           const st_run_info *info) {
  if (info->shard_total > 1)
    fprintf(out, "%sshard %u/%u\n", prefix, info->shard_index,
            info->shard_total);
  if (info->shuffle)
    fprintf(out, "%sshuffle seed %" PRIu64 "\n", prefix, info->shuffle_seed);
}

void st__report_utc_now(char *buf, size_t size) {
  time_t t = time(NULL);
  struct tm tm;
  if (gmtime_r(&t, &tm) == NULL ||
      strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static void doc_run_begin(void *data, const st_run_info *info) {
  st__report_doc *st = data;
  st->info = *info;
  st__report_utc_now(st->start, sizeof st->start);
}

st_status st__report_doc_new(const st__report_config *cfg,
                             void (*run_end)(void *, const st_run_result *),
                             st_observer *obs) {
  st__report_doc *st = st__report_state_new(obs, sizeof *st);

  if (st == NULL)
    return ST_ENOMEM;
  st->cfg = *cfg;
  st->info.platform = "cpu";
  st->info.repeat = 1;
  st__report_utc_now(st->start, sizeof st->start);
  obs->run_begin = doc_run_begin;
  obs->run_end = run_end;
  return ST_OK;
}

void *st__report_state_new(st_observer *obs, size_t size) {
  st_observer_init(obs);
  obs->data = calloc(1, size);
  return obs->data;
}

void st__report_state_free(st_observer *obs) {
  if (obs == NULL)
    return;
  free(obs->data);
  obs->data = NULL;
}

void st__report_doc_free(st_observer *obs) { st__report_state_free(obs); }
