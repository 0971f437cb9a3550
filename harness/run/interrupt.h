/* SPDX-License-Identifier: MIT */
/* SIGINT and SIGTERM during a run (docs/reliability.md#interrupts): what every
 * scheduler that handles them shares. While installed, a signal is only noted
 * (the first one wins) and a byte written to a pipe the scheduler can poll; the
 * scheduler then stops dispatching, kills its children's process groups,
 * makes the running cases errors ("interrupted") and the unrun ones
 * skips, and st_run finishes every report. In-process (the cases run on
 * this process's threads) a second signal ends the process at once: the
 * handler puts the default action back once it has noted the first (a
 * kernel that hangs cannot be stopped from inside). Thread-safety: install and
 * restore on the scheduling thread; st__intr_signal from any thread. */
#ifndef SCENETEST_HARNESS_INTERRUPT_H
#define SCENETEST_HARNESS_INTERRUPT_H

#include <signal.h>

typedef struct st__intr {
  struct sigaction intr, term; /* what was there before */
  int installed;
} st__intr;

/* Installs the handlers (in_process: SA_RESTART, so that no write of a
 * report fails with EINTR, and one signal only, as above). Where no pipe can be
 * made, nothing is installed and the default actions stay. */
void st__intr_install(st__intr *si /* OUT */, int in_process);
/* Puts back what was there before and closes the pipe. */
void st__intr_restore(st__intr *si /* IN/OUT */);
/* The signal that arrived (SIGINT or SIGTERM), or 0. */
int st__intr_signal(void);
/* The pipe's read end (readable once a signal came), or -1. */
int st__intr_fd(void);
/* In a forked child: the default actions back, the pipe closed. */
void st__intr_child(void);
/* "SIGINT" or "SIGTERM". */
const char *st__intr_name(int sig);

#endif
