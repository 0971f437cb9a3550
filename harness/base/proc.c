/* SPDX-License-Identifier: MIT */
/* The process helpers of proc.h. Signal names and descriptions come from
 * glibc's sigabbrev_np/sigdescr_np (2.32), which, unlike strsignal, are
 * thread-safe and do not depend on the locale. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

const char *st__proc_signal_name(int sig, char *buf, size_t size) {
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev != NULL)
    snprintf(buf, size, "SIG%s", abbrev);
  else
    snprintf(buf, size, "signal %d", sig);
  return buf;
}

const char *st__proc_exit_words(int code) {
  switch (code) {
  case ST__EXIT_PROBE_NOMEM:
    return "the plugin probe ran out of memory";
  case ST__EXIT_WORKER_REPLY:
    return "a level-3 worker could not send its reply";
  case ST__EXIT_WORKER_NOMEM:
    return "a level-3 worker had no memory for its messages";
  case ST__EXIT_WORKER_PROTOCOL:
    return "a level-3 worker got a message it cannot take";
  case ST__EXIT_WORKER_SETUP:
    return "a level-3 worker could not set up its descriptors";
  case ST__EXIT_CAPTURE:
    return "its fd 1 and 2 could not become the capture";
  case ST__EXIT_NO_RESULT:
    return "the case made no result (out of memory)";
  case ST__EXIT_NOMEM:
    return "out of memory encoding what it sends";
  case ST__EXIT_ORPHANED:
    return "its parent was gone as it began";
  case ST__EXIT_BAD_INDEX:
    return "it was sent a case the run does not have";
  case ST__EXIT_CHARGED:
    return "it ended itself by a check of the harness";
  default:
    return NULL;
  }
}

void st__proc_describe_wait(int status, char *buf, size_t size) {
  char name[32];
  if (WIFSIGNALED(status)) {
    const char *desc = sigdescr_np(WTERMSIG(status));
    snprintf(buf, size, "killed by signal %s (%s)",
             st__proc_signal_name(WTERMSIG(status), name, sizeof name),
             desc ? desc : "unknown signal");
  } else if (WIFEXITED(status)) {
    const char *words = st__proc_exit_words(WEXITSTATUS(status));
    if (words != NULL)
      snprintf(buf, size, "exited with status %d (the harness's code for: %s)",
               WEXITSTATUS(status), words);
    else
      snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
  } else {
    snprintf(buf, size, "stopped (wait status %#x)", (unsigned)status);
  }
}

st_status st__proc_write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return ST_EIO;
    }
    c += w;
    n -= (size_t)w;
  }
  return ST_OK;
}

/* SCENETEST_TEST_NO_PIDFD (test-only, docs/reliability.md): set, no
 * pidfd is ever had, as under valgrind or before Linux 5.3, so that the
 * fallbacks are tested on a kernel that has pidfds. Read once. */
static int no_pidfd(void) {
  static int cached = -1;
  if (cached < 0) {
    const char *v = getenv("SCENETEST_TEST_NO_PIDFD");
    cached = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
  }
  return cached;
}

int st__proc_pidfd_open(pid_t pid) {
  if (no_pidfd())
    return -1;
#ifdef SYS_pidfd_open
  /* pidfds are close-on-exec whatever the flags (pidfd_open(2)). */
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  return -1;
#endif
}

/* The parent-only descriptors (st__proc_parent_only). */
static int parent_fds[32];
static size_t n_parent_fds;

void st__proc_parent_only(int fd) {
  if (fd >= 0 && n_parent_fds < sizeof parent_fds / sizeof parent_fds[0])
    parent_fds[n_parent_fds++] = fd;
}

void st__proc_parent_only_end(int fd) {
  size_t i;
  for (i = 0; i < n_parent_fds; i++)
    if (parent_fds[i] == fd) {
      parent_fds[i] = parent_fds[--n_parent_fds];
      return;
    }
}

