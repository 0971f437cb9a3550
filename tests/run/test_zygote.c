/* SPDX-License-Identifier: MIT */
/* The isolate scheduler's fork server (run/zygote.h) on its own: a spare
 * is this process's child (waitable, killable) in a process group of its
 * own; a spare told a case it does not have exits 124; one never told a
 * case exits 0 when its socket closes, and so does one given a short case
 * message; go to a dead spare fails; a zygote that dies makes take say
 * so, then and ever after; stop reaps the zygote and every spare no case
 * took, however many were asked for. The scheduler's use of it (every
 * isolate test again with the zygote from the first case) is in
 * test_isolate.c. Kept out of the ThreadSanitizer build (it forks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "run/zygote.h"

static void assert_no_children(void) {
  int status;
  assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

/* A zygote of a run of no cases, one slot, expecting `cases` cases. */
static st__zygote *start(st__child *slot, size_t cases) {
  st__zygote *z;
  st__child_init(slot);
  z = st__zygote_start(NULL, NULL, 0, slot, 1, cases);
  assert_non_null(z);
  return z;
}

/* The first spare of z (the first take waits for it), no case after it. */
static void first_spare(st__zygote *z, st__spare *sp) {
  assert_int_equal(st__zygote_take(z, 0, sp), 0);
  assert_true(sp->pid > 0);
}

/* Waits for the spare, which must exit with status want; closes what the
 * scheduler holds of it but its case socket. */
static void assert_spare_exits(st__spare *sp, int want) {
  int status = 0;
  assert_int_equal(waitpid(sp->pid, &status, 0), sp->pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), want);
  close(sp->cap_r);
  close(sp->cap_w);
}

static void zygote__spare_is_our_child_in_its_own_group(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 2);
  st__spare sp;
  int status;
  (void)state;
  /* The first take waits for the zygote's first spare. */
  assert_int_equal(st__zygote_take(z, 1, &sp), 0);
  assert_true(sp.pid > 0);
  assert_int_not_equal(sp.pid, st__zygote_pid(z));
  assert_true(sp.cap_r >= 0 && sp.cap_w >= 0 && sp.go >= 0);
  /* Ours to wait for: alive (not waitable yet), then killed and reaped. */
  assert_int_equal(waitpid(sp.pid, &status, WNOHANG), 0);
  /* Its own group: it makes it itself, and the scheduler (as here) too,
   * whichever comes first (st__child_started); a child of another
   * parent could not be moved. */
  assert_int_equal(setpgid(sp.pid, sp.pid), 0);
  assert_int_equal(getpgid(sp.pid), sp.pid);
  st__zygote_discard(&sp);
  assert_int_equal(kill(sp.pid, 0), -1);
  st__zygote_stop(z);
  assert_no_children();
}

static void zygote__spare_told_a_case_it_lacks_exits_124(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 1);
  st__spare sp;
  int fd = dup(2);
  (void)state;
  first_spare(z, &sp);
  assert_int_equal(st__zygote_go(&sp, 7, 0, fd), 0);
  assert_int_equal(sp.go, -1);
  assert_spare_exits(&sp, 124);
  close(fd);
  st__zygote_stop(z);
  assert_no_children();
}

static void zygote__spare_without_a_case_exits_0(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 1);
  st__spare sp;
  (void)state;
  first_spare(z, &sp);
  close(sp.go);
  assert_spare_exits(&sp, 0);
  st__zygote_stop(z);
  assert_no_children();
}

/* A case message of another size than the protocol's runs nothing: the
 * spare ends as one given no case. */
static void zygote__spare_given_a_short_message_runs_nothing(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 1);
  st__spare sp;
  (void)state;
  first_spare(z, &sp);
  assert_int_equal(st__proc_send_fds(sp.go, "x", 1, NULL, 0), 0);
  close(sp.go);
  assert_spare_exits(&sp, 0);
  st__zygote_stop(z);
  assert_no_children();
}

/* A spare that died before its case cannot be told it: go says so (the
 * scheduler then forks the case's child itself). */
