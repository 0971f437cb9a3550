/* SPDX-License-Identifier: MIT */
/* The envelope of a supervised child's writes (wire/envelope.h): what is
 * sent reads back; stray bytes before it, a wrong sequence, bytes written
 * into it, a frame beyond its type's bounds or of an unknown type are
 * each refused at once (never a wait for a length a stray header
 * announced); a valid beginning waits for the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/envelope.h"
#include "wire/frame.h"
#include "wire/msg.h"

enum { LOG = ST__MSG_LOG, RESULT = ST__MSG_RESULT, BEGIN = ST__MSG_BEGIN };
static const st__env_rule rules[] = {
    {LOG, 4, 4 + 100}, {RESULT, 4, 1000}, {BEGIN, 4, 4}};
#define N_RULES (sizeof rules / sizeof rules[0])

/* Sends body as write seq through a socket pair and reads it all back
 * into out (room for cap bytes); returns the length read. */
static size_t round_trip(uint32_t seq, const st__wbuf *body, char *out,
                         size_t cap) {
  int sp[2];
  size_t got = 0;
  ssize_t k;
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
  assert_int_equal(st__env_send(sp[0], seq, body->buf.data, body->buf.len),
                   ST_OK);
  close(sp[0]);
  while ((k = read(sp[1], out + got, cap - got)) > 0)
    got += (size_t)k;
  close(sp[1]);
  return got;
}

/* Two frames: a log line and a case begun. */
static void two_frames(st__wbuf *b) {
  size_t at;
  st__wbuf_init(b);
  st__msg_put_line(b, LOG, "hello", 5);
  at = st__wire_frame_open(b, BEGIN);
  st__wbuf_u32(b, 7);
  st__wire_frame_close(b, at);
}

static int next(const char *buf, size_t len, uint32_t seq, size_t *used,
                char *why) {
  const char *body;
  size_t blen;
  return st__env_next(buf, len, seq, rules, N_RULES, &body, &blen, used, why,
                      200);
}

static void st__env_next__sent_write_reads_back(void **state) {
  st__wbuf b;
  char buf[512], why[200];
  const char *body;
  size_t n, blen, used, k;
  (void)state;
  two_frames(&b);
  n = round_trip(3, &b, buf, sizeof buf);
  assert_int_equal(n, ST__ENV_HEAD + b.buf.len + ST__ENV_TAIL);
  assert_int_equal(st__env_next(buf, n, 3, rules, N_RULES, &body, &blen, &used,
                                why, sizeof why),
                   1);
  assert_int_equal(used, n);
  assert_int_equal(blen, b.buf.len);
  assert_memory_equal(body, b.buf.data, b.buf.len);
  /* Every proper prefix is a valid beginning: wait for more. */
  for (k = 0; k < n; k++)
    assert_int_equal(next(buf, k, 3, &used, why), 0);
  st__wbuf_free(&b);
}

static void st__env_next__stray_bytes_refused_at_once(void **state) {
  char junk[64], why[200];
  size_t used;
  (void)state;
  /* What a kernel wrote: as a bare frame header it announces 1 GB. */
  memset(junk, 'A', sizeof junk);
  assert_int_equal(next(junk, sizeof junk, 0, &used, why), -1);
  assert_non_null(strstr(why, "0x41414141"));
  /* One stray byte is enough to know. */
  assert_int_equal(next(junk, 1, 0, &used, why), -1);
}

static void st__env_next__wrong_sequence_refused(void **state) {
  st__wbuf b;
  char buf[512], why[200];
  size_t n, used;
  (void)state;
  two_frames(&b);
  n = round_trip(4, &b, buf, sizeof buf);
  assert_int_equal(next(buf, n, 5, &used, why), -1);
  assert_string_equal(why, "write 4 where write 5 was due");
  st__wbuf_free(&b);
}

static void st__env_next__bytes_written_into_it_refused(void **state) {
  st__wbuf b;
  char buf[512], mixed[600], why[200];
  size_t n, used, at;
  (void)state;
  two_frames(&b);
  n = round_trip(0, &b, buf, sizeof buf);
  /* Another writer's 3 bytes inside the body, at every position. */
  for (at = ST__ENV_HEAD; at < n; at++) {
    memcpy(mixed, buf, at);
    memcpy(mixed + at, "xyz", 3);
    memcpy(mixed + at + 3, buf + at, n - at);
    assert_int_equal(next(mixed, n + 3, 0, &used, why), -1);
  }
  st__wbuf_free(&b);
}

static void st__env_next__frame_out_of_bounds_refused(void **state) {
  st__wbuf b;
  char buf[512], why[200];
  size_t n, used, at;
  (void)state;
  /* A BEGIN of 8 bytes (exactly 4 allowed). */
  st__wbuf_init(&b);
  at = st__wire_frame_open(&b, BEGIN);
  st__wbuf_u64(&b, 7);
  st__wire_frame_close(&b, at);
  n = round_trip(0, &b, buf, sizeof buf);
  assert_int_equal(next(buf, n, 0, &used, why), -1);
  assert_non_null(strstr(why, "type 4 announcing 8 bytes")); /* ST__MSG_BEGIN */
  /* A type the reader does not know. */
  b.buf.len = 0;
  at = st__wire_frame_open(&b, 9);
  st__wbuf_u32(&b, 7);
  st__wire_frame_close(&b, at);
  n = round_trip(0, &b, buf, sizeof buf);
  assert_int_equal(next(buf, n, 0, &used, why), -1);
  assert_string_equal(why, "a frame of unknown type 9");
  st__wbuf_free(&b);
}

static void st__env_next__oversized_write_refused(void **state) {
  unsigned char head[ST__ENV_HEAD];
  char why[200];
  size_t used;
  uint32_t v[3] = {ST__ENV_MAGIC, 0, (uint32_t)ST__ENV_MAX + 1};
  (void)state;
  memcpy(head, v, sizeof head); /* little-endian hosts (the CI's) */
  assert_int_equal(next((const char *)head, sizeof head, 0, &used, why), -1);
  assert_non_null(strstr(why, "announcing"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__env_next__sent_write_reads_back),
      cmocka_unit_test(st__env_next__stray_bytes_refused_at_once),
      cmocka_unit_test(st__env_next__wrong_sequence_refused),
      cmocka_unit_test(st__env_next__bytes_written_into_it_refused),
      cmocka_unit_test(st__env_next__frame_out_of_bounds_refused),
      cmocka_unit_test(st__env_next__oversized_write_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
