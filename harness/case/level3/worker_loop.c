/* SPDX-License-Identifier: MIT */
/* A level-3 worker (worker_loop.h): its loop over the pool's commands,
 * one datagram each (wire/msg.h's ST__MSG_L3_*; MAP in
 * case/level3/map_msg.h), each answered with a REPLY. The worker resolves
 * and binds the kernel and runs the platform's prepare hook as it takes
 * the MAP (the harness's `rehost`, docs/level3.md), so each worker owns
 * its own device state (a CUDA context is per process). It keeps its
 * mappings across cases keyed by segment id (the harness pools segments,
 * so the next case usually sends the same ones) and unmaps those a MAP no
 * longer names. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <scenetest/op.h>

#include "base/env.h"
#include "base/loadwatch.h"
#include "base/pool.h"
#include "base/proc.h"
#include "case/call.h"
#include "case/level3/map_msg.h"
#include "case/level3/rehost.h"
#include "case/level3/worker_loop.h"
#include "ops/ops_impl.h"
#include "wire/msg.h"

/* Largest datagram either side sends (wire/msg.h). */
#define MSG_MAX ST__MSG_L3_MAX
/* A worker's socket end is moved to this fd; everything above is closed. */
#define WORKER_SOCK_FD 3

typedef struct wmap {
  uint64_t id;
  size_t size;
  void *map;
} wmap;

typedef struct wstate {
  unsigned index;
  st_registry *reg;
  wmap *maps;
  size_t n_maps;
  char *op, *backend;
  unsigned max_threads;
  int reduce;
  uint64_t n_blocks;
  void *scratch;
  st_tensor *tensors;
  size_t n_tensors;
  st_scalar *scalars;
  size_t n_scalars;
  unsigned shard_count;
  st_op_fn fn;
  /* The platform's hooks and what its prepare returned for this case. */
  const st_platform_hooks *hooks;
  void *platform_state;
  int prepared;
  /* The case's env (docs/scene-format.md), set as the MAP is taken,
   * before the kernel is resolved, and put back at RELEASE. */
  st__env_saved env;
} wstate;

/* An op call over the mapped layout, as the kernel sees it (tensors is the
 * caller's copy of the layout). */
static void layout_call(const wstate *ws, st_op_call *call,
                        st_tensor *tensors) {
  st_op_call_init(call);
  call->op = ws->op;
  call->backend = ws->backend;
  call->tensors = tensors;
  call->n_tensors = ws->n_tensors;
  call->scalars = ws->scalars;
  call->n_scalars = ws->n_scalars;
  call->shard_index = ws->index;
  call->shard_count = ws->shard_count ? ws->shard_count : 1;
  call->max_threads = ws->max_threads;
  call->platform_state = ws->platform_state;
}

/* The platform's release hook, once, if prepare succeeded. */
static void device_release(wstate *ws) {
  pid_t self = st__proc_pid();
  st_op_call call;
  st_tensor *t;
  if (!ws->prepared)
    return;
  ws->prepared = 0;
  if (ws->hooks->release == NULL)
    return;
  t = malloc((ws->n_tensors ? ws->n_tensors : 1) * sizeof *t);
  if (t != NULL && ws->n_tensors > 0)
    memcpy(t, ws->tensors, ws->n_tensors * sizeof *t);
  layout_call(ws, &call, t);
  if (t == NULL)
    call.n_tensors = 0;
  ws->hooks->release(&call, ws->platform_state);
  st__call_stray_check(self, "platform's release hook");
  ws->platform_state = NULL;
  free(t);
}

static void layout_free(wstate *ws) {
  size_t i;
  device_release(ws);
  for (i = 0; i < ws->n_tensors; i++)
    free((char *)ws->tensors[i].name);
  for (i = 0; i < ws->n_scalars; i++)
    free((char *)ws->scalars[i].name);
  free(ws->tensors);
  free(ws->scalars);
  free(ws->op);
  free(ws->backend);
  ws->tensors = NULL;
  ws->scalars = NULL;
  ws->n_tensors = ws->n_scalars = 0;
  ws->op = ws->backend = NULL;
  ws->fn = NULL;
  ws->scratch = NULL;
}

