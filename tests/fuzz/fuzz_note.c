/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the plugin ELF note parser (ops/note.c): any bytes
 * as a plugin file; the parser must not crash or read outside them, and
 * its result must agree with its status. Seeds in tests/fuzz/note
 * (crafted files and the first 4 KiB of real plugins, which hold their
 * headers and notes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *out = (char *)"unset";
  const char *why = (const char *)"unset";
  st_status rc = st__note_parse(data, size, &out, &why);
  if (rc == ST_OK) {
    if (out == NULL || strlen(out) >= size)
      abort();
    free(out);
  } else if (out != NULL || why == NULL || why[0] == '\0') {
    abort();
  }
  return 0;
}
