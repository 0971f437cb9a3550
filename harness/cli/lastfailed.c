/* SPDX-License-Identifier: MIT */
/* --last-failed and --failed-first's state (docs/cli.md#last-failed):
 * DIR/lastfailed (DIR .scenetest-cache in the current directory, or
 * --cache-dir), the JSON object {"SCENE::CASE": true, ...} that pytest's
 * cacheprovider keeps in .pytest_cache/v/cache/lastfailed. Updated after
 * every run as pytest updates it; written to a temporary file and
 * renamed, so a reader (another run) never sees half of it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/cli_internal.h"
#include "case/result.h"
#include "report/json.h"

/* The state is small; one larger than this is not ours. */
#define STATE_MAX (64u << 20)

typedef struct names {
  char **v;
  size_t n, cap;
} names;

static int add(names *l, char *s) {
  if (s == NULL)
    return -1;
  char **g = st__array_grow(l->v, &l->cap, l->n, sizeof *g, 16);
  if (g == NULL) {
    free(s);
    return -1;
  }
  l->v = g;
  l->v[l->n++] = s;
  return 0;
}

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

static void put_utf8(char **o, unsigned cp) {
  char *q = *o;
  if (cp < 0x80) {
    *q++ = (char)cp;
  } else if (cp < 0x800) {
    *q++ = (char)(0xc0 | (cp >> 6));
    *q++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *q++ = (char)(0xe0 | (cp >> 12));
    *q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *q++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *q++ = (char)(0xf0 | (cp >> 18));
    *q++ = (char)(0x80 | ((cp >> 12) & 0x3f));
    *q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *q++ = (char)(0x80 | (cp & 0x3f));
  }
  *o = q;
}

static int hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

/* A JSON string at *pp (past the quote is where *pp ends up); NULL when
 * malformed or out of memory (*oom says which). */
static char *json_str(const char **pp, int *oom) {
  const char *p = *pp;
  char *out, *o;
  if (*p++ != '"')
    return NULL;
  /* A decoded string is never longer than its escaped form; measured to
   * its closing quote, not to the end of the file (a file of many keys
   * stays linear). */
  size_t len = 0;
  while (p[len] != '\0' && p[len] != '"')
    len += p[len] == '\\' && p[len + 1] != '\0' ? 2 : 1;
  if ((out = malloc(len + 1)) == NULL) {
    *oom = 1;
    return NULL;
  }
  for (o = out; *p != '"'; p++) {
    if ((unsigned char)*p < 0x20)
      goto bad; /* the end, or a raw control byte */
    if (*p != '\\') {
      *o++ = *p;
      continue;
    }
    p++;
    switch (*p) {
    case '"':
    case '\\':
    case '/':
      *o++ = *p;
      break;
    case 'b':
      *o++ = '\b';
      break;
    case 'f':
      *o++ = '\f';
      break;
    case 'n':
      *o++ = '\n';
      break;
    case 'r':
      *o++ = '\r';
      break;
    case 't':
      *o++ = '\t';
      break;
    case 'u': {
      unsigned cp, lo;
      if (hex4(p + 1, &cp) != 0)
        goto bad;
      p += 4;
      if (cp >= 0xd800 && cp < 0xdc00) {
        if (p[1] != '\\' || p[2] != 'u' || hex4(p + 3, &lo) != 0 ||
            lo < 0xdc00 || lo >= 0xe000)
          goto bad;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        p += 6;
      } else if (cp >= 0xdc00 && cp < 0xe000) {
        goto bad;
      }
      if (cp == 0)
        goto bad; /* a name holds no NUL */
      put_utf8(&o, cp);
      break;
    }
    default:
      goto bad;
    }
  }
  *o = '\0';
  *pp = p + 1;
  return out;
bad:
  free(out);
  return NULL;
}

/* {"NAME": true, ...} into l: 0, -1 not that shape, -2 out of memory. */
static int parse(const char *text, names *l) {
  const char *p = skip_ws(text);
  int oom = 0;
  if (*p++ != '{')
    return -1;
  p = skip_ws(p);
  if (*p == '}')
    return *skip_ws(p + 1) == '\0' ? 0 : -1;
  for (;;) {
    char *key = json_str(&p, &oom);
    if (key == NULL)
      return oom ? -2 : -1;
    p = skip_ws(p);
    if (*p != ':' || strncmp(skip_ws(p + 1), "true", 4) != 0) {
      free(key);
      return -1;
    }
    if (add(l, key) != 0)
      return -2;
    p = skip_ws(skip_ws(p + 1) + 4);
    if (*p == '}')
      return *skip_ws(p + 1) == '\0' ? 0 : -1;
    if (*p++ != ',')
      return -1;
    p = skip_ws(p);
  }
}

static char *join(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *s = malloc(len);
  if (s != NULL)
    snprintf(s, len, "%s/%s", dir, name);
  return s;
}

int st__lastfailed_read(const char *dir, char ***out, size_t *n) {
  char *path = join(dir, "lastfailed"), *text = NULL;
  names l = {NULL, 0, 0};
  FILE *f = NULL;
  size_t len;
  int rc = -1;
  struct stat sb;

  *out = NULL;
  *n = 0;
  if (path == NULL)
    return -2;
  if ((f = fopen(path, "re")) == NULL) {
    rc = errno == ENOENT ? 0 : -1;
    if (rc != 0)
      st_log(ST_LOG_WARNING,
             "%s: cannot read the last-failed state: %s; "
             "ignored",
             path, strerror(errno));
    goto out;
  }
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) ||
      sb.st_size > STATE_MAX) {
    st_log(ST_LOG_WARNING, "%s: not a last-failed state file; ignored", path);
    goto out;
  }
  if ((text = malloc((size_t)sb.st_size + 1)) == NULL) {
    rc = -2;
    goto out;
  }
  len = fread(text, 1, (size_t)sb.st_size, f);
  text[len] = '\0';
  rc = strlen(text) == len ? parse(text, &l) : -1;
  if (rc == -1)
    st_log(ST_LOG_WARNING,
           "%s: the last-failed state is corrupt (not a JSON "
           "object of \"SCENE::CASE\": true); ignored",
           path);
  if (rc == 0) {
    *out = l.v;
    *n = l.n;
    l.v = NULL;
    l.n = 0;
    rc = 1;
  }
