/* SPDX-License-Identifier: MIT */
/* What the option table (options.c) generates for people: the usage text
 * of --help, each option's line from its row (curl generates its --help
 * from one option list the same way), and the options that the rerun
 * command of a failed case repeats (docs/cli.md#output). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "report/report.h"

/* The commands, before the options. */
static const char usage_head[] =
    "usage: scenetest run [OPTIONS] PATH...    run scenes (files, or "
    "directories\n"
    "                                          searched for *.yaml / *.yml)\n"
    "       scenetest list [OPTIONS] PATH...   print the selected cases, one\n"
    "                                          \"scene::case\" a line\n"
    "       scenetest check [OPTIONS] PATH...  load and validate only\n"
    "       scenetest bench [OPTIONS] PATH...  time the kernels against this\n"
    "                                          machine's ceilings "
    "(docs/bench.md)\n"
    "       scenetest timing [OPTIONS] LOG...  summarise TIMING logs\n"
    "       scenetest compare [OPTIONS] BASE NEW  compare two sides' timings\n"
    "       scenetest merge [--report FORMAT:PATH]... [--format F] [--output "
    "PATH] INPUT...\n"
    "                                          shards' JSON or --events "
    "reports as one\n"
    "       scenetest --version | --help\n";

/* bench's own options are parsed by cli/bench.c, before the table sees
 * the rest of its command line; listed after the run's output options. */
static const char usage_bench[] =
    "Bench (bench; also every run option, -j forced to 1):\n"
    "  --warmup-ms N         warm-up time before the timed rounds (25)\n"
    "  --min-time-ms N       timed loop at least N ms (100)\n"
    "  --max-time-ms N       ... at most N ms (10000)\n"
    "  --min-rounds N        at least N timed rounds (10)\n"
    "  --max-rounds N        at most N timed rounds (1000)\n"
    "  --cold-cache          flush the cache before each timed round\n"
    "  --no-check            skip golden and compare\n"
    "  --allow-suspicious    a figure above 105% of its ceiling does not fail\n"
    "  --format F            text|csv|json (default text)\n"
    "  --report html:PATH    also an HTML page with a roofline chart\n";

static const char usage_tail[] =
    "Exit status: 0 all selected cases passed or were skipped; 1 a case "
    "failed;\n"
    "2 usage, load or validation error (nothing ran); 3 internal error.\n"
    "Options may come before or after the paths; \"--\" ends the options.\n";

static const char *const section_titles[SEC_COUNT] = {
    "Selection (run, list):", "Running (run):", "Output (run):",
    "Loading (run, list, check):", "General:"};

/* The help text's column: an option's text starts here, after two spaces
 * and its names padded to HELP_NAMES_WIDTH. */
#define HELP_NAMES_WIDTH 22

/* Writes text with the report formats' names in place of {formats} (all,
 * "a|b"), {list formats} (those `list` takes) and {report formats} (those
 * --report takes, "a, b or c"), and each line after the first indented to
 * the help column. */
static void put_help_text(FILE *out, const char *text) {
  static const struct {
    const char *token;
    int which;
    const char *sep, *last;
  } tokens[] = {{"{formats}", ST__FMT_ALL, "|", "|"},
                {"{list formats}", ST__FMT_LIST, "|", "|"},
                {"{report formats}", ST__FMT_REPORT, ", ", " or "}};
  char names[256];

  while (*text != '\0') {
    size_t i, n = sizeof tokens / sizeof tokens[0];
    for (i = 0; i < n; i++)
      if (strncmp(text, tokens[i].token, strlen(tokens[i].token)) == 0)
        break;
    if (i < n) {
      fputs(st__report_format_names(names, sizeof names, tokens[i].which,
                                    tokens[i].sep, tokens[i].last),
            out);
      text += strlen(tokens[i].token);
    } else if (*text == '\n') {
      fprintf(out, "\n%*s", HELP_NAMES_WIDTH + 2, "");
      text++;
    } else {
      fputc(*text++, out);
    }
  }
  fputc('\n', out);
}

/* "  -j, --jobs N          cases in parallel (default 1)". */
static void put_option(FILE *out, const optdef *o) {
  char names[64];

  names[0] = '\0';
  if (o->short_name)
    snprintf(names, sizeof names, "-%c, ", o->short_name);
  if (o->alias)
    snprintf(names + strlen(names), sizeof names - strlen(names), "--%s, ",
             o->alias);
  snprintf(names + strlen(names), sizeof names - strlen(names), "--%s%s%s",
           o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
  fprintf(out, "  %-*s%s", HELP_NAMES_WIDTH, names,
          strlen(names) >= HELP_NAMES_WIDTH ? "  " : "");
  put_help_text(out, o->help);
}

void st__cli_help(FILE *out) {
  fputs(usage_head, out);
  for (int s = 0; s < SEC_COUNT; s++) {
    fprintf(out, "\n%s\n", section_titles[s]);
    for (size_t i = 0; i < st__cli_n_options; i++) {
      const optdef *o = &st__cli_options[i];
      if (o->section == (opt_section)s && !(o->flags & OPT_HIDDEN))
        put_option(out, o);
    }
    if (s == SEC_OUTPUT)
      fprintf(out, "\n%s", usage_bench);
  }
  fprintf(out, "\n%s", usage_tail);
}

/* One OPT_RERUN option as the rerun command repeats it, when it was given
 * (a flag: when set; a list: each item). */
static void rerun_option(FILE *f, const cli *c, const optdef *o) {
  const char *field = (const char *)c + o->offset;
  size_t i = (size_t)(o - st__cli_options);

  if (o->type == ARG_LIST || (o->flags & OPT_REPEATABLE)) {
    const strlist *l = (const strlist *)field;
    for (size_t k = 0; k < l->n; k++) {
      fprintf(f, " --%s ", o->name);
      st__shell_quote(f, l->items[k]);
    }
    return;
  }
  switch (o->type) {
  case ARG_FLAG:
    if (*(const int *)field)
      fprintf(f, " --%s", o->name);
    return;
  case ARG_UINT:
  case ARG_BYTES:
    if (c->given[i])
      fprintf(f, " --%s %" PRIu64, o->name, *(const uint64_t *)field);
    return;
  case ARG_CHOICE:
    /* Not the first (the default) choice: the rerun names its case, so
     * --manual include reruns a manual case under any MODE. */
    if (*(const int *)field > 0)
      fprintf(f, " --%s %s", o->name,
              strcmp(o->name, "manual") == 0 ? "include"
                                             : o->choices[*(const int *)field]);
    return;
  case ARG_STRING:
    if (*(const char *const *)field != NULL) {
      fprintf(f, " --%s ", o->name);
      st__shell_quote(f, *(const char *const *)field);
    }
    return;
  default:
    if (c->given[i] && c->raw[i] != NULL) {
      fprintf(f, " --%s ", o->name);
      st__shell_quote(f, c->raw[i]);
    }
    return;
  }
}

/* Beyond --case, --seed and --platform: without --plugin a plugin's
 * platform does not exist, without --max-nodes the file may not load, and
 * without --timeout a hanging case hangs. */
char *st__cli_rerun_options(const cli *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  if (f == NULL)
    return NULL;
  for (size_t i = 0; i < st__cli_n_options; i++)
    if (st__cli_options[i].flags & OPT_RERUN)
      rerun_option(f, c, &st__cli_options[i]);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
