/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel starts a helper process that outlives it
 * (D2 of issue 13): platform `spawner`, op `add`. Once per process, the
 * kernel forks a child that leaves the process group (setsid, as a daemon
 * would: killing the case's process group does not reach it) and execs
 * `sleep 1000`. A close-on-exec pipe tells the kernel when the exec has
 * happened, and a poll of /proc/PID/stat when it sleeps; the kernel
 * then writes what the helper's descriptors are
 * (`N TARGET` lines, from /proc/PID/fd) to $ST_TEST_SPAWN_DIR/spawn.PID,
 * so tests/cli/test_hardening.py sees what the helper inherited even if
 * something kills it later. The test kills the helper. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("spawner");

static int spawned;

/* Writes the helper's descriptors, after its exec, to the test's file. */
static int describe(pid_t pid, const char *dir) {
  char path[4096], tmp[4096], fddir[64], link[512], target[4096];
  struct dirent *de;
  DIR *d;
  FILE *f;
  snprintf(fddir, sizeof fddir, "/proc/%ld/fd", (long)pid);
  snprintf(tmp, sizeof tmp, "%s/.spawn.%ld", dir, (long)pid);
  snprintf(path, sizeof path, "%s/spawn.%ld", dir, (long)pid);
  if ((d = opendir(fddir)) == NULL)
    return -1;
  if ((f = fopen(tmp, "we")) == NULL) {
    closedir(d);
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    ssize_t n;
    if (de->d_name[0] == '.')
      continue;
    snprintf(link, sizeof link, "%s/%s", fddir, de->d_name);
    n = readlink(link, target, sizeof target - 1);
    if (n < 0)
      continue;
    target[n] = '\0';
    fprintf(f, "%s %s\n", de->d_name, target);
  }
  closedir(d);
  if (fclose(f) != 0)
    return -1;
  /* Complete or absent: the test reads only finished files. */
  return rename(tmp, path);
}

/* Waits (a bounded poll of /proc, at most 10 s) until the helper sleeps
 * in its nanosleep: between the exec and then, the dynamic loader and
 * setlocale have files of the helper's own open for a moment. */
static void wait_asleep(pid_t pid) {
  char path[64], buf[512], *p;
  int i;
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  for (i = 0; i < 10000; i++) {
    struct timespec ts = {0, 1000 * 1000};
    FILE *f = fopen(path, "re");
    int asleep = 0;
    if (f == NULL)
      return;
    if (fgets(buf, sizeof buf, f) != NULL && (p = strrchr(buf, ')')) != NULL)
      asleep = p[1] == ' ' && p[2] == 'S';
    fclose(f);
    if (asleep)
      return;
    nanosleep(&ts, NULL);
  }
}

static int spawn(void) {
  const char *dir = getenv("ST_TEST_SPAWN_DIR");
  int p[2];
  char c;
  pid_t pid;
  if (dir == NULL || pipe2(p, O_CLOEXEC) != 0)
    return -1;
  pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    setsid();
    execl("/bin/sleep", "sleep", "1000", (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  /* EOF once the exec closed the child's copy of the write end. */
  while (read(p[0], &c, 1) < 0 && errno == EINTR)
    ;
  close(p[0]);
  wait_asleep(pid);
  return describe(pid, dir);
}

static st_status spawning_add(st_op_call *call) {
  size_t i;
  if (!spawned) {
    spawned = 1;
    if (spawn() != 0)
      return st_op_call_fail(call, ST_EKERNEL, "starting the helper failed");
  }
  for (i = 0; i < call->tensors[2].numel; i++)
    st_tensor_set_f64(&call->tensors[2], i,
                      st_tensor_get_f64(&call->tensors[0], i) +
                          st_tensor_get_f64(&call->tensors[1], i));
  return ST_OK;
}

static const char *const platforms[] = {"spawner", NULL};

static st_status spawner_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "spawner", "add", "spawner", spawning_add,
                              err);
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "spawner",
    .platforms = platforms,
    .init = spawner_init,
    .hooks = NULL,
    .n_hooks = 0,
};
