/* SPDX-License-Identifier: MIT */
/* What the reporters share: shell quoting and the command that reruns one
 * case, printed by the text and TAP reports on a failure (SPEC §6). */
#include <inttypes.h>
#include <string.h>

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
  fputs("scenetest run --case '", out);
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
