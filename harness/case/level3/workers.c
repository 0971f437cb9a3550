/* SPDX-License-Identifier: MIT */
/* The level-3 worker pool (workers.h): forking workers, the command
 * protocol over SOCK_SEQPACKET (one datagram per command or reply, so no
 * framing), the workers' loop, and the harness's waits that notice a dying
 * worker or a deadline instead of hanging.
 *
 * Messages (little-endian fields, wire.h encoders):
 *   MAP   op, backend, max_threads, reduce, n_blocks, scratch id, the
 *         segments (id, size; their fds ride along with SCM_RIGHTS), the
 *         tensor layout (name, dtype, role, shape, segment id) and scalars
 *         and the shard count, then the case's env (count, name, value...)
 *   RUN   round, shard index, shard count
 *   RELEASE  (the case is over: the platform's release hook)
 *   REPLY status, lookup flag, message, objects loaded since the last reply,
 *         the kernel's device_ns and copy_ns (ST_NS_NONE: not reported)
 * The worker resolves and binds the kernel and runs the platform's prepare
 * hook as it takes the MAP (the harness's `rehost`, SPEC §12), so each
 * worker owns its own device state (a CUDA context is per process).
 * A worker keeps its mappings across cases keyed by segment id (the
 * harness pools segments, so the next case usually sends the same ones)
 * and unmaps those a MAP no longer names. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/op.h>

#include "base/buf.h"
#include "base/env.h"
#include "base/loadwatch.h"
#include "base/proc.h"
#include "ops/ops_impl.h"
#include "base/pool.h"
#include "case/call.h"
#include "wire/msg.h"
#include "case/level3/workers.h"

/* Largest datagram either side sends (wire/msg.h). */
#define MSG_MAX ST__MSG_L3_MAX
/* A worker's socket end is moved to this fd; everything above is closed. */
#define WORKER_SOCK_FD 3

typedef struct worker {
  pid_t pid;
  int sock;  /* harness end; -1 once closed */
  int out;   /* read end of the worker's stdout+stderr; -1 at EOF */
  char *buf; /* captured output since the last take */
  size_t len, cap;
  size_t dropped;
  int reaped;
  int status;   /* wait status once reaped */
  int awaiting; /* a reply is due */
  st_status reply_status;
  int reply_lookup;
  char *reply_message;
  uint64_t reply_device_ns, reply_copy_ns;
} worker;

struct st__wpool {
  unsigned n;
  worker *w;
  int broken;
};

/* ---- small helpers ---------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void st__wresult_free(st__wresult *r) {
  size_t i;
  if (r == NULL)
    return;
  for (i = 0; i < r->n_loaded; i++)
    free(r->loaded[i]);
  free(r->loaded);
  r->loaded = NULL;
  r->n_loaded = 0;
}

static void wresult_init(st__wresult *r) {
  memset(r, 0, sizeof *r);
  r->status = ST_OK;
  r->device_ns = r->copy_ns = ST_NS_NONE;
}

static void wresult_fail(st__wresult *r, st_status s, const char *fmt, ...)
    ST_PRINTF(3, 4);
static void wresult_fail(st__wresult *r, st_status s, const char *fmt, ...) {
  va_list ap;
  if (r->status != ST_OK)
    return;
  r->status = s;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
}

static void wresult_add_loaded(st__wresult *r, unsigned index,
                               const char *path) {
  char **p = realloc(r->loaded, (r->n_loaded + 1) * sizeof *p);
  size_t n = strlen(path) + 32;
  if (p == NULL)
    return;
  r->loaded = p;
  p[r->n_loaded] = malloc(n);
  if (p[r->n_loaded] == NULL)
    return;
  snprintf(p[r->n_loaded], n, "worker %u: %s", index, path);
  r->n_loaded++;
}

/* ---- the worker ------------------------------------------------------- */

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

/* A count from r and a zeroed array of that many elem-byte items (at
 * least one, so NULL means out of memory). A count the rest of the
 * message cannot hold (each item takes 8 bytes or more) sets r->bad and
 * counts 0. */
