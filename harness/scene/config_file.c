/* SPDX-License-Identifier: MIT */
/* The configuration file's YAML (docs/cli.md#configuration-file): one
 * flat mapping read event by event with libyaml, handed on as plain
 * strings and positions. A file of the loader: it includes <yaml.h>. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "base/util.h"
#include "scene/config_file.h"

#define CONFIG_MAX_BYTES ((size_t)1 << 20)

typedef struct reader {
  const char *path;
  yaml_parser_t parser;
  yaml_event_t ev;
  int have_ev;
  st_error *err;
} reader;

static st_status fail_at(reader *r, const yaml_mark_t *m, const char *msg,
                         const char *arg) {
  return st_error_set_at(r->err, ST_EUSAGE, r->path, (int)m->line + 1,
                         (int)m->column + 1, msg, arg);
}

/* The next event into r->ev (the previous one freed). */
static st_status next(reader *r) {
  if (r->have_ev)
    yaml_event_delete(&r->ev);
  r->have_ev = 0;
  if (!yaml_parser_parse(&r->parser, &r->ev)) {
    const char *problem = r->parser.problem ? r->parser.problem : "bad YAML";
    if (r->parser.error == YAML_MEMORY_ERROR)
      return ST_ENOMEM;
    return fail_at(r, &r->parser.problem_mark, "%s", problem);
  }
  r->have_ev = 1;
  return ST_OK;
}

/* A scalar event as a plain value: no tag, anchor or alias. */
static st_status scalar_ok(reader *r) {
  yaml_event_t *e = &r->ev;
  if (e->type == YAML_ALIAS_EVENT)
    return fail_at(r, &e->start_mark, "%s",
                   "aliases are not allowed in the "
                   "configuration file");
  if (e->type != YAML_SCALAR_EVENT)
    return fail_at(r, &e->start_mark, "%s",
                   "expected a scalar (a value or a list of values)");
  if (e->data.scalar.anchor != NULL || e->data.scalar.tag != NULL)
    return fail_at(r, &e->start_mark, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  return ST_OK;
}

static st_status add_value(st__config_entry *en, const yaml_event_t *e) {
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
  v[en->n] = strndup((const char *)e->data.scalar.value, e->data.scalar.length);
  if (v[en->n] == NULL)
    return ST_ENOMEM;
  l[en->n] = (int)e->start_mark.line + 1;
  c[en->n] = (int)e->start_mark.column + 1;
  en->n = n;
  return ST_OK;
}

/* One key's value: a scalar, or a sequence of scalars. */
static st_status read_value(reader *r, st__config_entry *en) {
  st_status rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if (r->ev.type != YAML_SEQUENCE_START_EVENT) {
    if ((rc = scalar_ok(r)) != ST_OK)
      return rc;
    return add_value(en, &r->ev);
  }
  if (r->ev.data.sequence_start.anchor != NULL ||
      r->ev.data.sequence_start.tag != NULL)
    return fail_at(r, &r->ev.start_mark, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  en->is_list = 1;
  for (;;) {
    if ((rc = next(r)) != ST_OK)
      return rc;
    if (r->ev.type == YAML_SEQUENCE_END_EVENT)
      return ST_OK;
    if ((rc = scalar_ok(r)) != ST_OK)
      return rc;
    if ((rc = add_value(en, &r->ev)) != ST_OK)
      return rc;
  }
}

static st_status read_mapping(reader *r, st__config_file *out) {
  st_status rc;
  for (;;) {
    if ((rc = next(r)) != ST_OK)
      return rc;
    if (r->ev.type == YAML_MAPPING_END_EVENT)
      return ST_OK;
    if ((rc = scalar_ok(r)) != ST_OK)
      return rc;
    for (size_t i = 0; i < out->n; i++)
      if (strcmp(out->items[i].key, (const char *)r->ev.data.scalar.value) == 0)
        return fail_at(r, &r->ev.start_mark,
                       "key '%.100s' given twice in the configuration file",
                       out->items[i].key);
    st__config_entry *items =
        st__array_resize(out->items, out->n + 1, sizeof *items);
    if (items == NULL)
      return ST_ENOMEM;
    out->items = items;
    st__config_entry *en = &items[out->n];
    memset(en, 0, sizeof *en);
    en->key = strndup((const char *)r->ev.data.scalar.value,
                      r->ev.data.scalar.length);
    if (en->key == NULL)
      return ST_ENOMEM;
    en->line = (int)r->ev.start_mark.line + 1;
    en->col = (int)r->ev.start_mark.column + 1;
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
  if (r->ev.type == YAML_STREAM_END_EVENT)
    return ST_OK;
  if ((rc = next(r)) != ST_OK) /* after document-start */
    return rc;
  if (r->ev.type == YAML_SCALAR_EVENT && r->ev.data.scalar.length == 0 &&
      r->ev.data.scalar.tag == NULL) {
    /* an empty document */
  } else if (r->ev.type != YAML_MAPPING_START_EVENT) {
    return fail_at(r, &r->ev.start_mark, "%s",
                   "expected a mapping of option names to values");
  } else if (r->ev.data.mapping_start.anchor != NULL ||
             r->ev.data.mapping_start.tag != NULL) {
    return fail_at(r, &r->ev.start_mark, "%s",
                   "anchors and tags are not allowed in the configuration "
                   "file");
  } else if ((rc = read_mapping(r, out)) != ST_OK) {
    return rc;
  }
  if ((rc = next(r)) != ST_OK) /* document-end */
    return rc;
  if ((rc = next(r)) != ST_OK)
    return rc;
  if (r->ev.type != YAML_STREAM_END_EVENT)
    return fail_at(r, &r->ev.start_mark, "%s",
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
  if (!yaml_parser_initialize(&r.parser)) {
    fclose(f);
    return ST_ENOMEM;
  }
  yaml_parser_set_input_file(&r.parser, f);
  rc = read_stream(&r, out);
  if (r.have_ev)
    yaml_event_delete(&r.ev);
  yaml_parser_delete(&r.parser);
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
