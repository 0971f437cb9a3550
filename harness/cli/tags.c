/* SPDX-License-Identifier: MIT */
/* The selection filters after --case (docs/cli.md#tags-and--k): --tag EXPR
 * over a case's tags, -k EXPR over its id (each name a case-insensitive
 * substring), --skip SEL (the --case selector syntax) leaving cases out.
 * The run calls st__filter_keep for each case the selectors kept, before
 * sharding. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "cli/tagexpr.h"
#include "report/json.h"
#include "scene/scene.h"

/* One --skip selector, split at "::" as --case's. */
typedef struct skip_sel {
  char *scene, *kase;
  int scene_literal, kase_literal; /* the part is a name: no glob */
} skip_sel;

struct st__filter {
  st__tagexpr *tag, *k;
  skip_sel *skips;
  size_t n_skips;
};

/* A usage error naming the option, the expression and the column. */
static int compile(const char *opt, const char *text, st__tagexpr **out) {
  char msg[160];
  size_t col;
  int rc = st__tagexpr_parse(text, out, &col, msg, sizeof msg);
  if (rc == -2)
    return 3;
  if (rc != 0)
    return st__cli_usage("%s '%s': at column %zu: %s", opt, text, col, msg);
  return 0;
}

/* As --case's selectors (scene/select.c): a part equal to a loaded name
 * matches literally, else it is a shell glob; an empty part matches
 * every name. */
static int part_matches(const char *pattern, int literal, const char *name) {
  if (literal)
    return strcmp(pattern, name) == 0;
  return pattern[0] == '\0' || fnmatch(pattern, name, 0) == 0;
}

static int skip_matches(const skip_sel *s, const st_scene *scene, size_t c) {
  return part_matches(s->scene, s->scene_literal, st_scene_name(scene)) &&
         part_matches(s->kase, s->kase_literal, st_scene_case_name(scene, c));
}

static void find_literals(const st_scene_set *set, skip_sel *s) {
  for (size_t i = 0; i < st_scene_set_count(set); i++) {
    const st_scene *scene = st_scene_set_get(set, i);
    if (strcmp(st_scene_name(scene), s->scene) == 0)
      s->scene_literal = 1;
    for (size_t c = 0; c < st_scene_case_count(scene); c++)
      if (strcmp(st_scene_case_name(scene, c), s->kase) == 0)
        s->kase_literal = 1;
  }
}

int st__filter_new(const st_scene_set *set, const char *tag, const char *k,
                   const char *const *skips, size_t n_skips, st__filter **out) {
  st__filter *f;
  int rc = 0;

  *out = NULL;
  if (tag == NULL && k == NULL && n_skips == 0)
    return 0;
  if ((f = calloc(1, sizeof *f)) == NULL)
    return 3;
  if ((tag != NULL && (rc = compile("--tag", tag, &f->tag)) != 0) ||
      (k != NULL && (rc = compile("-k", k, &f->k)) != 0))
    goto fail;
  if (n_skips > 0 && (f->skips = calloc(n_skips, sizeof *f->skips)) == NULL) {
    rc = 3;
    goto fail;
  }
  for (; f->n_skips < n_skips; f->n_skips++) {
    skip_sel *s = &f->skips[f->n_skips];
    const char *text = skips[f->n_skips], *sep = strstr(text, "::");
    int hit = 0;
    s->scene = sep ? strndup(text, (size_t)(sep - text)) : strdup(text);
    s->kase = strdup(sep ? sep + 2 : "");
    if (s->scene == NULL || s->kase == NULL) {
      f->n_skips++;
      rc = 3;
      goto fail;
    }
    find_literals(set, s);
    for (size_t i = 0; i < st_scene_set_count(set) && !hit; i++) {
      const st_scene *scene = st_scene_set_get(set, i);
      for (size_t c = 0; c < st_scene_case_count(scene) && !hit; c++)
        hit = skip_matches(s, scene, c);
    }
    /* As with --case: a selector that names nothing is a typo. */
    if (!hit) {
      f->n_skips++;
      rc = st__cli_usage("--skip '%s' matches no case", text);
      goto fail;
    }
  }
  *out = f;
  return 0;
fail:
  if (rc == 3)
    fprintf(stderr, "scenetest: error: internal error: out of memory\n");
  st__filter_free(f);
  return rc;
}

void st__filter_free(st__filter *f) {
  if (f == NULL)
    return;
  st__tagexpr_free(f->tag);
  st__tagexpr_free(f->k);
  for (size_t i = 0; i < f->n_skips; i++) {
    free(f->skips[i].scene);
    free(f->skips[i].kase);
  }
  free(f->skips);
  free(f);
}

typedef struct tagset {
  const char **v;
  size_t n;
} tagset;

static int has_tag(void *data, const char *name) {
  const tagset *t = data;
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->v[i], name) == 0)
      return 1;
  return 0;
}

/* pytest's -k: a name holds when it is a substring of the id, case
 * ignored (ASCII). */
static int in_id(void *data, const char *name) {
  const char *id = data;
  size_t n = strlen(name);
  for (; *id != '\0'; id++) {
    size_t i = 0;
    while (i < n && id[i] != '\0' &&
           tolower((unsigned char)id[i]) == tolower((unsigned char)name[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

int st__filter_keep(void *data, const st_scene *scene, size_t c) {
  const st__filter *f = data;
  for (size_t i = 0; i < f->n_skips; i++)
    if (skip_matches(&f->skips[i], scene, c))
      return 0;
  if (f->tag != NULL) {
    tagset t = {NULL, 0};
    int keep;
    if (st__case_tags(scene, c, &t.v, &t.n) != ST_OK)
      return 0;
    keep = st__tagexpr_eval(f->tag, has_tag, &t);
    free(t.v);
    if (!keep)
      return 0;
  }
  if (f->k != NULL) {
    const char *sn = st_scene_name(scene), *cn = st_scene_case_name(scene, c);
    size_t len = strlen(sn) + strlen(cn) + 3;
    char *id = malloc(len);
    int keep;
    if (id == NULL)
      return 0;
    snprintf(id, len, "%s::%s", sn, cn);
    keep = st__tagexpr_eval(f->k, in_id, id);
    free(id);
    if (!keep)
      return 0;
  }
  return 1;
}

void st__cli_json_tags(FILE *out, const st_scene *scene, size_t c) {
  const char **v = NULL;
  size_t n = 0;
  if (st__case_tags(scene, c, &v, &n) != ST_OK)
    n = 0;
  st__json_string_array(out, v, n);
  free(v);
}
