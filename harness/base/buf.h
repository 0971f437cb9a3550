/* SPDX-License-Identifier: MIT */
/* One growable byte buffer with a cap, after curl's dynbuf
 * (lib/curlx/dynbuf.h): it grows by doubling, never holds more than the
 * cap it was made with, and a failed addition leaves it as it was. The
 * harness's byte buffers (a file read whole, captured output, frames) are
 * this one type.
 *
 * Ownership: the buffer owns data; st__buf_free gives it back. Callers read
 * data[0, len) directly and may write into data[len, cap) after
 * st__buf_reserve, then st__buf_commit what they wrote.
 * Thread-safety: one thread per buffer. */
#ifndef SCENETEST_HARNESS_BUF_H
#define SCENETEST_HARNESS_BUF_H

#include <stddef.h>

#include <scenetest/common.h>

#include "base/util.h"

typedef struct st__buf {
  char *data; /* owned; NULL until the first byte is reserved */
  size_t len; /* bytes in use */
  size_t cap; /* bytes allocated */
  size_t max; /* len never exceeds it */
} st__buf;

/* An empty buffer that will hold at most max bytes. */
void st__buf_init(st__buf *b /* OUT */, size_t max);
/* Gives the storage back; b is empty (same max) and usable again. Accepts
 * NULL. */
void st__buf_free(st__buf *b /* IN/OUT: may be NULL */);
/* Empties b, keeping its storage unless it is larger than keep bytes (a
 * buffer reused for many small contents should not pin one large one). */
void st__buf_reset(st__buf *b /* IN/OUT */, size_t keep);

/* Makes room for n more bytes (cap - len >= n). ST_ELIMIT when len + n
 * would pass max, ST_ENOMEM when memory ran out; b is unchanged then. */
st_status st__buf_reserve(st__buf *b /* IN/OUT */, size_t n) ST_WUR;
/* Counts n bytes written at data + len as used; n <= cap - len. */
void st__buf_commit(st__buf *b /* IN/OUT */, size_t n);
/* Appends p[0, n), all or nothing: ST_ELIMIT or ST_ENOMEM as
 * st__buf_reserve, b unchanged then. */
st_status st__buf_add(st__buf *b /* IN/OUT */, const void *p /* IN */,
                      size_t n) ST_WUR;
/* Appends as much of p[0, n) as fits under max (and in memory) and returns
 * how many bytes it kept: what capture does, keeping the first max bytes
 * and counting the rest. */
size_t st__buf_add_capped(st__buf *b /* IN/OUT */, const void *p /* IN */,
                          size_t n);
/* Removes the first n bytes (n <= len), moving the rest to the front. */
void st__buf_drop_front(st__buf *b /* IN/OUT */, size_t n);

#endif
