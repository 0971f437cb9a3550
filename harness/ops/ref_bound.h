/* SPDX-License-Identifier: MIT */
/* The reference golden of a built-in op with the magnitude sums that
 * `tolerance: bound` needs (docs/scene-format.md#the-error-bound),
 * computed in the same pass as the golden's results. */
#ifndef SCENETEST_HARNESS_OPS_REF_BOUND_H
#define SCENETEST_HARNESS_OPS_REF_BOUND_H

#include <scenetest/op.h>

/* Runs the reference op call->op (shard 0 of 1) and writes, for each
 * element i of its output, magsum[i]: add and sub |a|+|b|, mul |a*b|,
 * scale |s*x|, axpy |alpha*x|+|y|, matmul sum_k |a_ik*b_kj|, reduce_sum
 * sum |x|, softmax y_i; for softmax also nterm[i] = C + 4 + ceil(|x_i -
 * m| + sum_j y_j*|x_j - m|) (m the row's max, C its length; nterm NULL for
 * the other ops). The output is the bytes the reference op writes (the
 * same sums in the same order). Returns ST_OK, st_op_check's error,
 * ST_EINVAL for an op without magnitude sums (copy, relu, transpose, any
 * other) or a sharded call, ST_ENOMEM. Thread-safety: any thread; it uses
 * up to call->max_threads threads of the pool. */
st_status st__ref_bound(st_op_call *call /* IN/OUT */,
                        double *magsum /* OUT: the output's numel */,
                        double *nterm /* OUT: softmax only, else NULL */);

#endif
