/* SPDX-License-Identifier: MIT */
/* Case selection as `run` and `list` do it: --case selectors (scene,
 * scene::case, ::case, shell globs on either part), the manual mode and the
 * platform filter, the --rerun-failed names, then the shard
 * (docs/cli.md#sharding's order), in set order. Selection is strict
 * (docs/cli.md#selection): a selector that selects nothing is a usage error
 * saying why; what the names and the shard leave out is not (a rerun command
 * works in any shard). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/util.h"
#include "scene/scene.h"
#include "scene/suggest.h"

/* A selector split at its first "::". An empty part matches everything,
 * so "::case" is every scene's `case` and "scene::" every case of
 * `scene`. Without "::" the selector names scenes. */
typedef struct selector {
  char *scene;       /* owned; "" = any */
  char *kase;        /* owned; "" = any */
  int scene_literal; /* the part equals a scene name: no glob
                        (docs/scene-format.md#matrix-cases) */
  int kase_literal;  /* the part equals a case name: no glob */
  size_t matched;    /* cases it matches, before manual/platform */
  size_t manual;     /* of those, manual on the platform */
  size_t runs_on;    /* of those, running on the platform */
  size_t selected;   /* of those, left after manual and platform */
} selector;

uint64_t st_shard_hash(const char *scene, const char *kase) {
  /* FNV-1a, 64 bits (docs/cli.md#sharding;
   * http://www.isthe.com/chongo/tech/comp/fnv/): for each byte, xor it in, then
   * multiply by the prime. */
  static const char sep[] = "::";
  const char *parts[3];
  uint64_t h = 0xcbf29ce484222325u;
  size_t p;

  parts[0] = scene;
  parts[1] = sep;
  parts[2] = kase;
  for (p = 0; p < 3; p++) {
    const unsigned char *s = (const unsigned char *)parts[p];
    for (; *s != '\0'; s++) {
      h ^= *s;
      h *= 0x100000001b3u;
    }
  }
  return h;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* strcmp of "scene::case" (never built: matrix names have no length cap)
 * against a name. */
typedef struct qualified {
  const char *scene, *kase;
} qualified;

static int cmp_qualified(const void *key, const void *elem) {
  const qualified *q = key;
  const char *parts[3], *name = *(const char *const *)elem;
  size_t p;

  parts[0] = q->scene;
  parts[1] = "::";
  parts[2] = q->kase;
  for (p = 0; p < 3; p++) {
    const char *s;
    for (s = parts[p]; *s != '\0'; s++, name++)
      if (*s != *name)
        return (unsigned char)*s - (unsigned char)*name;
  }
  return *name == '\0' ? 0 : -1;
}

/* Whether "scene::case" is one of the n sorted names. */
static int named(const char *const *sorted, size_t n, const char *scene,
                 const char *kase) {
  qualified q;
  q.scene = scene;
  q.kase = kase;
  return bsearch(&q, sorted, n, sizeof *sorted, cmp_qualified) != NULL;
}

static int part_matches(const char *pattern, int literal, const char *name) {
  if (literal)
    return strcmp(pattern, name) == 0;
  return pattern[0] == '\0' || fnmatch(pattern, name, 0) == 0;
}

/* docs/scene-format.md#matrix-cases: a part equal to a name matches literally
 * before glob matching, so `S::C[N=7]` selects the matrix case C[N=7] and not
 * the cases its bracket expression would match as a glob. */
static void find_literals(const st_scene_set *set, selector *sel) {
  for (size_t s = 0; s < st_scene_set_count(set); s++) {
    const st_scene *scene = st_scene_set_get(set, s);
    if (sel->scene[0] != '\0' && strcmp(sel->scene, st_scene_name(scene)) == 0)
      sel->scene_literal = 1;
  }
  for (size_t s = 0; s < st_scene_set_count(set); s++) {
    const st_scene *scene = st_scene_set_get(set, s);
    if (!part_matches(sel->scene, sel->scene_literal, st_scene_name(scene)))
      continue;
    for (size_t c = 0; c < st_scene_case_count(scene); c++)
      if (sel->kase[0] != '\0' &&
          strcmp(sel->kase, st_scene_case_name(scene, c)) == 0)
        sel->kase_literal = 1;
  }
}

/* Appends ", "-separated scene names to buf while they fit, then
 * "... (N more)", so the message stays one bounded line. */
static void list_scenes(const st_scene_set *set, char *buf, size_t size) {
  size_t i, n = st_scene_set_count(set), len = 0;

  buf[0] = '\0';
  if (n == 0) {
    snprintf(buf, size, "(none)");
    return;
  }
  for (i = 0; i < n; i++) {
    const char *name = st_scene_name(st_scene_set_get(set, i));
    size_t need = strlen(name) + (i > 0 ? 2 : 0);
    /* Keep room for the " ... (N more)" tail. */
    if (len + need + 32 >= size) {
      snprintf(buf + len, size - len, ", ... (%zu more)", n - i);
      return;
    }
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i > 0 ? ", " : "",
                            name);
  }
}

