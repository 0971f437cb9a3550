/* SPDX-License-Identifier: MIT */
/* The guard-page fault handler (guard.h). Everything the handler does is
 * async-signal-safe: it reads the allocator's fixed table
 * (st__tbuf_guard_hit), formats with its own digit loop (no snprintf),
 * stores into memory that exists already and calls only write(),
 * sigaction() and raise(). */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "case/guard.h"
#include "case/tbuf.h"

static struct sigaction prev_segv, prev_bus;
static unsigned installs;
static int own_stack;
/* 64 KiB: the handler needs a few hundred bytes; a sanitizer's handler
 * that it hands over to may need more. */
static char alt_stack[64 << 10];

static _Atomic(char *) note_buf;
static atomic_size_t note_cap;

typedef struct line {
  char *p;
  size_t len, cap;
} line;

static void put_str(line *l, const char *s) {
  while (*s != '\0' && l->len + 1 < l->cap)
    l->p[l->len++] = *s++;
}

static void put_uint(line *l, size_t v) {
  char d[24];
  size_t n = 0;
  do {
    d[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0 && l->len + 1 < l->cap)
    l->p[l->len++] = d[--n];
}

/* Whether the faulting access was a write: 1, 0 (a read), -1 unknown.
 * x86-64 Linux puts the page-fault error code in REG_ERR; bit 1 is set
 * for a write (Intel SDM vol. 3, "Page-Fault Exception"). */
static int was_write(const void *uc) {
#if defined(__x86_64__) && defined(REG_ERR)
  const ucontext_t *u = uc;
  return (u->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)uc;
  return -1;
#endif
}

static void describe(line *l, int sig, const st__tbuf_hit *hit, int write) {
  put_str(l, "kernel ");
  put_str(l, write < 0 ? "accessed" : write ? "wrote" : "read");
  put_str(l, " out of bounds of tensor '");
  put_str(l, hit->name[0] != '\0' ? hit->name : "?");
  put_str(l, "': ");
  /* Counted as the guard zone counts: up to the touched byte, so the
   * first byte past the end is 1 byte past it. */
  put_uint(l, hit->offset + 1);
  put_str(l,
          hit->offset == 0 ? " byte past its end (" : " bytes past its end (");
  put_uint(l, hit->nbytes);
  put_str(l, " bytes long; guard page, ");
  put_str(l, sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
  put_str(l, ")");
  l->p[l->len] = '\0';
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
  st__tbuf_hit hit;
  if (si != NULL && si->si_code > 0 && st__tbuf_guard_hit(si->si_addr, &hit)) {
    char *buf = atomic_load(&note_buf);
    if (buf != NULL) {
      line l = {buf, 0, atomic_load(&note_cap)};
      describe(&l, sig, &hit, was_write(uc));
    } else {
      char tmp[ST__GUARD_NOTE_MAX + 64];
      line l = {tmp, 0, sizeof tmp};
      put_str(&l, "scenetest: error: ");
      describe(&l, sig, &hit, was_write(uc));
      put_str(&l, "\n");
      (void)!write(2, tmp, l.len);
    }
  }
  /* Today's behaviour from here: the handler that was there takes the
   * signal. A fault re-executes the access when we return; a signal that
   * was sent (si_code <= 0) is raised again, delivered when we return. */
  sigaction(sig, sig == SIGBUS ? &prev_bus : &prev_segv, NULL);
  if (si == NULL || si->si_code <= 0)
    raise(sig);
}

void st__guard_install(void) {
  struct sigaction sa;
  stack_t ss;
  if (installs++ > 0)
    return;
  if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE)) {
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    own_stack = sigaltstack(&ss, NULL) == 0;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &prev_segv);
  sigaction(SIGBUS, &sa, &prev_bus);
}

void st__guard_uninstall(void) {
  if (installs == 0 || --installs > 0)
    return;
  sigaction(SIGSEGV, &prev_segv, NULL);
  sigaction(SIGBUS, &prev_bus, NULL);
  if (own_stack) {
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    (void)sigaltstack(&ss, NULL);
    own_stack = 0;
  }
}

void st__guard_note_to(char *buf, size_t cap) {
  if (buf != NULL && cap > 0)
    buf[0] = '\0';
  atomic_store(&note_cap, buf != NULL ? cap : 0);
  atomic_store(&note_buf, cap > 0 ? buf : NULL);
}

char *st__guard_note_new(void) {
  void *p = mmap(NULL, ST__GUARD_NOTE_MAX, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void st__guard_note_free(char *note) {
  if (note != NULL)
    munmap(note, ST__GUARD_NOTE_MAX);
}