static void *read_array(st__rbuf *r /* IN/OUT */, size_t *n /* OUT */,
                        size_t elem) {
  *n = st__rbuf_u32(r);
  if (*n > (r->len - r->off) / 8) {
    *n = 0;
    r->bad = 1;
  }
  return calloc(*n ? *n : 1, elem);
}

/* The map message's tensors and scalars, their data in the mapped
 * segments; a malformed layout sets r->bad. */
static void read_layout(wstate *ws, st__rbuf *r) {
  size_t i;
  ws->tensors = read_array(r, &ws->n_tensors, sizeof *ws->tensors);
  for (i = 0; ws->tensors != NULL && i < ws->n_tensors && !r->bad; i++) {
    st_tensor *t = &ws->tensors[i];
    int d;
    uint64_t id;
    t->name = st__rbuf_str(r);
    t->dtype = (st_dtype)st__rbuf_i32(r);
    t->role = (st_role)st__rbuf_i32(r);
    t->ndim = st__rbuf_i32(r);
    if (t->ndim < 0 || t->ndim > ST_MAX_DIMS) {
      r->bad = 1;
      break;
    }
    for (d = 0; d < t->ndim; d++)
      t->shape[d] = (int64_t)st__rbuf_u64(r);
    t->numel = (size_t)st__rbuf_u64(r);
    t->nbytes = (size_t)st__rbuf_u64(r);
    id = st__rbuf_u64(r);
    /* After the segment's front guard zone (rehost.h). */
    t->data = id ? map_of(ws, id) : NULL;
    if (t->data != NULL)
      t->data = (char *)t->data + ST__SEG_DATA_AT;
    if (id && t->data == NULL)
      r->bad = 1;
  }
  ws->scalars = read_array(r, &ws->n_scalars, sizeof *ws->scalars);
  for (i = 0; ws->scalars != NULL && i < ws->n_scalars && !r->bad; i++) {
    st_scalar *s = &ws->scalars[i];
    uint64_t bits;
    s->name = st__rbuf_str(r);
    s->dtype = (st_dtype)st__rbuf_i32(r);
    s->is_int = st__rbuf_i32(r);
    s->i = (int64_t)st__rbuf_u64(r);
    bits = st__rbuf_u64(r);
    memcpy(&s->f, &bits, sizeof s->f);
  }
  ws->shard_count = st__rbuf_u32(r);
}

/* The case's env at the end of a MAP: set here, in the worker, before
 * the kernel is resolved (the workers were forked before the case began,
 * so they do not inherit it). 0, or -1 with msg. */
