/* SPDX-License-Identifier: MIT */
/* Test plugins, one source built several ways (-DKIND=...):
 *   GOOD      platform "lazyplat", registers add (declared in a note)
 *   FAILINIT  platform "flaky", init fails the first time after registering
 *             half of its ops
 *   BADABI    a descriptor with ABI version 99
 *   NODESC    no scenetest_module at all
 *   NONOTE    a good descriptor without the platform note
 *   MISMATCH  note says "declared", descriptor says "actual"
 *   EMPTYNOTE a platform note that lists no platform
 *   CONFLICT  platform "clash": its init registers a different add on the
 *             built-in "cpu" backend (a conflicting registration)
 *   PRINTS    platform "printer": an add that writes to stdout and stderr
 *             (reports must stay intact)
 *   HANGS     platform "hanger": an add that never returns
 *   WAITS     platform "waiter": an add that first reads one byte from the
 *             FIFO named by $ST_TEST_WAIT_FIFO (a test releases each call)
 *   SPIN1     platform "spin": add, computed once
 *   SPIN2     platform "spin": the same add computed twice over, so the
 *             same scene::case takes twice the work (for `compare`)
 *   ABI1      platform "old": a descriptor in plugin ABI 1's layout
 *   NONAME    an ABI 2 descriptor whose name is NULL
 *   SMALLDESC an ABI 2 descriptor whose size is 8 (set by hand, wrongly)
 *   HOOKS     platform "hooked": prepare/release hooks, registers add
 *   HTMLHOSTILE platform "htmlhostile", for the HTML report: add prints
 *             markup that would run script if a report let it through
 *             (and a NUL, invalid UTF-8, controls) and then fails with
 *             that text as its message; mul is correct after printing it
 *             (and after loading the library $ST_TEST_DLOPEN names, if set);
 *             sub computes a wrong result (a mismatch)
 *   MISBEHAVES platform "misbehave": a `scale` (y = s * x, int32) that
 *             first misbehaves as its scalar says (see misbehave()), for
 *             the supervised run's tests (tests/cli/test_supervise.py)
 * (C++ plugins are in test_plugin_cxx.cpp.) */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#define GOOD 1
#define FAILINIT 2
#define BADABI 3
#define NODESC 4
#define NONOTE 5
#define MISMATCH 6
#define PRINTS 7
#define CONFLICT 9
#define EMPTYNOTE 10
#define HANGS 8
#define SPIN1 11
#define WAITS 13
#define SPIN2 12
#define ABI1 14
#define NONAME 15
#define SMALLDESC 16
#define HOOKS 17
#define HTMLHOSTILE 18
#define MISBEHAVES 19

__attribute__((unused)) static st_status plugin_add(st_op_call *c) {
  size_t i;
  for (i = 0; i < c->tensors[2].numel; i++)
    st_tensor_set_f64(&c->tensors[2], i,
                      st_tensor_get_f64(&c->tensors[0], i) +
                          st_tensor_get_f64(&c->tensors[1], i));
  return ST_OK;
}

#if KIND == WAITS
ST_PLUGIN_PLATFORMS("waiter");
static const char *const platforms[] = {"waiter", NULL};
/* Blocks until the test writes a byte: the run is held with a case in
 * flight, so the test can look at the terminal at that moment. */
static st_status wait_add(st_op_call *c) {
  const char *path = getenv("ST_TEST_WAIT_FIFO");
  char b;
  int fd = path != NULL ? open(path, O_RDONLY) : -1;
  if (fd >= 0) {
    if (read(fd, &b, 1) != 1) {
    }
    close(fd);
  }
  return plugin_add(c);
}
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "waiter", "add", "waiter", wait_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "waiter", platforms, init};
#elif KIND == SPIN1 || KIND == SPIN2
ST_PLUGIN_PLATFORMS("spin");
static const char *const platforms[] = {"spin", NULL};
/* The whole add, LOOPS times: the element accessors are calls into the
 * harness, so the compiler cannot fold the repetitions away. */
