/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the JSON tree reader of `scenetest merge`
 * (cli/jsondoc.c): any bytes as an input report; the reader must not
 * crash, hang, read out of bounds or leak; a refusal says where (inside
 * the text, 1-based) and what was expected, and text with a NUL byte is
 * never JSON. Seeds in tests/fuzz/merge. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jsondoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks every value: each string's length is its bytes, without a NUL. */
static void walk(const st__jval *v) {
  size_t i;
  if ((v->type == ST__J_STR || v->type == ST__J_NUM) &&
      (v->str == NULL || strlen(v->str) != v->len))
    abort();
  if (v->line < 1 || v->col < 1)
    abort();
  for (i = 0; (v->type == ST__J_ARR || v->type == ST__J_OBJ) && i < v->n; i++) {
    if (v->type == ST__J_OBJ && v->keys[i] == NULL)
      abort();
    walk(&v->items[i]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  st__jval *vals = NULL;
  size_t n = 99, i;
  st__jerr err;
  /* An exact-size copy: a read past the end is ASan's to see. */
  char *text = malloc(size ? size : 1);
  int rc;
  uint64_t u;
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  rc = st__json_parse(text, size, &vals, &n, &err);
  if (rc != 0 && (vals != NULL || n != 0))
    abort();
  if (rc == ST__JSON_BAD &&
      (err.expected == NULL || err.line < 1 || err.col < 1 ||
       err.line > size + 1 || err.col > size + 1))
    abort();
  if (rc == 0 && memchr(text, '\0', size) != NULL)
    abort();
  for (i = 0; i < n; i++) {
    walk(&vals[i]);
    (void)st__json_get(&vals[i], "cases");
    (void)st__json_u64(&vals[i], &u);
  }
  st__json_free(vals, n);
  free(text);
  return 0;
}
