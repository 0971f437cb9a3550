/* SPDX-License-Identifier: MIT */
/* The after-case audit of a child that runs cases (audit.h). Cheap when
 * nothing happened: an fstat per kept descriptor, a listing of
 * /proc/self/task at the kernel's first call and after the case (reading
 * /proc/self/stat costs three times as much: it sums every thread's
 * times), a prctl, a waitid and a pread of the pid namespace's last pid;
 * /proc is read process by process only for the pids created since the
 * case began. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/pool.h"
#include "base/proc.h"
#include "run/audit.h"

/* Beyond this many pids created during a case, /proc is listed instead
 * of looked at pid by pid. */
#define RANGE_MAX 4096

/* Reads a small /proc file from its start into buf (NUL-terminated);
 * the length, or -1. */
static ssize_t read_at0(int fd, char *buf, size_t n) {
  ssize_t k;
  if (fd < 0)
    return -1;
  do
    k = pread(fd, buf, n - 1, 0);
  while (k < 0 && errno == EINTR);
  if (k < 0)
    return -1;
  buf[k] = '\0';
  return k;
}

static long last_pid(st__audit *a) {
  char buf[32];
  if (read_at0(a->lastpid_fd, buf, sizeof buf) <= 0) {
    /* Closed by a kernel, say: opened again, once. */
    if (a->lastpid_fd >= 0)
      close(a->lastpid_fd);
    a->lastpid_fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
    if (read_at0(a->lastpid_fd, buf, sizeof buf) <= 0)
      return -1;
  }
  return strtol(buf, NULL, 10);
}

/* The entries of the directory fd (its threads), or -1. */
static long count_entries(int fd) {
  char buf[4096];
  long n = 0, k;
  if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0)
    return -1;
  while ((k = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
    long at = 0;
    while (at < k) {
      const struct dirent64 *d = (const struct dirent64 *)(buf + at);
      n += d->d_name[0] != '.';
      at += d->d_reclen;
    }
  }
  return k < 0 ? -1 : n;
}

void st__audit_init(st__audit *a, int subreaper) {
  a->pid = getpid();
  a->pgid = getpgid(0);
  a->subreaper = subreaper;
  a->task_fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  a->lastpid_fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
  a->threads = st__audit_thread_count(a);
  a->lastpid = last_pid(a);
  a->fresh = 1;
}

void st__audit_keep(st__audit *a, int fd, const char *what) {
  struct stat sb;
  if (fd < 0 || a->n_fds >= ST__AUDIT_FDS || fstat(fd, &sb) != 0)
    return;
  a->fds[a->n_fds].fd = fd;
  a->fds[a->n_fds].dev = sb.st_dev;
  a->fds[a->n_fds].ino = sb.st_ino;
  a->fds[a->n_fds].what = what;
  a->n_fds++;
}

long st__audit_thread_count(st__audit *a) {
  long n = count_entries(a->task_fd);
  if (n < 0) {
    if (a->task_fd >= 0)
      close(a->task_fd);
    a->task_fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    n = count_entries(a->task_fd);
  }
  return n < 0 ? -1 : n - (long)st__pool_workers();
}

void st__audit_case_begin(st__audit *a) {
  /* The last audit's reading still holds: only the harness ran since. */
  if (!a->fresh)
    a->lastpid = last_pid(a);
  a->fresh = 0;
  a->kernel_ran = 0;
}

void st__audit_kernel_begin(st__audit *a) {
  a->threads = st__audit_thread_count(a);
  a->kernel_ran = 1;
}

int st__audit_fds(const st__audit *a, char *why, size_t n) {
  size_t i, k = 0, bad = 0;
  for (i = 0; i < a->n_fds; i++) {
    struct stat sb;
    int gone = fstat(a->fds[i].fd, &sb) != 0;
    if (!gone && sb.st_dev == a->fds[i].dev && sb.st_ino == a->fds[i].ino)
      continue;
    /* Each one named, as far as why has room. */
    if (k < n)
      k += (size_t)snprintf(why + k, n - k, "%s%d (%s%s)",
                            bad == 0 ? "closed or replaced the harness's "
                                       "descriptors "
                                     : ", ",
                            a->fds[i].fd, a->fds[i].what,
                            gone ? "" : ", replaced");
    bad++;
  }
  return bad > 0;
}

int st__audit_threads(st__audit *a, char *why, size_t n) {
  long now;
  if (!a->kernel_ran)
    return 0;
  now = st__audit_thread_count(a);
  if (now < 0 || a->threads < 0 || now <= a->threads)
    return 0;
  snprintf(why, n,
           "left %ld thread%s running after its kernel returned (a kernel's "
           "threads must end before it returns)",
           now - a->threads, now - a->threads == 1 ? "" : "s");
  return 1;
}

/* Whether process pid (not ours, not one of our threads) runs in our
 * process group or as our child. */
static int ours_running(void *data, long pid) {
  const st__audit *a = data;
  char path[64], state;
  long ppid, pgrp;
  if (pid == (long)a->pid)
    return 0;
  if (!st__proc_stat(pid, &state, &ppid, &pgrp) || state == 'Z' ||
      state == 'X' || (pgrp != (long)a->pgid && ppid != (long)a->pid))
    return 0;
  /* A thread of this process (its /proc/TID is reachable by tid). */
  snprintf(path, sizeof path, "/proc/self/task/%ld", pid);
  return access(path, F_OK) != 0;
}

int st__audit_processes(st__audit *a) {
  long from = a->lastpid, to, p;
  /* Set again: a kernel may have cleared it (what it orphans then goes
   * to init), which is why what follows does not rely on it. */
  if (a->subreaper)
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  for (;;) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) != 0) {
      if (errno == EINTR)
        return 1;
      break; /* ECHILD: no child of ours */
    }
    if (si.si_pid == 0)
      return 1; /* a child still runs */
  }
  to = last_pid(a);
  a->lastpid = to;
  a->fresh = 1;
  if (from < 0 || to < 0)
    return st__proc_each(ours_running, a);
  if (to == from)
    return 0; /* no process (nor thread) was created anywhere since */
  if (to < from || to - from > RANGE_MAX)
    return st__proc_each(ours_running, a); /* wrapped around, or many */
  for (p = from + 1; p <= to; p++)
    if (ours_running(a, p))
      return 1;
  return 0;
}
