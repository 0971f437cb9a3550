/* SPDX-License-Identifier: MIT */
/* The build tree as a machine like any other (docs/cli.md): a scenetest
 * binary run from its build directory declares the plugins that build
 * directory built, as an installed one declares $libdir/scenetest/plugins.
 *
 * How it knows: meson writes the list of the plugins it installs there
 * (never test fixtures) into ST_BUILD_PLUGIN_LIST, one absolute path a
 * line, and compiles in ST_BUILD_EXE_DIR, the directory the binary is
 * built in. The list is read only when /proc/self/exe is in that
 * directory: an installed copy of the binary (or one copied elsewhere)
 * never declares what a build tree on the same machine holds. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_internal.h"

#ifdef ST_BUILD_PLUGIN_LIST
/* 1 when the running binary sits in the directory it was built in. */
static int in_build_dir(void) {
  char exe[PATH_MAX], built[PATH_MAX];
  char *slash;
  if (realpath("/proc/self/exe", exe) == NULL ||
      realpath(ST_BUILD_EXE_DIR, built) == NULL)
    return 0;
  slash = strrchr(exe, '/');
  if (slash == NULL)
    return 0;
  *slash = '\0';
  return strcmp(exe, built) == 0;
}
#endif

void st__cli_declare_build_tree(st_registry *reg,
                                void (*declare)(st_registry *reg,
                                                const char *path)) {
#ifdef ST_BUILD_PLUGIN_LIST
  char line[PATH_MAX + 2];
  FILE *f;
  if (!in_build_dir() || (f = fopen(ST_BUILD_PLUGIN_LIST, "re")) == NULL)
    return;
  while (fgets(line, sizeof line, f) != NULL) {
    size_t len = strcspn(line, "\n");
    line[len] = '\0';
    /* A plugin not built yet (a partial `ninja TARGET`) is not there:
     * nothing to declare, and nothing to warn about. */
    if (len > 0 && line[0] == '/' && access(line, R_OK) == 0)
      declare(reg, line);
  }
  fclose(f);
#else
  (void)reg;
  (void)declare;
#endif
}