static st_status spin_add(st_op_call *c) {
  int k;
  for (k = 0; k < (KIND == SPIN2 ? 2 : 1); k++) {
    st_status rc = plugin_add(c);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "spin", "add", "spin", spin_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "spin", platforms, init};
#elif KIND == GOOD
ST_PLUGIN_PLATFORMS("lazyplat");
static const char *const platforms[] = {"lazyplat", NULL};
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "lazy_good", "add", "lazyplat", plugin_add,
                              err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "lazy_good", platforms, init};
#elif KIND == FAILINIT
ST_PLUGIN_PLATFORMS("flaky");
static const char *const platforms[] = {"flaky", NULL};
static int calls;
static st_status init(st_registry *reg, st_error *err) {
  st_status rc =
      st_registry_register(reg, "flaky", "copy2", "flaky", plugin_add, err);
  if (rc != ST_OK)
    return rc;
  if (++calls == 1)
    return st_error_set(err, ST_EKERNEL, "device busy on first init");
  return st_registry_register(reg, "flaky", "add", "flaky", plugin_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "flaky", platforms, init};
#elif KIND == BADABI
static const char *const platforms[] = {"future", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    99, sizeof(st_module), "future", platforms, NULL};
#elif KIND == NODESC
__attribute__((visibility("default"))) int not_a_descriptor = 1;
#elif KIND == NONOTE
static const char *const platforms[] = {"nonote", NULL};
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "nonote", "add", "nonote", plugin_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "nonote", platforms, init};
#elif KIND == MISMATCH
ST_PLUGIN_PLATFORMS("declared");
static const char *const platforms[] = {"actual", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "mismatch", platforms, NULL};
#elif KIND == EMPTYNOTE
ST_PLUGIN_PLATFORMS("");
static const char *const platforms[] = {NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "emptynote", platforms, NULL};
#elif KIND == CONFLICT
ST_PLUGIN_PLATFORMS("clash");
static const char *const platforms[] = {"clash", NULL};
static st_status init(st_registry *reg, st_error *err) {
  st_status rc =
      st_registry_register(reg, "clash", "add", "clash", plugin_add, err);
  if (rc != ST_OK)
    return rc;
  return st_registry_register(reg, "clash", "add", "cpu", plugin_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "clash", platforms, init};
#elif KIND == PRINTS
#include <stdio.h>
ST_PLUGIN_PLATFORMS("printer");
static const char *const platforms[] = {"printer", NULL};
static st_status noisy_add(st_op_call *c) {
  /* Looks like TAP on purpose: it must not reach the report. */
  printf("ok 999 - printed by a kernel\nnot ok 1000 - also printed\n");
  fflush(stdout);
  fprintf(stderr, "kernel diagnostics on stderr\n");
  return plugin_add(c);
}
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "printer", "add", "printer", noisy_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "printer", platforms, init};
#elif KIND == HANGS
#include <unistd.h>
ST_PLUGIN_PLATFORMS("hanger");
static const char *const platforms[] = {"hanger", NULL};
/* A kernel that never returns: only a signal ends it. */
static st_status hanging_add(st_op_call *c) {
  (void)c;
  for (;;)
    pause();
  return ST_OK;
}
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "hanger", "add", "hanger", hanging_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "hanger", platforms, init};
#elif KIND == ABI1
ST_PLUGIN_PLATFORMS("old");
static const char *const platforms[] = {"old", NULL};
/* st_module as plugin ABI 1 had it: no size, no hooks. */
struct module_v1 {
  uint32_t abi_version;
  const char *name;
  const char *const *platforms;
  st_status (*init)(st_registry *reg, st_error *err);
};
__attribute__((visibility("default")))
const struct module_v1 scenetest_module = {1, "old", platforms, NULL};
#elif KIND == NONAME
ST_PLUGIN_PLATFORMS("noname");
static const char *const platforms[] = {"noname", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), NULL, platforms, NULL};
#elif KIND == SMALLDESC
ST_PLUGIN_PLATFORMS("small");
static const char *const platforms[] = {"small", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, 8, "small", platforms, NULL};
#elif KIND == HOOKS
ST_PLUGIN_PLATFORMS("hooked");
static const char *const platforms[] = {"hooked", NULL};
static st_status prepare(st_op_call *call, void **state) {
  (void)call;
  *state = NULL;
  return ST_OK;
}
static void release(st_op_call *call, void *state) {
  (void)call;
  (void)state;
}
static const st_platform_hooks hooks[] = {
    {sizeof(st_platform_hooks), "hooked", prepare, release}};
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "hooked", "add", "hooked", plugin_add, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "hooked", platforms, init, hooks, 1};
#elif KIND == HTMLHOSTILE
#include <dlfcn.h>
#include <stdio.h>
ST_PLUGIN_PLATFORMS("htmlhostile");
static const char *const platforms[] = {"htmlhostile", NULL};
/* Each would change the page's title if it ran or were parsed as markup;
 * then the end of a <pre>, a CDATA end, a comment start, an entity, a C0
 * control and DEL, and bytes that are not UTF-8 (a lone 0xff, an overlong
 * '/'). */
