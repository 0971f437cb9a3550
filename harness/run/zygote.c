/* SPDX-License-Identifier: MIT */
/* The isolate scheduler's fork server (zygote.h).
 *
 * Messages: the scheduler asks the zygote for a spare with one byte; the
 * zygote answers each ask with a reply (the spare's pid, or -1 and an
 * errno) carrying, for a spare, both ends of its capture pipe and the
 * scheduler's end of its case socket; the scheduler sends the spare its
 * case (index, slot) with the slot's result file. All over SOCK_SEQPACKET
 * pairs, descriptors as SCM_RIGHTS.
 *
 * The zygote is made with fork(), so every atfork handler runs in it; it
 * then starts no thread, takes no lock and allocates nothing, so a raw
 * clone(2) of it (no atfork handlers: glibc's fork has no CLONE_PARENT) is
 * a consistent copy. The one cached thing a clone must re-read is the
 * process id (base/proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "run/interrupt.h"
#include "run/zygote.h"
#include "wire/msg.h"

struct st__zygote {
  pid_t pid;    /* the zygote */
  int sock;     /* the scheduler's end; the zygote's is closed here */
  size_t asked; /* spares asked for and not yet taken */
  size_t jobs;
  int gone;
  int first; /* no spare taken yet */
  /* What the zygote's copy of this struct gives its spares. */
  st__runctx *rc;
  const st_case_ref *refs;
  size_t n;
  const st__child *slots;
  size_t n_slots;
  pid_t parent;
};

#define MAX_FDS 3

/* Receives one message of exactly len bytes into p, its descriptors (at
 * most MAX_FDS, close-on-exec) into fds; *nfds says how many came. Returns
 * 0, or -1 at end of file, on error or on a message of another size (its
 * descriptors closed). */
static int recv_with_fds(int sock, void *p, size_t len, int *fds,
                         size_t *nfds) {
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
  } u;
  struct iovec iov = {p, len};
  struct msghdr m;
  struct cmsghdr *c;
  ssize_t r;
  size_t k;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = u.buf;
  m.msg_controllen = sizeof u.buf;
  *nfds = 0;
  while ((r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return -1;
  for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
    size_t got;
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (k = 0; k < got; k++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
      if (*nfds < MAX_FDS)
        fds[(*nfds)++] = fd;
      else
        close(fd);
    }
  }
  if ((size_t)r != len || (m.msg_flags & MSG_CTRUNC)) {
    for (k = 0; k < *nfds; k++)
      close(fds[k]);
    *nfds = 0;
    return -1;
  }
  return 0;
}

/* ---- the zygote and its spares ---------------------------------------- */

/* A copy of this process whose parent is our parent: fork() with
 * CLONE_PARENT, which glibc's fork() cannot ask for. */
static pid_t clone_sibling(void) {
#if defined(SYS_clone) && !defined(__s390__)
  /* flags first on every architecture but s390; no stack (the child runs
   * on its copy of ours), no tid words. */
  return (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD),
                        NULL, NULL, NULL, NULL);
#else
  errno = ENOSYS;
  return -1;
#endif
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Mappings larger than this are not looked at: an address-space
 * reservation (a sanitizer's shadow, an allocator's arena) is sparse, and
 * collapsing it would make its holes resident. */
#define COLLAPSE_MAX_MAPPING ((uintptr_t)1 << 30)

/* [a, b), 2 MiB aligned, as huge pages where the kernel can: one chunk at
 * a time, and only a chunk whose every page is resident (mincore), so that
 * nothing is made resident that was not; a chunk that cannot be (part of
 * it shared with a running child, say: EAGAIN, tried again twice; EINVAL
 * where the kernel has no MADV_COLLAPSE or THP is "never") leaves the
 * rest. */
static void collapse_range(uintptr_t a, uintptr_t b) {
  unsigned char vec[HUGE_PAGE / 4096];
  uintptr_t q;
  if (sysconf(_SC_PAGESIZE) != 4096)
    return;
  for (q = a; q < b; q += HUGE_PAGE) {
    int tries, rc = -1;
    size_t k, resident = 0;
    if (mincore((void *)q, HUGE_PAGE, vec) != 0)
      continue;
    for (k = 0; k < sizeof vec; k++)
      resident += vec[k] & 1u;
    if (resident < sizeof vec)
      continue;
    for (tries = 0; tries < 3 && rc != 0; tries++)
      if ((rc = madvise((void *)q, HUGE_PAGE, MADV_COLLAPSE)) != 0 &&
          errno != EAGAIN)
        break;
  }
}

/* Huge pages for the zygote's private anonymous memory where the kernel
 * makes them on request (MADV_COLLAPSE, Linux >= 6.1, THP not "never"):
 * fork copies one entry per 2 MiB instead of 512, so a spare costs the
 * same whatever the run holds; the zygote writes nothing afterwards, so
 * its huge pages stay whole (a spare's write splits only its own copy).
 * Elsewhere nothing changes. Only mappings of at most 1 GiB holding at
 * least 2 MiB (smaps' Rss). Reads /proc/self/smaps without stdio (the
 * zygote allocates nothing: a raw clone must not find a lock taken). */