static int read_env(wstate *ws, st__rbuf *r, char *msg, size_t size) {
  uint32_t n = st__rbuf_u32(r);
  const char **kv;
  st_error err;
  int rc = 0;
  if (r->bad || n > MSG_MAX / 4)
    return -1;
  kv = calloc(2 * (size_t)n + 1, sizeof *kv);
  if (kv == NULL) {
    snprintf(msg, size, "worker %u: out of memory", ws->index);
    return -1;
  }
  for (uint32_t i = 0; i < 2 * n; i++)
    kv[i] = st__rbuf_strview(r);
  for (uint32_t i = 0; i < 2 * n && !r->bad; i++)
    r->bad = kv[i] == NULL;
  st_error_clear(&err);
  if (r->bad)
    rc = -1;
  else if (st__env_apply(&ws->env, kv, n, &err) != ST_OK) {
    snprintf(msg, size, "worker %u: %.400s", ws->index, err.message);
    rc = -1;
  }
  free(kv);
  return rc;
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

static void worker_map(wstate *ws, int sock, st__rbuf *r, int *fds,
                       size_t nfds) {
  wmap *maps = NULL;
  size_t i, j, n_segs;
  uint64_t scratch_id;
  char msg[512] = "";
  st_status status = ST_OK;
  char **loaded = NULL;
  size_t n_loaded = 0;
  int lookup = 0;

  layout_free(ws);
  ws->op = st__rbuf_str(r);
  ws->backend = st__rbuf_str(r);
  ws->max_threads = st__rbuf_u32(r);
  ws->reduce = (int)st__rbuf_u32(r);
  ws->n_blocks = st__rbuf_u64(r);
  scratch_id = st__rbuf_u64(r);
  n_segs = st__rbuf_u32(r);
  if (r->bad || n_segs != nfds || ws->op == NULL || ws->backend == NULL) {
    status = ST_EINTERNAL;
    snprintf(msg, sizeof msg, "worker %u: malformed map message", ws->index);
    goto out;
  }
  maps = calloc(n_segs ? n_segs : 1, sizeof *maps);
  if (maps == NULL) {
    status = ST_ENOMEM;
    snprintf(msg, sizeof msg, "worker %u: out of memory", ws->index);
    goto out;
  }
  for (i = 0; i < n_segs; i++) {
    maps[i].id = st__rbuf_u64(r);
    maps[i].size = (size_t)st__rbuf_u64(r);
    maps[i].map = NULL;
    for (j = 0; j < ws->n_maps; j++)
      if (ws->maps[j].id == maps[i].id && ws->maps[j].map != NULL) {
        /* Already mapped in an earlier case: keep the mapping (its pages
         * are faulted in already). */
        maps[i].map = ws->maps[j].map;
        ws->maps[j].map = NULL;
        break;
      }
    if (maps[i].map == NULL && status == ST_OK) {
      void *m = mmap(NULL, maps[i].size, PROT_READ | PROT_WRITE, MAP_SHARED,
                     fds[i], 0);
      if (m == MAP_FAILED) {
        status = ST_ENOMEM;
        snprintf(msg, sizeof msg,
                 "worker %u: cannot map a %zu-byte segment: %s", ws->index,
                 maps[i].size, strerror(errno));
      } else {
        maps[i].map = m;
      }
    }
  }
  for (j = 0; j < ws->n_maps; j++)
    if (ws->maps[j].map != NULL)
      munmap(ws->maps[j].map, ws->maps[j].size);
  free(ws->maps);
  ws->maps = maps;
  ws->n_maps = n_segs;
  maps = NULL;
  if (status != ST_OK)
    goto out;

  read_layout(ws, r);
  ws->scratch = scratch_id ? map_of(ws, scratch_id) : NULL;
  if (r->bad || ws->tensors == NULL || ws->scalars == NULL ||
      (ws->reduce && ws->n_blocks > 0 && ws->scratch == NULL) ||
      read_env(ws, r, msg, sizeof msg) != 0) {
    status = ST_EINTERNAL;
    if (msg[0] == '\0')
      snprintf(msg, sizeof msg, "worker %u: malformed map message", ws->index);
  }
  if (status == ST_OK)
    status = bind_kernel(ws, msg, sizeof msg, &lookup);
out:
  free(maps);
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
    st__rbuf r;
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
    st__rbuf_init(&r, buf, (size_t)n);
    type = st__rbuf_u32(&r);
    if (type == ST__MSG_L3_MAP)
      worker_map(&ws, WORKER_SOCK_FD, &r, fds, nfds);
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

/* ---- the pool, harness side ------------------------------------------ */

static void drain(worker *w) {
  char tmp[16384];
  while (w->out >= 0) {
    ssize_t n = read(w->out, tmp, sizeof tmp);
    if (n > 0) {
      /* Up to the capture cap (base/buf.c keeps the first bytes); what
       * does not fit, or finds no memory, is counted. */
      st__buf view = {w->buf, w->len, w->cap, ST__CAPTURE_MAX};
      w->dropped += (size_t)n - st__buf_add_capped(&view, tmp, (size_t)n);
      w->buf = view.data;
      w->len = view.len;
      w->cap = view.cap;
      continue;
    }
    if (n == 0) {
      close(w->out);
      w->out = -1;
      break;
    }
    if (errno == EINTR)
      continue;
    break; /* EAGAIN: nothing more now */
  }
}

static void drain_until_eof(worker *w, int ms) {
  uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
  while (w->out >= 0) {
    struct pollfd pf;
    uint64_t t;
    drain(w);
    t = now_ns();
    if (w->out < 0 || t >= end)
      break;
    pf.fd = w->out;
    pf.events = POLLIN;
    poll(&pf, 1, (int)((end - t) / 1000000u) + 1);
  }
}

/* Waits until every worker in p has exited or ms passed; returns 1 when
 * all are reaped. */
static int reap_all(st__wpool *p, int ms) {
  uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
  for (;;) {
    unsigned i, left = 0;
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (w->reaped || w->pid <= 0)
        continue;
      pid_t r = waitpid(w->pid, &w->status, WNOHANG);
      if (r == w->pid || (r < 0 && errno == ECHILD))
        w->reaped = 1;
      else
        left++;
    }
    if (left == 0)
      return 1;
    if (now_ns() >= end)
      return 0;
    /* Not a synchronisation sleep: a bounded grace for exits we cannot
     * wait on with a file descriptor. */
    poll(NULL, 0, 2);
  }
}

static void kill_all(st__wpool *p, int sig) {
  unsigned i;
  for (i = 0; i < p->n; i++)
    if (!p->w[i].reaped && p->w[i].pid > 0)
      kill(p->w[i].pid, sig);
}

/* Kills every worker (SIGTERM, then SIGKILL after the grace), reaps them
 * and drains what they printed. */
static void pool_kill(st__wpool *p) {
  unsigned i;
  kill_all(p, SIGTERM);
  if (!reap_all(p, ST__WORKERS_GRACE_MS)) {
    kill_all(p, SIGKILL);
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (!w->reaped && w->pid > 0) {
        while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
          ;
        w->reaped = 1;
      }
    }
  }
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    /* Reaped: the write end is closed, so this reaches EOF soon (unless
     * a process the kernel spawned still holds it: hence the bound). */
    drain_until_eof(w, 100);
    if (w->sock >= 0) {
      close(w->sock);
      w->sock = -1;
    }
  }
  p->broken = 1;
}

