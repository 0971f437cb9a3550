/* SPDX-License-Identifier: MIT */
/* What the reporters share: shell quoting and the command that reruns one
 * case, printed by the text and TAP reports on a failure (SPEC §6). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void st__shell_quote(FILE *out, const char *s) {
  if (shell_safe(s)) {
    fputs(s, out);
    return;
  }
  /* Inside single quotes a POSIX shell takes every byte literally except
   * the closing quote itself, which is written as '\'' (close, escaped
   * quote, reopen). */
  fputc('\'', out);
  for (; *s != '\0'; s++) {
    if (*s == '\'')
      fputs("'\\''", out);
    else
      fputc(*s, out);
  }
  fputc('\'', out);
}

void st__report_rerun(FILE *out, const st__report_config *cfg,
                      const char *scene, const char *kase, uint64_t seed,
                      const char *platform, const char *file) {
  /* Scene names are identifiers; a matrix case's name, NAME[P=v,...],
   * holds brackets, which are glob characters to a shell but not inside
   * single quotes, and which the selector matches literally before any
   * glob (SPEC §13). The loader admits no quote in a name; one is escaped
   * anyway. Always quoted, so that the command reads as SPEC §6 shows. */
  /* SPEC §10: the program as it was invoked, so the command works from
   * where the user is. */
  st__shell_quote(out,
                  cfg != NULL && cfg->argv0 != NULL ? cfg->argv0 : "scenetest");
  fputs(" run --case '", out);
  for (const char *p = scene; *p != '\0'; p++)
    fputs(*p == '\'' ? "'\\''" : (char[2]){*p, '\0'}, out);
  fputs("::", out);
  for (const char *p = kase; *p != '\0'; p++)
    fputs(*p == '\'' ? "'\\''" : (char[2]){*p, '\0'}, out);
  fprintf(out, "' --seed %" PRIu64 " --platform ", seed);
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
