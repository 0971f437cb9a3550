/* SPDX-License-Identifier: MIT */
/* The MAP message's encoder and decoder (case/level3/map_msg.h). */
#include <stdlib.h>
#include <string.h>

#include "case/level3/map_msg.h"
#include "wire/msg.h"

/* The segments' part: wc's rehosted tensors' segments and its scratch. */
static void put_segs(st__wbuf *b, const st__wcase *wc, int *fds, size_t *nfds) {
  size_t i;
  *nfds = 0;
  st__wbuf_u32(b, (uint32_t)(wc->rh->n + (wc->scratch ? 1 : 0)));
  for (i = 0; i < wc->rh->n; i++) {
    st__wbuf_u64(b, wc->rh->segs[i]->id);
    st__wbuf_u64(b, wc->rh->segs[i]->size);
    fds[(*nfds)++] = wc->rh->segs[i]->fd;
  }
  if (wc->scratch != NULL) {
    st__wbuf_u64(b, wc->scratch->id);
    st__wbuf_u64(b, wc->scratch->size);
    fds[(*nfds)++] = wc->scratch->fd;
  }
}

static void put_tensor(st__wbuf *b, const st__wcase *wc, size_t i) {
  const st_tensor *t = &wc->args->tensors[i];
  uint64_t id = 0;
  size_t k;
  int d;
  for (k = 0; k < wc->rh->n; k++)
    if (wc->rh->tensor[k] == i)
      id = wc->rh->segs[k]->id;
  st__wbuf_str(b, t->name);
  st__wbuf_i32(b, (int32_t)t->dtype);
  st__wbuf_i32(b, (int32_t)t->role);
  st__wbuf_i32(b, t->ndim);
  for (d = 0; d < t->ndim && d < ST_MAX_DIMS; d++)
    st__wbuf_u64(b, (uint64_t)t->shape[d]);
  st__wbuf_u64(b, t->numel);
  st__wbuf_u64(b, t->nbytes);
  st__wbuf_u64(b, id);
}

static void put_scalar(st__wbuf *b, const st_scalar *s) {
  uint64_t bits;
  memcpy(&bits, &s->f, sizeof bits);
  st__wbuf_str(b, s->name);
  st__wbuf_i32(b, (int32_t)s->dtype);
  st__wbuf_i32(b, s->is_int);
  st__wbuf_u64(b, (uint64_t)s->i);
  st__wbuf_u64(b, bits);
}

void st__l3_map_put(st__wbuf *b, const st__wcase *wc, unsigned n_workers,
                    int *fds, size_t *nfds) {
  const st__argset *a = wc->args;
  size_t i;
  st__wbuf_u32(b, ST__MSG_L3_MAP);
  st__wbuf_str(b, wc->op);
  st__wbuf_str(b, wc->backend);
  st__wbuf_u32(b, wc->max_threads);
  st__wbuf_u32(b, (uint32_t)(wc->reduce != 0));
  st__wbuf_u64(b, (uint64_t)wc->n_blocks);
  st__wbuf_u64(b, wc->scratch ? wc->scratch->id : 0);
  put_segs(b, wc, fds, nfds);
  st__wbuf_u32(b, (uint32_t)a->n_tensors);
  for (i = 0; i < a->n_tensors; i++)
    put_tensor(b, wc, i);
  st__wbuf_u32(b, (uint32_t)a->n_scalars);
  for (i = 0; i < a->n_scalars; i++)
    put_scalar(b, &a->scalars[i]);
  st__wbuf_u32(b, n_workers);
  st__wbuf_u32(b, (uint32_t)wc->n_env);
  for (i = 0; i < 2 * wc->n_env; i++)
    st__wbuf_str(b, wc->env[i]);
}

/* A count from r and a zeroed array of that many elem-byte items (at
 * least one, so NULL means out of memory). A count the rest of the
 * message cannot hold (each item takes min bytes or more) sets r->bad
 * and counts 0. */
static void *read_array(st__rbuf *r, size_t *n, size_t elem, size_t min) {
  *n = st__rbuf_u32(r);
  if (r->bad || *n > (r->len - r->off) / min) {
    *n = 0;
    r->bad = 1;
  }
  return calloc(*n ? *n : 1, elem);
}

