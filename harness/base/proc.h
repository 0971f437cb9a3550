/* SPDX-License-Identifier: MIT */
/* Process helpers shared by everything that forks, waits or writes to a
 * pipe: signal names, wait-status descriptions, a write that finishes,
 * pidfds, the cached process id, and the one cap on output captured from a
 * child or worker. */
#ifndef SCENETEST_HARNESS_PROC_H
#define SCENETEST_HARNESS_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include <scenetest/common.h>

/* Output captured from one child (an isolated case) or one worker process
 * is kept up to this many bytes; the rest is counted, not kept. */
#define ST__CAPTURE_MAX ((size_t)1 << 20)

/* "SIGSEGV" for SIGSEGV; "signal N" for one without a name. Returns buf.
 * Thread-safety: any thread. */
const char *st__proc_signal_name(int sig, char *buf /* OUT */, size_t size);
/* The exit statuses the harness's own processes end with when they
 * cannot go on (a case's child, a level-3 worker, the plugin probe), one
 * number each, all from 113 up (clear of the small codes programs use):
 * st__proc_describe_wait puts them into words. A kernel may call exit()
 * with any of them too; the words say whose code it is. */
typedef enum st__exit {
  ST__EXIT_PROBE_NOMEM = 113,     /* plugin probe: out of memory */
  ST__EXIT_WORKER_REPLY = 114,    /* level-3 worker: its reply not sent */
  ST__EXIT_WORKER_NOMEM = 115,    /* level-3 worker: no memory for messages */
  ST__EXIT_WORKER_PROTOCOL = 116, /* level-3 worker: a message it cannot take */
  ST__EXIT_WORKER_SETUP = 117,    /* level-3 worker: its descriptors not set */
  ST__EXIT_CAPTURE = 120,         /* case child: fd 1 and 2 not the capture */
  ST__EXIT_NO_RESULT = 121,       /* case child: the case made no result */
  ST__EXIT_NOMEM = 122,           /* case child: out of memory for its frames */
  ST__EXIT_ORPHANED = 123,        /* case child: its parent gone as it began */
  ST__EXIT_BAD_INDEX = 124,       /* case child: sent a case the run lacks */
  ST__EXIT_CHARGED = 125,         /* ended itself by a check of the harness */
} st__exit;

/* The words for one of st__exit's codes, or NULL for any other status.
 * Thread-safety: any thread. */
const char *st__proc_exit_words(int code);
/* Describes a wait status: "killed by signal SIGSEGV (Segmentation
 * fault)", "exited with status 3", "exited with status 122 (the
 * harness's code for: ...)" for one of st__exit's, or "stopped (wait
 * status 0x...)". Thread-safety: any thread. */
void st__proc_describe_wait(int status, char *buf /* OUT */, size_t size);
/* Writes all of p to fd, retrying EINTR and short writes. ST_EIO when
 * write fails (the other end is gone, say). Thread-safety: one writer per
 * fd (a pipe keeps writes of up to PIPE_BUF bytes whole). */
st_status st__proc_write_all(int fd, const void *p /* IN */, size_t n) ST_WUR;
/* A close-on-exec pidfd of pid, or -1 where the kernel has none (before
 * Linux 5.3, or not permitted). Thread-safety: any thread. */
int st__proc_pidfd_open(pid_t pid);
/* This process's id, cached: getpid(2) is a system call in glibc >= 2.25,
 * and the logger asks for it on every line. A pthread_atfork child
 * handler re-reads it in every child fork() makes, so a child never sees
 * its parent's id. Thread-safety: any thread. */
pid_t st__proc_pid(void);
/* Re-reads the cached id: for a child made by a raw clone(2), which runs no
 * atfork handler (run/zygote.c). Thread-safety: the process's only thread. */
void st__proc_pid_reset(void);

/* The most descriptors one st__proc_send_fds carries (Linux's SCM_MAX_FD). */
#define ST__PROC_MAX_FDS 253u
/* Sends the n bytes at p as one message on the socket sock, with nfds
 * descriptors as SCM_RIGHTS; retries EINTR; never raises SIGPIPE. Returns
 * 0, or -1 (errno set; EINVAL for more than ST__PROC_MAX_FDS).
 * Thread-safety: one sender per socket. */
int st__proc_send_fds(int sock, const void *p /* IN */, size_t n,
                      const int *fds /* IN */, size_t nfds);
/* This process's resident memory that is not backed by a file (resident
 * minus shared, /proc/self/statm), in bytes: what fork(2) copies page
 * tables for. 0 where it cannot be read. Thread-safety: any thread. */
size_t st__proc_private_bytes(void);

/* The state, parent and process group of process pid, from
 * /proc/PID/stat: 1, or 0 when it cannot be read (gone, or no /proc).
 * Thread-safety: any thread. */
int st__proc_stat(long pid, char *state /* OUT */, long *ppid /* OUT */,
                  long *pgrp /* OUT */);
/* Calls fn for each process in /proc until it returns nonzero; returns
 * that value, or 0 (also without /proc). Thread-safety: any thread. */
int st__proc_each(int (*fn)(void *data, long pid), void *data);

/* Kills the process group pgid (whose leader has been waited for) with
 * SIGKILL and waits, up to 2 s, until every member has died (a zombie
 * waiting for whoever reaps orphans counts as dead; read from /proc), so
 * that what a case started is dead before the next case begins. Returns
 * at once when the group is empty.
 * Thread-safety: any thread. */
void st__proc_kill_group(pid_t pgid);
/* fd is the parent's alone (a report, the --events file, a saved fd 1):
 * every child the harness forks closes it first thing
 * (docs/reliability.md#the-process-model: a child holds only its own
 * descriptors; a kernel cannot write into a report). At most 32;
 * st__proc_parent_only_end when it is closed. Thread-safety: the main thread,
 * before the run. */
void st__proc_parent_only(int fd);
void st__proc_parent_only_end(int fd);
/* In a forked child: closes every parent-only descriptor. */
void st__proc_close_parent_only(void);

#endif
