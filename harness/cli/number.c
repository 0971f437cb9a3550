/* SPDX-License-Identifier: MIT */
/* A non-negative integer option value, checked once for every option that
 * takes one (the option table's rows and their custom parsers). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli/command.h"

/* Digits only: strtoull would accept a sign and wrap "-1" to
 * UINT64_MAX. */
int st__cli_parse_uint(const char *opt, const char *text, uint64_t min,
                       uint64_t max, uint64_t *out) {
  char *end;
  unsigned long long v;

  if (text[0] < '0' || text[0] > '9')
    return st__cli_usage("--%s: '%s' is not a non-negative integer", opt, text);
  errno = 0;
  v = strtoull(text, &end, 10);
  if (*end != '\0')
    return st__cli_usage("--%s: '%s' is not a non-negative integer", opt, text);
  if (errno == ERANGE || v > max)
    return st__cli_usage("--%s: %s is too large (at most %" PRIu64 ")", opt,
                         text, max);
  if (v < min)
    return st__cli_usage("--%s must be at least %" PRIu64 " (got %s)", opt, min,
                         text);
  *out = v;
  return 0;
}
