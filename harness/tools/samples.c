/* SPDX-License-Identifier: MIT */
/* Reading a side of a measurement (see samples.h). Samples are keyed by
 * (file, pid) for the cold rule and for conditions: two runs in two files
 * may reuse a pid. Groups keep the order in which their (scene, case,
 * phase) first appeared, which is the order the phases ran. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/json.h"
#include "tools/samples.h"
#include "tools/stats.h"

typedef struct sample {
  size_t file;
  long pid, iter;
  int round;
  size_t group; /* index into groups */
  double value;
  int dropped;
  long cond; /* the record it ran under; -1: none (yet) */
} sample;

typedef struct proc {
  size_t file;
  long pid;
  size_t condition; /* the process's latest record */
} proc;

struct st__side {
  sample *samples;
  size_t n_samples, cap_samples;
  st__group *groups;
  size_t n_groups, cap_groups;
  st__condition *conds;
  size_t n_conds, cap_conds;
  proc *procs; /* (file, pid) -> condition */
  size_t n_procs, cap_procs;
  size_t lines, records;
};

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  size_t c = *cap ? *cap : 16;
  void *q;
  if (need <= *cap)
    return 0;
  while (c < need)
    c *= 2;
  q = realloc(*p, c * size);
  if (q == NULL)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d != NULL)
    memcpy(d, s, n);
  return d;
}

static long find_group(const st__side *s, const char *scene, const char *kase,
                       const char *phase) {
  size_t i;
  /* Newest first: consecutive lines mostly hit the last groups. */
  for (i = s->n_groups; i-- > 0;) {
    const st__group *g = &s->groups[i];
    if (strcmp(g->phase, phase) == 0 && strcmp(g->kase, kase) == 0 &&
        strcmp(g->scene, scene) == 0)
      return (long)i;
  }
  return -1;
}

static st_status add_sample(st__side *s, size_t file, const st__tl_phase *ph,
                            const char *phase, uint64_t value) {
  long gi = find_group(s, ph->scene, ph->kase, phase);
  sample *sm;
  if (gi < 0) {
    st__group *g;
    if (grow((void **)&s->groups, &s->cap_groups, s->n_groups + 1,
             sizeof *s->groups) != 0)
      return ST_ENOMEM;
    g = &s->groups[s->n_groups];
    memset(g, 0, sizeof *g);
    g->scene = dup_str(ph->scene);
    g->kase = dup_str(ph->kase);
    g->phase = dup_str(phase);
    s->n_groups++; /* freed by st__side_free even when half made */
    if (g->scene == NULL || g->kase == NULL || g->phase == NULL)
      return ST_ENOMEM;
    gi = (long)(s->n_groups - 1);
  }
  if (grow((void **)&s->samples, &s->cap_samples, s->n_samples + 1,
           sizeof *s->samples) != 0)
    return ST_ENOMEM;
  sm = &s->samples[s->n_samples++];
  sm->file = file;
  sm->pid = ph->pid;
  sm->iter = ph->iter;
  sm->round = ph->round;
  sm->group = (size_t)gi;
  sm->value = (double)value;
  sm->dropped = 0;
  sm->cond = -1;
  for (size_t i = s->n_procs; i-- > 0;)
    if (s->procs[i].file == file && s->procs[i].pid == ph->pid) {
      sm->cond = (long)s->procs[i].condition;
      break;
    }
  return ST_OK;
}

/* A process's record line comes in its case's `record` phase, after the
 * case's args and golden lines: those samples ran under it too. Tags
 * with c the trailing samples of (file, pid) that belong to the case of
 * its last sample (same scene, case and iteration). */
