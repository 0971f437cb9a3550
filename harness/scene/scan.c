/* SPDX-License-Identifier: MIT */
/* Loading a path into a scene set: a file, or every scene file below a
 * directory (docs/cli.md), in sorted order, skipping what a scan ignores
 * (hidden names, `subprojects` and `build*` directories, --ignore and
 * .scenetestignore globs). Each file is loaded by scene/load.c. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "base/buf.h"
#include "base/options.h"
#include "scene/load.h"

typedef struct pathlist {
  char **v;
  size_t n, cap;
} pathlist;

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* What a directory scan skips (docs/cli.md#the-scenetest-command-line): names
 * starting with '.', `subprojects` and `build*` directories at any depth, and
 * the --ignore and .scenetestignore globs, matched with fnmatch against the
 * path relative to the command-line directory and against the basename. */
typedef struct scan {
  const char *root;
  size_t root_len;
  const char *const *globs; /* --ignore */
  size_t n_globs;
  char **file_globs; /* .scenetestignore; owned */
  size_t n_file_globs;
} scan;

static int glob_hit(const char *const *g, size_t n, const char *rel,
                    const char *base) {
  for (size_t i = 0; i < n; i++)
    if (fnmatch(g[i], rel, 0) == 0 || fnmatch(g[i], base, 0) == 0)
      return 1;
  return 0;
}

static int ignored(const scan *sc, const char *path, const char *base,
                   int is_dir) {
  if (is_dir &&
      (strcmp(base, "subprojects") == 0 || strncmp(base, "build", 5) == 0))
    return 1;
  const char *rel = path + sc->root_len;
  while (*rel == '/')
    rel++;
  return glob_hit(sc->globs, sc->n_globs, rel, base) ||
         glob_hit((const char *const *)sc->file_globs, sc->n_file_globs, rel,
                  base);
}

/* Reads DIR/.scenetestignore, if any: one glob a line, '#' comments. */
static st_status read_ignore_file(scan *sc) {
  char *p;
  if (asprintf(&p, "%s/.scenetestignore", sc->root) < 0)
    return ST_ENOMEM;
  FILE *f = fopen(p, "re");
  free(p);
  if (f == NULL)
    return ST_OK;
  char line[4096];
  st_status rc = ST_OK;
  while (fgets(line, sizeof line, f) != NULL) {
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                       line[len - 1] == ' ' || line[len - 1] == '\t' ||
                       line[len - 1] == '/'))
      line[--len] = '\0';
    char *g = line;
    while (*g == ' ' || *g == '\t')
      g++;
    if (*g == '\0' || *g == '#')
      continue;
    char **v =
        st__array_resize(sc->file_globs, sc->n_file_globs + 1, sizeof *v);
    if (v == NULL || (v[sc->n_file_globs] = strdup(g)) == NULL) {
      if (v)
        sc->file_globs = v;
      rc = ST_ENOMEM;
      break;
    }
    sc->file_globs = v;
    sc->n_file_globs++;
  }
  fclose(f);
  return rc;
}

/* How deep a directory search goes below a path given on the command
 * line. */
#define ST__SCAN_MAX_DEPTH 64

