/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the wire decoder (harness/case/wire.c, harness/wire/):
 * what an isolated child, a supervised child or a level-3 worker sends its
 * parent is read back with a bounds-checked reader, and a dying or hostile
 * child can send any bytes (a supervised child's writes come in an envelope,
 * wire/envelope.h, read first). Any input must decode or be refused, never
 * crash, read out of bounds or leak (a result's bench figures, whose dtype
 * class indexes the ceilings, included: tests/fuzz/wire/result_bench.bin).
 * Built with clang only (tests/meson.build).
 * Run: build-fuzz/tests/fuzz/fuzz_wire -max_total_time=60 tests/fuzz/wire */
#include <stdint.h>
#include <stdlib.h>

#include "wire/envelope.h"
#include "case/result.h"
#include "case/level3/map_msg.h"
#include "case/wire.h"
#include "wire/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *buf = (const char *)data;
  size_t len = size;
  /* As a parent reads a stream: frames one after the other, each payload
   * decoded as a result. */
  for (int frames = 0; frames < 64; frames++) {
    uint8_t type = 0;
    const char *payload = NULL;
    size_t plen = 0, used = 0;
    if (!st__wire_next_frame(buf, len, &type, &payload, &plen, &used))
      break;
    if (used == 0 || used > len)
      abort(); /* the framer must always make progress within bounds */
    st__rbuf r;
    st__rbuf_init(&r, payload, plen);
    st_case_result *res = st__wire_get_result(&r);
    st_case_result_free(res);
    buf += used;
    len -= used;
  }
  /* As a supervisor reads a child's socket: envelopes, sequence from 0,
   * each body's frames (already checked against the rules) decoded. */
  {
    static const st__env_rule rules[] = {{ST__MSG_LOG, 4, 4 + 65536},
                                         {ST__MSG_RESULT, 4, 1u << 28},
                                         {ST__MSG_BEGIN, 4, 4}};
    const char *at = (const char *)data, *body;
    size_t left = size, blen, used;
    char why[200];
    uint32_t seq = 0;
    while (left > 0 && st__env_next(at, left, seq, rules, 3, &body, &blen,
                                    &used, why, sizeof why) == 1) {
      uint8_t type;
      const char *payload;
      size_t plen, fused;
      if (used > left || body < at || body + blen > at + used)
        abort();
      while (st__wire_next_frame(body, blen, &type, &payload, &plen, &fused)) {
        st__rbuf r;
        st__rbuf_init(&r, payload, plen);
        (void)st__rbuf_u32(&r);
        st_case_result_free(st__wire_get_result(&r));
        body += fused;
        blen -= fused;
      }
      if (blen != 0)
        abort(); /* st__env_next promised the frames tile the body */
      at += used;
      left -= used;
      seq++;
    }
  }
  /* As a level-3 worker and its pool read a datagram, and the zygote's
   * two ends their fixed-size messages: every decoder of wire/msg.h and
   * level 3's MAP. */
  {
    st__msg_l3_run run;
    st__msg_l3_reply rep;
    st__l3_map map;
    st__msg_zygote_go go;
    st__msg_zygote_spare spare;
    const char *line;
    size_t llen;
    uint32_t v;
    (void)st__msg_l3_type((const char *)data, size);
    (void)st__msg_l3_run_get((const char *)data, size, &run);
    (void)st__msg_l3_reply_get((const char *)data, size, &rep);
    st__msg_l3_reply_free(&rep);
    if (st__l3_map_get((const char *)data, size, &map) == 0)
      st__l3_map_free(&map);
    (void)st__msg_zygote_go_get(data, size, &go);
    (void)st__msg_zygote_spare_get(data, size, &spare);
    (void)st__msg_get_line((const char *)data, size, &line, &llen);
    (void)st__msg_get_index((const char *)data, size, &v);
    (void)st__msg_get_text((const char *)data, size);
  }
  /* And the whole input as one result payload. */
  st__rbuf r;
  st__rbuf_init(&r, data, size);
  st_case_result_free(st__wire_get_result(&r));
  return 0;
}
