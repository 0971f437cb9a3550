/* SPDX-License-Identifier: MIT */
/* The configuration file's YAML (docs/cli.md#the-configuration-file): one
 * flat mapping read event by event (scene/yaml_tree.h's reader of
 * libyaml's events), handed on as plain strings and positions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "scene/config_file.h"
#include "scene/yaml_tree.h"

#define CONFIG_MAX_BYTES ((size_t)1 << 20)

typedef struct reader {
  const char *path;
  st__yevents *events;
  st__yevent ev;
  st_error *err;
} reader;

static st_status fail_at(reader *r, int line, int col, const char *msg,
                         const char *arg) {
  return st_error_set_at(r->err, ST_EUSAGE, r->path, line, col, msg, arg);
}

/* The next event into r->ev (the previous one freed). */
static st_status next(reader *r) {
  const char *problem = NULL;
  int line = 0, col = 0;
  int rc = st__yevents_next(r->events, &r->ev, &problem, &line, &col);
  if (rc == -2)
    return ST_ENOMEM;
  if (rc != 0)
    return fail_at(r, line, col, "%s", problem ? problem : "bad YAML");
  return ST_OK;
}

/* A scalar event as a plain value: no tag, anchor or alias. */
static st_status scalar_ok(reader *r) {
  const st__yevent *e = &r->ev;
  if (e->type == ST__YE_ALIAS)
    return fail_at(r, e->line, e->col, "%s",
                   "aliases are not allowed in the "
                   "configuration file");
  if (e->type != ST__YE_SCALAR)
    return fail_at(r, e->line, e->col, "%s",
                   "expected a scalar (a value or a list of values)");
  if (e->has_anchor || e->has_tag)
    return fail_at(r, e->line, e->col, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  return ST_OK;
}

static st_status add_value(st__config_entry *en, const st__yevent *e) {
  size_t n = en->n + 1;
  char **v = st__array_resize(en->values, n, sizeof *v);
  if (v == NULL)
    return ST_ENOMEM;
  en->values = v;
  int *l = st__array_resize(en->vline, n, sizeof *l);
  if (l == NULL)
    return ST_ENOMEM;
  en->vline = l;
  int *c = st__array_resize(en->vcol, n, sizeof *c);
  if (c == NULL)
    return ST_ENOMEM;
  en->vcol = c;
  v[en->n] = strndup(e->value, e->len);
  if (v[en->n] == NULL)
    return ST_ENOMEM;
  l[en->n] = e->line;
  c[en->n] = e->col;
  en->n = n;
  return ST_OK;
}

/* The next item of a sequence or mapping: *done at its end event (of
 * type end), else a scalar (scalar_ok says why anything else is not). */
static st_status next_scalar(reader *r, int end, int *done) {
  st_status rc = next(r);
  *done = rc == ST_OK && (int)r->ev.type == end;
  if (rc != ST_OK || *done)
    return rc;
  return scalar_ok(r);
}

/* One key's value: a scalar, or a sequence of scalars. */
static st_status read_value(reader *r, st__config_entry *en) {
  st_status rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if (r->ev.type != ST__YE_SEQ_START) {
    if ((rc = scalar_ok(r)) != ST_OK)
      return rc;
    return add_value(en, &r->ev);
  }
  if (r->ev.has_anchor || r->ev.has_tag)
    return fail_at(r, r->ev.line, r->ev.col, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  en->is_list = 1;
  for (int done;;) {
    if ((rc = next_scalar(r, ST__YE_SEQ_END, &done)) != ST_OK || done)
      return rc;
    if ((rc = add_value(en, &r->ev)) != ST_OK)
      return rc;
  }
}

static st_status read_mapping(reader *r, st__config_file *out) {
  st_status rc;
  for (int done;;) {
    if ((rc = next_scalar(r, ST__YE_MAP_END, &done)) != ST_OK || done)
      return rc;
    for (size_t i = 0; i < out->n; i++)
      if (strcmp(out->items[i].key, r->ev.value) == 0)
        return fail_at(r, r->ev.line, r->ev.col,
                       "key '%.100s' given twice in the configuration file",
                       out->items[i].key);
    st__config_entry *items =
        st__array_resize(out->items, out->n + 1, sizeof *items);
    if (items == NULL)
      return ST_ENOMEM;
    out->items = items;
    st__config_entry *en = &items[out->n];
    memset(en, 0, sizeof *en);
    en->key = strndup(r->ev.value, r->ev.len);
    if (en->key == NULL)
      return ST_ENOMEM;
    en->line = r->ev.line;
    en->col = r->ev.col;
    out->n++;
    if ((rc = read_value(r, en)) != ST_OK)
      return rc;
  }
}

/* stream-start, then nothing or one document holding one mapping. */
static st_status read_stream(reader *r, st__config_file *out) {
  st_status rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if (r->ev.type == ST__YE_STREAM_END)
    return ST_OK;
  if ((rc = next(r)) != ST_OK) /* after document-start */
    return rc;
  if (r->ev.type == ST__YE_SCALAR && r->ev.len == 0 && !r->ev.has_tag) {
    /* an empty document */
  } else if (r->ev.type != ST__YE_MAP_START) {
    return fail_at(r, r->ev.line, r->ev.col, "%s",
                   "expected a mapping of option names to values");
  } else if (r->ev.has_anchor || r->ev.has_tag) {
    return fail_at(r, r->ev.line, r->ev.col, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  } else if ((rc = read_mapping(r, out)) != ST_OK) {
    return rc;
  }
  if ((rc = next(r)) != ST_OK) /* document-end */
    return rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if (r->ev.type != ST__YE_STREAM_END)
    return fail_at(r, r->ev.line, r->ev.col, "%s",
                   "the configuration file holds one YAML document");
  return ST_OK;
}

st_status st__config_file_read(const char *path, st__config_file *out,
                               st_error *err) {
  reader r;
  struct stat sb;
  FILE *f;
  st_status rc;

  memset(out, 0, sizeof *out);
  memset(&r, 0, sizeof r);
  r.path = path;
  r.err = err;
  f = fopen(path, "rbe");
  if (f == NULL)
    return st_error_set(err, ST_EUSAGE,
                        "cannot read configuration file "
                        "'%.900s': %s",
                        path, strerror(errno));
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) ||
      (size_t)sb.st_size > CONFIG_MAX_BYTES) {
    fclose(f);
    return st_error_set(err, ST_EUSAGE,
                        "configuration file '%.900s' is not "
                        "a regular file of at most 1 MiB",
                        path);
  }
  r.events = st__yevents_open(f);
  if (r.events == NULL) {
    fclose(f);
    return ST_ENOMEM;
  }
  rc = read_stream(&r, out);
  st__yevents_close(r.events);
  fclose(f);
  if (rc != ST_OK)
    st__config_file_free(out);
  return rc;
}

void st__config_file_free(st__config_file *cf) {
  for (size_t i = 0; i < cf->n; i++) {
    st__config_entry *en = &cf->items[i];
    for (size_t k = 0; k < en->n; k++)
      free(en->values[k]);
    free(en->values);
    free(en->vline);
    free(en->vcol);
    free(en->key);
  }
  free(cf->items);
  memset(cf, 0, sizeof *cf);
}
