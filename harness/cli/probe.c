/* SPDX-License-Identifier: MIT */
/* The --plugin list of a run that forks its cases
 * (docs/reliability.md#the-process-model: supervised children, --isolate): this
 * process forks them, so it loads no plugin — no constructor, thread or device
 * context of a plugin may meet fork. A probe child, forked before any plugin is
 * loaded, loads them as a run in process would (its warnings are the user's,
 * once), tells this process what each eager one provides (its platforms and
 * backends, and every op the registry then has) and exits. Here each eager
 * plugin is then declared deferred (st__registry_add_deferred): the platforms
 * are known to the platform check and the validation pass, its ops to the
 * unknown-op check, and each process that dispatches cases loads it itself. A
 * plugin that cannot be loaded is the same usage error as without the probe;
 * one whose loading kills the probe is named with how it ended. Lazy plugins
 * are declared here as always (their note is read, nothing is loaded). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/buf.h"
#include "base/proc.h"
#include "wire/msg.h"
#include "cli/cli_internal.h"
#include "ops/registry_internal.h"

static int is_lazy(const char *spec) { return strncmp(spec, "lazy:", 5) == 0; }

/* The probe: loads every plugin into its copy of reg, writes what it saw
 * to fd, and ends. */
static void probe_main(st_registry *reg, const char *const *specs, size_t n,
                       int fd) {
  st__wbuf b;
  size_t i;
  char *ops;
  st__wbuf_init(&b);
  for (i = 0; i < n; i++) {
    size_t before = st__registry_module_count(reg);
    st_error err;
    char *what;
    /* Said before the load: a load that kills the probe is named. */
    st__msg_put_index(&b, ST__MSG_PROBE_BEGIN, (uint32_t)i);
    st__wbuf_drain(&b, fd);
    st_error_clear(&err);
    if (st_plugin_load(reg, specs[i], &err) != ST_OK) {
      st__msg_put_text(&b, ST__MSG_PROBE_ERROR, err.message);
      st__wbuf_drain(&b, fd);
      _exit(0);
    }
    what = st__registry_describe(reg, before, 0);
    if (what == NULL)
      _exit(ST__EXIT_PROBE_NOMEM);
    st__msg_put_text(&b, ST__MSG_PROBE_PROVIDES, what);
    free(what);
  }
  ops = st__registry_describe(reg, 0, 1);
  if (ops == NULL)
    _exit(ST__EXIT_PROBE_NOMEM);
  st__msg_put_text(&b, ST__MSG_PROBE_OPS, ops);
  free(ops);
  st__msg_put_text(&b, ST__MSG_PROBE_DONE, NULL);
  if (b.oom)
    _exit(ST__EXIT_PROBE_NOMEM);
  st__wbuf_drain(&b, fd);
  fflush(NULL); /* its log lines */
  _exit(0);
}

/* Everything the probe wrote, until it closed its end, into b. ST_OK,
 * or ST_ENOMEM (the pipe is still read to its end, so the probe never
 * blocks on it). */
static st_status read_all(int fd, st__buf *b) {
  st_status rc = ST_OK;
  char spill[4096];
  for (;;) {
    char *dst = spill;
    size_t room = sizeof spill;
    ssize_t k;
    if (rc == ST_OK && (rc = st__buf_reserve(b, 4096)) == ST_OK) {
      dst = b->data + b->len;
      room = b->cap - b->len;
    }
    k = read(fd, dst, room);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return rc;
    if (dst != spill)
      st__buf_commit(b, (size_t)k);
  }
}

/* Declares each plugin from what the probe said. 0, or the exit status
 * (its one error line printed). */
static int declare(st_registry *reg, const char *const *specs, size_t n,
                   const char *buf, size_t len, int status) {
  const char *payload, **provides = calloc(n + 1, sizeof *provides);
  size_t plen, used, at = SIZE_MAX, i;
  uint8_t type;
  const char *ops = NULL;
  int done = 0, rc = 0;
  char how[160];

  if (provides == NULL)
    return st__cli_usage("out of memory");
  while (st__wire_next_frame(buf, len, &type, &payload, &plen, &used)) {
    uint32_t index;
    if (type == ST__MSG_PROBE_BEGIN) {
      at = st__msg_get_index(payload, plen, &index) == 0 ? index : SIZE_MAX;
    } else if (type == ST__MSG_PROBE_ERROR) {
      const char *msg = st__msg_get_text(payload, plen);
      free(provides);
      return st__cli_usage("%s", msg != NULL ? msg : "plugin probe: bad frame");
    } else if (type == ST__MSG_PROBE_PROVIDES && at < n) {
      provides[at] = st__msg_get_text(payload, plen);
    } else if (type == ST__MSG_PROBE_OPS) {
      ops = st__msg_get_text(payload, plen);
    } else if (type == ST__MSG_PROBE_DONE) {
      done = 1;
    }
    buf += used;
    len -= used;
  }
  if (!done || ops == NULL) {
    free(provides);
    st__proc_describe_wait(status, how, sizeof how);
    if (at < n)
      return st__cli_usage("plugin '%s': cannot load: the process loading "
                           "it %s",
                           specs[at], how);
    return st__cli_usage("cannot load the plugins: the process loading them "
                         "%s",
                         how);
  }
  for (i = 0; i < n; i++) {
    st_error err;
    st_error_clear(&err);
    if (is_lazy(specs[i])
            ? st_plugin_load(reg, specs[i], &err) != ST_OK
            : st__plugin_defer(reg, specs[i], provides[i] ? provides[i] : "",
                               &err) != ST_OK) {
      rc = st__cli_usage("%s", err.message);
      break;
    }
  }
  free(provides);
  if (rc == 0 && st__registry_declare_ops(reg, ops) != ST_OK)
    rc = st__cli_usage("out of memory");
  return rc;
}

int st__cli_load_plugins(st_registry *reg, const char *const *specs, size_t n,
                         int forks) {
  size_t i, eager = 0;
  int p[2], status = 0, rc;
  pid_t pid;
  st__buf buf;
  st_status got;

  for (i = 0; i < n; i++)
    eager += !is_lazy(specs[i]);
  if (!forks || eager == 0) {
    /* In process (or nothing to load now): as they come. */
    for (i = 0; i < n; i++) {
      st_error err;
      st_error_clear(&err);
      if (st_plugin_load(reg, specs[i], &err) != ST_OK)
        return st__cli_usage("%s", err.message);
    }
    return 0;
  }
  if (pipe2(p, O_CLOEXEC) != 0)
    return st__cli_usage("cannot load the plugins: pipe: %s", strerror(errno));
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    return st__cli_usage("cannot load the plugins: fork: %s", strerror(e));
  }
  if (pid == 0) {
    close(p[0]);
    probe_main(reg, specs, n, p[1]);
  }
  close(p[1]);
  st__buf_init(&buf, SIZE_MAX);
  got = read_all(p[0], &buf);
  close(p[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got != ST_OK) {
    st__buf_free(&buf);
    return st__cli_usage("out of memory");
  }
  rc = declare(reg, specs, n, buf.data, buf.len, status);
  st__buf_free(&buf);
  return rc;
}
