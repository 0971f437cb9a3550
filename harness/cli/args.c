/* SPDX-License-Identifier: MIT */
/* The command line and the configuration file read into struct cli by
 * the option table (options.c): getopt_long's conventions written out to
 * own the error messages, each check of a value type written once, the
 * configuration file's values applied as their options would be
 * (docs/cli.md#the-configuration-file), and --show-config. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "scene/suggest.h"

/* A byte count with an optional binary suffix: 512, 64K, 2G. */
static int parse_bytes(const char *opt, const char *text, uint64_t *out) {
  char digits[32];
  size_t len = strlen(text);
  unsigned shift = 0;
  uint64_t v;
  int rc;

  if (len > 0 && len < sizeof digits) {
    switch (text[len - 1]) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    case 't':
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
  }
  if (shift == 0)
    return st__cli_parse_uint(opt, text, 1, UINT64_MAX, out);
  memcpy(digits, text, len - 1);
  digits[len - 1] = '\0';
  if ((rc = st__cli_parse_uint(opt, digits, 1, UINT64_MAX >> shift, &v)) != 0)
    return rc;
  *out = v << shift;
  return 0;
}

static int takes_value(const optdef *o) {
  return o->type != ARG_FLAG && o->type != ARG_ACTION;
}

/* "a, b or c" from a NULL-terminated list. */
static void join_choices(const char *const *list, char *buf, size_t size) {
  size_t i, n = 0, used = 0;
  while (list[n] != NULL)
    n++;
  buf[0] = '\0';
  for (i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s",
                             i == 0       ? ""
                             : i + 1 == n ? " or "
                                          : ", ",
                             list[i]);
}

/* Applies one option's value by its type: every check of a type is here
 * once. Returns 0 or an exit status. */
static int apply_option(cli *c, const optdef *o, const char *flag,
                        const char *val) {
  char *field = (char *)c + o->offset;
  char names[128];
  size_t i;

  if (!(o->cmds & c->cmd))
    return st__cli_usage("option '%s' does not apply to '%s'", flag,
                         c->cmd_name);
  c->given[o - st__cli_options] = 1;
  /* A list on the command line replaces the configuration file's. */
  if (o->type == ARG_LIST && c->applying == SRC_CLI &&
      c->source[o - st__cli_options] == SRC_CONFIG)
    ((strlist *)field)->n = 0;
  c->source[o - st__cli_options] = (unsigned char)c->applying;
  c->raw[o - st__cli_options] = val != NULL ? val : "true";
  switch (o->type) {
  case ARG_FLAG:
    *(int *)field = 1;
    return 0;
  case ARG_STRING:
  case ARG_LIST:
    if (val[0] == '\0' && o->what != NULL)
      return st__cli_usage("--%s needs %s", o->name, o->what);
    if (o->type == ARG_STRING) {
      *(const char **)field = val;
    } else {
      strlist *l = (strlist *)field;
      l->items[l->n++] = val;
    }
    return 0;
  case ARG_UINT:
    return st__cli_parse_uint(o->name, val, o->min, o->max, (uint64_t *)field);
  case ARG_BYTES:
    return parse_bytes(o->name, val, (uint64_t *)field);
  case ARG_CHOICE:
    for (i = 0; o->choices[i] != NULL; i++)
      if (strcmp(val, o->choices[i]) == 0) {
        *(int *)field = (int)i;
        return 0;
      }
    join_choices(o->choices, names, sizeof names);
    return st__cli_usage("--%s must be %s (got '%s')", o->name, names, val);
  case ARG_CUSTOM:
  case ARG_ACTION:
    return o->custom(c, o, val);
  }
  return 0;
}

/* An unknown long option, with the nearest name (docs/cli.md). */
static int unknown_long(const char *arg, size_t len) {
  const char *names[CLI_OPTIONS_CAP];
  char word[64];
  const char *dym;
  size_t i;
  for (i = 0; i < st__cli_n_options; i++)
    names[i] = st__cli_options[i].name;
  snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), arg + 2);
  dym = len < 63 ? st__suggest(word, names, st__cli_n_options) : NULL;
  if (dym != NULL)
    return st__cli_usage("unknown option '%.*s'; did you mean --%s? (see "
                         "'scenetest --help')",
                         (int)(len + 2), arg, dym);
  return st__cli_usage("unknown option '%.*s'; see 'scenetest --help'",
                       (int)(len + 2), arg);
}