void st__proc_close_parent_only(void) {
  size_t i;
  for (i = 0; i < n_parent_fds; i++)
    close(parent_fds[i]);
  n_parent_fds = 0;
}

int st__proc_stat(long pid, char *state, long *ppid, long *pgrp) {
  char path[64], buf[512];
  const char *p;
  ssize_t n;
  int fd;
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return 0;
  do
    n = pread(fd, buf, sizeof buf - 1, 0);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The fields after the command's closing parenthesis. */
  p = strrchr(buf, ')');
  return p != NULL && sscanf(p + 1, " %c %ld %ld", state, ppid, pgrp) == 3;
}

int st__proc_each(int (*fn)(void *data, long pid), void *data) {
  DIR *d = opendir("/proc");
  struct dirent *de;
  int found = 0;
  if (d == NULL)
    return 0;
  while (!found && (de = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(de->d_name, &end, 10);
    if (de->d_name[0] >= '1' && de->d_name[0] <= '9' && *end == '\0')
      found = fn(data, pid);
  }
  closedir(d);
  return found;
}

/* 1 if process pid is of group *pgid and has not died yet (a zombie has:
 * whoever reaps orphans may take its time, or never). */
static int alive_in_group(void *pgid, long pid) {
  char state;
  long ppid, pgrp;
  return st__proc_stat(pid, &state, &ppid, &pgrp) &&
         pgrp == (long)*(const pid_t *)pgid && state != 'Z' && state != 'X';
}

/* 1 if a process of group pgid has not died yet. Reads /proc; 0 without. */
static int group_alive(pid_t pgid) {
  return st__proc_each(alive_in_group, &pgid);
}

void st__proc_kill_group(pid_t pgid) {
  int i;
  if (pgid <= 0 || kill(-pgid, SIGKILL) != 0)
    return; /* ESRCH: nothing in it */
  /* SIGKILL is delivered asynchronously: until every member is dead (a
   * zombie at least; only a group that had members is looked at). */
  for (i = 0; i < 2000 && kill(-pgid, 0) == 0 && group_alive(pgid); i++) {
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
  }
}

/* 0 until first asked; reset in a fork()ed child by the atfork handler,
 * registered once, before the first value is cached (so no fork after
 * the caching can miss it). */
static atomic_int cached_pid;
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

static void pid_atfork_child(void) { atomic_store(&cached_pid, (int)getpid()); }

static void pid_register(void) {
  (void)pthread_atfork(NULL, NULL, pid_atfork_child);
}

int st__proc_send_fds(int sock, const void *p, size_t n, const int *fds,
                      size_t nfds) {
  struct msghdr mh;
  struct iovec iov;
  union {
    char buf[CMSG_SPACE(sizeof(int) * ST__PROC_MAX_FDS)];
    struct cmsghdr align;
  } u;
  ssize_t w;
  if (nfds > ST__PROC_MAX_FDS) {
    errno = EINVAL;
    return -1;
  }
  memset(&mh, 0, sizeof mh);
  iov.iov_base = (void *)(uintptr_t)p;
  iov.iov_len = n;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (nfds > 0) {
    struct cmsghdr *c;
    memset(&u, 0, sizeof u);
    mh.msg_control = u.buf;
    mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
  }
  do
    w = sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  return w == (ssize_t)n ? 0 : -1;
}

size_t st__proc_private_bytes(void) {
  char buf[128];
  unsigned long size, resident, shared;
  ssize_t n;
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  if (sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3 ||
      shared > resident)
    return 0;
  return (size_t)(resident - shared) * (size_t)sysconf(_SC_PAGESIZE);
}

void st__proc_pid_reset(void) { atomic_store(&cached_pid, (int)getpid()); }

pid_t st__proc_pid(void) {
  int pid = atomic_load(&cached_pid);
  if (pid != 0)
    return (pid_t)pid;
  pthread_once(&pid_once, pid_register);
  pid = (int)getpid();
  atomic_store(&cached_pid, pid);
  return (pid_t)pid;
}
