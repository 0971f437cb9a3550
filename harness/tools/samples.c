/* SPDX-License-Identifier: MIT */
/* Reading a side of a measurement (see samples.h). Samples are keyed by
 * (file, pid) for the cold rule and for conditions: two runs in two files
 * may reuse a pid. Groups keep the order in which their (scene, case,
 * phase) first appeared, which is the order the phases ran. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "report/json.h"
#include "tools/hashidx.h"
#include "tools/samples.h"
#include "tools/stats.h"

typedef struct sample {
  size_t file;
  long pid, iter;
  int round;
  size_t group; /* index into groups */
  double value;
  int dropped;
  long cond; /* the record it ran under; -1: its process's first */
} sample;

typedef struct proc {
  size_t file;
  long pid;
  size_t first;     /* the process's first record: what it ran under
                       before it (samples whose cond is -1) */
  size_t condition; /* the process's latest record */
} proc;

/* A distinct (condition, pid): what keeps a condition's pids distinct. */
typedef struct cond_pid {
  size_t condition;
  long pid;
} cond_pid;

struct st__side {
  sample *samples;
  size_t n_samples, cap_samples;
  st__group *groups;
  size_t n_groups, cap_groups;
  size_t *group_case; /* per group: the first group of its (scene, case) */
  size_t cap_group_case;
  st__condition *conds;
  size_t n_conds, cap_conds;
  proc *procs; /* (file, pid) -> condition */
  size_t n_procs, cap_procs;
  cond_pid *cps;
  size_t n_cps, cap_cps;
  /* Hash indexes over the arrays above (docs/measuring.md: linear in the
   * lines of a log). */
  st__hashidx group_idx; /* (scene, case, phase) -> group */
  st__hashidx case_idx;  /* (scene, case) -> its first group */
  st__hashidx proc_idx;  /* (file, pid) -> proc */
  st__hashidx cond_idx;  /* record -> condition */
  st__hashidx cp_idx;    /* (condition, pid) -> cps */
  size_t lines, records;
  /* The distinct environment fingerprints (docs/bench.md), as their text
   * after "fingerprint"; owned. */
  char **fps;
  size_t n_fps;
};

/* st__array_grow (base/util.h) for the many arrays here: room for need
 * elements in *p, -1 (nothing changed) when out of memory. */
static int grow(void **p, size_t *cap, size_t need, size_t size) {
  void *q = st__array_grow(*p, cap, need - 1, size, 16);
  if (q == NULL)
    return -1;
  *p = q;
  return 0;
}

static char *dup_text(st__tl_text t) {
  char *d = malloc(t.n + 1);
  if (d != NULL) {
    memcpy(d, t.s, t.n);
    d[t.n] = '\0';
  }
  return d;
}

/* Whether the C string s is exactly the bytes of t. */
static int text_is(const char *s, st__tl_text t) {
  return strncmp(s, t.s, t.n) == 0 && s[t.n] == '\0';
}

/* The key of a group: scene, case and (with phase.s) phase. */
typedef struct group_key {
  const st__side *side;
  st__tl_text scene, kase, phase;
} group_key;

static uint64_t group_hash(const group_key *k, int with_phase) {
  uint64_t h = st__hash_bytes(ST__HASH_INIT, k->scene.s, k->scene.n);
  h = st__hash_bytes(h, k->kase.s, k->kase.n);
  return with_phase ? st__hash_bytes(h, k->phase.s, k->phase.n) : h;
}

static int group_eq(const void *ctx, size_t pos) {
  const group_key *k = ctx;
  const st__group *g = &k->side->groups[pos];
  return text_is(g->phase, k->phase) && text_is(g->kase, k->kase) &&
         text_is(g->scene, k->scene);
}

static int case_eq(const void *ctx, size_t pos) {
  const group_key *k = ctx;
  const st__group *g = &k->side->groups[pos];
  return text_is(g->kase, k->kase) && text_is(g->scene, k->scene);
}