/* getopt_long's conventions by hand, to own the error messages: options
 * anywhere among the paths, "--opt VAL" and "--opt=VAL", "-j N" and
 * "-jN", and "--" ending the options. Returns 0 or an exit status. */
static int parse_args(cli *c, int argc, char **argv) {
  int i, rc, only_paths = 0;

  for (i = 2; i < argc; i++) {
    const char *arg = argv[i];
    const optdef *o;
    const char *val = NULL;
    char flag[64];

    if (only_paths || arg[0] != '-' || arg[1] == '\0') {
      c->paths.items[c->paths.n++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_paths = 1;
      continue;
    }
    if (arg[1] == '-') {
      const char *name = arg + 2, *eq = strchr(name, '=');
      size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
      o = st__cli_find_long(name, len);
      if (o == NULL)
        return unknown_long(arg, len);
      snprintf(flag, sizeof flag, "--%s", o->name);
      if (eq != NULL) {
        if (!takes_value(o))
          return st__cli_usage("option '%s' takes no value", flag);
        val = eq + 1;
      }
    } else {
      o = st__cli_find_short(arg[1]);
      if (o == NULL)
        return st__cli_usage("unknown option '-%c'; see 'scenetest --help'",
                             arg[1]);
      snprintf(flag, sizeof flag, "-%c", o->short_name);
      if (arg[2] != '\0') {
        if (!takes_value(o))
          return st__cli_usage("unknown option '%s'; see 'scenetest --help'",
                               arg);
        val = arg + 2;
      }
    }
    if (takes_value(o) && val == NULL) {
      if (i + 1 >= argc)
        return st__cli_usage("option '%s' needs a value", flag);
      val = argv[++i];
    }
    if ((rc = apply_option(c, o, flag, val)) != 0)
      return rc;
  }
  return 0;
}

/* Whether option o takes a list (repeatable on the command line). */
static int repeatable(const optdef *o) {
  return o->type == ARG_LIST || (o->flags & OPT_REPEATABLE) != 0;
}

/* One value of the configuration file, applied as its option would be
 * (st__cli_config_apply): flags take true or false, only repeatable
 * options take lists, and an option of another command is left alone. */
static int config_apply(void *ctx, const char *key, const char *value,
                        int is_list, const char *file, int line, int col) {
  cli *c = ctx;
  const optdef *o;
  char flag[64];
  int rc = 0;

  st__cli_usage_at(file, line, col);
  if (++c->n_config_values > CONFIG_VALUES_MAX) {
    rc = st__cli_usage("more than %d values in the configuration file",
                       CONFIG_VALUES_MAX);
    goto out;
  }
  if (strcmp(key, "paths") == 0) {
    if (value[0] == '\0')
      rc = st__cli_usage("'paths' needs a scene file or a directory");
    else
      c->config_paths.items[c->config_paths.n++] = value;
    goto out;
  }
  o = st__cli_find_long(key, strlen(key));
  snprintf(flag, sizeof flag, "%s", key);
  if (o == NULL || !(o->cmds & c->cmd))
    goto out;
  c->src_line[o - st__cli_options] = line;
  if (is_list && !repeatable(o)) {
    rc = st__cli_usage("'%s' takes one value, not a list", key);
  } else if (o->type == ARG_FLAG) {
    if (strcmp(value, "true") == 0)
      rc = apply_option(c, o, flag, NULL);
    else if (strcmp(value, "false") != 0)
      rc = st__cli_usage("'%s' is true or false (got '%s')", key, value);
  } else {
    rc = apply_option(c, o, flag, value);
  }
out:
  st__cli_usage_at(NULL, 0, 0);
  return rc;
}

/* --config FILE and --no-config, read before the configuration file is:
 * which file to read comes first. The options are parsed again with the
 * rest. */
static void prescan_config(cli *c, int argc, char **argv) {
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      break;
    if (strcmp(argv[i], "--no-config") == 0)
      c->no_config = 1;
    else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
      c->config_path = argv[++i];
    else if (strncmp(argv[i], "--config=", 9) == 0)
      c->config_path = argv[i] + 9;
  }
  if (c->config_path != NULL && c->config_path[0] == '\0')
    c->config_path = NULL; /* parse_args says "--config needs a file" */
}

