/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the TIMING log parser (tools/timelog.c): any bytes
 * as one line; the parser must not crash, read out of bounds or leave a
 * result that contradicts its kind. Seeds in tests/fuzz/timelog. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/timelog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  st__tl_line l;
  st__tl_kind k = st__timelog_parse((const char *)data, size, &l);
  if (k != l.kind)
    abort();
  if (k == ST__TL_BAD && (l.error == NULL || l.column == 0))
    abort();
  if (k == ST__TL_RECORD) {
    if (!st__timelog_record_same(&l.u.record, &l.u.record))
      abort();
    if (l.u.record.value_len > 64 || l.u.record.n_modules < 2 ||
        l.u.record.n_modules > ST__TL_MODULES_MAX)
      abort();
    if (strlen(l.u.record.raw) >= sizeof l.u.record.raw)
      abort();
  }
  if (k == ST__TL_PHASE) {
    /* Names are non-empty: bare ones slices of the line without control
     * bytes, quoted scene and case names decoded into the line's own
     * buffer (where an escaped control byte may be). */
    const st__tl_text *t[3] = {&l.u.phase.scene, &l.u.phase.kase,
                               &l.u.phase.name};
    size_t i, j;
    for (i = 0; i < 3; i++) {
      int quoted = i < 2 && t[i]->s == l.qname[i];
      if (t[i]->n == 0)
        abort();
      if (quoted) {
        if (t[i]->n >= sizeof l.qname[i])
          abort();
        continue;
      }
      if (t[i]->s < (const char *)data ||
          t[i]->s + t[i]->n > (const char *)data + size)
        abort();
      for (j = 0; j < t[i]->n; j++)
        if ((unsigned char)t[i]->s[j] < 0x20)
          abort();
    }
  }
  return 0;
}