static void *map_of(const wstate *ws, uint64_t id) {
  size_t i;
  for (i = 0; i < ws->n_maps; i++)
    if (ws->maps[i].id == id)
      return ws->maps[i].map;
  return NULL;
}

static void reply(int sock, st_status status, int lookup, const char *message,
                  char **loaded, size_t n_loaded, uint64_t device_ns,
                  uint64_t copy_ns) {
  st__wbuf b;
  st__msg_l3_reply m;
  m.status = (int32_t)status;
  m.lookup = lookup;
  m.message = (char *)message;
  m.loaded = loaded;
  m.n_loaded = n_loaded;
  m.device_ns = device_ns;
  m.copy_ns = copy_ns;
  st__wbuf_init(&b);
  /* Keep the datagram bounded: a plugin that pulls in hundreds of
   * libraries reports the ones that fit. */
  st__msg_l3_reply_put(&b, &m, MSG_MAX - 4096);
  if (b.oom || st__proc_send_fds(sock, b.buf.data, b.buf.len, NULL, 0) != 0)
    _exit(ST__EXIT_WORKER_REPLY);
  st__wbuf_free(&b);
}

/* Resolves the kernel (a plugin loaded after the fork is not in this
 * address space until the registry loads it), binds it to the layout and
 * runs the platform's prepare hook with this worker's shard. */
static st_status bind_kernel(wstate *ws, char *msg, size_t size, int *lookup) {
  pid_t self = st__proc_pid();
  st_op_call call;
  st_tensor *t;
  st_error err;
  st_status rc;

  st_error_clear(&err);
  if (st_registry_lookup(ws->reg, ws->op, ws->backend, ST_LOOKUP_KERNEL,
                         &ws->fn, &err) != ST_OK) {
    size_t n = strlen(err.message);
    ws->fn = NULL;
    if (n >= size)
      n = size - 1;
    memcpy(msg, err.message, n);
    msg[n] = '\0';
    *lookup = 1;
    return err.code != ST_OK ? err.code : ST_EMISSING;
  }
  t = malloc((ws->n_tensors ? ws->n_tensors : 1) * sizeof *t);
  if (t == NULL) {
    snprintf(msg, size, "worker %u: out of memory", ws->index);
    return ST_ENOMEM;
  }
  if (ws->n_tensors > 0)
    memcpy(t, ws->tensors, ws->n_tensors * sizeof *t);
  layout_call(ws, &call, t);
  rc = st_op_check(&call);
  ws->hooks = st_registry_platform_hooks(ws->reg, ws->backend);
  if (rc == ST_OK && ws->hooks != NULL && ws->hooks->prepare != NULL) {
    rc = ws->hooks->prepare(&call, &ws->platform_state);
    st__call_stray_check(self, "platform's prepare hook");
    if (rc == ST_OK)
      ws->prepared = 1;
  }
  if (rc != ST_OK) {
    ws->fn = NULL;
    if (rc == ST_ESKIP || rc == ST_EBIND)
      snprintf(msg, size, "%.400s",
               call.message[0] ? call.message : st_status_str(rc));
    else
      snprintf(msg, size, "platform '%.64s' prepare: %.400s", ws->backend,
               call.message[0] ? call.message : st_status_str(rc));
  }
  free(t);
  return rc;
}

/* Maps the MAP's segments (keeping those an earlier case mapped: their
 * pages are faulted in already) and unmaps those it no longer names. */
