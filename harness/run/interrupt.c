/* SPDX-License-Identifier: MIT */
/* The interrupt handlers of interrupt.h: a flag and a self-pipe. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "run/interrupt.h"

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};
static int one_only; /* in-process: the next signal is the default's */

static void on_signal(int sig) {
  int e = errno;
  char c = 1;
  if (got_signal == 0)
    got_signal = sig;
  if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
  }
  /* After the flag (not SA_RESETHAND, which resets before the handler
   * runs): whoever sees the default action back knows the flag is set.
   * sigaction is async-signal-safe. */
  if (one_only) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
  }
  errno = e;
}

void st__intr_install(st__intr *si, int in_process) {
  struct sigaction sa;
  memset(si, 0, sizeof *si);
  got_signal = 0;
  if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    sig_pipe[0] = sig_pipe[1] = -1;
    return; /* no interrupts handled: the default action stays */
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* Forking schedulers want poll to return EINTR at once; in-process,
   * every system call goes on and a second signal is the default's. */
  sa.sa_flags = in_process ? SA_RESTART : 0;
  one_only = in_process;
  sigaction(SIGINT, &sa, &si->intr);
  sigaction(SIGTERM, &sa, &si->term);
  si->installed = 1;
}

void st__intr_restore(st__intr *si) {
  if (!si->installed)
    return;
  sigaction(SIGINT, &si->intr, NULL);
  sigaction(SIGTERM, &si->term, NULL);
  close(sig_pipe[0]);
  close(sig_pipe[1]);
  sig_pipe[0] = sig_pipe[1] = -1;
  si->installed = 0;
}

int st__intr_signal(void) { return got_signal; }

int st__intr_fd(void) { return sig_pipe[0]; }

void st__intr_child(void) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (sig_pipe[0] >= 0) {
    close(sig_pipe[0]);
    close(sig_pipe[1]);
    sig_pipe[0] = sig_pipe[1] = -1;
  }
}

const char *st__intr_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}
