/* SPDX-License-Identifier: MIT */
/* The envelope of a supervised child's writes (envelope.h): written in
 * one sendmsg, checked by the supervisor before any frame in it is
 * believed. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "wire/envelope.h"

static void put32(unsigned char *p, uint32_t v) {
  uint32_t le = htole32(v);
  memcpy(p, &le, 4);
}

static uint32_t get32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return le32toh(v);
}

st_status st__env_send(int fd, uint32_t seq, const void *body, size_t len) {
  unsigned char head[ST__ENV_HEAD], tail[ST__ENV_TAIL];
  struct iovec iov[3];
  struct msghdr mh;
  size_t k = 0, left = ST__ENV_HEAD + len + ST__ENV_TAIL;
  put32(head, ST__ENV_MAGIC);
  put32(head + 4, seq);
  put32(head + 8, (uint32_t)len);
  put32(tail, ST__ENV_END);
  put32(tail + 4, seq);
  iov[0].iov_base = head;
  iov[0].iov_len = sizeof head;
  iov[1].iov_base = (void *)body;
  iov[1].iov_len = len;
  iov[2].iov_base = tail;
  iov[2].iov_len = sizeof tail;
  while (left > 0) {
    ssize_t w;
    memset(&mh, 0, sizeof mh);
    while (iov[k].iov_len == 0)
      k++;
    mh.msg_iov = iov + k;
    mh.msg_iovlen = 3 - k;
    w = sendmsg(fd, &mh, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return ST_EIO;
    }
    left -= (size_t)w;
    /* Past what went: whole iovecs dropped, the next one advanced. */
    while (w > 0) {
      size_t step = (size_t)w < iov[k].iov_len ? (size_t)w : iov[k].iov_len;
      iov[k].iov_base = (char *)iov[k].iov_base + step;
      iov[k].iov_len -= step;
      w -= (ssize_t)step;
      if (iov[k].iov_len == 0 && k < 2)
        k++;
    }
  }
  return ST_OK;
}

/* Whether the frames of body[0..len) tile it, each allowed by rules. */
static int frames_ok(const char *body, size_t len, const st__env_rule *rules,
                     size_t n_rules, char *why, size_t n) {
  size_t at = 0, r;
  while (at < len) {
    uint32_t plen;
    uint8_t type;
    if (len - at < 5) {
      snprintf(why, n, "a frame header cut at byte %zu of the write", at);
      return 0;
    }
    plen = get32(body + at);
    type = (uint8_t)body[at + 4];
    for (r = 0; r < n_rules && rules[r].type != type; r++)
      ;
    if (r == n_rules) {
      snprintf(why, n, "a frame of unknown type %u", (unsigned)type);
      return 0;
    }
    if (plen < rules[r].min || plen > rules[r].max || plen > len - at - 5) {
      snprintf(why, n,
               "a frame of type %u announcing %lu bytes (allowed %lu to "
               "%lu, %zu left in the write)",
               (unsigned)type, (unsigned long)plen, (unsigned long)rules[r].min,
               (unsigned long)rules[r].max, len - at - 5);
      return 0;
    }
    at += 5 + (size_t)plen;
  }
  return 1;
}

int st__env_next(const char *buf, size_t len, uint32_t seq,
                 const st__env_rule *rules, size_t n_rules, const char **body,
                 size_t *blen, size_t *used, char *why, size_t n) {
  unsigned char magic[4];
  size_t have = len < 4 ? len : 4, size;
  uint32_t m;
  put32(magic, ST__ENV_MAGIC);
  /* A wrong first byte is wrong already: no waiting for the rest. */
  if (memcmp(buf, magic, have) != 0) {
    unsigned char b[4] = {0, 0, 0, 0};
    memcpy(b, buf, have);
    snprintf(why, n,
             "bytes that begin no write of the child's (0x%02x%02x%02x%02x "
             "where write %lu was due)",
             b[0], b[1], b[2], b[3], (unsigned long)seq);
    return -1;
  }
  if (len < ST__ENV_HEAD)
    return 0;
  m = get32(buf + 4);
  if (m != seq) {
    snprintf(why, n, "write %lu where write %lu was due", (unsigned long)m,
             (unsigned long)seq);
    return -1;
  }
  size = get32(buf + 8);
  if (size > ST__ENV_MAX) {
    snprintf(why, n, "a write announcing %zu bytes (at most %zu)", size,
             ST__ENV_MAX);
    return -1;
  }
  if (len - ST__ENV_HEAD < size + ST__ENV_TAIL)
    return 0;
  if (get32(buf + ST__ENV_HEAD + size) != ST__ENV_END ||
      get32(buf + ST__ENV_HEAD + size + 4) != seq) {
    snprintf(why, n,
             "write %lu does not end where its length says (bytes were "
             "written into it)",
             (unsigned long)seq);
    return -1;
  }
  if (!frames_ok(buf + ST__ENV_HEAD, size, rules, n_rules, why, n))
    return -1;
  *body = buf + ST__ENV_HEAD;
  *blen = size;
  *used = ST__ENV_HEAD + size + ST__ENV_TAIL;
  return 1;
}
