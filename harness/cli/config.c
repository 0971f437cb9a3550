/* SPDX-License-Identifier: MIT */
/* The configuration file (docs/cli.md#the-configuration-file): found from the
 * current directory upwards (stopping at a directory that holds .git), or
 * named by --config; its keys are long option names, applied before the
 * environment and the command line, which win. The YAML is read on the
 * loader's side (scene/config_file.c); here the keys are checked and the
 * relative paths resolved against the file's own directory. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/cli_internal.h"
#include "scene/config_file.h"
#include "scene/suggest.h"

#define CONFIG_NAME "scenetest.yaml"

/* The keys whose values are paths, resolved against the file's
 * directory; `report` after its "FORMAT:", `plugin` after "lazy:". */
static const char *const path_keys[] = {
    "paths",        "plugin",       "output", "events", "log-file",
    "dump-on-fail", "rerun-failed", "report", NULL};

static int is_path_key(const char *key) {
  for (size_t i = 0; path_keys[i] != NULL; i++)
    if (strcmp(path_keys[i], key) == 0)
      return 1;
  return 0;
}

static int exists(const char *dir, const char *name, int want_dir) {
  struct stat sb;
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
    return 0;
  if (stat(p, &sb) != 0)
    return 0;
  return want_dir < 0 ||
         (want_dir ? S_ISDIR(sb.st_mode) != 0 : S_ISREG(sb.st_mode) != 0);
}

/* The first scenetest.yaml from the current directory upwards, malloc'd;
 * NULL when none (or the current directory cannot be named). */
static char *find_upwards(void) {
  char dir[PATH_MAX];
  if (getcwd(dir, sizeof dir) == NULL)
    return NULL;
  for (;;) {
    if (exists(dir, CONFIG_NAME, 0)) {
      size_t n = strlen(dir) + sizeof CONFIG_NAME + 1;
      char *p = malloc(n);
      if (p != NULL)
        snprintf(p, n, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, CONFIG_NAME);
      return p;
    }
    /* A repository's root ends the search: a file above it belongs to
     * something else. .git is a directory, or a file in a worktree. */
    if (exists(dir, ".git", -1))
      return NULL;
    char *slash = strrchr(dir, '/');
    if (slash == NULL || strcmp(dir, "/") == 0)
      return NULL;
    if (slash == dir)
      slash[1] = '\0';
    else
      *slash = '\0';
  }
}

/* value, or (when relative) dir/value, kept in cfg->owned. NULL: out of
 * memory. prefix_len bytes of value ("lazy:", "tap:") stay in front. */
static const char *resolve(st__cli_config *cfg, const char *value,
                           size_t prefix_len) {
  const char *rel = value + prefix_len;
  if (rel[0] == '/' || rel[0] == '\0')
    return value;
  size_t n = strlen(value) + strlen(cfg->dir) + 2;
  char *p = malloc(n), **o;
  if (p == NULL)
    return NULL;
  snprintf(p, n, "%.*s%s/%s", (int)prefix_len, value, cfg->dir, rel);
  o = st__array_resize(cfg->owned, cfg->n_owned + 1, sizeof *o);
  if (o == NULL) {
    free(p);
    return NULL;
  }
  cfg->owned = o;
  o[cfg->n_owned++] = p;
  return p;
}

static size_t prefix_of(const char *key, const char *value) {
  if (strcmp(key, "plugin") == 0 && strncmp(value, "lazy:", 5) == 0)
    return 5;
  if (strcmp(key, "report") == 0) {
    const char *colon = strchr(value, ':');
    return colon != NULL ? (size_t)(colon - value) + 1 : 0;
  }
  return 0;
}

static int check_key(const char *path, const st__config_entry *en,
                     const char *const *keys, size_t n_keys) {
  for (size_t i = 0; i < n_keys; i++)
    if (strcmp(keys[i], en->key) == 0)
      return 0;
  if (strcmp(en->key, "paths") == 0)
    return 0;
  const char *dym = st__suggest(en->key, keys, n_keys);
  /* "paths" when it is nearer than the nearest option name. */
  if (st__suggest_distance(en->key, "paths") <
      (dym != NULL ? st__suggest_distance(en->key, dym) : ST__SUGGEST_MAX + 1))
    dym = "paths";
  st__cli_usage_at(path, en->line, en->col);
  if (dym != NULL)
    (void)st__cli_usage("unknown key '%.100s' in the configuration file; "
                        "did you mean '%s'?",
                        en->key, dym);
  else
    (void)st__cli_usage("unknown key '%.100s' in the configuration file; "
                        "its keys are long option names without '--' "
                        "(docs/cli.md)",
                        en->key);
  st__cli_usage_at(NULL, 0, 0);
  return 2;
}

static int apply_all(st__cli_config *cfg, const char *const *keys,
                     size_t n_keys, st__cli_config_apply apply, void *ctx) {
  st__config_file *cf = cfg->file;
  int rc;
  for (size_t i = 0; i < cf->n; i++)
    if ((rc = check_key(cfg->path, &cf->items[i], keys, n_keys)) != 0)
      return rc;
  for (size_t i = 0; i < cf->n; i++) {
    const st__config_entry *en = &cf->items[i];
    for (size_t k = 0; k < en->n; k++) {
      const char *v = en->values[k];
      if (is_path_key(en->key) &&
          (v = resolve(cfg, v, prefix_of(en->key, v))) == NULL) {
        fputs("scenetest: error: internal error: reading the configuration "
              "file: out of memory\n",
              stderr);
        return 3;
      }
      rc = apply(ctx, en->key, v, en->is_list, cfg->path, en->vline[k],
                 en->vcol[k]);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

int st__cli_config_load(st__cli_config *cfg, const char *explicit_path,
                        int no_config, const char *const *keys, size_t n_keys,
                        st__cli_config_apply apply, void *ctx) {
  st_error err;
  st_status st;
  char *slash;

  memset(cfg, 0, sizeof *cfg);
  if (explicit_path != NULL)
    cfg->path = strdup(explicit_path);
  else if (!no_config)
    cfg->path = find_upwards();
  if (cfg->path == NULL)
    return explicit_path != NULL ? 3 : 0;
  cfg->dir = strdup(cfg->path);
  cfg->file = calloc(1, sizeof(st__config_file));
  if (cfg->dir == NULL || cfg->file == NULL) {
    fputs("scenetest: error: internal error: reading the configuration "
          "file: out of memory\n",
          stderr);
    return 3;
  }
  slash = strrchr(cfg->dir, '/');
  if (slash == NULL)
    strcpy(cfg->dir, ".");
  else if (slash == cfg->dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  st_error_clear(&err);
  st = st__config_file_read(cfg->path, cfg->file, &err);
  if (st == ST_ENOMEM) {
    fputs("scenetest: error: internal error: reading the configuration "
          "file: out of memory\n",
          stderr);
    return 3;
  }
  if (st != ST_OK) {
    char buf[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 64];
    if (err.file[0] != '\0')
      fprintf(stderr, "%s\n", st_error_format(&err, buf, sizeof buf));
    else
      (void)st__cli_usage("%s", err.message);
    return 2;
  }
  return apply_all(cfg, keys, n_keys, apply, ctx);
}

void st__cli_config_free(st__cli_config *cfg) {
  for (size_t i = 0; i < cfg->n_owned; i++)
    free(cfg->owned[i]);
  free(cfg->owned);
  if (cfg->file != NULL)
    st__config_file_free(cfg->file);
  free(cfg->file);
  free(cfg->path);
  free(cfg->dir);
  memset(cfg, 0, sizeof *cfg);
}