static int keep_case(const st_scene *scene, size_t index,
                     const st_run_options *opts, int *manual, int *runs) {
  *runs = st_scene_case_runs_on(scene, index, opts->platform);
  *manual = st_scene_case_is_manual(scene, index, opts->platform);
  if (!*runs)
    return 0;
  switch (opts->manual) {
  case ST_MANUAL_INCLUDE:
    return 1;
  case ST_MANUAL_ONLY:
    return *manual;
  case ST_MANUAL_EXCLUDE:
  default:
    return !*manual;
  }
}

/* How far a case is from a selector that matched nothing: the selector's
 * scene part against the scene name, its case part against the case
 * name (an empty part is no distance). */
static size_t case_distance(const selector *sel, const char *scene,
                            const char *kase) {
  size_t d = 0;
  if (sel->scene[0] != '\0')
    d += st__suggest_distance(sel->scene, scene);
  if (sel->kase[0] != '\0')
    d += st__suggest_distance(sel->kase, kase);
  return d;
}

/* docs/cli.md: the case ids nearest a selector that matched nothing (at
 * most ST__SUGGEST_MAX edits in all, the first three of the nearest, in
 * set order) as "'S::C', 'S::D'" into buf; 0 when none is near. */
static int near_cases(const st_scene_set *set, const selector *sel, char *buf,
                      size_t size) {
  size_t best = ST__SUGGEST_MAX + 1, shown = 0, more = 0, len = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t s = 0; s < st_scene_set_count(set); s++) {
      const st_scene *sc = st_scene_set_get(set, s);
      for (size_t c = 0; c < st_scene_case_count(sc); c++) {
        const char *name = st_scene_case_name(sc, c);
        size_t d = case_distance(sel, st_scene_name(sc), name);
        if (pass == 0) {
          if (d < best)
            best = d;
          continue;
        }
        if (d != best || best > ST__SUGGEST_MAX)
          continue;
        if (shown == 3 || len + strlen(name) + 80 >= size) {
          more++;
          continue;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s'%.64s::%.64s'",
                                shown > 0 ? ", " : "", st_scene_name(sc), name);
        shown++;
      }
    }
  if (shown == 0)
    return 0;
  if (more > 0)
    snprintf(buf + len, size - len, " (or %zu more)", more);
  return 1;
}

/* --failed-first (docs/cli.md#last-failed): the refs named in
 * first_cases move to the front, each part keeping selection order. */
static st_status failed_first(st_case_ref *refs, size_t n,
                              const st_run_options *o, st_error *err) {
  const char **names = malloc(o->n_first_cases * sizeof *names);
  st_case_ref *tmp = malloc((n ? n : 1) * sizeof *tmp);
  size_t i, k = 0, pass;

  if (names == NULL || tmp == NULL) {
    free(names);
    free(tmp);
    return st_error_set(err, ST_ENOMEM, "out of memory");
  }
  memcpy(names, o->first_cases, o->n_first_cases * sizeof *names);
  qsort(names, o->n_first_cases, sizeof *names, cmp_str);
  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < n; i++) {
      int first = named(names, o->n_first_cases, st_scene_name(refs[i].scene),
                        st_scene_case_name(refs[i].scene, refs[i].index));
      if (first == (pass == 0))
        tmp[k++] = refs[i];
    }
  memcpy(refs, tmp, n * sizeof *refs);
  free(tmp);
  free(names);
  return ST_OK;
}

/* The usage error for a selector that selected nothing, most specific
 * reason first. */
static st_status selector_error(const st_scene_set *set,
                                const st_run_options *opts, const char *text,
                                const selector *sel, st_error *err) {
  char scenes[768];

  if (sel->matched == 0) {
    if (near_cases(set, sel, scenes, sizeof scenes))
      return st_error_set(err, ST_EUSAGE,
                          "--case '%s' matches no case; did you mean %s?", text,
                          scenes);
    list_scenes(set, scenes, sizeof scenes);
    return st_error_set(err, ST_EUSAGE,
                        "--case '%s' matches no case; scenes: %s", text,
                        scenes);
  }
  if (opts->manual == ST_MANUAL_EXCLUDE && sel->manual == sel->matched)
    return st_error_set(err, ST_EUSAGE,
                        "--case '%s' matches only manual cases; run them with "
                        "--manual include or --manual only",
                        text);
  if (opts->manual == ST_MANUAL_ONLY && sel->manual == 0)
    return st_error_set(err, ST_EUSAGE,
                        "--case '%s' matches no manual case (--manual only "
                        "keeps only manual cases)",
                        text);
  if (sel->runs_on == 0)
    return st_error_set(err, ST_EUSAGE,
                        "--case '%s' matches only cases that do not run on "
                        "platform '%s'",
                        text, opts->platform);
  /* Some match runs on the platform but the manual mode dropped it, and
   * the rest do not run here: name both filters. */
  return st_error_set(err, ST_EUSAGE,
                      "--case '%s' matches no case that runs on platform "
                      "'%s' in manual mode '%s'",
                      text, opts->platform,
                      opts->manual == ST_MANUAL_ONLY ? "only" : "exclude");
}

