/* SPDX-License-Identifier: MIT */
/* The plugins every run declares unless --no-default-plugins
 * (docs/cli.md#options): those of SCENETEST_PLUGIN_PATH, the build
 * tree's, the installed ones; lazily, by their ELF notes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

#include "base/util.h"
#include "cli/command.h"

/* docs/plugins.md#installed-plugins: the installed plugins
 * ($libdir/scenetest/plugins) and those in the directories of
 * SCENETEST_PLUGIN_PATH (colon-separated, searched first) are declared lazily:
 * only their ELF notes are read, nothing is loaded until a lookup needs one of
 * their platforms. A platform already known (built in, or from an explicit
 * --plugin) hides a default declaration of it; a file that cannot be declared
 * is a warning, since an installed plugin must not break every run. */
static void declare_one(st_registry *reg, const char *file) {
  char spec[4200], *platforms = NULL, *tok, *save = NULL;
  st_error err;
  int hidden = 0;
  snprintf(spec, sizeof spec, "lazy:%s", file);
  st_error_clear(&err);
  if (st_plugin_read_platforms(spec + 5, &platforms, &err) != ST_OK) {
    st_log(ST_LOG_WARNING, "default plugin %s not declared: %s", spec + 5,
           err.message);
    return;
  }
  for (tok = strtok_r(platforms, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save))
    if (st_registry_has_platform(reg, tok))
      hidden = 1;
  free(platforms);
  if (hidden)
    return;
  st_error_clear(&err);
  if (st_plugin_load(reg, spec, &err) != ST_OK)
    st_log(ST_LOG_WARNING, "default plugin %s not declared: %s", spec + 5,
           err.message);
}

static void declare_dir(st_registry *reg, const char *dir, size_t len) {
  char path[4096];
  DIR *d;
  struct dirent *de;
  char **names = NULL;
  size_t n = 0, cap = 0, i;

  if (len == 0 || len >= sizeof path - 2)
    return;
  memcpy(path, dir, len);
  path[len] = '\0';
  if ((d = opendir(path)) == NULL)
    return;
  while ((de = readdir(d)) != NULL) {
    size_t nl = strlen(de->d_name);
    if (de->d_name[0] == '.' || nl < 4 ||
        strcmp(de->d_name + nl - 3, ".so") != 0)
      continue;
    if (n == cap) {
      char **p = st__array_resize(names, cap ? cap * 2 : 8, sizeof *names);
      if (p == NULL)
        break;
      names = p;
      cap = cap ? cap * 2 : 8;
    }
    if ((names[n] = strdup(de->d_name)) != NULL)
      n++;
  }
  closedir(d);
  /* Bytewise order, so which of two files wins does not depend on the
   * directory's order. */
  for (i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (i = 0; i < n; i++) {
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", path, names[i]);
    declare_one(reg, file);
  }
  for (i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

void st__cli_declare_default_plugins(st_registry *reg) {
  const char *env = getenv("SCENETEST_PLUGIN_PATH");
  while (env != NULL && *env != '\0') {
    const char *colon = strchr(env, ':');
    size_t len = colon ? (size_t)(colon - env) : strlen(env);
    declare_dir(reg, env, len);
    env = colon ? colon + 1 : NULL;
  }
  /* The build tree's own plugins before the installed ones: a binary run
   * from its build directory tests what was built beside it. */
  st__cli_declare_build_tree(reg, declare_one);
  declare_dir(reg, ST_PLUGIN_DIR, strlen(ST_PLUGIN_DIR));
}