static st_status map_segments(wstate *ws, const st__l3_map *m, const int *fds,
                              char *msg, size_t size) {
  wmap *maps = calloc(m->n_segs ? m->n_segs : 1, sizeof *maps);
  st_status status = ST_OK;
  size_t i, j;
  if (maps == NULL) {
    snprintf(msg, size, "worker %u: out of memory", ws->index);
    return ST_ENOMEM;
  }
  for (i = 0; i < m->n_segs; i++) {
    maps[i].id = m->segs[i].id;
    maps[i].size = m->segs[i].size;
    for (j = 0; j < ws->n_maps; j++)
      if (ws->maps[j].id == maps[i].id && ws->maps[j].map != NULL) {
        maps[i].map = ws->maps[j].map;
        ws->maps[j].map = NULL;
        break;
      }
    if (maps[i].map == NULL && status == ST_OK) {
      void *p = mmap(NULL, maps[i].size, PROT_READ | PROT_WRITE, MAP_SHARED,
                     fds[i], 0);
      if (p == MAP_FAILED) {
        status = ST_ENOMEM;
        snprintf(msg, size, "worker %u: cannot map a %zu-byte segment: %s",
                 ws->index, maps[i].size, strerror(errno));
      } else {
        maps[i].map = p;
      }
    }
  }
  for (j = 0; j < ws->n_maps; j++)
    if (ws->maps[j].map != NULL)
      munmap(ws->maps[j].map, ws->maps[j].size);
  free(ws->maps);
  ws->maps = maps;
  ws->n_maps = m->n_segs;
  return status;
}

/* Takes the MAP's layout into ws, its tensors' data in the mapped
 * segments (after each one's front guard zone, rehost.h), and sets the
 * case's env (the workers were forked before the case began, so they do
 * not inherit it). */
static st_status take_layout(wstate *ws, st__l3_map *m, char *msg,
                             size_t size) {
  st_error err;
  size_t i;
  int bad = 0;
  ws->op = m->op;
  ws->backend = m->backend;
  ws->tensors = m->tensors;
  ws->n_tensors = m->n_tensors;
  ws->scalars = m->scalars;
  ws->n_scalars = m->n_scalars;
  m->op = m->backend = NULL;
  m->tensors = NULL;
  m->scalars = NULL;
  ws->max_threads = m->max_threads;
  ws->reduce = m->reduce;
  ws->n_blocks = m->n_blocks;
  ws->shard_count = m->shard_count;
  for (i = 0; i < ws->n_tensors; i++) {
    uint64_t id = m->tensor_seg[i];
    char *data = id ? map_of(ws, id) : NULL;
    ws->tensors[i].data = data != NULL ? data + ST__SEG_DATA_AT : NULL;
    bad |= id != 0 && data == NULL;
  }
  ws->scratch = m->scratch_id ? map_of(ws, m->scratch_id) : NULL;
  if (bad || (ws->reduce && ws->n_blocks > 0 && ws->scratch == NULL)) {
    snprintf(msg, size, "worker %u: malformed map message", ws->index);
    return ST_EINTERNAL;
  }
  st_error_clear(&err);
  if (st__env_apply(&ws->env, m->env, m->n_env, &err) != ST_OK) {
    snprintf(msg, size, "worker %u: %.400s", ws->index, err.message);
    return ST_EINTERNAL;
  }
  return ST_OK;
}

static void worker_map(wstate *ws, int sock, const char *p, size_t len,
                       int *fds, size_t nfds) {
  st__l3_map m;
  char msg[512] = "";
  st_status status;
  char **loaded = NULL;
  size_t n_loaded = 0, i;
  int lookup = 0;

  layout_free(ws);
  if (st__l3_map_get(p, len, &m) != 0 || m.n_segs != nfds) {
    status = ST_EINTERNAL;
    snprintf(msg, sizeof msg, "worker %u: malformed map message", ws->index);
  } else {
    status = map_segments(ws, &m, fds, msg, sizeof msg);
    if (status == ST_OK)
      status = take_layout(ws, &m, msg, sizeof msg);
    if (status == ST_OK)
      status = bind_kernel(ws, msg, sizeof msg, &lookup);
  }
  st__l3_map_free(&m);
  for (i = 0; i < nfds; i++)
    close(fds[i]);
  /* What resolving the kernel loaded belongs to `rehost`. */
  fflush(stdout);
  fflush(stderr);
  if (st__loadwatch_poll(&loaded, &n_loaded) != ST_OK) {
    loaded = NULL;
    n_loaded = 0;
  }
  reply(sock, status, lookup, msg, loaded, n_loaded, ST_NS_NONE, ST_NS_NONE);
  st__loadwatch_free(loaded, n_loaded);
}

/* reduce_sum: one call per block of this worker's blocks (shard k of
 * n_blocks is exactly block k), each into a private one-element out, so
 * the harness can add the block partials in block order as level 2 does:
 * the result does not depend on the worker count. */