static st_status collect(const scan *sc, const char *dir, pathlist *out,
                         int depth, st_error_list *errors) {
  DIR *d;
  struct dirent *de;
  st_status rc = ST_OK;
  /* Real directories only (symlinked ones are not followed), so there is
   * no loop; the depth cap guards against absurd trees anyway. A tree
   * deeper than the cap is an error, never a silent "0 scenes" (issue
   * 13, D12). */
  if (depth > ST__SCAN_MAX_DEPTH) {
    st_error e;
    st_error_clear(&e);
    st_error_set(&e, ST_ELOAD,
                 "cannot search '%s': directories nest deeper than %d levels "
                 "below the path given; name a deeper directory on the "
                 "command line",
                 dir, ST__SCAN_MAX_DEPTH);
    if (errors != NULL && st_error_list_add(errors, &e) != ST_OK)
      return ST_ENOMEM;
    return ST_ELOAD;
  }
  d = opendir(dir);
  if (d == NULL)
    return st__load_io_error(errors, "cannot open directory '%s': %s", dir,
                             errno);
  while ((de = readdir(d)) != NULL) {
    struct stat sb;
    char *p;
    if (de->d_name[0] == '.')
      continue;
    if (asprintf(&p, "%s%s%s", dir, has_suffix(dir, "/") ? "" : "/",
                 de->d_name) < 0) {
      rc = ST_ENOMEM;
      break;
    }
    if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      st_status r = ST_OK;
      if (!ignored(sc, p, de->d_name, 1))
        r = collect(sc, p, out, depth + 1, errors);
      free(p);
      if (r == ST_ENOMEM) {
        rc = r;
        break;
      }
      if (r != ST_OK)
        rc = r;
      continue;
    }
    /* scenetest.yaml is the configuration file (docs/cli.md). */
    if (!(has_suffix(de->d_name, ".yaml") || has_suffix(de->d_name, ".yml")) ||
        strcmp(de->d_name, "scenetest.yaml") == 0 || stat(p, &sb) != 0 ||
        S_ISDIR(sb.st_mode) || ignored(sc, p, de->d_name, 0)) {
      free(p);
      continue;
    }
    char **v = st__array_grow(out->v, &out->cap, out->n, sizeof *v, 16);
    if (v == NULL) {
      free(p);
      rc = ST_ENOMEM;
      break;
    }
    out->v = v;
    out->v[out->n++] = p;
  }
  closedir(d);
  return rc;
}

static int path_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

st_status st__scene_set_load_path_ext(st_scene_set *set, const char *path,
                                      const st_load_options *opts,
                                      const st__load_ext *ext,
                                      st_error_list *errors) {
  struct stat sb;
  st_load_options taken;
  st_error bad;
  st_error_clear(&bad);
  /* Checked here too: a directory without scenes loads no buffer. */
  if (st__load_options_take(opts, &taken, &bad) != ST_OK) {
    if (errors != NULL && st_error_list_add(errors, &bad) != ST_OK)
      return ST_ENOMEM;
    return bad.code;
  }
  /* Files named on the command line are never ignored
   * (docs/cli.md#the-scenetest-command-line). */
  if (stat(path, &sb) != 0)
    return st__load_io_error(errors, "cannot open '%s': %s", path, errno);
  if (!S_ISDIR(sb.st_mode))
    return st__load_file(set, path, &taken, ext, errors);

  pathlist pl = {0};
  scan sc = {path,
             strlen(path),
             ext ? ext->ignore : NULL,
             ext ? ext->n_ignore : 0,
             NULL,
             0};
  st_status rc = read_ignore_file(&sc);
  if (rc == ST_OK)
    rc = collect(&sc, path, &pl, 0, errors);
  if (rc != ST_ENOMEM) {
    if (pl.n > 1) /* an empty directory has no array at all */
      qsort(pl.v, pl.n, sizeof *pl.v, path_cmp);
    for (size_t i = 0; i < pl.n; i++) {
      st_status r = st__load_file(set, pl.v[i], &taken, ext, errors);
      if (r == ST_ENOMEM) {
        rc = r;
        break;
      }
      if (r != ST_OK)
        rc = ST_ELOAD;
    }
  }
  for (size_t i = 0; i < pl.n; i++)
    free(pl.v[i]);
  free(pl.v);
  for (size_t i = 0; i < sc.n_file_globs; i++)
    free(sc.file_globs[i]);
  free(sc.file_globs);
  return rc;
}

st_status st_scene_set_load_path(st_scene_set *set, const char *path,
                                 const st_load_options *opts,
                                 st_error_list *errors) {
  return st__scene_set_load_path_ext(set, path, opts, NULL, errors);
}