out:
  if (rc == -2)
    fprintf(stderr, "scenetest: error: internal error: out of memory\n");
  st__names_free(l.v, l.n);
  if (f != NULL)
    fclose(f);
  free(text);
  free(path);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes name from v, whose first sorted entries are sorted (the old
 * state's), by shifting the rest down. */
static void drop(char **v, size_t *n, const char *name, size_t sorted) {
  char **hit = sorted > 0 ? bsearch(&name, v, sorted, sizeof *v, cmp_str)
                          : NULL; /* v may be NULL then */
  if (hit == NULL)
    return;
  free(*hit);
  memmove(hit, hit + 1, (size_t)(v + *n - hit - 1) * sizeof *v);
  (*n)--;
}

/* The .gitignore pytest also writes into its cache directory: nothing
 * in it belongs in version control. */
static int ensure_dir(const char *dir) {
  char *ign;
  FILE *f;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return -1;
  if ((ign = join(dir, ".gitignore")) == NULL)
    return -1;
  if (access(ign, F_OK) != 0 && (f = fopen(ign, "we")) != NULL) {
    fputs("# Created by scenetest automatically.\n*\n", f);
    fclose(f);
  }
  free(ign);
  return 0;
}

/* The run's results into l, the old state sorted: passes leave it, then
 * every failure enters it. 0, or -1 out of memory. */
static int update(names *l, const st_run_result *run) {
  size_t i, k, count = st_run_result_count(run);
  int pass;
  /* Passes leave the old set; then every failure enters it. Under
   * --repeat a case that failed in any iteration stays failed (the
   * failures are added after all the passes are taken out). Sorting once
   * keeps a run of many cases, repeated, O(n log n). */
  for (pass = 0; pass < 2; pass++) {
    size_t before = l->n;
    for (i = 0; i < count; i++) {
      const st_case_result *r = st_run_result_get(run, i);
      st_case_status s;
      char *id;
      size_t len;
      int failed;
      if (r == NULL || (s = st_case_result_status(r)) == ST_CASE_SKIP)
        continue;
      failed = s == ST_CASE_FAIL || s == ST_CASE_ERROR || s == ST_CASE_XPASS;
      if (failed != (pass == 1))
        continue;
      len =
          strlen(st_case_result_scene(r)) + strlen(st_case_result_case(r)) + 3;
      if ((id = malloc(len)) == NULL)
        return -1;
      snprintf(id, len, "%s::%s", st_case_result_scene(r),
               st_case_result_case(r));
      if (!failed) {
        drop(l->v, &l->n, id, before);
        before = l->n;
        free(id);
      } else if (add(l, id) != 0) {
        return -1;
      }
    }
  }
  if (l->n > 1)
    qsort(l->v, l->n, sizeof *l->v, cmp_str);
  for (i = 1, k = l->n > 0; i < l->n; i++) {
    if (strcmp(l->v[i], l->v[k - 1]) == 0)
      free(l->v[i]);
    else
      l->v[k++] = l->v[i];
  }
  l->n = k;
  return 0;
}

int st__lastfailed_write(const char *dir, char *const *old, size_t n_old,
                         const st_run_result *run) {
  names l = {NULL, 0, 0};
  char *path = NULL, *tmp = NULL;
  size_t i;
  FILE *f = NULL;
  int rc = -1;

  for (i = 0; i < n_old; i++)
    if (add(&l, strdup(old[i])) != 0)
      goto out;
  if (l.n > 1)
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
  if (update(&l, run) != 0)
    goto out;
  if (ensure_dir(dir) != 0) {
    st_log(ST_LOG_WARNING,
           "cannot create the cache directory '%s': %s; the "
           "last-failed state is not saved",
           dir, strerror(errno));
    goto out;
  }
  if ((path = join(dir, "lastfailed")) == NULL ||
      (tmp = malloc(strlen(path) + 32)) == NULL)
    goto out;
  sprintf(tmp, "%s.tmp.%ld", path, (long)getpid());
  if ((f = fopen(tmp, "we")) == NULL) {
    st_log(ST_LOG_WARNING,
           "cannot write '%s': %s; the last-failed state is "
           "not saved",
           tmp, strerror(errno));
    goto out;
  }
  fputc('{', f);
  for (i = 0; i < l.n; i++) {
    fputs(i > 0 ? ",\n  " : "\n  ", f);
    st__json_string(f, l.v[i]);
    fputs(": true", f);
  }
  fputs(l.n > 0 ? "\n}\n" : "}\n", f);
  if (ferror(f) | (fclose(f) != 0)) {
    f = NULL;
    st_log(ST_LOG_WARNING,
           "writing '%s' failed; the last-failed state is "
           "not saved",
           tmp);
    unlink(tmp);
    goto out;
  }
  f = NULL;
  if (rename(tmp, path) != 0) {
    st_log(ST_LOG_WARNING,
           "cannot rename '%s' to '%s': %s; the last-failed "
           "state is not saved",
           tmp, path, strerror(errno));
    unlink(tmp);
    goto out;
  }
  rc = 0;
out:
  st__names_free(l.v, l.n);
  free(path);
  free(tmp);
  return rc;
}