static st_status run_reduce_blocks(wstate *ws, st_op_call *call, st_tensor *t,
                                   unsigned shard_index, unsigned shard_count) {
  uint64_t dev = ST_NS_NONE, copy = ST_NS_NONE;
  st_status rc = ST_OK;
  uint64_t cell = 0;
  size_t kb0, kb1, k;
  st_tensor priv = t[1];
  unsigned char *scratch = ws->scratch;
  pid_t self = st__proc_pid();
  priv.data = &cell;
  st_shard_range((size_t)ws->n_blocks, shard_index, shard_count, &kb0, &kb1);
  for (k = kb0; k < kb1 && rc == ST_OK; k++) {
    st_op_call bc = *call;
    st_tensor pair[2];
    pair[0] = t[0];
    pair[1] = priv;
    bc.tensors = pair;
    bc.shard_index = (unsigned)k;
    bc.shard_count = (unsigned)ws->n_blocks;
    bc.message[0] = '\0';
    bc.device_ns = bc.copy_ns = ST_NS_NONE;
    rc = ws->fn(&bc);
    st__call_stray_check(self, "kernel");
    /* The block calls' times add up to the round's. */
    if (bc.device_ns != ST_NS_NONE)
      dev = (dev == ST_NS_NONE ? 0 : dev) + bc.device_ns;
    if (bc.copy_ns != ST_NS_NONE)
      copy = (copy == ST_NS_NONE ? 0 : copy) + bc.copy_ns;
    if (rc != ST_OK) {
      memcpy(call->message, bc.message, sizeof call->message);
      break;
    }
    /* From the worker's own cell, by its own descriptor: what the
     * kernel left in pair[1] is not read back (case/call.h). */
    if (st__dtype_is_int(priv.dtype)) {
      uint64_t v = (uint64_t)st_tensor_get_i64(&priv, 0);
      memcpy(scratch + 8 * k, &v, 8);
    } else {
      double v = st_tensor_get_f64(&priv, 0);
      memcpy(scratch + 8 * k, &v, 8);
    }
  }
  call->device_ns = dev;
  call->copy_ns = copy;
  return rc;
}

static void worker_run(wstate *ws, int sock, const char *p, size_t len) {
  pid_t self = st__proc_pid();
  char msg[ST_OP_MESSAGE_MAX + 1];
  unsigned shard_index, shard_count;
  st_op_call call;
  st_tensor *t = NULL;
  st_status rc = ST_OK;
  char **loaded = NULL;
  size_t n_loaded = 0;
  st__msg_l3_run m;
  int bad = st__msg_l3_run_get(p, len, &m) != 0;

  shard_index = bad ? 0 : m.shard_index;
  shard_count = bad ? 0 : m.shard_count;
  st_op_call_init(&call);
  /* The kernel was resolved and bound when the case was mapped. */
  if (bad || ws->op == NULL || ws->fn == NULL) {
    rc = st_op_call_fail(&call, ST_EINTERNAL, "worker %u: no case mapped",
                         ws->index);
    goto out;
  }
  /* A fresh copy per round: an implementation may scribble on its
   * st_tensor array, never on the layout. */
  t = malloc((ws->n_tensors ? ws->n_tensors : 1) * sizeof *t);
  if (t == NULL) {
    rc = st_op_call_fail(&call, ST_ENOMEM, "worker %u: out of memory",
                         ws->index);
    goto out;
  }
  if (ws->n_tensors > 0)
    memcpy(t, ws->tensors, ws->n_tensors * sizeof *t);
  layout_call(ws, &call, t);
  call.shard_index = shard_index;
  call.shard_count = shard_count;
  rc = st_op_check(&call);
  if (rc != ST_OK)
    goto out;
  if (!ws->reduce) {
    rc = ws->fn(&call);
    st__call_stray_check(self, "kernel");
  } else {
    rc = run_reduce_blocks(ws, &call, t, shard_index, shard_count);
  }
out:
  free(t);
  /* What the kernel printed reaches the capture pipe before the reply, so
   * the harness attaches it to this case. */
  fflush(stdout);
  fflush(stderr);
  if (st__loadwatch_poll(&loaded, &n_loaded) != ST_OK) {
    loaded = NULL;
    n_loaded = 0;
  }
  /* Within its field: the kernel may have left it without a NUL. */
  if (st__call_message_copy(&call, msg) == NULL)
    msg[0] = '\0';
  reply(sock, rc, 0, msg, loaded, n_loaded, call.device_ns, call.copy_ns);
  st__loadwatch_free(loaded, n_loaded);
}