static void collapse_anonymous(void) {
  char buf[4096];
  size_t have = 0;
  uintptr_t ca = 0, cb = 0; /* the mapping whose Rss line comes next */
  int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  for (;;) {
    char *nl;
    ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
    if (r <= 0)
      break;
    have += (size_t)r;
    buf[have] = '\0';
    while ((nl = strchr(buf, '\n')) != NULL) {
      unsigned long lo, hi, off, kb;
      char perms[8];
      int n = 0;
      *nl = '\0';
      /* A mapping's line, "lo-hi perms offset dev inode [path]": anonymous
       * private rw-p, no path or [heap]; then its fields, "Rss: N kB". */
      if (sscanf(buf, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off,
                 &n) == 4) {
        const char *name = buf + n;
        ca = cb = 0;
        if (strcmp(perms, "rw-p") == 0 &&
            (name[0] == '\0' || strcmp(name, "[heap]") == 0) &&
            hi - lo <= COLLAPSE_MAX_MAPPING) {
          ca = ((uintptr_t)lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
          cb = (uintptr_t)hi & ~(HUGE_PAGE - 1);
        }
      } else if (cb > ca && sscanf(buf, "Rss: %lu kB", &kb) == 1) {
        if (kb >= HUGE_PAGE / 1024)
          collapse_range(ca, cb);
        ca = cb = 0;
      }
      have -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, have + 1);
    }
    if (have == sizeof buf - 1)
      have = 0; /* a line longer than the buffer: not one of ours */
  }
  close(fd);
}

/* A spare: waits for its case, then is the case's child (run/child.h). */
_Noreturn static void spare_main(const st__zygote *z, int sock,
                                 const int cap[2], const int go[2]) {
  unsigned char raw[ST__MSG_ZYGOTE_GO_SIZE];
  st__msg_zygote_go msg;
  int fds[MAX_FDS];
  size_t nfds = 0;
  close(sock);
  close(cap[0]);
  close(go[0]);
  st__proc_pid_reset();
  st__child_detach(z->parent);
  /* End of file: the run ended without giving us a case. */
  if (recv_with_fds(go[1], raw, sizeof raw, fds, &nfds) != 0 || nfds != 1)
    _exit(0);
  if (st__msg_zygote_go_get(raw, sizeof raw, &msg) != 0)
    _exit(ST__EXIT_BAD_INDEX);
  close(go[1]);
  if (msg.index >= z->n || msg.slot >= z->n_slots)
    _exit(ST__EXIT_BAD_INDEX);
  st__child_enter(z->rc, &z->refs[msg.index], (size_t)msg.index, z->n, fds[0],
                  cap[1], z->slots[msg.slot].fault);
}

/* Tells the scheduler of a spare (rp->pid > 0, its nfds descriptors
 * fds) or of why none was made. */
static void tell(int sock, const st__msg_zygote_spare *rp, const int *fds,
                 size_t nfds) {
  unsigned char raw[ST__MSG_ZYGOTE_SPARE_SIZE];
  st__msg_zygote_spare_put(raw, rp);
  (void)st__proc_send_fds(sock, raw, sizeof raw, fds, nfds);
}

/* Makes one spare and tells the scheduler. */
static void spawn(const st__zygote *z, int sock) {
  int cap[2], go[2];
  st__msg_zygote_spare rp = {-1, 0};
  pid_t pid;
  if (pipe2(cap, O_CLOEXEC) != 0) {
    rp.err = errno;
    tell(sock, &rp, NULL, 0);
    return;
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) != 0) {
    rp.err = errno;
    close(cap[0]);
    close(cap[1]);
    tell(sock, &rp, NULL, 0);
    return;
  }
  pid = clone_sibling();
  if (pid == 0)
    spare_main(z, sock, cap, go);
  if (pid < 0) {
    rp.err = errno;
    tell(sock, &rp, NULL, 0);
  } else {
    int fds[3];
    fds[0] = cap[0];
    fds[1] = cap[1];
    fds[2] = go[0];
    rp.pid = (int32_t)pid;
    /* Not delivered (the scheduler is gone): the spare's socket closes
     * with ours, and it exits. */
    tell(sock, &rp, fds, 3);
  }
  close(cap[0]);
  close(cap[1]);
  close(go[0]);
  close(go[1]);
}

_Noreturn static void zygote_main(const st__zygote *z, int sock) {
  size_t i;
  char ask;
  ssize_t r;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != z->parent)
    _exit(0);
  /* The scheduler is what SIGINT and SIGTERM stop
   * (docs/reliability.md#interrupts); its interrupt pipe, reports and slots are
   * not ours. */
  st__intr_child();
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  st__proc_close_parent_only();
  collapse_anonymous();
  for (i = 0; i < z->n_slots; i++)
    st__child_close_copies(&z->slots[i]);
  for (;;) {
    while ((r = read(sock, &ask, 1)) < 0 && errno == EINTR)
      ;
    if (r <= 0)
      _exit(0);
    spawn(z, sock);
  }
}