static long find_group(const st__side *s, st__tl_text scene, st__tl_text kase,
                       st__tl_text phase) {
  group_key k;
  size_t i;
  k.side = s;
  k.scene = scene;
  k.kase = kase;
  k.phase = phase;
  i = st__hashidx_find(&s->group_idx, group_hash(&k, 1), group_eq, &k);
  return i == SIZE_MAX ? -1 : (long)i;
}

static st_status new_group(st__side *s, const group_key *k) {
  st__group *g;
  size_t gi = s->n_groups, first;
  if (grow((void **)&s->groups, &s->cap_groups, gi + 1, sizeof *s->groups) !=
          0 ||
      grow((void **)&s->group_case, &s->cap_group_case, gi + 1,
           sizeof *s->group_case) != 0)
    return ST_ENOMEM;
  g = &s->groups[gi];
  memset(g, 0, sizeof *g);
  g->scene = dup_text(k->scene);
  g->kase = dup_text(k->kase);
  g->phase = dup_text(k->phase);
  s->n_groups++; /* freed by st__side_free even when half made */
  if (g->scene == NULL || g->kase == NULL || g->phase == NULL)
    return ST_ENOMEM;
  first = st__hashidx_find(&s->case_idx, group_hash(k, 0), case_eq, k);
  if (first == SIZE_MAX) {
    first = gi;
    if (st__hashidx_add(&s->case_idx, group_hash(k, 0), gi) != ST_OK)
      return ST_ENOMEM;
  }
  s->group_case[gi] = first;
  /* Added last: an index never names a group that is not whole. */
  return st__hashidx_add(&s->group_idx, group_hash(k, 1), gi);
}

/* (file, pid) keys of procs. */
typedef struct proc_key {
  const st__side *side;
  size_t file;
  long pid;
} proc_key;

static uint64_t proc_hash(size_t file, long pid) {
  return st__hash_u64(st__hash_u64(ST__HASH_INIT, file), (uint64_t)pid);
}

static int proc_eq(const void *ctx, size_t pos) {
  const proc_key *k = ctx;
  const proc *p = &k->side->procs[pos];
  return p->file == k->file && p->pid == k->pid;
}