#define HTML_HOSTILE                                                           \
  "<script>document.title='INJECTED'</script></pre>"                           \
  "<img src=x onerror=\"document.title='INJECTED'\">"                          \
  "</textarea></details>]]><!-- &amp; 'q' ctl\x01\x7f bad\xff\xc0\xaf end"
static void print_hostile(void) {
  static const char with_nul[] = "before-nul\0after-nul\n";
  fputs("captured: " HTML_HOSTILE "\n", stdout);
  fwrite(with_nul, 1, sizeof with_nul - 1, stdout);
  fflush(stdout);
}
static st_status hostile_fail(st_op_call *c) {
  print_hostile();
  return st_op_call_fail(c, ST_EKERNEL, "%s", HTML_HOSTILE);
}
static st_status hostile_mul(st_op_call *c) {
  const char *lib = getenv("ST_TEST_DLOPEN");
  size_t i;
  /* A library loaded during run, after the record: a stale record when
   * it is watched. Kept loaded on purpose. */
  if (lib != NULL)
    (void)dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  print_hostile();
  for (i = 0; i < c->tensors[2].numel; i++)
    st_tensor_set_f64(&c->tensors[2], i,
                      st_tensor_get_f64(&c->tensors[0], i) *
                          st_tensor_get_f64(&c->tensors[1], i));
  return ST_OK;
}
static st_status wrong_sub(st_op_call *c) {
  size_t i;
  for (i = 0; i < c->tensors[2].numel; i++)
    st_tensor_set_f64(&c->tensors[2], i,
                      st_tensor_get_f64(&c->tensors[0], i) + 1.0);
  return ST_OK;
}
static st_status init(st_registry *reg, st_error *err) {
  st_status rc = st_registry_register(reg, "htmlhostile", "add", "htmlhostile",
                                      hostile_fail, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "htmlhostile", "mul", "htmlhostile",
                              hostile_mul, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "htmlhostile", "sub", "htmlhostile",
                              wrong_sub, err);
  return rc;
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "htmlhostile", platforms, init};
#elif KIND == MISBEHAVES
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
ST_PLUGIN_PLATFORMS("misbehave");
static const char *const platforms[] = {"misbehave", NULL};

/* With $ST_TEST_CTOR_ABORT set, loading this plugin aborts (its
 * constructor): the process that loads it dies (the probe's test). */
__attribute__((constructor)) static void ctor_abort(void) {
  if (getenv("ST_TEST_CTOR_ABORT") != NULL)
    abort();
}

/* Whether the process pid has this plugin mapped (its /proc maps name
 * our file). */
static int has_us(long pid) {
  Dl_info di;
  char path[64], line[4096];
  FILE *f;
  int found = 0;
  if (dladdr((void *)has_us, &di) == 0 || di.dli_fname == NULL)
    return -1;
  snprintf(path, sizeof path, "/proc/%ld/maps", pid);
  if ((f = fopen(path, "re")) == NULL)
    return -1;
  while (!found && fgets(line, sizeof line, f) != NULL)
    found = strstr(line, di.dli_fname) != NULL;
  fclose(f);
  return found;
}

