/* SPDX-License-Identifier: MIT */
/* The process helpers of proc.h. Signal names and descriptions come from
 * glibc's sigabbrev_np/sigdescr_np (2.32), which, unlike strsignal, are
 * thread-safe and do not depend on the locale. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
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

void st__proc_describe_wait(int status, char *buf, size_t size) {
  char name[32];
  if (WIFSIGNALED(status)) {
    const char *desc = sigdescr_np(WTERMSIG(status));
    snprintf(buf, size, "killed by signal %s (%s)",
             st__proc_signal_name(WTERMSIG(status), name, sizeof name),
             desc ? desc : "unknown signal");
  } else if (WIFEXITED(status)) {
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

int st__proc_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  /* pidfds are close-on-exec whatever the flags (pidfd_open(2)). */
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  return -1;
#endif
}

/* 0 until first asked; reset in a fork()ed child by the atfork handler,
 * registered once, before the first value is cached (so no fork after
 * the caching can miss it). */
static atomic_int cached_pid;
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

static void pid_atfork_child(void) {
  atomic_store(&cached_pid, (int)getpid());
}

static void pid_register(void) {
  (void)pthread_atfork(NULL, NULL, pid_atfork_child);
}

pid_t st__proc_pid(void) {
  int pid = atomic_load(&cached_pid);
  if (pid != 0)
    return (pid_t)pid;
  pthread_once(&pid_once, pid_register);
  pid = (int)getpid();
  atomic_store(&cached_pid, pid);
  return (pid_t)pid;
}
