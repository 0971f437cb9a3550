/* SPDX-License-Identifier: MIT */
/* The `args` phase: turns a case's plan into bound arguments. Owns the
 * argset (tensor buffers from case/tbuf.c, scalars), the deterministic
 * inits (zeros, ones, fill, range, values), reading `file:` inits, and the
 * hand-off of random inits to harness/case/fill.c; also cloning and copying
 * argsets for golden and round snapshots. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case/args.h"
#include "case/fill.h"
#include "case/tbuf.h"

_Thread_local long st__args_fail_after = -1;

/* Counts down the fault-injection hook (SQLite's sqlite3FaultSim idea):
 * returns 1 when this allocation must fail. */
static int fault(void) {
  if (st__args_fail_after < 0)
    return 0;
  if (st__args_fail_after == 0)
    return 1;
  st__args_fail_after--;
  return 0;
}

static void *alloc_buffer(size_t nbytes, const char *name) {
  void *p = NULL;
  if (fault())
    return NULL;
  /* Aligned to a cache line (and to any vector width up to AVX-512), so
   * kernels may use aligned loads; between guard zones (case/tbuf.h).
   * Under --guard-pages its end is against a PROT_NONE page instead, and
   * the name is what a fault there reports. */
  p = st__tbuf_alloc(nbytes);
  st__tbuf_set_name(p, name);
  return p;
}

static void *alloc_array(size_t count, size_t size) {
  if (count == 0)
    return NULL;
  if (fault())
    return NULL;
  return calloc(count, size);
}

/* Where errors about an arg point: its init if known, else the arg. */
static st_status arg_error(st_error *err, st_status code, const st__plan *plan,
                           const st__rarg *ra, const char *fmt, ...)
    ST_PRINTF(5, 6);
static st_status arg_error(st_error *err, st_status code, const st__plan *plan,
                           const st__rarg *ra, const char *fmt, ...) {
  const char *file = plan->scene && plan->scene->file ? plan->scene->file : "";
  int line = 0, column = 0;
  if (ra->arg != NULL) {
    line = ra->arg->init.line ? ra->arg->init.line : ra->arg->line;
    column = ra->arg->init.line ? ra->arg->init.column : ra->arg->column;
  }
  char msg[ST_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0)
    return st_error_set_at(err, code, file, line, column, "tensor '%s': %s",
                           ra->name, msg);
  return st_error_set(err, code, "tensor '%s': %s", ra->name, msg);
}

/* Stores one literal: exact integers through the int64 path (one rounding
 * into float dtypes, wrap into integer ones), others through double. */
static void store_num(st_tensor *t, size_t i, st__num v) {
  if (v.is_int)
    st_tensor_set_i64(t, i, v.i);
  else
    st_tensor_set_f64(t, i, v.f);
}

/* Every element equal to v: store element 0, then double the filled
 * prefix with memcpy. */
static void fill_const(st_tensor *t, st__num v) {
  if (t->numel == 0)
    return;
  store_num(t, 0, v);
  unsigned char *p = t->data;
  size_t done = st_dtype_size(t->dtype);
  while (done < t->nbytes) {
    const size_t k = done < t->nbytes - done ? done : t->nbytes - done;
    memcpy(p + done, p, k);
    done += k;
  }
}

