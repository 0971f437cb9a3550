/* SPDX-License-Identifier: MIT */
/* Shared by the level-3, isolation and rehost tests: a test module whose
 * kernels crash, hang, print, load a library or decline (platform
 * "l3plat", forwarding the real work to the cpu backend), "l2_<op>_<plat>"
 * golden ops that compute exactly what level 2 computes (so a zero-
 * tolerance compare says level 3 equals level 2), scene loading, and the
 * checks for zombies and /dev/shm. Include after <cmocka.h>. */
#ifndef SCENETEST_TESTS_L3_TESTING_H
#define SCENETEST_TESTS_L3_TESTING_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/op_list.h"

static st_registry *l3t_builtin; /* the plain built-ins, for forwarding */

static st_op_fn l3t_find(const char *op, const char *backend) {
  st_op_fn fn = NULL;
  st_error err;
  st_error_clear(&err);
  if (st_registry_lookup(l3t_builtin, op, backend, ST_LOOKUP_KERNEL, &fn,
                         &err) != ST_OK)
    return NULL;
  return fn;
}

/* Runs the cpu add on this call's shard. */
static st_status l3t_add(st_op_call *c) {
  st_op_call real = *c;
  st_op_fn fn = l3t_find("add", "cpu");
  real.op = "add";
  real.backend = "cpu";
  return fn ? fn(&real) : ST_EMISSING;
}

/* Shard 1 dies of SIGSEGV after printing (what it printed must reach the
 * case). SIG_DFL first: a sanitizer's handler would turn the signal into
 * an exit status. */
static st_status l3t_crash(st_op_call *c) {
  if (c->shard_index == 1 || c->shard_count == 1) {
    fprintf(stderr, "about to crash in shard %u\n", c->shard_index);
    fflush(stderr);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  return l3t_add(c);
}

/* Shard 0 never returns. */
static st_status l3t_hang(st_op_call *c) {
  if (c->shard_index == 0)
    for (;;)
      pause();
  return l3t_add(c);
}

/* Prints its pid on stdout and stderr, then adds. */
static st_status l3t_print(st_op_call *c) {
  printf("stdout of shard %u pid=%ld\n", c->shard_index, (long)getpid());
  fflush(stdout);
  fprintf(stderr, "stderr of shard %u pid=%ld\n", c->shard_index,
          (long)getpid());
  return l3t_add(c);
}

static st_status l3t_decline(st_op_call *c) {
  return st_op_call_fail(c, ST_ESKIP, "l3plat cannot run %s here", c->op);
}

#ifdef ST_FIXTURE_RUN
static st_status l3t_loadlib(st_op_call *c) {
  if (dlopen(ST_FIXTURE_RUN, RTLD_NOW | RTLD_LOCAL) == NULL)
    return st_op_call_fail(c, ST_EKERNEL, "dlopen: %s", dlerror());
  return l3t_add(c);
}
#endif

/* Golden "l2_<op>_<platform>": the platform's own implementation called
 * as level 2 calls it (shard 0 of 1). */
#define L3T_L2(OPN, PLAT)                                                      \
  static st_status l3t_l2_##OPN##_##PLAT(st_op_call *c) {                      \
    st_op_call real = *c;                                                      \
    st_op_fn fn = l3t_find(#OPN, #PLAT);                                       \
    st_status rc;                                                              \
    real.op = #OPN;                                                            \
    real.backend = #PLAT;                                                      \
    real.shard_index = 0;                                                      \
    real.shard_count = 1;                                                      \
    real.max_threads = 0;                                                      \
    if (fn == NULL)                                                            \
      return ST_EMISSING;                                                      \
    rc = fn(&real);                                                            \
    memcpy(c->message, real.message, sizeof c->message);                       \
    return rc;                                                                 \
  }
/* Every built-in op, from the one op list (harness/base/op_list.h). */
#define L3T_OPS(XX) ST__BUILTIN_OP_MAP(XX)
#define L3T_DEF(OPN, ...) L3T_L2(OPN, cpu) L3T_L2(OPN, threads)
L3T_OPS(L3T_DEF)

static const char *const l3t_platforms[] = {"l3plat", NULL};

static st_status l3t_init(st_registry *reg, st_error *err) {
  static const struct {
    const char *op;
    const char *backend;
    st_op_fn fn;
  } regs[] = {{"add", "l3plat", l3t_add},
              {"crash_add", "l3plat", l3t_crash},
              {"hang_add", "l3plat", l3t_hang},
              {"print_add", "l3plat", l3t_print},
              {"decline_add", "l3plat", l3t_decline},
#ifdef ST_FIXTURE_RUN
              {"load_add", "l3plat", l3t_loadlib},
#endif
#define L3T_REG(OPN, ...)                                                      \
  {"l2_" #OPN "_cpu", ST_BACKEND_REFERENCE, l3t_l2_##OPN##_cpu},               \
      {"l2_" #OPN "_threads", ST_BACKEND_REFERENCE, l3t_l2_##OPN##_threads},
              L3T_OPS(L3T_REG)};
  size_t i;
  for (i = 0; i < sizeof regs / sizeof regs[0]; i++) {
    st_status rc = st_registry_register(reg, "l3test", regs[i].op,
                                        regs[i].backend, regs[i].fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

static const st_module l3t_module = {ST_ABI_VERSION, sizeof(st_module),
                                     "l3test", l3t_platforms, l3t_init};

/* A registry with the built-ins and the test module (caller frees). */
static st_registry *l3t_registry(void) {
  st_registry *reg = NULL;
  st_error err;
  st_error_clear(&err);
  if (l3t_builtin == NULL && st_registry_new_builtin(&l3t_builtin) != ST_OK)
    fail_msg("cannot make the built-in registry");
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  assert_int_equal(st_registry_add_module(reg, &l3t_module, &err), ST_OK);
  return reg;
}

static st_scene_set *l3t_load(const char *text) {
  st_scene_set *set = NULL;
  st_error_list errs;
  size_t i;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  if (st_scene_set_load_string(set, "l3t.yaml", text, strlen(text), NULL,
                               &errs) != ST_OK) {
    char buf[2048];
    for (i = 0; i < errs.count; i++)
      print_error("%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
    st_error_list_free(&errs);
    fail_msg("scene did not load:\n%s", text);
  }
  st_error_list_free(&errs);
  return set;
}

/* Children of this process that are zombies now (from /proc). */
__attribute__((unused)) static int l3t_zombies(void) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int n = 0;
  long self = (long)getpid();
  if (d == NULL)
    return 0;
  while ((e = readdir(d)) != NULL) {
    char path[300], buf[1024], *p;
    FILE *f;
    size_t got;
    char state;
    long ppid;
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    f = fopen(path, "r");
    if (f == NULL)
      continue;
    got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL || sscanf(p + 1, " %c %ld", &state, &ppid) != 2)
      continue;
    if (ppid == self && state == 'Z')
      n++;
  }
  closedir(d);
  return n;
}

/* Entries of /dev/shm now (level 3 must add none: its segments are
 * anonymous memfds). */
__attribute__((unused)) static int l3t_shm_entries(void) {
  DIR *d = opendir("/dev/shm");
  struct dirent *e;
  int n = 0;
  if (d == NULL)
    return 0;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

/* After every pool is ended: no child of ours is left at all. */
static void l3t_assert_no_children(void) {
  int status;
  pid_t w = waitpid(-1, &status, WNOHANG);
  assert_int_equal(w, -1);
  assert_int_equal(errno, ECHILD);
}

#endif