static void worker_close_fds(worker *w) {
  if (w->sock >= 0)
    close(w->sock);
  if (w->out >= 0)
    close(w->out);
  w->sock = w->out = -1;
}

static void pool_free(st__wpool *p) {
  unsigned i;
  for (i = 0; i < p->n; i++) {
    worker_close_fds(&p->w[i]);
    free(p->w[i].buf);
    free(p->w[i].reply_message);
  }
  free(p->w);
  free(p);
}

/* Ensures fds 0..2 are open so socketpair/pipe never hand out 1 or 2,
 * which the child's dup2 dance assumes. */
static void ensure_std_fds(void) {
  int fd;
  for (fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

/* In the new worker: stdout/stderr to the capture pipe, the socket at
 * WORKER_SOCK_FD, every other inherited fd closed (other workers' sockets,
 * segment fds, an isolated child's pipes: holding them would keep pipes
 * from reaching EOF in whoever waits on them). */
static void worker_child(st__wpool *p, unsigned index, int sock, int out_w,
                         st_registry *reg, pid_t parent) {
  (void)p;
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

st_status st__wpool_start(unsigned n, st_registry *reg, st__wpool **out,
                          st_error *err) {
  st__wpool *p;
  unsigned i;
  pid_t self = getpid();

  *out = NULL;
  if (n == 0)
    return st_error_set(err, ST_EINVAL, "level 3 needs at least 1 worker");
  p = calloc(1, sizeof *p);
  if (p == NULL || (p->w = calloc(n, sizeof *p->w)) == NULL) {
    free(p);
    return st_error_set(err, ST_ENOMEM, "out of memory starting workers");
  }
  for (i = 0; i < n; i++)
    p->w[i].sock = p->w[i].out = -1;
  ensure_std_fds();
  /* Buffered output would otherwise be written twice (or by a worker). */
  fflush(stdout);
  fflush(stderr);
  for (i = 0; i < n; i++) {
    int sv[2], pp[2];
    pid_t pid;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: socketpair: %s",
                   i, strerror(errno));
      goto fail;
    }
    if (pipe2(pp, O_CLOEXEC) != 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: pipe: %s", i,
                   strerror(errno));
      close(sv[0]);
      close(sv[1]);
      goto fail;
    }
    pid = fork();
    if (pid < 0) {
      st_error_set(err, ST_EINTERNAL, "cannot start worker %u: fork: %s", i,
                   strerror(errno));
      close(sv[0]);
      close(sv[1]);
      close(pp[0]);
      close(pp[1]);
      goto fail;
    }
    if (pid == 0) {
      close(sv[0]);
      close(pp[0]);
      worker_child(p, i, sv[1], pp[1], reg, self);
    }
    close(sv[1]);
    close(pp[1]);
    p->w[i].pid = pid;
    p->w[i].sock = sv[0];
    p->w[i].out = pp[0];
    p->n = i + 1;
    fcntl(pp[0], F_SETFL, fcntl(pp[0], F_GETFL) | O_NONBLOCK);
  }
  *out = p;
  return ST_OK;
fail:
  if (p->n > 0)
    pool_kill(p);
  pool_free(p);
  return err ? err->code : ST_EINTERNAL;
}