/* The parent of process pid, or -1. */
static long parent_of(long pid) {
  char path[64], buf[512], *p;
  long ppid = -1;
  FILE *f;
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if ((f = fopen(path, "re")) == NULL)
    return -1;
  if (fgets(buf, sizeof buf, f) != NULL && (p = strrchr(buf, ')')) != NULL)
    sscanf(p + 2, "%*c %ld", &ppid);
  fclose(f);
  return ppid;
}

/* Appends pid to the file $ST_TEST_PIDS (one line). */
static void note_pid(long pid) {
  const char *f = getenv("ST_TEST_PIDS");
  char line[32];
  int fd =
      f != NULL ? open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
  if (fd >= 0) {
    int n = snprintf(line, sizeof line, "%ld\n", pid);
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
  }
}

/* What the kernel does before it computes, by its scalar:
 *   0  nothing          1  exit(0)           2  _exit(0)
 *   3  SIGSEGV          4  abort()           5  corrupts the heap
 *   6  closes fd 1 and 2, then prints       7  prints a fake record line
 *   8  sleeps for ever  9  writes a byte to the FIFO $ST_TEST_FIFO, then
 *                          sleeps for ever (the interrupt tests' cue)
 *  10  prints its pid, its parent's, and whether the parent has this
 *      plugin mapped (the process model's test, at level 3)
 *  11  prints "captured" to stdout and stderr
 *  12  prints what each of its descriptors is ("fd N -> TARGET")
 *  13  takes 0.6 s (a slow kernel, then a right answer)
 *  14  forks a `sleep 100` (its child) and returns
 *  15  starts `sleep 100 &` from a shell that exits (an orphan, still in
 *      the process group)
 *  17  forks a `sleep 100`, then sleeps for ever (killed by --timeout)
 *      (14, 15 and 17 append the sleep's pid to the file $ST_TEST_PIDS)
 *  18  prints "alive PID" for each pid in $ST_TEST_PIDS that still runs
 *  16  writes a byte to the FIFO $ST_TEST_FIFO, waits until the
 *      harness has handled SIGINT or SIGTERM (its handler put the default
 *      action back), then computes (the in-process interrupt tests)
 *  19  reads one element past the end of its input x
 *  20  writes one element past the end of its output y
 *  21  writes to address 8 (a fault outside every guard page)
 *      (19-21: tests/cli/test_guard_pages.py) */