static int load_config(cli *c, int argc, char **argv) {
  const char *keys[CLI_OPTIONS_CAP];
  size_t n = 0;
  int rc;
  for (size_t i = 0; i < st__cli_n_options; i++)
    if (!(st__cli_options[i].flags & OPT_CLI_ONLY))
      keys[n++] = st__cli_options[i].name;
  prescan_config(c, argc, argv);
  c->applying = SRC_CONFIG;
  rc = st__cli_config_load(&c->config, c->config_path, c->no_config, keys, n,
                           config_apply, c);
  c->applying = SRC_CLI;
  return rc;
}

static void show_list(FILE *f, const strlist *l) {
  fputc('[', f);
  for (size_t i = 0; i < l->n; i++)
    fprintf(f, "%s%s", i > 0 ? ", " : "", l->items[i]);
  fputc(']', f);
}

/* An option's value as --show-config prints it. */
static void show_value(FILE *f, const cli *c, const optdef *o) {
  const char *field = (const char *)c + o->offset;
  const char *raw = c->raw[o - st__cli_options];
  if (repeatable(o)) {
    show_list(f, (const strlist *)field);
    return;
  }
  switch (o->type) {
  case ARG_FLAG:
    fputs(*(const int *)field ? "true" : "false", f);
    return;
  case ARG_STRING:
    fputs(*(const char *const *)field != NULL ? *(const char *const *)field
                                              : "-",
          f);
    return;
  case ARG_CHOICE:
    fputs(*(const int *)field >= 0 ? o->choices[*(const int *)field] : "-", f);
    return;
  case ARG_UINT:
  case ARG_BYTES:
    if (raw == NULL) {
      fprintf(f, "%" PRIu64, *(const uint64_t *)field);
      return;
    }
    break;
  default:
    break;
  }
  fputs(raw != NULL ? raw : "-", f);
}

/* --show-config (docs/cli.md#the-configuration-file): every option's merged
 * value and where it came from, then the paths. */
int st__cli_show_config(const cli *c) {
  const char *file = c->config.path;
  printf("# configuration file: %s\n", file != NULL ? file : "(none)");
  for (size_t i = 0; i < st__cli_n_options; i++) {
    const optdef *o = &st__cli_options[i];
    if ((o->flags & OPT_CLI_ONLY) || !(o->cmds & c->cmd))
      continue;
    printf("%s: ", o->name);
    show_value(stdout, c, o);
    switch (c->source[i]) {
    case SRC_CONFIG:
      printf("  # %s:%d\n", file, c->src_line[i]);
      break;
    case SRC_ENV:
      printf("  # SCENETEST_LOG_LEVEL\n");
      break;
    case SRC_CLI:
      printf("  # command line\n");
      break;
    default:
      printf("  # default\n");
      break;
    }
  }
  printf("paths: ");
  show_list(stdout, &c->paths);
  printf("  # %s\n", c->paths.n == 0        ? "none"
                     : c->paths_from_config ? file
                                            : "command line");
  return fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
}

/* SCENETEST_LOG_LEVEL: the default of --log-level (docs/cli.md#logs). */
static int level_from_env(void) {
  const char *v = getenv("SCENETEST_LOG_LEVEL");
  int level;
  if (v == NULL || v[0] == '\0')
    return 0;
  if (st_log_level_parse(v, &level) != ST_OK)
    return st__cli_usage("SCENETEST_LOG_LEVEL: unknown level '%s'; levels: "
                         "debug, info, timing, warning, error, null",
                         v);
  st_log_set_level(level);
  return 0;
}

/* Precedence (docs/cli.md#the-configuration-file): the configuration file,
 * then the environment, then the command line, each over the one before;
 * the file's paths when the command line gives none. 0 or an exit
 * status. */
int st__cli_gather_options(cli *c, int argc, char **argv) {
  const char *env = getenv("SCENETEST_LOG_LEVEL");
  int status;
  if ((status = load_config(c, argc, argv)) != 0 ||
      (status = level_from_env()) != 0)
    return status;
  if (env != NULL && env[0] != '\0') {
    int li = st__cli_option_index("log-level");
    c->source[li] = SRC_ENV;
    c->raw[li] = env;
  }
  if ((status = parse_args(c, argc, argv)) != 0)
    return status;
  if (c->paths.n == 0 && c->config_paths.n > 0) {
    for (size_t i = 0; i < c->config_paths.n; i++)
      c->paths.items[c->paths.n++] = c->config_paths.items[i];
    c->paths_from_config = 1;
  }
  if (c->verbose && c->quiet)
    return st__cli_usage("-v and -q cannot be used together");
  return 0;
}
