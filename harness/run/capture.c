/* SPDX-License-Identifier: MIT */
/* A supervised child's bounded capture (capture.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "run/capture.h"

st__capbuf *st__capture_map(size_t max) {
  void *m = mmap(NULL, sizeof(st__capbuf) + max, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? NULL : m;
}

void st__capture_unmap(st__capbuf *b, size_t max) {
  if (b != NULL)
    munmap(b, sizeof(st__capbuf) + max);
}

/* A lock held by the drain thread for at most this many bytes read, so
 * that a writer that never stops (a process a kernel left printing) does
 * not keep the child's own take waiting. */
#define DRAIN_STEP ((size_t)1 << 20)
/* The drain thread's stack (sanitizers' frames included). */
#define STACK ((size_t)256 << 10)

/* What the pipe holds now: all that was written before this call. */
static size_t pending(int rd) {
  int n = 0;
  return ioctl(rd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

/* Reads up to budget bytes of what rd has into b (at most max kept, the
 * rest counted). Returns the last read's result: 0 at the end of the
 * stream, -1 with errno (EAGAIN: drained), 1 when the budget was spent. */
static ssize_t drain(st__capbuf *b, size_t max, int rd, size_t budget) {
  char spill[16384];
  while (budget > 0) {
    size_t room = b->len < max ? max - (size_t)b->len : 0;
    char *to = room > 0 ? b->data + b->len : spill;
    size_t want = room > 0 ? room : sizeof spill;
    ssize_t k = read(rd, to, want < budget ? want : budget);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k;
    if (room > 0)
      b->len += (uint64_t)k;
    else
      b->dropped += (uint64_t)k;
    budget -= (size_t)k;
  }
  return 1;
}

static void *drain_main(void *arg) {
  st__capture *c = arg;
  for (;;) {
    struct pollfd p;
    ssize_t k;
    p.fd = c->rd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR)
        continue;
      return NULL;
    }
    if (p.revents & POLLNVAL)
      return NULL; /* a kernel closed it: the audit says so */
    pthread_mutex_lock(&c->lock);
    k = drain(c->buf, c->max, c->rd, DRAIN_STEP);
    pthread_mutex_unlock(&c->lock);
    if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
      return NULL; /* the end of the stream, or a descriptor gone */
  }
}

int st__capture_start(st__capture *c, st__capbuf *b, size_t max, int rd) {
  pthread_attr_t attr;
  sigset_t all, old;
  int e;
  memset(c, 0, sizeof *c);
  c->buf = b;
  c->max = max;
  c->rd = rd;
  b->len = 0;
  b->dropped = 0;
  pthread_mutex_init(&c->lock, NULL);
  /* Signals meant for the process go to its other threads; a small stack
   * (it needs its 16 KiB spill and little more), not the default 8 MiB of
   * address space, which counts under `ulimit -v`. */
  sigfillset(&all);
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, STACK);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  e = pthread_create(&c->thread, &attr, drain_main, c);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  c->started = e == 0;
  return e;
}

/* A copy of b's bytes, b emptied. */
static char *take(st__capbuf *b, size_t *n, uint64_t *dropped) {
  char *out = NULL;
  *n = 0;
  *dropped = b->dropped;
  if (b->len > 0 && (out = malloc((size_t)b->len + 1)) != NULL) {
    memcpy(out, b->data, (size_t)b->len);
    out[b->len] = '\0';
    *n = (size_t)b->len;
  } else if (b->len > 0) {
    *dropped += b->len; /* out of memory: counted, not kept */
  }
  b->len = 0;
  b->dropped = 0;
  return out;
}

char *st__capture_take(st__capture *c, size_t *n, uint64_t *dropped) {
  char *out;
  pthread_mutex_lock(&c->lock);
  /* Everything the case wrote is in the pipe or in the buffer: drained
   * here, under the lock the thread drains under, nothing stays behind. */
  (void)drain(c->buf, c->max, c->rd, pending(c->rd));
  out = take(c->buf, n, dropped);
  pthread_mutex_unlock(&c->lock);
  return out;
}

char *st__capture_take_dead(st__capbuf *b, size_t max, int rd, size_t *n,
                            uint64_t *dropped) {
  if (b->len > max)
    b->len = max; /* a child that scribbled on it */
  if (rd >= 0)
    (void)drain(b, max, rd, pending(rd));
  return take(b, n, dropped);
}