static void tag_case(st__side *s, size_t file, long pid, size_t c) {
  const st__group *g = NULL;
  long iter = 0;
  for (size_t k = s->n_samples; k-- > 0;) {
    sample *sm = &s->samples[k];
    const st__group *sg = &s->groups[sm->group];
    if (sm->file != file || sm->pid != pid)
      continue;
    if (g == NULL) {
      g = sg;
      iter = sm->iter;
    } else if (sm->iter != iter || strcmp(sg->scene, g->scene) != 0 ||
               strcmp(sg->kase, g->kase) != 0) {
      return;
    }
    sm->cond = (long)c;
  }
}

static st_status add_pid(st__condition *cd, long pid) {
  long *grown;
  for (size_t k = 0; k < cd->n_pids; k++)
    if (cd->pids[k] == pid)
      return ST_OK;
  grown = realloc(cd->pids, (cd->n_pids + 1) * sizeof *cd->pids);
  if (grown == NULL)
    return ST_ENOMEM;
  cd->pids = grown;
  cd->pids[cd->n_pids++] = pid;
  return ST_OK;
}

/* A record line: its condition (one per distinct record), the process's
 * current one from now on. A process's first record also covers what it
 * logged before it; a later one (a case's env changed what the record
 * reads: docs/measuring.md) covers its own case's earlier lines. */
static st_status add_record(st__side *s, size_t file,
                            const st__tl_record *r) {
  size_t i, c, k;
  for (i = 0; i < s->n_procs; i++)
    if (s->procs[i].file == file && s->procs[i].pid == r->pid)
      break;
  for (c = 0; c < s->n_conds; c++)
    if (st__timelog_record_same(&s->conds[c].record, r))
      break;
  if (c == s->n_conds) {
    if (grow((void **)&s->conds, &s->cap_conds, s->n_conds + 1,
             sizeof *s->conds) != 0)
      return ST_ENOMEM;
    memset(&s->conds[c], 0, sizeof s->conds[c]);
    s->conds[c].record = *r;
    s->n_conds++;
  }
  if (i == s->n_procs) {
    if (grow((void **)&s->procs, &s->cap_procs, s->n_procs + 1,
             sizeof *s->procs) != 0)
      return ST_ENOMEM;
    s->procs[i].file = file;
    s->procs[i].pid = r->pid;
    s->n_procs++;
    for (k = 0; k < s->n_samples; k++)
      if (s->samples[k].file == file && s->samples[k].pid == r->pid &&
          s->samples[k].cond < 0)
        s->samples[k].cond = (long)c;
  } else if (s->procs[i].condition != c) {
    tag_case(s, file, r->pid, c);
  }
  s->procs[i].condition = c;
  return add_pid(&s->conds[c], r->pid);
}

