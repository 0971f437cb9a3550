/* SPDX-License-Identifier: MIT */
/* The configuration file's YAML (docs/cli.md#the-configuration-file): a
 * mapping of keys to a scalar or a list of scalars, read here, on the
 * loader's side (only scene/yaml_tree.c includes <yaml.h>), and handed
 * to the CLI as plain keys, values and positions. */
#ifndef SCENETEST_HARNESS_CONFIG_FILE_H
#define SCENETEST_HARNESS_CONFIG_FILE_H

#include <stddef.h>

#include <scenetest/common.h>

/* One key: its values (one for a scalar; a list's items, maybe none). */
typedef struct st__config_entry {
  char *key;     /* owned */
  int line, col; /* the key's position, 1-based */
  int is_list;   /* the value was a sequence */
  char **values; /* owned, n of them */
  int *vline;    /* each value's position; owned */
  int *vcol;
  size_t n;
} st__config_entry;

typedef struct st__config_file {
  st__config_entry *items; /* owned, in file order */
  size_t n;
} st__config_file;

/* Reads path (at most 1 MiB): an empty file or a mapping whose values
 * are scalars or lists of scalars; a key given twice, anchors, aliases,
 * tags, nested mappings or more than one document are errors with the
 * position in *err (FILE:LINE:COL). ST_OK, ST_EUSAGE (bad content or
 * an unreadable file), ST_ENOMEM. *out is zeroed on failure.
 * Thread-safety: any thread. */
st_status st__config_file_read(const char *path /* IN */,
                               st__config_file *out /* OUT */,
                               st_error *err /* OUT, may be NULL */);
/* Frees what st__config_file_read filled; accepts a zeroed one. */
void st__config_file_free(st__config_file *cf /* IN/OUT */);

#endif