static void fill_range(st_tensor *t, st__num start, st__num step) {
  if (start.is_int && step.is_int) {
    /* start + i*step exactly, in wrapping unsigned arithmetic, then one
     * rounding into the dtype. */
    for (size_t i = 0; i < t->numel; i++)
      st_tensor_set_i64(
          t, i, (int64_t)((uint64_t)start.i + (uint64_t)i * (uint64_t)step.i));
    return;
  }
  for (size_t i = 0; i < t->numel; i++)
    st_tensor_set_f64(t, i, start.f + (double)i * step.f);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/* `file:` data is little-endian (docs/scene-format.md#inits). */
static void from_little_endian(st_tensor *t) {
  const size_t es = st_dtype_size(t->dtype);
  unsigned char *p = t->data;
  for (size_t i = 0; i < t->numel; i++, p += es)
    for (size_t k = 0; k < es / 2; k++) {
      const unsigned char c = p[k];
      p[k] = p[es - 1 - k];
      p[es - 1 - k] = c;
    }
}
#else
static void from_little_endian(st_tensor *t) { (void)t; }
#endif

/* Opens path, which the loader resolved to lie under dir (both real
 * paths), one component at a time from dir with O_NOFOLLOW: a symlink
 * swapped in after the load (to leave the directory, or to a FIFO or a
 * device) fails the open instead of being followed (issue 13, D7). The
 * final open is non-blocking, so a FIFO put there cannot hang the case;
 * the caller checks for a regular file. -1 with errno on failure. */
static int open_beneath(const char *dir, const char *path) {
  const size_t dl = strlen(dir);
  const char *rel;
  if (dl == 1 && dir[0] == '/')
    rel = path + 1;
  else if (strncmp(path, dir, dl) == 0 && path[dl] == '/')
    rel = path + dl + 1;
  else {
    errno = EXDEV;
    return -1;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char comp[4096];
  while (*rel != '\0') {
    const char *slash = strchr(rel, '/');
    const size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
    if (n == 0 || n >= sizeof comp ||
        (n == 2 && rel[0] == '.' && rel[1] == '.')) {
      close(fd);
      errno = EXDEV;
      return -1;
    }
    memcpy(comp, rel, n);
    comp[n] = '\0';
    const int flags = slash ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                            : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    const int next = openat(fd, comp, flags);
    const int saved = errno;
    close(fd);
    if (next < 0) {
      errno = saved;
      return -1;
    }
    fd = next;
    rel = slash ? slash + 1 : rel + n;
  }
  return fd;
}

static st_status fill_file(st_tensor *t, const st__plan *plan,
                           const st__rarg *ra, st_error *err) {
  const char *shown =
      ra->arg && ra->arg->init.path_given ? ra->arg->init.path_given : ra->path;
  st_status rc = ST_OK;
  if (ra->path == NULL)
    return arg_error(err, ST_EINVAL, plan, ra, "file init without a path");
  const char *dir = plan->scene ? plan->scene->dir : NULL;
  const int fd =
      dir ? open_beneath(dir, ra->path)
          : open(ra->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR || errno == EXDEV))
    return arg_error(err, ST_EIO, plan, ra,
                     "cannot open '%s': it is no longer a file under the "
                     "scene's directory (a symlink was put in its path "
                     "since the scene was loaded)",
                     shown);
  if (fd < 0)
    return arg_error(err, ST_EIO, plan, ra, "cannot open '%s': %s", shown,
                     strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    rc = arg_error(err, ST_EIO, plan, ra, "cannot stat '%s': %s", shown,
                   strerror(errno));
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    rc = arg_error(err, ST_EIO, plan, ra, "'%s' is not a regular file", shown);
    goto out;
  }
  if ((uint64_t)st.st_size != (uint64_t)t->nbytes) {
    rc = arg_error(err, ST_EIO, plan, ra,
                   "file '%s' has %lld bytes, expected %zu (it changed "
                   "since the scene was loaded)",
                   shown, (long long)st.st_size, t->nbytes);
    goto out;
  }
  size_t got = 0;
  while (got < t->nbytes) {
    const ssize_t r = read(fd, (unsigned char *)t->data + got, t->nbytes - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      rc = arg_error(err, ST_EIO, plan, ra, "cannot read '%s': %s", shown,
                     strerror(errno));
      goto out;
    }
    if (r == 0) {
      rc = arg_error(err, ST_EIO, plan, ra,
                     "file '%s' ended early (it changed while being "
                     "read)",
                     shown);
      goto out;
    }
    got += (size_t)r;
  }
  from_little_endian(t);
out:
  close(fd);
  return rc;
}

static st_status fill_tensor(st_tensor *t, const st__plan *plan,
                             const st__rarg *ra, uint64_t seed, st_error *err) {
  switch (ra->init) {
  case ST__INIT_ZEROS:
    if (t->nbytes > 0)
      memset(t->data, 0, t->nbytes);
    return ST_OK;
  case ST__INIT_ONES: {
    const st__num one = {1, 1, 1.0};
    fill_const(t, one);
    return ST_OK;
  }
  case ST__INIT_FILL:
    fill_const(t, ra->a);
    return ST_OK;
  case ST__INIT_RANGE:
    fill_range(t, ra->a, ra->b);
    return ST_OK;
  case ST__INIT_UNIFORM:
  case ST__INIT_NORMAL:
  case ST__INIT_RANDINT:
  case ST__INIT_EXACT: {
    const char *scene = plan->scene ? plan->scene->name : "";
    const char *kase = plan->kase ? plan->kase->name : "";
    const uint64_t key = st__rng_key(scene, kase, ra->name, seed);
    return st__fill_random(t, ra->init, ra->a, ra->b, key, 0, t->numel);
  }
  case ST__INIT_VALUES:
    if (ra->n_values != t->numel)
      return arg_error(err, ST_EINVAL, plan, ra,
                       "values has %zu entries, expected %zu", ra->n_values,
                       t->numel);
    for (size_t i = 0; i < t->numel; i++)
      store_num(t, i, ra->values[i]);
    return ST_OK;
  case ST__INIT_FILE:
    return fill_file(t, plan, ra, err);
  }
  return arg_error(err, ST_EINVAL, plan, ra, "unknown init kind %d",
                   (int)ra->init);
}

/* A scalar carries its value as its dtype holds it: a float32 scalar 0.1
 * is the float nearest 0.1, an integer scalar is exact. */
static void build_scalar(st_scalar *s, const st__rarg *ra) {
  if (ra->scalar_kind != ST_SCALAR_NUMBER) {
    /* Borrowed from the plan, which outlives the argsets. */
    memset(s, 0, sizeof *s);
    s->name = ra->name;
    s->dtype = ST_DTYPE_INT64;
    s->is_int = 1;
    s->kind = ra->scalar_kind;
    s->ints = ra->ints;
    s->n_ints = ra->n_ints;
    s->string = ra->string;
    return;
  }
  /* The value goes through a one-element tensor of the scalar's dtype. */
  unsigned char buf[8];
  st_tensor tmp = {0};
  tmp.dtype = ra->dtype;
  tmp.numel = 1;
  tmp.nbytes = st_dtype_size(ra->dtype);
  tmp.data = buf;
  store_num(&tmp, 0, ra->value);
  s->name = ra->name;
  s->dtype = ra->dtype;
  s->kind = ST_SCALAR_NUMBER;
  s->ints = NULL;
  s->n_ints = 0;
  s->string = NULL;
  if (st_dtype_is_float(ra->dtype)) {
    s->is_int = 0;
    s->f = st_tensor_get_f64(&tmp, 0);
    if (ra->value.is_int)
      s->i = ra->value.i;
    else if (isnan(s->f))
      s->i = 0;
    else if (s->f >= 0x1p63)
      s->i = INT64_MAX;
    else if (s->f < -0x1p63)
      s->i = INT64_MIN;
    else
      s->i = (int64_t)s->f;
    return;
  }
  /* Integer and bool: wrap (or v != 0) exactly as a tensor element would. */
  s->is_int = 1;
  s->i = st_tensor_get_i64(&tmp, 0);
  s->f = (double)s->i;
}

st_status st__args_build(const st__plan *plan, uint64_t seed, st__argset *out,
                         st_error *err) {
  st_status rc = ST_OK;
  size_t n_tensors = 0, n_scalars = 0;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < plan->n_args; i++) {
    if (plan->args[i].is_tensor)
      n_tensors++;
    else
      n_scalars++;
  }
  out->tensors = alloc_array(n_tensors, sizeof *out->tensors);
  out->scalars = alloc_array(n_scalars, sizeof *out->scalars);
  if ((n_tensors && !out->tensors) || (n_scalars && !out->scalars)) {
    rc = st_error_set(err, ST_ENOMEM, "out of memory building arguments");
    goto fail;
  }
  for (size_t i = 0; i < plan->n_args; i++) {
    const st__rarg *ra = &plan->args[i];
    if (!ra->is_tensor) {
      build_scalar(&out->scalars[out->n_scalars++], ra);
      continue;
    }
    st_tensor *t = &out->tensors[out->n_tensors];
    t->name = ra->name;
    t->dtype = ra->dtype;
    t->role = ra->role;
    t->ndim = ra->ndim;
    memcpy(t->shape, ra->shape, sizeof t->shape);
    t->numel = ra->numel;
    t->nbytes = ra->nbytes;
    t->data = NULL;
    if (t->nbytes > 0) {
      t->data = alloc_buffer(t->nbytes, t->name);
      if (t->data == NULL) {
        rc = arg_error(err, ST_ENOMEM, plan, ra,
                       "out of memory allocating %zu bytes", t->nbytes);
        goto fail;
      }
    }
    out->n_tensors++; /* owned by out from here on */
    rc = fill_tensor(t, plan, ra, seed, err);
    if (rc != ST_OK)
      goto fail;
  }
  return ST_OK;
fail:
  st__argset_free(out);
  return rc;
}

