/* SPDX-License-Identifier: MIT */
/* The envelope around each write a supervised child makes to its
 * supervisor (docs/reliability.md#the-process-model): a kernel runs in
 * the child's process and can write to the child's socket, so what the
 * supervisor reads must not be taken for frames unless the child wrote
 * it. Each write is
 *
 *   u32 ST__ENV_MAGIC | u32 seq | u32 len | len bytes of frames
 *   | u32 ST__ENV_END | u32 seq
 *
 * (little-endian), seq counting the child's writes from 0, and the
 * frames (wire/frame.h: u32 length, u8 type, payload) tiling the body
 * exactly, each of a type the reader allows and of a length within that
 * type's bounds. Stray bytes between two writes fail the magic or the
 * sequence at once; bytes interleaved into a write (a thread writing
 * while the child does) move its trailer. Either is a protocol error,
 * never a wait for a length a stray header announced. Thread-safety: any
 * thread; a writer serialises its own writes. */
#ifndef SCENETEST_HARNESS_ENVELOPE_H
#define SCENETEST_HARNESS_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/common.h>

#define ST__ENV_MAGIC 0x31425453u /* "STB1" */
#define ST__ENV_END 0x31455453u   /* "STE1" */
#define ST__ENV_HEAD 12u
#define ST__ENV_TAIL 8u
/* The largest body a reader accepts; a writer sends before it grows past
 * ST__ENV_SEND_AT. */
#define ST__ENV_MAX ((size_t)512 << 20)
#define ST__ENV_SEND_AT ((size_t)16 << 20)

/* What a reader allows of one frame type: its payload's bounds. */
typedef struct st__env_rule {
  uint8_t type;
  uint32_t min, max;
} st__env_rule;

/* Writes body[0..len) to fd as write seq, in one writev (continued after
 * a short write or EINTR). Returns ST_OK, or ST_EIO with errno set. */
st_status st__env_send(int fd, uint32_t seq, const void *body /* IN */,
                       size_t len) ST_WUR;

/* Looks at the front of buf[0..len) for write seq: 1 with *body, *blen
 * and *used when a whole envelope is there and valid; 0 when what is
 * there is a valid beginning of one (wait for more); -1 when it cannot
 * be one, with a one-line reason in why[0..n). */
int st__env_next(const char *buf /* IN */, size_t len, uint32_t seq,
                 const st__env_rule *rules /* IN */, size_t n_rules,
                 const char **body /* OUT */, size_t *blen /* OUT */,
                 size_t *used /* OUT */, char *why /* OUT */, size_t n);

#endif