static void get_tensor(st__rbuf *r, st_tensor *t, uint64_t *seg) {
  int d;
  t->name = st__rbuf_str(r);
  t->dtype = (st_dtype)st__rbuf_i32(r);
  t->role = (st_role)st__rbuf_i32(r);
  t->ndim = st__rbuf_i32(r);
  if (t->ndim < 0 || t->ndim > ST_MAX_DIMS) {
    t->ndim = 0;
    r->bad = 1;
    return;
  }
  for (d = 0; d < t->ndim; d++)
    t->shape[d] = (int64_t)st__rbuf_u64(r);
  t->numel = (size_t)st__rbuf_u64(r);
  t->nbytes = (size_t)st__rbuf_u64(r);
  *seg = st__rbuf_u64(r);
}

static void get_scalar(st__rbuf *r, st_scalar *s) {
  uint64_t bits;
  s->name = st__rbuf_str(r);
  s->dtype = (st_dtype)st__rbuf_i32(r);
  s->is_int = st__rbuf_i32(r);
  s->i = (int64_t)st__rbuf_u64(r);
  bits = st__rbuf_u64(r);
  memcpy(&s->f, &bits, sizeof s->f);
}

/* The tensors, scalars, shard count and env after the segments; 0, or -1
 * (r->bad, or out of memory). */
static int get_layout(st__rbuf *r, st__l3_map *m) {
  size_t i;
  m->tensors = read_array(r, &m->n_tensors, sizeof *m->tensors, 8);
  m->tensor_seg =
      calloc(m->n_tensors ? m->n_tensors : 1, sizeof *m->tensor_seg);
  if (m->tensors == NULL || m->tensor_seg == NULL)
    return -1;
  for (i = 0; i < m->n_tensors && !r->bad; i++)
    get_tensor(r, &m->tensors[i], &m->tensor_seg[i]);
  m->scalars = read_array(r, &m->n_scalars, sizeof *m->scalars, 8);
  if (m->scalars == NULL)
    return -1;
  for (i = 0; i < m->n_scalars && !r->bad; i++)
    get_scalar(r, &m->scalars[i]);
  m->shard_count = st__rbuf_u32(r);
  m->env = read_array(r, &m->n_env, 2 * sizeof *m->env, 8);
  if (m->env == NULL)
    return -1;
  for (i = 0; i < 2 * m->n_env && !r->bad; i++)
    r->bad = (m->env[i] = st__rbuf_strview(r)) == NULL;
  return r->bad || r->off != r->len ? -1 : 0;
}

int st__l3_map_get(const char *p, size_t len, st__l3_map *m) {
  st__rbuf r;
  size_t i;
  memset(m, 0, sizeof *m);
  st__rbuf_init(&r, p, len);
  if (st__rbuf_u32(&r) != ST__MSG_L3_MAP)
    return -1;
  m->op = st__rbuf_str(&r);
  m->backend = st__rbuf_str(&r);
  m->max_threads = st__rbuf_u32(&r);
  m->reduce = (int)st__rbuf_u32(&r);
  m->n_blocks = st__rbuf_u64(&r);
  m->scratch_id = st__rbuf_u64(&r);
  m->segs = read_array(&r, &m->n_segs, sizeof *m->segs, 16);
  for (i = 0; m->segs != NULL && i < m->n_segs; i++) {
    m->segs[i].id = st__rbuf_u64(&r);
    m->segs[i].size = (size_t)st__rbuf_u64(&r);
  }
  if (r.bad || m->op == NULL || m->backend == NULL || m->segs == NULL ||
      get_layout(&r, m) != 0) {
    st__l3_map_free(m);
    return -1;
  }
  return 0;
}

void st__l3_map_free(st__l3_map *m) {
  size_t i;
  for (i = 0; m->tensors != NULL && i < m->n_tensors; i++)
    free((char *)m->tensors[i].name);
  for (i = 0; m->scalars != NULL && i < m->n_scalars; i++)
    free((char *)m->scalars[i].name);
  free(m->op);
  free(m->backend);
  free(m->segs);
  free(m->tensors);
  free(m->tensor_seg);
  free(m->scalars);
  free(m->env);
  memset(m, 0, sizeof *m);
}
