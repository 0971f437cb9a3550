/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel attacks the process it runs in, for
 * tests/cli/test_intruder.py (docs/reliability.md): platform `intruder`,
 * op `scale` (y = s * x, int32), which first does what its scalar says:
 *   0  nothing (a good case)
 *   1  writes 64 bytes of 'A' to every socket among its descriptors (the
 *      supervisor's protocol: read as a frame header, 0x41414141 bytes)
 *   2  closes every descriptor from 3 up
 *   3  starts a thread that waits for the next call of this kernel in the
 *      same process and then calls exit(0)
 *   4  the same, but the thread calls abort()
 *   5  clears PR_SET_CHILD_SUBREAPER, then leaves a `sleep 100` orphaned
 *      (its parent exits), still in the process group; its pid is
 *      appended to $ST_TEST_PIDS
 *   6  prints $ST_TEST_PRINT_MIB MiB (default 8) to stdout, then appends to
 *      $ST_TEST_HELD how many bytes the process's stdout holds now (the
 *      blocks of a regular file, what a pipe has unread): the memory a
 *      capture keeps
 *   7  prints "alive PID" for each pid of $ST_TEST_PIDS still running
 *   8  shuts the reading side of every socket among its descriptors (the
 *      child's socket stays the same file: it hears no more cases)
 * Every call (any scalar) first wakes the threads of 3 and 4. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("intruder");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t woken = PTHREAD_COND_INITIALIZER;
static unsigned long calls; /* guarded by: lock */
static unsigned long
    armed; /* calls when the thread started; guarded by: lock */

/* The thread of behaviours 3 and 4: waits for a later call, then ends
 * the process. */
static void *late(void *arg) {
  int how = (int)(intptr_t)arg;
  pthread_mutex_lock(&lock);
  while (calls == armed)
    pthread_cond_wait(&woken, &lock);
  pthread_mutex_unlock(&lock);
  if (how == 3)
    exit(0);
  abort();
}

static void append(const char *var, long v) {
  const char *f = getenv(var);
  char line[32];
  int fd =
      f != NULL ? open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
  if (fd >= 0) {
    int n = snprintf(line, sizeof line, "%ld\n", v);
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
  }
}

static void stray_bytes(void) {
  char junk[64];
  int fd;
  memset(junk, 'A', sizeof junk);
  for (fd = 3; fd < 1024; fd++) {
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode) &&
        write(fd, junk, sizeof junk) < 0) {
    }
  }
}

static void deafen(void) {
  int fd;
  for (fd = 3; fd < 1024; fd++) {
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode))
      shutdown(fd, SHUT_RD);
  }
}

static void orphan(void) {
  pid_t mid;
  int fds[2], status;
  long pid = 0;
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (pipe2(fds, O_CLOEXEC) != 0)
    return;
  mid = fork();
  if (mid == 0) {
    pid_t s = fork();
    if (s == 0) {
      execlp("sleep", "sleep", "100", (char *)NULL);
      _exit(127);
    }
    pid = (long)s;
    if (write(fds[1], &pid, sizeof pid) < 0) {
    }
    _exit(0);
  }
  close(fds[1]);
  if (read(fds[0], &pid, sizeof pid) == (ssize_t)sizeof pid)
    append("ST_TEST_PIDS", pid);
  close(fds[0]);
  while (mid > 0 && waitpid(mid, &status, 0) < 0)
    ;
}

static void print_much(void) {
  const char *mib = getenv("ST_TEST_PRINT_MIB");
  long n = mib != NULL ? atol(mib) : 8, i;
  static char line[1024];
  struct stat sb;
  int unread = 0;
  memset(line, 'p', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (i = 0; i < n * 1024; i++)
    fwrite(line, 1, sizeof line, stdout);
  fflush(stdout);
  if (fstat(1, &sb) != 0)
    return;
  if (S_ISREG(sb.st_mode))
    append("ST_TEST_HELD", (long)sb.st_blocks * 512);
  else if (ioctl(1, FIONREAD, &unread) == 0)
    append("ST_TEST_HELD", unread);
}

static void alive(void) {
  const char *f = getenv("ST_TEST_PIDS");
  FILE *in = f != NULL ? fopen(f, "re") : NULL;
  long pid;
  while (in != NULL && fscanf(in, "%ld", &pid) == 1) {
    char path[64], buf[512], *p;
    FILE *st;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if ((st = fopen(path, "re")) == NULL)
      continue;
    if (fgets(buf, sizeof buf, st) != NULL && (p = strrchr(buf, ')')) != NULL &&
        p[1] == ' ' && p[2] != 'Z')
      printf("alive %ld\n", pid);
    fclose(st);
  }
  if (in != NULL)
    fclose(in);
  fflush(stdout);
}

static st_status intruder_scale(st_op_call *c) {
  int32_t s = c->n_scalars > 0 ? (int32_t)c->scalars[0].i : 0;
  size_t i;
  pthread_t t;
  pthread_mutex_lock(&lock);
  calls++;
  pthread_cond_broadcast(&woken);
  pthread_mutex_unlock(&lock);
  switch (s) {
  case 1:
    stray_bytes();
    break;
  case 2:
    for (i = 3; i < 4096; i++)
      close((int)i);
    break;
  case 3:
  case 4:
    pthread_mutex_lock(&lock);
    armed = calls;
    pthread_mutex_unlock(&lock);
    if (pthread_create(&t, NULL, late, (void *)(intptr_t)s) == 0)
      pthread_detach(t);
    break;
  case 5:
    orphan();
    break;
  case 6:
    print_much();
    break;
  case 7:
    alive();
    break;
  case 8:
    deafen();
    break;
  default:
    break;
  }
  for (i = 0; i < c->tensors[1].numel; i++)
    st_tensor_set_f64(&c->tensors[1], i,
                      (double)s * st_tensor_get_f64(&c->tensors[0], i));
  return ST_OK;
}

static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "intruder", "scale", "intruder",
                              intruder_scale, err);
}

static const char *const platforms[] = {"intruder", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "intruder", platforms, init};