static void misbehave(int how, st_op_call *c) {
  switch (how) {
  case 1:
    exit(0);
  case 2:
    _exit(0);
  case 3:
    raise(SIGSEGV);
    break;
  case 4:
    abort();
  case 5: {
    /* Past the end of a block too large for glibc's per-thread cache,
     * over the allocator's header of the next one: glibc aborts at the
     * free ("free(): invalid next size (normal)"). */
    size_t n = 4000, i;
    char *p = malloc(n), *q = malloc(n), *guard = malloc(n);
    volatile char *w = p; /* stores the compiler may not drop */
    for (i = 0; i < n + 16; i++)
      w[i] = 0x41;
    free(p);
    free(q);
    free(guard);
    break;
  }
  case 6:
    close(1);
    close(2);
    printf("printed after fd 1 was closed\n");
    fflush(stdout);
    break;
  case 7:
    printf("[TIMING] torch_backend_autoload setting=1 raw=\"1\" "
           "effective=enabled torch_imported=true torch_npu_loaded=true "
           "pid=424242\n");
    fflush(stdout);
    fprintf(stderr, "[WARNING] forged warning pid=424242\n");
    break;
  case 8:
    for (;;)
      pause();
  case 9: {
    const char *fifo = getenv("ST_TEST_FIFO");
    int fd = fifo != NULL ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
      if (write(fd, "x", 1) < 0) {
      }
      close(fd);
    }
    for (;;)
      pause();
  }
  case 10:
    printf("kernel pid=%ld ppid=%ld pppid=%ld parent_has_plugin=%d\n",
           (long)getpid(), (long)getppid(), parent_of((long)getppid()),
           has_us((long)getppid()));
    fflush(stdout);
    break;
  case 12: {
    int fd;
    for (fd = 0; fd < 1024; fd++) {
      char link[64], target[256];
      ssize_t n;
      snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      n = readlink(link, target, sizeof target - 1);
      if (n < 0)
        continue;
      struct stat sb;
      target[n] = '\0';
      printf("fd %d -> %s ino=%lu\n", fd, target,
             fstat(fd, &sb) == 0 ? (unsigned long)sb.st_ino : 0ul);
    }
    fflush(stdout);
    break;
  }
  case 13: {
    struct timespec ts = {0, 600 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
      ;
    break;
  }
  case 14:
  case 17: {
    pid_t pid = fork();
    if (pid == 0) {
      execlp("sleep", "sleep", "100", (char *)NULL);
      _exit(127);
    }
    note_pid((long)pid);
    if (how == 17)
      for (;;)
        pause();
    break;
  }
  case 18: {
    const char *f = getenv("ST_TEST_PIDS");
    FILE *in = f != NULL ? fopen(f, "re") : NULL;
    long pid;
    while (in != NULL && fscanf(in, "%ld", &pid) == 1) {
      char path[64], buf[512], *p;
      FILE *st;
      snprintf(path, sizeof path, "/proc/%ld/stat", pid);
      if ((st = fopen(path, "re")) == NULL)
        continue;
      if (fgets(buf, sizeof buf, st) != NULL &&
          (p = strrchr(buf, ')')) != NULL && p[1] == ' ' && p[2] != 'Z')
        printf("alive %ld\n", pid);
      fclose(st);
    }
    if (in != NULL)
      fclose(in);
    fflush(stdout);
    break;
  }
  case 15: {
    const char *f = getenv("ST_TEST_PIDS");
    char cmd[4200];
    if (f != NULL && strlen(f) < 4000) {
      snprintf(cmd, sizeof cmd, "sleep 100 & echo $! >> '%s'", f);
      if (system(cmd) != 0) {
      }
    }
    break;
  }
  case 16: {
    const char *fifo = getenv("ST_TEST_FIFO");
    int fd = fifo != NULL ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
      if (write(fd, "x", 1) < 0) {
      }
      close(fd);
    }
    /* Until the harness's handler has run: in-process it puts the
     * default action back once it has noted the signal (a pause() here
     * would wait for ever when another thread took the signal). */
    for (;;) {
      struct sigaction si, st;
      struct timespec ms = {0, 1000 * 1000};
      if (sigaction(SIGINT, NULL, &si) == 0 &&
          sigaction(SIGTERM, NULL, &st) == 0 &&
          (si.sa_handler == SIG_DFL || st.sa_handler == SIG_DFL))
        break;
      nanosleep(&ms, NULL);
    }
    break;
  }
  case 19: {
    volatile const int32_t *x = c->tensors[0].data;
    int32_t past = x[c->tensors[0].numel];
    (void)past;
    break;
  }
  case 20: {
    volatile int32_t *y = c->tensors[1].data;
    y[c->tensors[1].numel] = 7;
    break;
  }
  case 21: {
    /* Through a volatile pointer, so the compiler knows nothing of it. */
    volatile uintptr_t at = 8;
    *(volatile int *)at = 1;
    break;
  }
  case 11:
    printf("captured on stdout\n");
    fflush(stdout);
    fprintf(stderr, "captured on stderr\n");
    break;
  default:
    break;
  }
}

static st_status misbehaving_scale(st_op_call *c) {
  int32_t s = 0;
  size_t i, begin, end;
  if (c->n_scalars > 0)
    s = (int32_t)c->scalars[0].i;
  if (c->shard_index == 0)
    misbehave((int)s, c);
  st_shard_range(c->tensors[1].numel, c->shard_index, c->shard_count, &begin,
                 &end);
  for (i = begin; i < end; i++)
    st_tensor_set_f64(&c->tensors[1], i,
                      (double)s * st_tensor_get_f64(&c->tensors[0], i));
  return ST_OK;
}
static st_status init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "misbehave", "scale", "misbehave",
                              misbehaving_scale, err);
}
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "misbehave", platforms, init};
#endif