st_status st__argset_fill_expected(const st__plan *plan, uint64_t seed,
                                   st__argset *gold, st_error *err) {
  for (size_t i = 0; i < gold->n_tensors && i < plan->n_args; i++) {
    const st__rarg *x = plan->args[i].expected;
    st_status rc;
    if (x == NULL || gold->tensors[i].data == NULL)
      continue;
    rc = fill_tensor(&gold->tensors[i], plan, x, seed, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

/* How clone_as makes each tensor of the copy. */
enum { COPY, NONE, ZERO, SHARE };

/* The copy of src whose tensor i is made as mode(i) says: its bytes
 * copied, no buffer at all, a zeroed buffer, or src's own buffer
 * borrowed (dst->lender = src, so st__argset_free leaves it). */
static st_status clone_as(const st__argset *src, const st__plan *plan,
                          int share_inputs, int golden, st__argset *dst) {
  memset(dst, 0, sizeof *dst);
  dst->tensors = alloc_array(src->n_tensors, sizeof *dst->tensors);
  dst->scalars = alloc_array(src->n_scalars, sizeof *dst->scalars);
  if ((src->n_tensors && !dst->tensors) || (src->n_scalars && !dst->scalars))
    goto fail;
  if (src->n_scalars)
    memcpy(dst->scalars, src->scalars, src->n_scalars * sizeof *src->scalars);
  dst->n_scalars = src->n_scalars;
  for (size_t i = 0; i < src->n_tensors; i++) {
    st_tensor *t = &dst->tensors[i];
    const int poison = plan != NULL && i < plan->n_args && plan->args[i].poison;
    int mode = COPY;
    if (poison)
      mode = golden ? ZERO : NONE;
    else if (share_inputs && src->tensors[i].role == ST_ROLE_INPUT)
      mode = SHARE;
    *t = src->tensors[i];
    t->data = NULL;
    if (t->nbytes > 0 && mode == SHARE) {
      t->data = src->tensors[i].data;
      dst->lender = src;
    } else if (t->nbytes > 0 && mode != NONE) {
      t->data = alloc_buffer(t->nbytes, t->name);
      if (t->data == NULL)
        goto fail;
      if (mode == ZERO)
        memset(t->data, 0, t->nbytes);
      else
        memcpy(t->data, src->tensors[i].data, t->nbytes);
    }
    dst->n_tensors++;
  }
  return ST_OK;
fail:
  st__argset_free(dst);
  return ST_ENOMEM;
}

st_status st__argset_clone(const st__argset *src, st__argset *dst) {
  return clone_as(src, NULL, 0, 0, dst);
}

st_status st__argset_clone_init(const st__argset *args, const st__plan *plan,
                                st__argset *init) {
  return clone_as(args, plan, 0, 0, init);
}

st_status st__argset_clone_gold(const st__argset *init, const st__plan *plan,
                                int share_inputs, st__argset *gold) {
  return clone_as(init, plan, share_inputs, 1, gold);
}

void st__argset_copy_data(st__argset *dst, const st__argset *src,
                          int outputs_only) {
  const size_t n =
      dst->n_tensors < src->n_tensors ? dst->n_tensors : src->n_tensors;
  for (size_t i = 0; i < n; i++) {
    const st_tensor *s = &src->tensors[i];
    st_tensor *d = &dst->tensors[i];
    if (outputs_only && s->role == ST_ROLE_INPUT)
      continue;
    const size_t k = d->nbytes < s->nbytes ? d->nbytes : s->nbytes;
    if (k > 0 && s->data != NULL && d->data != NULL)
      memcpy(d->data, s->data, k);
  }
}

void st__argset_free(st__argset *set) {
  if (set == NULL)
    return;
  const st__argset *lender = set->lender;
  for (size_t i = 0; i < set->n_tensors; i++) {
    void *data = set->tensors[i].data;
    if (lender != NULL && i < lender->n_tensors &&
        data == lender->tensors[i].data)
      continue; /* borrowed */
    st__tbuf_free(data);
  }
  for (size_t i = 0; set->magsum != NULL && i < set->n_tensors; i++)
    free(set->magsum[i]);
  for (size_t i = 0; set->nterm != NULL && i < set->n_tensors; i++)
    free(set->nterm[i]);
  free(set->magsum);
  free(set->nterm);
  free(set->tensors);
  free(set->scalars);
  memset(set, 0, sizeof *set);
}

void st__args_tune_allocator(void) {
#ifdef M_MMAP_THRESHOLD
  /* 32 MiB is glibc's largest allowed threshold on 64-bit; the trim
   * threshold keeps freed buffers for the next case instead of returning
   * them to the kernel. mallopt's failure only leaves the default. */
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}