void st__wpool_stop(st__wpool *p) {
  unsigned i;
  if (p == NULL)
    return;
  /* EOF on the socket is the workers' signal to exit. */
  for (i = 0; i < p->n; i++)
    if (p->w[i].sock >= 0) {
      close(p->w[i].sock);
      p->w[i].sock = -1;
    }
  if (!reap_all(p, ST__WORKERS_GRACE_MS))
    pool_kill(p);
  pool_free(p);
}

void st__wpool_forget(st__wpool *p) {
  if (p != NULL)
    pool_free(p);
}

unsigned st__wpool_size(const st__wpool *p) { return p->n; }

long st__wpool_pid(const st__wpool *p, unsigned i) {
  return i < p->n ? (long)p->w[i].pid : -1;
}

int st__wpool_broken(st__wpool *p) {
  unsigned i;
  if (p->broken)
    return 1;
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    pid_t r = waitpid(w->pid, &w->status, WNOHANG);
    if (r == w->pid) {
      w->reaped = 1;
      p->broken = 1;
    }
  }
  return p->broken;
}

/* A worker's socket reported EOF or an error: it is dying. Reaps it (it
 * has closed everything, so it exits promptly; SIGKILL after the grace
 * otherwise), kills the others, and describes the death. */
static void worker_died(st__wpool *p, unsigned i, st__wresult *out) {
  worker *w = &p->w[i];
  char how[160];
  uint64_t end = now_ns() + (uint64_t)ST__WORKERS_GRACE_MS * 1000000u * 5;
  while (!w->reaped) {
    pid_t r = waitpid(w->pid, &w->status, WNOHANG);
    if (r == w->pid || (r < 0 && errno != EINTR)) {
      w->reaped = 1;
      break;
    }
    if (now_ns() >= end) {
      kill(w->pid, SIGKILL);
      while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
        ;
      w->reaped = 1;
      break;
    }
    poll(NULL, 0, 1);
  }
  st__proc_describe_wait(w->status, how, sizeof how);
  pool_kill(p);
  out->broken = 1;
  wresult_fail(out, ST_EKERNEL, "worker %u (pid %ld) died: %s", i, (long)w->pid,
               how);
}

static void timed_out(st__wpool *p, double timeout_s, st__wresult *out) {
  pool_kill(p);
  out->broken = 1;
  out->timed_out = 1;
  wresult_fail(out, ST_EKERNEL,
               "timed out after %g s (level-3 workers killed and replaced)",
               timeout_s);
}

/* Reads worker i's reply (its socket is readable) into its slot. Returns
 * 0, or -1 when the worker died or sent nonsense (out says so; the pool
 * is broken). */
