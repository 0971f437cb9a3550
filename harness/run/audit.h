/* SPDX-License-Identifier: MIT */
/* What a child that runs cases looks at after each case that may have run
 * foreign code (docs/reliability.md#the-process-model): the harness's own
 * descriptors (each still open, still the same file), the threads still
 * running (more than when the kernel was first called, the harness's pool
 * left out), and the processes left behind — found independently of any
 * attribute the kernel can change: the subreaper is set again, the
 * child's own children are waited for, and every process created since
 * the case began (the pid namespace's last pid says which) is looked at
 * in /proc for our process group or our pid as its parent.
 * Thread-safety: the child's scheduling thread. */
#ifndef SCENETEST_HARNESS_AUDIT_H
#define SCENETEST_HARNESS_AUDIT_H

#include <stddef.h>
#include <sys/types.h>

#define ST__AUDIT_FDS 8

typedef struct st__audit {
  struct {
    int fd;
    dev_t dev;
    ino_t ino;
    const char *what; /* static text: "the socket to the supervisor" */
  } fds[ST__AUDIT_FDS];
  size_t n_fds;
  int task_fd;    /* /proc/self/task, or -1 */
  int lastpid_fd; /* /proc/sys/kernel/ns_last_pid, or -1 */
  long threads;   /* at the kernel's first call (the pool's left out) */
  int kernel_ran; /* the case's kernel was called */
  long lastpid;   /* at the case's beginning; -1 unknown */
  int fresh;      /* lastpid was read when the last audit ended */
  pid_t pid, pgid;
  int subreaper; /* the child is the subreaper of what its kernels start */
} st__audit;

/* In the child, before its first case, after a zeroed a was given the
 * caller's descriptors (st__audit_keep): opens what the audit reads
 * (opened again should a kernel close them). subreaper: the child has set
 * PR_SET_CHILD_SUBREAPER and wants it kept. */
void st__audit_init(st__audit *a /* OUT */, int subreaper);
/* A descriptor of the harness's that a kernel must leave alone; what is a
 * static string naming it. At most ST__AUDIT_FDS in all. */
void st__audit_keep(st__audit *a /* IN/OUT */, int fd, const char *what);
/* A case begins; its kernel is first called. */
void st__audit_case_begin(st__audit *a /* IN/OUT */);
void st__audit_kernel_begin(st__audit *a /* IN/OUT */);
/* 1 when one of the kept descriptors is closed or is another file now,
 * with why[0..n) saying which; else 0. */
int st__audit_fds(const st__audit *a /* IN */, char *why /* OUT */, size_t n);
/* 1 when more threads run than at st__audit_kernel_begin, with why[0..n)
 * saying how many; else 0 (and 0 for a case whose kernel was not called:
 * threads started by a platform's loading, prepare hook or golden are
 * the platform's). */
int st__audit_threads(st__audit *a /* IN/OUT */, char *why /* OUT */, size_t n);
/* 1 when a process started during the case still runs (a child of ours,
 * or one in our process group); the dead ones are reaped. */
int st__audit_processes(st__audit *a /* IN/OUT */);
/* The threads of this process now, the harness's pool left out; -1 when
 * /proc cannot say. */
long st__audit_thread_count(st__audit *a /* IN/OUT */);

#endif
