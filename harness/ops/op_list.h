/* SPDX-License-Identifier: MIT */
/* The built-in ops (SPEC §2), one list: their names, in the order of
 * st__builtin_ops and of every built-in op table, and their signatures,
 * which opcheck.c turns into its binding table. A backend's table and the
 * checker are generated from this list, so neither can miss an op nor
 * disagree with the other about which ops exist. */
#ifndef SCENETEST_HARNESS_OP_LIST_H
#define SCENETEST_HARNESS_OP_LIST_H

/* XX(name, n_tensors, tensor0, tensor1, tensor2, scalar, dtypes, shapes,
 *    written, widen):
 * - tensor names in call order (NULL past n_tensors), the scalar's name or
 *   NULL;
 * - dtypes: ANY (bool included), NUMERIC (float and integer, not bool) or
 *   FLOAT, the dtype class of every tensor (they share one dtype, but
 *   see widen);
 * - shapes: SAME (every tensor the first one's shape), MATMUL (a[M,K],
 *   b[K,N], c[M,N]), ROWS (x[R,C], y[R,C]), TRANSPOSE (x[R,C], y[C,R]) or
 *   REDUCE (x any shape, out one element);
 * - written: bit i set when tensor i is written (so it must not be an
 *   input);
 * - widen: 1 when a written tensor may have any float dtype while the
 *   tensors read share another float dtype (mixed precision,
 *   docs/scene-format.md#ops); 0 when it shares theirs (axpy reads y);
 * - flops, per: the work model (docs/bench.md#the-work-model): flops
 *   FLOPs per element of OUT (the first written tensor), IN (the first
 *   tensor) or MNK (matmul: M*N*K); a fused multiply-add counts 2. */
#define ST__BUILTIN_OP_MAP(XX)                                                 \
  XX(copy, 2, "x", "y", NULL, NULL, ANY, SAME, 2u, 1, 0, OUT)                  \
  XX(add, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 1, 1, OUT)              \
  XX(sub, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 1, 1, OUT)              \
  XX(mul, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 1, 1, OUT)              \
  XX(scale, 2, "x", "y", NULL, "s", NUMERIC, SAME, 2u, 1, 1, OUT)              \
  XX(axpy, 2, "x", "y", NULL, "alpha", NUMERIC, SAME, 2u, 0, 2, OUT)           \
  XX(relu, 2, "x", "y", NULL, NULL, NUMERIC, SAME, 2u, 1, 1, OUT)              \
  XX(matmul, 3, "a", "b", "c", NULL, FLOAT, MATMUL, 4u, 1, 2, MNK)             \
  XX(softmax, 2, "x", "y", NULL, NULL, FLOAT, ROWS, 2u, 1, 5, IN)              \
  XX(reduce_sum, 2, "x", "out", NULL, NULL, NUMERIC, REDUCE, 2u, 1, 1, IN)     \
  XX(transpose, 2, "x", "y", NULL, NULL, ANY, TRANSPOSE, 2u, 1, 0, OUT)

#endif