static int take_reply(st__wpool *p, unsigned i, char *buf, st__wresult *out) {
  worker *w = &p->w[i];
  ssize_t got = recv(w->sock, buf, MSG_MAX, MSG_DONTWAIT);
  st__msg_l3_reply m;
  size_t k;
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (got <= 0) {
    worker_died(p, i, out);
    return -1;
  }
  if (st__msg_l3_reply_get(buf, (size_t)got, &m) != 0) {
    wresult_fail(out, ST_EINTERNAL, "worker %u sent a malformed reply", i);
    pool_kill(p);
    out->broken = 1;
    return -1;
  }
  w->reply_status = (st_status)m.status;
  w->reply_lookup = m.lookup;
  free(w->reply_message);
  w->reply_message = m.message;
  m.message = NULL;
  for (k = 0; k < m.n_loaded; k++)
    wresult_add_loaded(out, i, m.loaded[k]);
  w->reply_device_ns = m.device_ns;
  w->reply_copy_ns = m.copy_ns;
  st__msg_l3_reply_free(&m);
  w->awaiting = 0;
  return 0;
}

/* Waits for the replies of every worker with awaiting set, draining their
 * output meanwhile. Stops at the first death or at the deadline. */
static void wait_replies(st__wpool *p, uint64_t deadline, double timeout_s,
                         st__wresult *out) {
  struct pollfd *pf = calloc(2 * (size_t)p->n, sizeof *pf);
  unsigned *who = calloc(2 * (size_t)p->n, sizeof *who);
  char *buf = malloc(MSG_MAX);
  unsigned i;

  if (pf == NULL || who == NULL || buf == NULL) {
    wresult_fail(out, ST_ENOMEM, "out of memory waiting for workers");
    /* The replies are lost to us: the pool cannot be trusted any more. */
    pool_kill(p);
    out->broken = 1;
    goto done;
  }
  for (;;) {
    nfds_t n = 0;
    unsigned left = 0;
    int timeout_ms = -1, r;
    for (i = 0; i < p->n; i++) {
      worker *w = &p->w[i];
      if (w->awaiting) {
        left++;
        pf[n].fd = w->sock;
        pf[n].events = POLLIN;
        who[n++] = i;
      }
      if (w->out >= 0) {
        pf[n].fd = w->out;
        pf[n].events = POLLIN;
        who[n++] = i | 0x80000000u;
      }
    }
    if (left == 0)
      break;
    if (deadline != 0) {
      uint64_t t = now_ns();
      if (t >= deadline) {
        timed_out(p, timeout_s, out);
        goto done;
      }
      timeout_ms = (int)((deadline - t + 999999u) / 1000000u);
    }
    r = poll(pf, n, timeout_ms);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      wresult_fail(out, ST_EINTERNAL, "poll: %s", strerror(errno));
      pool_kill(p);
      out->broken = 1;
      goto done;
    }
    for (i = 0; i < n; i++) {
      worker *w;
      if (pf[i].revents == 0)
        continue;
      w = &p->w[who[i] & 0x7fffffffu];
      if (who[i] & 0x80000000u) {
        drain(w);
        continue;
      }
      if (take_reply(p, who[i], buf, out) != 0)
        goto done;
    }
  }
  /* Every worker answered: the first failure by worker index speaks. The
   * workers ran at once, so the round's device and copy times are the
   * longest a worker reported. */
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    if (w->reply_device_ns != ST_NS_NONE &&
        (out->device_ns == ST_NS_NONE || w->reply_device_ns > out->device_ns))
      out->device_ns = w->reply_device_ns;
    if (w->reply_copy_ns != ST_NS_NONE &&
        (out->copy_ns == ST_NS_NONE || w->reply_copy_ns > out->copy_ns))
      out->copy_ns = w->reply_copy_ns;
    if (w->reply_status != ST_OK && out->status == ST_OK) {
      out->is_lookup = w->reply_lookup;
      wresult_fail(out, w->reply_status, "%s",
                   w->reply_message && w->reply_message[0]
                       ? w->reply_message
                       : st_status_str(w->reply_status));
    }
  }
done:
  for (i = 0; i < p->n; i++)
    p->w[i].awaiting = 0;
  free(pf);
  free(who);
  free(buf);
}

/* Sends b to every worker, or (run not NULL) a RUN of its own to each,
 * its shard index the worker's; then waits for their replies. */
