/* SPDX-License-Identifier: MIT */
/* Shared by the tests that call the reference ops directly
 * (test_ref_typed, test_bound_ref): a tensor descriptor of up to two
 * dimensions over the caller's data. */
#ifndef SCENETEST_TESTS_OPS_TESTING_H
#define SCENETEST_TESTS_OPS_TESTING_H

#include <string.h>

#include <scenetest/op.h>

#include "base/dtype.h"

/* A tensor named "t" of dtype dt and role, shape [d0] (ndim 1) or
 * [d0, d1] (ndim 2), its bytes at data (borrowed). */
static inline st_tensor ot_tensor(st_dtype dt, st_role role, void *data,
                                  int ndim, int64_t d0, int64_t d1) {
  st_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "t";
  t.dtype = dt;
  t.role = role;
  t.ndim = ndim;
  t.shape[0] = d0;
  t.shape[1] = d1;
  t.numel = (size_t)d0 * (ndim == 2 ? (size_t)d1 : 1);
  t.nbytes = t.numel * st_dtype_size(dt);
  t.data = data;
  return t;
}

#endif
