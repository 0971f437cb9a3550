/* SPDX-License-Identifier: MIT */
/* Tensor buffers: the one allocator of the data a kernel reads and writes.
 * Every buffer is 64-byte aligned and sits between two guard zones of
 * canary bytes, checked after each run (a kernel's out-of-bounds write is
 * a case error naming the tensor, the side and how far it went), and
 * freed buffers are kept for the next case of a run instead of going back
 * to malloc (issue 14: aligned requests left holes that glibc never
 * reused, so memory grew with every case). With guard pages on, each
 * buffer's end is placed exactly against a PROT_NONE page instead, so the
 * first access past it faults (case/guard.h turns the fault into a case
 * error naming the tensor). Then the start is aligned only as far as the
 * size allows: data = page boundary - nbytes, so a buffer is aligned to
 * the largest power of two dividing nbytes (at most the page size). Every
 * element stays aligned to its own size (nbytes is a whole number of
 * elements), but a kernel that assumes the 64-byte alignment of the
 * default mode (aligned vector loads) may fault under --guard-pages on a
 * tensor whose size is not a multiple of 64. */
#ifndef SCENETEST_HARNESS_TBUF_H
#define SCENETEST_HARNESS_TBUF_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/common.h>

/* Canary bytes on each side of a buffer (guard zone mode). */
#define ST__TBUF_GUARD 64u

/* Allocates a tensor buffer of nbytes (nbytes may be 0: a valid, empty
 * buffer) and fills its guard zones. NULL when out of memory. The data is
 * not initialised. Free with st__tbuf_free. Thread-safety: any thread. */
void *st__tbuf_alloc(size_t nbytes);
/* Accepts NULL. Inside a run (st__tbuf_run_begin) the block is kept for
 * reuse. Thread-safety: any thread. */
void st__tbuf_free(void *data /* IN, owned */);
/* The usable bytes of a buffer (what st__tbuf_alloc was asked for). */
size_t st__tbuf_size(const void *data /* IN */);

/* What a guard check found on one side of a buffer. */
typedef struct st__tbuf_damage {
  size_t before; /* bytes before the start that were written (0: intact) */
  size_t after;  /* bytes past the end that were written, counted up to
                    the farthest touched byte (0: intact) */
} st__tbuf_damage;

/* Checks both guard zones of a buffer; returns 1 when either was touched
 * and fills *out. With guard pages there are no canaries past the end
 * (the page faults instead) and only the front zone is checked.
 * Thread-safety: any thread, while nobody writes the buffer. */
int st__tbuf_check(const void *data /* IN */, st__tbuf_damage *out /* OUT */);
/* Puts the guard zones of a buffer back to their canaries (after a
 * reported overwrite, so a later round reports only its own). */
void st__tbuf_rearm(void *data /* IN/OUT */);

/* The same zones around memory the caller lays out (level 3's shared
 * segments): ST__TBUF_GUARD bytes before data and after data + nbytes,
 * which the caller owns. Arm fills both with the canary; check is
 * st__tbuf_check's verdict on them. Thread-safety: as st__tbuf_check. */
void st__tbuf_zones_arm(void *data /* IN/OUT */, size_t nbytes);
int st__tbuf_zones_check(const void *data /* IN */, size_t nbytes,
                         st__tbuf_damage *out /* OUT */);

/* Reuse scope: between run_begin and run_end freed blocks are cached
 * (at most 64 blocks and 512 MiB) and handed out again to requests that
 * fit; run_end frees the cache. Nested scopes count. Outside any scope
 * st__tbuf_free returns the memory at once (st_run_case, the tests that
 * count allocations). Thread-safety: any thread. */
void st__tbuf_run_begin(void);
void st__tbuf_run_end(void);

/* Guard pages (--guard-pages): when on, new buffers are mmap'd with their
 * end exactly against a PROT_NONE page. Process-wide; set before a run
 * starts. Thread-safety: call while no buffer is being allocated. */
void st__tbuf_set_guard_pages(int on);
int st__tbuf_guard_pages(void);

/* The longest tensor name a guard page remembers (with its NUL). */
#define ST__TBUF_NAME_MAX 64u
/* Names a guard-page buffer (its tensor's name, copied and cut to
 * ST__TBUF_NAME_MAX - 1 bytes) for the fault handler's message. Does
 * nothing for a buffer without a guard page. */
void st__tbuf_set_name(void *data /* IN */, const char *name /* IN */);

/* What the fault handler learns of a guard-page hit. */
typedef struct st__tbuf_hit {
  size_t offset;    /* bytes from the buffer's end to the faulting address
                       (0: the first byte past the end) */
  size_t nbytes;    /* the buffer's size */
  const char *name; /* its name (st__tbuf_set_name), "" if none; static */
} st__tbuf_hit;
/* If addr lies in the guard page of a live guard-page buffer: 1, and *out
 * filled. For the fault handler: async-signal-safe (reads a fixed table,
 * takes no lock, allocates nothing). */
int st__tbuf_guard_hit(const void *addr, st__tbuf_hit *out /* OUT */);

#endif