static void send_all(st__wpool *p, st__wbuf *b, const int *fds, size_t nfds,
                     uint64_t deadline, double timeout_s, st__wresult *out,
                     const st__msg_l3_run *run) {
  unsigned i;
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    int rc;
    w->reply_status = ST_OK;
    w->reply_lookup = 0;
    w->reply_device_ns = w->reply_copy_ns = ST_NS_NONE;
    if (run != NULL) {
      /* The same size as the one send_built checked: no allocation. */
      st__msg_l3_run mine = *run;
      mine.shard_index = i;
      b->buf.len = 0;
      st__msg_l3_run_put(b, &mine);
    }
    rc = st__proc_send_fds(w->sock, b->buf.data, b->buf.len, fds, nfds);
    if (rc != 0) {
      /* A worker that cannot take a command is dead or dying. */
      worker_died(p, i, out);
      return;
    }
    w->awaiting = 1;
  }
  wait_replies(p, deadline, timeout_s, out);
}

/* Starts a request's result: clear, or failed with out->broken set when
 * the pool is broken (a worker died or timed out). 1 if the request may
 * go ahead. */
static int wpool_begin(const st__wpool *p, st__wresult *out) {
  wresult_init(out);
  if (p->broken) {
    wresult_fail(out, ST_EINTERNAL, "the worker pool is broken");
    out->broken = 1;
    return 0;
  }
  return 1;
}

/* Sends a message without descriptors (b, built by the caller) to every
 * worker, or fails out when building it ran out of memory; frees b. */
static void send_built(st__wpool *p, st__wbuf *b, uint64_t deadline,
                       double timeout_s, st__wresult *out,
                       const st__msg_l3_run *run) {
  if (b->oom)
    wresult_fail(out, ST_ENOMEM, "out of memory");
  else
    send_all(p, b, NULL, 0, deadline, timeout_s, out, run);
  st__wbuf_free(b);
}

void st__wpool_map(st__wpool *p, const st__wcase *wc, uint64_t deadline,
                   double timeout_s, st__wresult *out) {
  st__wbuf b;
  int fds[ST__WORKERS_MAX_SEGMENTS + 1];
  size_t nfds = 0, i, k;
  const st__argset *a = wc->args;

  if (!wpool_begin(p, out))
    return;
  if (wc->rh->n + (wc->scratch ? 1 : 0) > ST__WORKERS_MAX_SEGMENTS) {
    wresult_fail(out, ST_ELIMIT,
                 "level 3 passes at most %u tensors to the workers; this "
                 "case has %zu",
                 ST__WORKERS_MAX_SEGMENTS, wc->rh->n);
    return;
  }
  st__wbuf_init(&b);
  st__wbuf_u32(&b, ST__MSG_L3_MAP);
  st__wbuf_str(&b, wc->op);
  st__wbuf_str(&b, wc->backend);
  st__wbuf_u32(&b, wc->max_threads);
  st__wbuf_u32(&b, (uint32_t)(wc->reduce != 0));
  st__wbuf_u64(&b, (uint64_t)wc->n_blocks);
  st__wbuf_u64(&b, wc->scratch ? wc->scratch->id : 0);
  st__wbuf_u32(&b, (uint32_t)(wc->rh->n + (wc->scratch ? 1 : 0)));
  for (i = 0; i < wc->rh->n; i++) {
    st__wbuf_u64(&b, wc->rh->segs[i]->id);
    st__wbuf_u64(&b, wc->rh->segs[i]->size);
    fds[nfds++] = wc->rh->segs[i]->fd;
  }
  if (wc->scratch != NULL) {
    st__wbuf_u64(&b, wc->scratch->id);
    st__wbuf_u64(&b, wc->scratch->size);
    fds[nfds++] = wc->scratch->fd;
  }
  st__wbuf_u32(&b, (uint32_t)a->n_tensors);
  for (i = 0; i < a->n_tensors; i++) {
    const st_tensor *t = &a->tensors[i];
    uint64_t id = 0;
    int d;
    for (k = 0; k < wc->rh->n; k++)
      if (wc->rh->tensor[k] == i)
        id = wc->rh->segs[k]->id;
    st__wbuf_str(&b, t->name);
    st__wbuf_i32(&b, (int32_t)t->dtype);
    st__wbuf_i32(&b, (int32_t)t->role);
    st__wbuf_i32(&b, t->ndim);
    for (d = 0; d < t->ndim && d < ST_MAX_DIMS; d++)
      st__wbuf_u64(&b, (uint64_t)t->shape[d]);
    st__wbuf_u64(&b, t->numel);
    st__wbuf_u64(&b, t->nbytes);
    st__wbuf_u64(&b, id);
  }
  st__wbuf_u32(&b, (uint32_t)a->n_scalars);
  for (i = 0; i < a->n_scalars; i++) {
    const st_scalar *s = &a->scalars[i];
    uint64_t bits;
    memcpy(&bits, &s->f, sizeof bits);
    st__wbuf_str(&b, s->name);
    st__wbuf_i32(&b, (int32_t)s->dtype);
    st__wbuf_i32(&b, s->is_int);
    st__wbuf_u64(&b, (uint64_t)s->i);
    st__wbuf_u64(&b, bits);
  }
  st__wbuf_u32(&b, p->n);
  st__wbuf_u32(&b, (uint32_t)wc->n_env);
  for (i = 0; i < 2 * wc->n_env; i++)
    st__wbuf_str(&b, wc->env[i]);
  if (b.oom || b.buf.len > MSG_MAX) {
    wresult_fail(out, b.oom ? ST_ENOMEM : ST_ELIMIT,
                 "the case's argument layout is too large for the workers "
                 "(%zu bytes)",
                 b.buf.len);
  } else {
    send_all(p, &b, fds, nfds, deadline, timeout_s, out, NULL);
  }
  st__wbuf_free(&b);
}