/* Long because: the selection is three passes over one set of locals
 * (parse the selectors, match every case of every scene against them,
 * report the first selector that matched nothing) with one cleanup
 * path. */
st_status st_select_cases(const st_scene_set *set, const st_run_options *opts,
                          st_case_ref **out, size_t *count, st_error *err) {
  selector *sels = NULL;
  const char **names = NULL;
  st_case_ref *refs = NULL;
  size_t n_sels, n_refs = 0, cap = 0;
  size_t s, c, k;
  st_status rc = ST_OK;
  st_run_options o;

  *out = NULL;
  *count = 0;
  if ((rc = st__run_options_take(opts, &o, err)) != ST_OK)
    return rc;
  n_sels = o.n_selectors;
  if (o.platform == NULL)
    o.platform = "cpu";
  if (n_sels > 0) {
    sels = calloc(n_sels, sizeof *sels);
    if (sels == NULL)
      return st_error_set(err, ST_ENOMEM, "out of memory");
  }
  if (o.use_only_cases && o.n_only_cases > 0) {
    names = malloc(o.n_only_cases * sizeof *names);
    if (names == NULL) {
      rc = st_error_set(err, ST_ENOMEM, "out of memory");
      goto out;
    }
    memcpy(names, o.only_cases, o.n_only_cases * sizeof *names);
    qsort(names, o.n_only_cases, sizeof *names, cmp_str);
  }
  for (k = 0; k < n_sels; k++) {
    const char *text = o.selectors[k];
    const char *sep = strstr(text, "::");
    if (sep != NULL) {
      sels[k].scene = strndup(text, (size_t)(sep - text));
      sels[k].kase = strdup(sep + 2);
    } else {
      sels[k].scene = strdup(text);
      sels[k].kase = strdup("");
    }
    if (sels[k].scene == NULL || sels[k].kase == NULL) {
      rc = st_error_set(err, ST_ENOMEM, "out of memory");
      goto out;
    }
    find_literals(set, &sels[k]);
  }

  for (s = 0; s < st_scene_set_count(set); s++) {
    const st_scene *scene = st_scene_set_get(set, s);
    const char *sname = st_scene_name(scene);
    for (c = 0; c < st_scene_case_count(scene); c++) {
      const char *cname = st_scene_case_name(scene, c);
      int manual, runs, keep = keep_case(scene, c, &o, &manual, &runs);
      int hit = n_sels == 0;
      for (k = 0; k < n_sels; k++) {
        if (!part_matches(sels[k].scene, sels[k].scene_literal, sname) ||
            !part_matches(sels[k].kase, sels[k].kase_literal, cname))
          continue;
        hit = 1;
        sels[k].matched++;
        sels[k].manual += manual != 0;
        sels[k].runs_on += runs != 0;
        sels[k].selected += keep != 0;
      }
      if (!hit || !keep)
        continue;
      if (o.use_only_cases &&
          (names == NULL || !named(names, o.n_only_cases, sname, cname)))
        continue;
      if (o.case_filter != NULL && !o.case_filter(o.case_filter_data, scene, c))
        continue;
      if (o.shard_total > 1 && !o.shard_preselected &&
          st_shard_hash(sname, cname) % o.shard_total != o.shard_index)
        continue;
      st_case_ref *grown =
          st__array_grow(refs, &cap, n_refs, sizeof *grown, 16);
      if (grown == NULL) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
        goto out;
      }
      refs = grown;
      refs[n_refs].scene = scene;
      refs[n_refs].index = c;
      n_refs++;
    }
  }

  /* Report the first selector (in command-line order) that selected
   * nothing: every selector must select something. */
  for (k = 0; k < n_sels; k++) {
    if (sels[k].selected == 0) {
      rc = selector_error(set, &o, o.selectors[k], &sels[k], err);
      goto out;
    }
  }
  if (o.n_first_cases > 0 && n_refs > 1 &&
      (rc = failed_first(refs, n_refs, &o, err)) != ST_OK)
    goto out;
  *out = refs;
  *count = n_refs;
  refs = NULL;

out:
  for (k = 0; k < n_sels && sels != NULL; k++) {
    free(sels[k].scene);
    free(sels[k].kase);
  }
  free(sels);
  free(names);
  free(refs);
  return rc;
}
