/* SPDX-License-Identifier: MIT */
/* The run's inputs by device and inode (inputs.h). An output below an
 * input directory is that directory's scene when the scan would load it:
 * its name ends in .yaml or .yml (the scan's rule, docs/cli.md), checked
 * by walking up the output's real path, one stat per level. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "cli/inputs.h"

int st__inputs_add(st__inputs *in, const char *what, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    return 0;
  st__input *grown =
      st__array_grow(in->items, &in->cap, in->n, sizeof *grown, 8);
  if (grown == NULL)
    return -1;
  in->items = grown;
  in->items[in->n].what = what;
  in->items[in->n].path = path;
  in->items[in->n].dev = st.st_dev;
  in->items[in->n].ino = st.st_ino;
  in->items[in->n].is_dir = S_ISDIR(st.st_mode);
  in->n++;
  return 0;
}

void st__inputs_free(st__inputs *in) {
  free(in->items);
  in->items = NULL;
  in->n = in->cap = 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const st__input *find(const st__inputs *in, const struct stat *st,
                             int dirs) {
  size_t i;
  for (i = 0; i < in->n; i++)
    if (in->items[i].is_dir == dirs && in->items[i].dev == st->st_dev &&
        in->items[i].ino == st->st_ino)
      return &in->items[i];
  return NULL;
}

const st__input *st__inputs_named_by(const st__inputs *in, const char *path) {
  struct stat st;
  const st__input *hit;
  char *real, *slash;

  if (stat(path, &st) != 0)
    return NULL;
  if ((hit = find(in, &st, 0)) != NULL || !S_ISREG(st.st_mode))
    return hit;
  if ((real = realpath(path, NULL)) == NULL)
    return NULL;
  /* The name the file has, not the name of a symlink to it. */
  if (!has_suffix(real, ".yaml") && !has_suffix(real, ".yml")) {
    free(real);
    return NULL;
  }
  while ((slash = strrchr(real, '/')) != NULL && hit == NULL) {
    /* The parent: "/" for a file in the root. */
    slash[slash == real ? 1 : 0] = '\0';
    if (stat(real, &st) == 0)
      hit = find(in, &st, 1);
    if (slash == real)
      break;
  }
  free(real);
  return hit;
}
