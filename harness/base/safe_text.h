/* SPDX-License-Identifier: MIT */
/* Text a person reads (stderr lines, the --log-file, the text report)
 * made safe to show: a terminal never gets a control byte (ESC, OSC, a
 * carriage return, C1 controls) and no reader of a log can take any of
 * it for a record or phase line, which only the harness writes
 * (docs/reliability.md). Library-internal. */
#ifndef SCENETEST_HARNESS_SAFE_TEXT_H
#define SCENETEST_HARNESS_SAFE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The token that starts a record or phase line (docs/measuring.md). In
 * text that did not come from the harness's own timing lines its '[' is
 * written escaped, as \x5b. */
#define ST__TIMING_MARK "[TIMING]"

/* Keep '\n' and '\t' as they are (a multi-line message); without it they
 * are escaped like every other control byte (a one-line field). */
#define ST__SAFE_KEEP_LINES 1u

/* Whether s[0..n) starts with ST__TIMING_MARK. Thread-safety: any. */
int st__safe_text_mark_at(const char *s /* IN */, size_t n);

/* Writes s[0..n) escaped into dst (at most cap - 1 bytes, then a NUL;
 * cut only between escapes): bytes below 0x20 (but '\n' and '\t' with
 * ST__SAFE_KEEP_LINES) and 0x7f as \xHH, UTF-8 C1 controls (U+0080 to
 * U+009F) as \u00HH, the '[' of ST__TIMING_MARK as \x5b; every other byte
 * as it is. Returns the bytes written, NUL excluded. cap must be > 0.
 * Thread-safety: any thread. */
size_t st__safe_text(char *dst /* OUT */, size_t cap, const char *s /* IN */,
                     size_t n, unsigned flags);

/* The same to f, for s[0..n), without a bound. Thread-safety: one thread
 * per f. */
void st__safe_text_put(FILE *f /* IN */, const char *s /* IN */, size_t n,
                       unsigned flags);

#endif
