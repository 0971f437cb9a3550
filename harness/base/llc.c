/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "base/llc.h"

uint64_t st__llc_bytes(void) {
  uint64_t best = 0;
  int i;
  for (i = 0; i < 16; i++) {
    char path[96], unit = 0;
    unsigned long long v = 0;
    FILE *f;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if ((f = fopen(path, "re")) == NULL)
      continue;
    if (fscanf(f, "%llu%c", &v, &unit) >= 1) {
      if (unit == 'K')
        v <<= 10;
      else if (unit == 'M')
        v <<= 20;
      else if (unit == 'G')
        v <<= 30;
      if (v > best)
        best = v;
    }
    fclose(f);
  }
  return best;
}