static void worker_main(unsigned index, st_registry *reg) {
  wstate ws;
  char *buf = malloc(MSG_MAX);
  int fds[ST__WORKERS_MAX_SEGMENTS + 3];
  union {
    char c[CMSG_SPACE(sizeof(int) * (ST__WORKERS_MAX_SEGMENTS + 3))];
    struct cmsghdr align;
  } u;

  memset(&ws, 0, sizeof ws);
  ws.index = index;
  ws.reg = reg;
  if (buf == NULL)
    _exit(ST__EXIT_WORKER_NOMEM);
  for (;;) {
    struct msghdr mh;
    struct iovec iov;
    struct cmsghdr *c;
    ssize_t n;
    size_t nfds = 0;
    uint32_t type;

    memset(&mh, 0, sizeof mh);
    iov.iov_base = buf;
    iov.iov_len = MSG_MAX;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = u.c;
    mh.msg_controllen = sizeof u.c;
    n = recvmsg(WORKER_SOCK_FD, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(0); /* the harness closed its end (or went away): done */
    for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (nfds + k > sizeof fds / sizeof fds[0])
          _exit(ST__EXIT_WORKER_PROTOCOL);
        memcpy(fds + nfds, CMSG_DATA(c), k * sizeof(int));
        nfds += k;
      }
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
      _exit(ST__EXIT_WORKER_PROTOCOL);
    type = st__msg_l3_type(buf, (size_t)n);
    if (type == ST__MSG_L3_MAP)
      worker_map(&ws, WORKER_SOCK_FD, buf, (size_t)n, fds, nfds);
    else if (type == ST__MSG_L3_RUN)
      worker_run(&ws, WORKER_SOCK_FD, buf, (size_t)n);
    else if (type == ST__MSG_L3_RELEASE) {
      device_release(&ws);
      st__env_restore(&ws.env);
      reply(WORKER_SOCK_FD, ST_OK, 0, "", NULL, 0, ST_NS_NONE, ST_NS_NONE);
    } else
      _exit(ST__EXIT_WORKER_PROTOCOL);
  }
}

/* In the new worker: stdout/stderr to the capture pipe, the socket at
 * WORKER_SOCK_FD, every other inherited fd closed (other workers' sockets,
 * segment fds, an isolated child's pipes: holding them would keep pipes
 * from reaching EOF in whoever waits on them). */
void st__worker_child(unsigned index, int sock, int out_w, st_registry *reg,
                      pid_t parent) {
  /* The segments the harness had mapped at fork are its business. */
  st__seg_pool_forget_after_fork();
  if (dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0)
    _exit(ST__EXIT_WORKER_SETUP);
  if (sock != WORKER_SOCK_FD && dup2(sock, WORKER_SOCK_FD) < 0)
    _exit(ST__EXIT_WORKER_SETUP);
  /* dup2 clears close-on-exec; the worker never execs, but a process its
   * kernel starts must not keep the socket open (D2: the harness would
   * not see the worker's end close). */
  if (fcntl(WORKER_SOCK_FD, F_SETFD, FD_CLOEXEC) != 0)
    _exit(ST__EXIT_WORKER_SETUP);
  if (close_range(WORKER_SOCK_FD + 1, ~0u, 0) != 0) {
    long fd, max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
      max = 65536;
    for (fd = WORKER_SOCK_FD + 1; fd < max; fd++)
      close((int)fd);
  }
  /* If the harness dies, so do we (checked once more against the race
   * where it died before prctl). */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(0);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  /* Objects loaded from here on are the worker's to report. */
  {
    char **l;
    size_t nl;
    if (st__loadwatch_poll(&l, &nl) == ST_OK)
      st__loadwatch_free(l, nl);
  }
  worker_main(index, reg);
  _exit(0);
}