static st_status add_sample(st__side *s, size_t file, const st__tl_phase *ph,
                            st__tl_text phase, uint64_t value) {
  long gi = find_group(s, ph->scene, ph->kase, phase);
  sample *sm;
  if (gi < 0) {
    group_key k;
    st_status rc;
    k.side = s;
    k.scene = ph->scene;
    k.kase = ph->kase;
    k.phase = phase;
    if ((rc = new_group(s, &k)) != ST_OK)
      return rc;
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
  {
    proc_key pk;
    size_t i;
    pk.side = s;
    pk.file = file;
    pk.pid = ph->pid;
    i = st__hashidx_find(&s->proc_idx, proc_hash(file, ph->pid), proc_eq, &pk);
    if (i != SIZE_MAX)
      sm->cond = (long)s->procs[i].condition;
  }
  return ST_OK;
}

static int cp_eq(const void *ctx, size_t pos) {
  const proc_key *k = ctx; /* file holds the condition */
  const cond_pid *c = &k->side->cps[pos];
  return c->condition == k->file && c->pid == k->pid;
}

/* A record's hash over what st__timelog_record_same compares: the
 * watched modules summed, so that their order does not count. */
static uint64_t record_hash(const st__tl_record *r) {
  uint64_t h = st__hash_bytes(ST__HASH_INIT, r->setting, strlen(r->setting));
  uint64_t mods = 0;
  size_t i;
  h = st__hash_bytes(h, r->raw, strlen(r->raw));
  h = st__hash_bytes(h, r->effective, strlen(r->effective));
  for (i = 0; i < r->n_modules; i++)
    mods += st__hash_u64(st__hash_bytes(ST__HASH_INIT, r->modules[i].field,
                                        strlen(r->modules[i].field)),
                         (uint64_t)r->modules[i].loaded);
  return st__hash_u64(st__hash_u64(h, r->n_modules), mods);
}

typedef struct record_key {
  const st__side *side;
  const st__tl_record *r;
} record_key;

static int record_eq(const void *ctx, size_t pos) {
  const record_key *k = ctx;
  return st__timelog_record_same(k->side->conds[pos].record, k->r);
}

/* A process's record line comes in its case's `record` phase, after the
 * case's args and golden lines: those samples ran under it too. Tags
 * with c the trailing samples of (file, pid) that belong to the case of
 * its last sample (same scene, case and iteration). Walks back to that
 * process's previous case only. */
static void tag_case(st__side *s, size_t file, long pid, size_t c) {
  size_t kase = SIZE_MAX;
  long iter = 0;
  for (size_t k = s->n_samples; k-- > 0;) {
    sample *sm = &s->samples[k];
    size_t sk = s->group_case[sm->group];
    if (sm->file != file || sm->pid != pid)
      continue;
    if (kase == SIZE_MAX) {
      kase = sk;
      iter = sm->iter;
    } else if (sm->iter != iter || sk != kase) {
      return;
    }
    sm->cond = (long)c;
  }
}

/* Condition c's pids gain pid (each once). */
static st_status add_pid(st__side *s, size_t c, long pid) {
  st__condition *cd = &s->conds[c];
  proc_key pk;
  long *grown;
  pk.side = s;
  pk.file = c;
  pk.pid = pid;
  if (st__hashidx_find(&s->cp_idx, proc_hash(c, pid), cp_eq, &pk) != SIZE_MAX)
    return ST_OK;
  if (grow((void **)&s->cps, &s->cap_cps, s->n_cps + 1, sizeof *s->cps) != 0 ||
      st__hashidx_add(&s->cp_idx, proc_hash(c, pid), s->n_cps) != ST_OK)
    return ST_ENOMEM;
  s->cps[s->n_cps].condition = c;
  s->cps[s->n_cps].pid = pid;
  s->n_cps++;
  /* Doubled at 4, 8, 16, ...: a condition of many processes. */
  if (cd->n_pids < 4 ? cd->n_pids == 0 : (cd->n_pids & (cd->n_pids - 1)) == 0) {
    size_t want = cd->n_pids < 4 ? 4 : cd->n_pids * 2;
    grown = st__array_resize(cd->pids, want, sizeof *cd->pids);
    if (grown == NULL)
      return ST_ENOMEM;
    cd->pids = grown;
  }
  cd->pids[cd->n_pids++] = pid;
  return ST_OK;
}

static st_status add_record(st__side *s, size_t file, const st__tl_record *r) {
  proc_key pk;
  record_key rk;
  uint64_t rh = record_hash(r);
  size_t i, c;
  pk.side = s;
  pk.file = file;
  pk.pid = r->pid;
  rk.side = s;
  rk.r = r;
  i = st__hashidx_find(&s->proc_idx, proc_hash(file, r->pid), proc_eq, &pk);
  c = st__hashidx_find(&s->cond_idx, rh, record_eq, &rk);
  if (c == SIZE_MAX) {
    c = s->n_conds;
    if (grow((void **)&s->conds, &s->cap_conds, s->n_conds + 1,
             sizeof *s->conds) != 0 ||
        st__hashidx_add(&s->cond_idx, rh, c) != ST_OK)
      return ST_ENOMEM;
    size_t size =
        offsetof(st__tl_record, modules) + r->n_modules * sizeof r->modules[0];
    memset(&s->conds[c], 0, sizeof s->conds[c]);
    if ((s->conds[c].record = malloc(size)) == NULL)
      return ST_ENOMEM;
    memcpy(s->conds[c].record, r, size);
    s->n_conds++;
  }
  if (i == SIZE_MAX) {
    i = s->n_procs;
    if (grow((void **)&s->procs, &s->cap_procs, s->n_procs + 1,
             sizeof *s->procs) != 0 ||
        st__hashidx_add(&s->proc_idx, proc_hash(file, r->pid), i) != ST_OK)
      return ST_ENOMEM;
    s->procs[i].file = file;
    s->procs[i].pid = r->pid;
    s->procs[i].first = c;
    s->n_procs++;
  } else if (s->procs[i].condition != c) {
    /* Another record from the same process: a case's env changed what
     * the record reads (docs/measuring.md); it covers its own case's
     * earlier lines and what the process logs from now on. */
    tag_case(s, file, r->pid, c);
  }
  s->procs[i].condition = c;
  return add_pid(s, c, r->pid);
}

/* A `[TIMING] fingerprint ...` line: its text kept once per side. */
static st_status add_fingerprint(st__side *s, const char *line) {
  static const char tok[] = "[TIMING] fingerprint ";
  const char *at = strstr(line, tok);
  char *text, **p;
  size_t i;
  if (at == NULL)
    return ST_OK;
  at += sizeof tok - 1;
  if ((text = strndup(at, strcspn(at, "\r\n"))) == NULL)
    return ST_ENOMEM;
  for (i = 0; i < s->n_fps; i++)
    if (strcmp(s->fps[i], text) == 0) {
      free(text);
      return ST_OK;
    }
  if ((p = st__array_resize(s->fps, s->n_fps + 1, sizeof *p)) == NULL) {
    free(text);
    return ST_ENOMEM;
  }
  s->fps = p;
  s->fps[s->n_fps++] = text;
  return ST_OK;
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
      rc = add_fingerprint(s, line);
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
      static const st__tl_text device = {"run.device", 10},
                               copy = {"run.copy", 8};
      int is_run = ph->name.n == 3 && memcmp(ph->name.s, "run", 3) == 0;
      if (strcmp(ph->status, "ok") != 0)
        break;
      rc = add_sample(s, file, ph, ph->name, ph->dur_ns);
      if (rc == ST_OK && is_run && ph->has_device)
        rc = add_sample(s, file, ph, device, ph->device_ns);
      if (rc == ST_OK && is_run && ph->has_copy)
        rc = add_sample(s, file, ph, copy, ph->copy_ns);
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

/* The first iteration a (file, pid, scene, case) logged. */
typedef struct first_iter {
  size_t file, kase; /* kase: the first group of the (scene, case) */
  long pid, iter;
} first_iter;

typedef struct first_key {
  const first_iter *items;
  size_t file, kase;
  long pid;
} first_key;

static uint64_t first_hash(size_t file, long pid, size_t kase) {
  return st__hash_u64(proc_hash(file, pid), kase);
}

static int first_eq(const void *ctx, size_t pos) {
  const first_key *k = ctx;
  const first_iter *f = &k->items[pos];
  return f->file == k->file && f->pid == k->pid && f->kase == k->kase;
}

/* docs/measuring.md: for each (pid, scene, case), round 0 of its first
 * iteration is cold and leaves the per-round phases. Keyed by (file,
 * pid). Two passes over the samples: the first iteration of each key,
 * then the drops. */
static st_status cold_rule(st__side *s) {
  first_iter *items = NULL;
  size_t n = 0, cap = 0, i;
  st__hashidx idx = {NULL, 0, 0};
  st_status rc = ST_OK;
  first_key k;

  for (i = 0; i < s->n_samples && rc == ST_OK; i++) {
    const sample *a = &s->samples[i];
    size_t at;
    uint64_t h;
    k.items = items;
    k.file = a->file;
    k.pid = a->pid;
    k.kase = s->group_case[a->group];
    h = first_hash(k.file, k.pid, k.kase);
    at = st__hashidx_find(&idx, h, first_eq, &k);
    if (at != SIZE_MAX) {
      if (a->iter < items[at].iter)
        items[at].iter = a->iter;
      continue;
    }
    if (grow((void **)&items, &cap, n + 1, sizeof *items) != 0 ||
        st__hashidx_add(&idx, h, n) != ST_OK) {
      rc = ST_ENOMEM;
      break;
    }
    items[n].file = k.file;
    items[n].pid = k.pid;
    items[n].kase = k.kase;
    items[n].iter = a->iter;
    n++;
  }
  for (i = 0; i < s->n_samples && rc == ST_OK; i++) {
    sample *a = &s->samples[i];
    size_t at;
    if (a->round != 0 || !per_round(s->groups[a->group].phase))
      continue;
    k.items = items;
    k.file = a->file;
    k.pid = a->pid;
    k.kase = s->group_case[a->group];
    at =
        st__hashidx_find(&idx, first_hash(k.file, k.pid, k.kase), first_eq, &k);
    if (at != SIZE_MAX && a->iter == items[at].iter)
      a->dropped = 1;
  }
  st__hashidx_free(&idx);
  free(items);
  return rc;
}

/* The record sample sm ran under: its own, else its process's first. */
static long condition_of(const st__side *s, const sample *sm) {
  proc_key k;
  size_t i;
  if (sm->cond >= 0)
    return sm->cond;
  k.side = s;
  k.file = sm->file;
  k.pid = sm->pid;
  i = st__hashidx_find(&s->proc_idx, proc_hash(sm->file, sm->pid), proc_eq, &k);
  return i == SIZE_MAX ? -1 : (long)s->procs[i].first;
}

typedef struct exec_sum {
  size_t file;
  long pid, iter;
  double sum;
  size_t rounds;
} exec_sum;

typedef struct exec_key {
  const exec_sum *items;
  size_t file;
  long pid, iter;
} exec_key;

static int exec_eq(const void *ctx, size_t pos) {
  const exec_key *k = ctx;
  const exec_sum *e = &k->items[pos];
  return e->file == k->file && e->pid == k->pid && e->iter == k->iter;
}

/* The sum of a run group's rounds per (file, pid, iteration), over the
 * group's samples in[0..n). */
static st_status sum_runs(st__group *g, const sample *const *in, size_t n) {
  exec_sum *ex = NULL;
  size_t n_ex = 0, cap_ex = 0, best = 0, i;
  st__hashidx idx = {NULL, 0, 0};
  st_status rc = ST_OK;

  for (i = 0; i < n; i++) {
    const sample *sm = in[i];
    exec_key k;
    uint64_t h = st__hash_u64(proc_hash(sm->file, sm->pid), (uint64_t)sm->iter);
    size_t at;
    k.items = ex;
    k.file = sm->file;
    k.pid = sm->pid;
    k.iter = sm->iter;
    at = st__hashidx_find(&idx, h, exec_eq, &k);
    if (at == SIZE_MAX) {
      if (grow((void **)&ex, &cap_ex, n_ex + 1, sizeof *ex) != 0 ||
          st__hashidx_add(&idx, h, n_ex) != ST_OK) {
        rc = ST_ENOMEM;
        goto out;
      }
      at = n_ex++;
      memset(&ex[at], 0, sizeof ex[at]);
      ex[at].file = sm->file;
      ex[at].pid = sm->pid;
      ex[at].iter = sm->iter;
    }
    ex[at].sum += sm->value;
    ex[at].rounds++;
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
out:
  st__hashidx_free(&idx);
  free(ex);
  return rc;
}

/* Each group's statistics. The kept samples are sorted into one array by
 * group (a counting sort, file order kept within a group), so the work is
 * linear in the samples, not groups x samples. */
static st_status summarise(st__side *s) {
  size_t gi, i, *start = NULL;
  const sample **by = NULL;
  st_status rc = ST_OK;

  if (s->n_groups == 0)
    return ST_OK;
  start = calloc(s->n_groups + 1, sizeof *start);
  by = malloc((s->n_samples ? s->n_samples : 1) * sizeof *by);
  if (start == NULL || by == NULL) {
    rc = ST_ENOMEM;
    goto out;
  }
  for (i = 0; i < s->n_samples; i++) {
    if (s->samples[i].dropped)
      s->groups[s->samples[i].group].dropped++;
    else
      start[s->samples[i].group + 1]++;
  }
  for (gi = 0; gi < s->n_groups; gi++)
    start[gi + 1] += start[gi];
  for (i = 0; i < s->n_samples; i++) {
    const sample *sm = &s->samples[i];
    st__group *g = &s->groups[sm->group];
    if (!sm->dropped)
      by[start[sm->group] + g->n++] = sm;
  }
  for (gi = 0; gi < s->n_groups && rc == ST_OK; gi++) {
    st__group *g = &s->groups[gi];
    const sample *const *in = by + start[gi];
    g->values = malloc((g->n ? g->n : 1) * sizeof *g->values);
    if (g->values == NULL) {
      rc = ST_ENOMEM;
      break;
    }
    for (i = 0; i < g->n; i++) {
      long c = condition_of(s, in[i]);
      g->values[i] = in[i]->value;
      if (c < 0 || c >= 32)
        g->unknown = 1;
      else
        g->conditions |= 1u << c;
    }
    if (strcmp(g->phase, "run") == 0)
      rc = sum_runs(g, in, g->n);
    st__stats_sort(g->values, g->n);
    if (g->n > 0) {
      g->min = g->values[0];
      g->max = g->values[g->n - 1];
      g->median = st__stats_median(g->values, g->n);
    }
  }
out:
  free(start);
  free(by);
  return rc;
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
      rc = cold_rule(s);
    if (rc == ST_OK)
      rc = summarise(s);
    if (rc != ST_OK)
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
  for (i = 0; i < s->n_conds; i++) {
    free(s->conds[i].pids);
    free(s->conds[i].record);
  }
  st__hashidx_free(&s->group_idx);
  st__hashidx_free(&s->case_idx);
  st__hashidx_free(&s->proc_idx);
  st__hashidx_free(&s->cond_idx);
  st__hashidx_free(&s->cp_idx);
  for (i = 0; i < s->n_fps; i++)
    free(s->fps[i]);
  free(s->fps);
  free(s->group_case);
  free(s->cps);
  free(s->groups);
  free(s->conds);
  free(s->procs);
  free(s->samples);
  free(s);
}

size_t st__side_lines(const st__side *s) { return s->lines; }
size_t st__side_records(const st__side *s) { return s->records; }
size_t st__side_fingerprint_count(const st__side *s) { return s->n_fps; }
const char *st__side_fingerprint(const st__side *s, size_t i) {
  return i < s->n_fps ? s->fps[i] : NULL;
}
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
  st__tl_text ts, tk, tp;
  long i;
  ts.s = scene;
  ts.n = strlen(scene);
  tk.s = kase;
  tk.n = strlen(kase);
  tp.s = phase;
  tp.n = strlen(phase);
  i = find_group(s, ts, tk, tp);
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
  const char *const kv[] = {"scene", g->scene, "case",
                            g->kase, "phase",  g->phase};
  fputc('{', out);
  st__json_members(out, kv, 3);
}

static void json_record(FILE *out, const st__tl_record *r) {
  size_t i;
  const char *const kv[] = {"setting", r->setting,  "raw",
                            r->raw,    "effective", r->effective};
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
    json_record(out, c->record);
    fputs(", \"pids\": [", out);
    for (k = 0; k < c->n_pids; k++)
      fprintf(out, "%s%ld", k ? ", " : "", c->pids[k]);
    fputs("]}", out);
  }
  fputs("]", out);
}