static st_status read_file(st__side *s, size_t file, const char *path,
                           FILE *err) {
  FILE *f = fopen(path, "re");
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  ssize_t n;
  st_status rc = ST_OK;

  if (f == NULL) {
    fprintf(err, "scenetest: error: cannot read '%s': %s\n", path,
            strerror(errno));
    return ST_EIO;
  }
  while ((n = getline(&line, &cap, f)) >= 0) {
    st__tl_line tl;
    lineno++;
    switch (st__timelog_parse(line, (size_t)n, &tl)) {
    case ST__TL_NONE:
      break;
    case ST__TL_BAD:
      fprintf(err, "%s:%zu:%zu: error: malformed TIMING line: %s\n", path,
              lineno, tl.column, tl.error);
      rc = ST_ELOAD;
      goto out;
    case ST__TL_RECORD:
      s->records++;
      rc = add_record(s, file, &tl.u.record);
      break;
    case ST__TL_PHASE: {
      const st__tl_phase *ph = &tl.u.phase;
      s->lines++;
      /* Only phases that completed measure the phase's work. */
      if (strcmp(ph->status, "ok") != 0)
        break;
      rc = add_sample(s, file, ph, ph->name, ph->dur_ns);
      if (rc == ST_OK && strcmp(ph->name, "run") == 0 && ph->has_device)
        rc = add_sample(s, file, ph, "run.device", ph->device_ns);
      if (rc == ST_OK && strcmp(ph->name, "run") == 0 && ph->has_copy)
        rc = add_sample(s, file, ph, "run.copy", ph->copy_ns);
      break;
    }
    }
    if (rc != ST_OK) {
      fprintf(err, "scenetest: error: out of memory reading '%s'\n", path);
      goto out;
    }
  }
  if (ferror(f)) {
    fprintf(err, "scenetest: error: reading '%s' failed\n", path);
    rc = ST_EIO;
  }
out:
  free(line);
  fclose(f);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static st_status read_path(st__side *s, size_t *file, const char *path,
                           FILE *err) {
  struct stat st;
  DIR *d;
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0, i;
  st_status rc = ST_OK;

  if (stat(path, &st) != 0) {
    fprintf(err, "scenetest: error: cannot read '%s': %s\n", path,
            strerror(errno));
    return ST_EIO;
  }
  if (!S_ISDIR(st.st_mode))
    return read_file(s, (*file)++, path, err);
  if ((d = opendir(path)) == NULL) {
    fprintf(err, "scenetest: error: cannot read directory '%s': %s\n", path,
            strerror(errno));
    return ST_EIO;
  }
  while ((e = readdir(d)) != NULL) {
    char *full;
    size_t len;
    if (e->d_name[0] == '.')
      continue;
    len = strlen(path) + strlen(e->d_name) + 2;
    if ((full = malloc(len)) == NULL ||
        grow((void **)&names, &cap, n + 1, sizeof *names) != 0) {
      free(full);
      rc = ST_ENOMEM;
      break;
    }
    snprintf(full, len, "%s/%s", path, e->d_name);
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(full);
      continue;
    }
    names[n++] = full;
  }
  closedir(d);
  if (rc == ST_OK) {
    qsort(names, n, sizeof *names, cmp_str);
    for (i = 0; i < n && rc == ST_OK; i++)
      rc = read_file(s, (*file)++, names[i], err);
  } else {
    fprintf(err, "scenetest: error: out of memory reading '%s'\n", path);
  }
  for (i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return rc;
}

static int per_round(const char *phase) {
  return strcmp(phase, "reset") == 0 || strncmp(phase, "run", 3) == 0 ||
         strcmp(phase, "compare") == 0;
}

/* SPEC §11: for each (pid, scene, case), round 0 of its first iteration
 * is cold and leaves the per-round phases. Keyed by (file, pid). */
static void cold_rule(st__side *s) {
  size_t i, j;
  for (i = 0; i < s->n_samples; i++) {
    sample *a = &s->samples[i];
    const st__group *ga = &s->groups[a->group];
    long first = a->iter;
    if (a->round != 0 || !per_round(ga->phase))
      continue;
    for (j = 0; j < s->n_samples; j++) {
      const sample *b = &s->samples[j];
      const st__group *gb = &s->groups[b->group];
      if (b->file == a->file && b->pid == a->pid && b->iter < first &&
          strcmp(gb->kase, ga->kase) == 0 && strcmp(gb->scene, ga->scene) == 0)
        first = b->iter;
    }
    if (a->iter == first)
      a->dropped = 1;
  }
}

typedef struct exec_sum {
  size_t file;
  long pid, iter;
  double sum;
  size_t rounds;
} exec_sum;

static st_status summarise(st__side *s) {
  size_t gi, i;
  /* Each group's array sized by a first count: one array of every sample
   * per group would be groups x samples. */
  for (i = 0; i < s->n_samples; i++)
    if (!s->samples[i].dropped)
      s->groups[s->samples[i].group].n++;
  for (gi = 0; gi < s->n_groups; gi++) {
    st__group *g = &s->groups[gi];
    g->values = malloc((g->n ? g->n : 1) * sizeof *g->values);
    g->n = 0;
    if (g->values == NULL)
      return ST_ENOMEM;
  }
  for (gi = 0; gi < s->n_groups; gi++) {
    st__group *g = &s->groups[gi];
    exec_sum *ex = NULL;
    size_t n_ex = 0, cap_ex = 0, best = 0;
    for (i = 0; i < s->n_samples; i++) {
      const sample *sm = &s->samples[i];
      long c;
      if (sm->group != gi)
        continue;
      if (sm->dropped) {
        g->dropped++;
        continue;
      }
      g->values[g->n++] = sm->value;
      c = sm->cond;
      if (c < 0 || c >= 32)
        g->unknown = 1;
      else
        g->conditions |= 1u << c;
      if (strcmp(g->phase, "run") == 0) {
        size_t k;
        for (k = 0; k < n_ex; k++)
          if (ex[k].file == sm->file && ex[k].pid == sm->pid &&
              ex[k].iter == sm->iter)
            break;
        if (k == n_ex) {
          if (grow((void **)&ex, &cap_ex, n_ex + 1, sizeof *ex) != 0) {
            free(ex);
            return ST_ENOMEM;
          }
          memset(&ex[k], 0, sizeof ex[k]);
          ex[k].file = sm->file;
          ex[k].pid = sm->pid;
          ex[k].iter = sm->iter;
          n_ex++;
        }
        ex[k].sum += sm->value;
        ex[k].rounds++;
      }
    }
    st__stats_sort(g->values, g->n);
    if (g->n > 0) {
      g->min = g->values[0];
      g->max = g->values[g->n - 1];
      g->median = st__stats_median(g->values, g->n);
    }
    /* Sums of cases with the same number of rounds only: the first
     * iteration of a process lost its cold round, and a sum over fewer
     * rounds is not the same quantity. */
    for (i = 0; i < n_ex; i++)
      if (ex[i].rounds > best)
        best = ex[i].rounds;
    for (i = 0; i < n_ex; i++) {
      if (ex[i].rounds != best)
        continue;
      if (!g->has_sum || ex[i].sum < g->min_sum)
        g->min_sum = ex[i].sum;
      g->has_sum = 1;
      g->sum_rounds = best;
    }
    free(ex);
  }
  return ST_OK;
}

st_status st__side_load(const char *const *paths, size_t n_paths,
                        int keep_first, FILE *err, st__side **out) {
  st__side *s = calloc(1, sizeof *s);
  size_t i, file = 0;
  st_status rc = ST_OK;

  *out = NULL;
  if (s == NULL) {
    fprintf(err, "scenetest: error: out of memory\n");
    return ST_ENOMEM;
  }
  for (i = 0; i < n_paths && rc == ST_OK; i++)
    rc = read_path(s, &file, paths[i], err);
  if (rc == ST_OK) {
    if (!keep_first)
      cold_rule(s);
    if ((rc = summarise(s)) != ST_OK)
      fprintf(err, "scenetest: error: out of memory\n");
  }
  if (rc != ST_OK) {
    st__side_free(s);
    return rc;
  }
  *out = s;
  return ST_OK;
}

void st__side_free(st__side *s) {
  size_t i;
  if (s == NULL)
    return;
  for (i = 0; i < s->n_groups; i++) {
    free(s->groups[i].scene);
    free(s->groups[i].kase);
    free(s->groups[i].phase);
    free(s->groups[i].values);
  }
  for (i = 0; i < s->n_conds; i++)
    free(s->conds[i].pids);
  free(s->groups);
  free(s->conds);
  free(s->procs);
  free(s->samples);
  free(s);
}

size_t st__side_lines(const st__side *s) { return s->lines; }
size_t st__side_records(const st__side *s) { return s->records; }
size_t st__side_condition_count(const st__side *s) { return s->n_conds; }
const st__condition *st__side_condition(const st__side *s, size_t i) {
  return i < s->n_conds ? &s->conds[i] : NULL;
}
size_t st__side_group_count(const st__side *s) { return s->n_groups; }
const st__group *st__side_group(const st__side *s, size_t i) {
  return i < s->n_groups ? &s->groups[i] : NULL;
}
const st__group *st__side_find(const st__side *s, const char *scene,
                               const char *kase, const char *phase) {
  long i = find_group(s, scene, kase, phase);
  return i < 0 ? NULL : &s->groups[i];
}

void st__record_print(FILE *f, const st__tl_record *r) {
  size_t i;
  fprintf(f, "setting=%s raw=%s effective=%s", r->setting, r->raw,
          r->effective);
  for (i = 0; i < r->n_modules; i++)
    fprintf(f, " %s=%s", r->modules[i].field,
            r->modules[i].loaded ? "true" : "false");
}

/* The value of a field of a record as printed; NULL when the record has
 * no such field (a module the other run watched). */
const char *st__record_field_value(const st__tl_record *r, const char *field) {
  size_t i;
  if (strcmp(field, "setting") == 0)
    return r->setting;
  if (strcmp(field, "raw") == 0)
    return r->raw;
  if (strcmp(field, "effective") == 0)
    return r->effective;
  for (i = 0; i < r->n_modules; i++)
    if (strcmp(r->modules[i].field, field) == 0)
      return r->modules[i].loaded ? "true" : "false";
  return NULL;
}

void st__duration_print(FILE *f, double ns) {
  if (ns < 1e3)
    fprintf(f, "%.0f ns", ns);
  else if (ns < 1e6)
    fprintf(f, "%.2f us", ns / 1e3);
  else if (ns < 1e9)
    fprintf(f, "%.2f ms", ns / 1e6);
  else
    fprintf(f, "%.3f s", ns / 1e9);
}

void st__condition_label(char *buf, size_t size, size_t i) {
  if (i < 26)
    snprintf(buf, size, "%c", (char)('A' + i));
  else
    snprintf(buf, size, "C%u", (unsigned)((i + 1) % 1000000u));
}

const st__group *st__side_only(const st__side *a, const st__side *b,
                               size_t *i) {
  size_t n = st__side_group_count(a);
  while (*i < n) {
    const st__group *g = st__side_group(a, (*i)++);
    if (st__side_find(b, g->scene, g->kase, g->phase) == NULL)
      return g;
  }
  return NULL;
}

void st__group_json_open(FILE *out, const st__group *g) {
  const char *const kv[] = {"scene", g->scene, "case", g->kase,
                            "phase", g->phase};
  fputc('{', out);
  st__json_members(out, kv, 3);
}

static void json_record(FILE *out, const st__tl_record *r) {
  size_t i;
  const char *const kv[] = {"setting", r->setting, "raw", r->raw,
                            "effective", r->effective};
  fputc('{', out);
  st__json_members(out, kv, 3);
  fputs(", \"fields\": {", out);
  for (i = 0; i < r->n_modules; i++) {
    fputs(i ? ", " : "", out);
    st__json_string(out, r->modules[i].field);
    fprintf(out, ": %s", r->modules[i].loaded ? "true" : "false");
  }
  fputs("}}", out);
}

void st__conditions_json(FILE *out, const st__side *s) {
  size_t i, k, n = st__side_condition_count(s);
  fputs("[", out);
  for (i = 0; i < n; i++) {
    const st__condition *c = st__side_condition(s, i);
    char l[16];
    st__condition_label(l, sizeof l, i);
    fputs(i ? ", " : "", out);
    fputs("{\"id\": ", out);
    st__json_string(out, l);
    fputs(", \"record\": ", out);
    json_record(out, &c->record);
    fputs(", \"pids\": [", out);
    for (k = 0; k < c->n_pids; k++)
      fprintf(out, "%s%ld", k ? ", " : "", c->pids[k]);
    fputs("]}", out);
  }
  fputs("]", out);
}