static void zygote__go_to_a_dead_spare_fails(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 1);
  st__spare sp;
  int status, fd = dup(2);
  (void)state;
  first_spare(z, &sp);
  assert_int_equal(kill(sp.pid, SIGKILL), 0);
  assert_int_equal(waitpid(sp.pid, &status, 0), sp.pid);
  assert_int_equal(st__zygote_go(&sp, 0, 0, fd), -1);
  assert_int_equal(sp.go, -1);
  close(sp.cap_r);
  close(sp.cap_w);
  close(fd);
  st__zygote_stop(z);
  assert_no_children();
}

static void zygote__dead_zygote_is_gone_for_good(void **state) {
  st__child slot;
  st__zygote *z = start(&slot, 1000);
  st__spare sp;
  int got, status;
  pid_t w;
  (void)state;
  assert_int_equal(st__zygote_take(z, 999, &sp), 0);
  st__zygote_discard(&sp);
  assert_int_equal(kill(st__zygote_pid(z), SIGKILL), 0);
  /* Spares it made before it died may still come (0), or none be ready
   * (1), until its end shows; then gone, and gone after. */
  while ((got = st__zygote_take(z, 999, &sp)) >= 0)
    if (got == 0)
      st__zygote_discard(&sp);
  assert_int_equal(st__zygote_take(z, 999, &sp), -1);
  st__zygote_stop(z);
  /* A spare the zygote made but died before reporting is a zombie that
   * only the harness's exit reaps (it holds nothing; its socket closed
   * with the zygote, so it exits 0): waited for here. */
  while ((w = waitpid(-1, &status, 0)) > 0) {
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  assert_no_children();
}

static void zygote__stop_reaps_spares_asked_for(void **state) {
  st__child slots[4];
  st__zygote *z;
  st__spare sp;
  size_t i;
  (void)state;
  for (i = 0; i < 4; i++)
    st__child_init(&slots[i]);
  /* Four slots: four spares asked for at once, one taken. */
  z = st__zygote_start(NULL, NULL, 0, slots, 4, 50);
  assert_non_null(z);
  assert_int_equal(st__zygote_take(z, 49, &sp), 0);
  st__zygote_discard(&sp);
  st__zygote_stop(z);
  assert_no_children();
  st__zygote_stop(NULL);
}

/* Resident kB of process pid (VmRSS), or -1. */
static long rss_kb(pid_t pid) {
  char path[64], line[256];
  long kb = -1;
  FILE *f;
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  if ((f = fopen(path, "re")) == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb;
}

/* The zygote makes huge pages only of memory already resident: a 64 MiB
 * mapping with 16 pages written in each 2 MiB stays that sparse in it
 * (collapsing a chunk makes all of it resident: its RSS once it has made
 * its first spare, i.e. after its collapse, is within a few MiB of ours,
 * not 64 MiB above). */
static void zygote__sparse_memory_stays_sparse(void **state) {
  const size_t n = (size_t)64 << 20;
  st__child slot;
  st__zygote *z;
  st__spare sp;
  long ours, its;
  char *p =
      mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  (void)state;
  assert_true(p != MAP_FAILED);
  for (size_t k = 0; k < n; k += (size_t)128 << 10)
    p[k] = 1; /* 16 pages of each 2 MiB: 2 MiB resident in all */
  z = start(&slot, 1);
  first_spare(z, &sp);
  ours = rss_kb(getpid());
  its = rss_kb(st__zygote_pid(z));
  assert_true(ours > 0 && its > 0);
  assert_true(its < ours + 8 * 1024);
  st__zygote_discard(&sp);
  st__zygote_stop(z);
  munmap(p, n);
  assert_no_children();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(zygote__spare_is_our_child_in_its_own_group),
      cmocka_unit_test(zygote__spare_told_a_case_it_lacks_exits_124),
      cmocka_unit_test(zygote__spare_without_a_case_exits_0),
      cmocka_unit_test(zygote__spare_given_a_short_message_runs_nothing),
      cmocka_unit_test(zygote__go_to_a_dead_spare_fails),
      cmocka_unit_test(zygote__dead_zygote_is_gone_for_good),
      cmocka_unit_test(zygote__stop_reaps_spares_asked_for),
      cmocka_unit_test(zygote__sparse_memory_stays_sparse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