void st__wpool_run(st__wpool *p, unsigned round, uint64_t deadline,
                   double timeout_s, st__wresult *out) {
  st__wbuf b;
  st__msg_l3_run run;
  if (!wpool_begin(p, out))
    return;
  run.round = round;
  run.shard_index = 0; /* each worker's own, as it is sent */
  run.shard_count = p->n;
  st__wbuf_init(&b);
  st__msg_l3_run_put(&b, &run);
  send_built(p, &b, deadline, timeout_s, out, &run);
}

void st__wpool_release(st__wpool *p, uint64_t deadline, double timeout_s,
                       st__wresult *out) {
  st__wbuf b;
  if (!wpool_begin(p, out))
    return;
  st__wbuf_init(&b);
  st__msg_l3_release_put(&b);
  send_built(p, &b, deadline, timeout_s, out, NULL);
}

void st__wpool_take_output(st__wpool *p, char **text, size_t *len) {
  st__wbuf b;
  unsigned i;
  *text = NULL;
  *len = 0;
  st__wbuf_init(&b);
  for (i = 0; i < p->n; i++) {
    worker *w = &p->w[i];
    char head[96];
    drain(w);
    if (w->len == 0 && w->dropped == 0)
      continue;
    snprintf(head, sizeof head, "--- worker %u (pid %ld) ---\n", i,
             (long)w->pid);
    st__wbuf_bytes(&b, head, strlen(head));
    st__wbuf_bytes(&b, w->buf, w->len);
    if (w->len > 0 && w->buf[w->len - 1] != '\n')
      st__wbuf_u8(&b, '\n');
    if (w->dropped > 0) {
      snprintf(head, sizeof head, "[... %zu more bytes not kept]\n",
               w->dropped);
      st__wbuf_bytes(&b, head, strlen(head));
    }
    w->len = 0;
    w->dropped = 0;
  }
  if (b.buf.len == 0 || b.oom) {
    st__wbuf_free(&b);
    return;
  }
  st__wbuf_u8(&b, '\0');
  if (b.oom) {
    st__wbuf_free(&b);
    return;
  }
  *text = b.buf.data;
  *len = b.buf.len - 1;
}