/* ---- the scheduler's side --------------------------------------------- */

static int ask(st__zygote *z) {
  char c = 'f';
  if (send(z->sock, &c, 1, MSG_NOSIGNAL) != 1)
    return -1;
  z->asked++;
  return 0;
}

/* Asks for spares until as many are on their way as slots, but no more
 * than the `left` cases still to start want. */
static void ask_ahead(st__zygote *z, size_t left) {
  while (!z->gone && z->asked < z->jobs && z->asked < left)
    if (ask(z) != 0)
      z->gone = 1;
}

/* The zygote's next reply: 1 with a spare, 0 for a spawn that failed
 * (errno says why), -1 at its end (or on a broken reply). */
static int next_spare(st__zygote *z, st__spare *sp) {
  unsigned char raw[ST__MSG_ZYGOTE_SPARE_SIZE];
  st__msg_zygote_spare rp;
  int fds[MAX_FDS];
  size_t nfds, k;
  if (recv_with_fds(z->sock, raw, sizeof raw, fds, &nfds) != 0)
    return -1;
  if (st__msg_zygote_spare_get(raw, sizeof raw, &rp) != 0) {
    for (k = 0; k < nfds; k++)
      close(fds[k]);
    return -1; /* a broken reply */
  }
  if (rp.pid > 0 && nfds == 3) {
    sp->pid = (pid_t)rp.pid;
    sp->cap_r = fds[0];
    sp->cap_w = fds[1];
    sp->go = fds[2];
    return 1;
  }
  for (k = 0; k < nfds; k++)
    close(fds[k]);
  if (rp.pid > 0)
    return -1; /* a spare without its descriptors: not ours to judge */
  errno = rp.err;
  return 0;
}

void st__zygote_discard(st__spare *sp) {
  int status;
  if (sp->go >= 0)
    close(sp->go);
  close(sp->cap_r);
  close(sp->cap_w);
  kill(sp->pid, SIGKILL);
  while (waitpid(sp->pid, &status, 0) < 0 && errno == EINTR)
    ;
}

st__zygote *st__zygote_start(st__runctx *rc, const st_case_ref *refs, size_t n,
                             const st__child *slots, size_t n_slots,
                             size_t cases) {
  st__zygote *z = calloc(1, sizeof *z);
  int sv[2];
  if (z == NULL)
    return NULL;
  z->rc = rc;
  z->refs = refs;
  z->n = n;
  z->slots = slots;
  z->n_slots = n_slots;
  z->jobs = n_slots;
  z->parent = getpid();
  z->first = 1;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    free(z);
    return NULL;
  }
  /* Nothing buffered is written twice (the zygote's copies are empty, and
   * so are its spares'). */
  fflush(NULL);
  z->pid = fork();
  if (z->pid == 0) {
    close(sv[0]);
    zygote_main(z, sv[1]);
  }
  close(sv[1]);
  if (z->pid < 0) {
    close(sv[0]);
    free(z);
    return NULL;
  }
  z->sock = sv[0];
  ask_ahead(z, cases);
  return z;
}

int st__zygote_take(st__zygote *z, size_t left, st__spare *out) {
  struct pollfd pf;
  int got = 1;
  if (z->gone)
    return -1;
  pf.fd = z->sock;
  pf.events = POLLIN;
  pf.revents = 0;
  /* The first waits: while the zygote makes its huge pages, a fork here
   * would share them again (a page another process maps is not
   * collapsed). */
  if (z->asked == 0 || poll(&pf, 1, z->first ? -1 : 0) != 1)
    got = 0; /* none made yet: this case forks its own */
  else if (next_spare(z, out) != 1) {
    z->gone = 1;
    return -1;
  }
  if (got)
    z->asked--;
  z->first = 0;
  ask_ahead(z, left); /* the next ones made while this one runs */
  return got ? 0 : 1;
}

int st__zygote_go(st__spare *sp, size_t index, size_t slot, int res_fd) {
  unsigned char raw[ST__MSG_ZYGOTE_GO_SIZE];
  st__msg_zygote_go msg;
  int rc;
  msg.index = index;
  msg.slot = slot;
  st__msg_zygote_go_put(raw, &msg);
  rc = st__proc_send_fds(sp->go, raw, sizeof raw, &res_fd, 1);
  close(sp->go);
  sp->go = -1;
  return rc;
}

pid_t st__zygote_pid(const st__zygote *z) { return z->pid; }

void st__zygote_stop(st__zygote *z) {
  st__spare sp;
  int status;
  if (z == NULL)
    return;
  /* The zygote answers every ask it has read, then sees end of file. */
  shutdown(z->sock, SHUT_WR);
  for (;;) {
    int got = next_spare(z, &sp);
    if (got < 0)
      break;
    if (got > 0)
      st__zygote_discard(&sp);
  }
  close(z->sock);
  while (waitpid(z->pid, &status, 0) < 0 && errno == EINTR)
    ;
  free(z);
}
