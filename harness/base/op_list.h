/* SPDX-License-Identifier: MIT */
/* The built-in ops (docs/scene-format.md#ops), one list: their names, in the
 * order of st__builtin_ops and of every built-in op table, their
 * signatures, which ops/opcheck.c turns into its binding table, and their
 * error models, which base/bound.c and scene/plan_bound.c read. A backend's
 * table, the checker and the bound are generated from this list, so none
 * can miss an op nor disagree with another about which ops exist. Pure
 * data (macros), in base/ so that every layer may read it. */
#ifndef SCENETEST_HARNESS_BASE_OP_LIST_H
#define SCENETEST_HARNESS_BASE_OP_LIST_H

/* XX(P, name, n_tensors, tensor0, tensor1, tensor2, scalar, dtypes,
 *    shapes, written, read, widen, flops, per, bound_n, exact_r, family,
 *    kind, formula), P passed through (use ST__BUILTIN_OP_MAP or
 *    ST__EW_MAP below):
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
 * - read: bit i set when tensor i is read (axpy reads the y it writes);
 * - widen: 1 when a written tensor may have any float dtype while the
 *   tensors read share another float dtype (mixed precision,
 *   docs/scene-format.md#ops); 0 when it shares theirs (axpy reads y);
 * - flops, per: the work model (docs/bench.md#the-work-model): flops
 *   FLOPs per element of OUT (the first written tensor), IN (the first
 *   tensor) or MNK (matmul: M*N*K); a fused multiply-add counts 2;
 * - bound_n, exact_r: the error model of `tolerance: bound` and `init:
 *   exact` (docs/scene-format.md#the-error-bound, #exact-inputs; base/
 *   bound.h's ST__BOUND_N_<bound_n> and ST__BOUND_R_<exact_r>). bound_n,
 *   the roundings n behind each output element: EXACT (0: the op is
 *   exact), ONE, TWO, K (matmul's inner dimension), LEN (the reduced
 *   length - 1), SOFTMAX (per element, at least C + 4: the golden gives
 *   it) or NONE (no model). exact_r, the largest R such that every
 *   result over integers in [-R, R] is exact in the output's p bits: TOP
 *   (R <= 2^p), HALF (2R <= 2^p), SQRT (R^2 <= 2^p), AXPY (R^2 + R <=
 *   2^p), SQRT_K (K*R^2 <= 2^p), DIV_N (N*R <= 2^p, N the element count)
 *   or NONE (no exact inputs);
 * - family, kind, formula: EW for the element-wise family (one output
 *   element from the inputs' elements at its index; every backend's
 *   kernel takes its st__ew kind ST__EW_<kind>, toolkit.h) with the
 *   formula docs/scene-format.md#ops shows, else NO, NONE, NULL.
 * tests/lint/op_list_check.py fails when the docs, the README or the error
 * message examples disagree with these rows. */
#define ST__BUILTIN_OP_ROWS(XX, P)                                             \
  XX(P, copy, 2, "x", "y", NULL, NULL, ANY, SAME, 2u, 1u, 1, 0, OUT, EXACT,    \
     TOP, EW, COPY, "y = x")                                                   \
  XX(P, add, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 3u, 1, 1, OUT, ONE,  \
     HALF, EW, ADD, "out = a + b")                                             \
  XX(P, sub, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 3u, 1, 1, OUT, ONE,  \
     HALF, EW, SUB, "out = a - b")                                             \
  XX(P, mul, 3, "a", "b", "out", NULL, NUMERIC, SAME, 4u, 3u, 1, 1, OUT, ONE,  \
     SQRT, EW, MUL, "out = a * b")                                             \
  XX(P, scale, 2, "x", "y", NULL, "s", NUMERIC, SAME, 2u, 1u, 1, 1, OUT, ONE,  \
     SQRT, EW, SCALE, "y = s * x")                                             \
  XX(P, axpy, 2, "x", "y", NULL, "alpha", NUMERIC, SAME, 2u, 3u, 0, 2, OUT,    \
     TWO, AXPY, EW, AXPY, "y = alpha * x + y")                                 \
  XX(P, relu, 2, "x", "y", NULL, NULL, NUMERIC, SAME, 2u, 1u, 1, 1, OUT,       \
     EXACT, TOP, EW, RELU, "y = max(x, 0)")                                    \
  XX(P, matmul, 3, "a", "b", "c", NULL, FLOAT, MATMUL, 4u, 3u, 1, 2, MNK, K,   \
     SQRT_K, NO, NONE, NULL)                                                   \
  XX(P, softmax, 2, "x", "y", NULL, NULL, FLOAT, ROWS, 2u, 1u, 1, 5, IN,       \
     SOFTMAX, NONE, NO, NONE, NULL)                                            \
  XX(P, reduce_sum, 2, "x", "out", NULL, NULL, NUMERIC, REDUCE, 2u, 1u, 1, 1,  \
     IN, LEN, DIV_N, NO, NONE, NULL)                                           \
  XX(P, transpose, 2, "x", "y", NULL, NULL, ANY, TRANSPOSE, 2u, 1u, 1, 0, OUT, \
     EXACT, TOP, NO, NONE, NULL)

/* Every row, XX(name, n_tensors, ..., formula): what the op tables, the
 * checker, the work model and the op name list are generated from. */
#define ST__OP_ROW_PLAIN(XX, ...) XX(__VA_ARGS__)
#define ST__BUILTIN_OP_MAP(XX) ST__BUILTIN_OP_ROWS(ST__OP_ROW_PLAIN, XX)

/* The element-wise family, XX(A, B, op, KIND) for each row whose family is
 * EW, with A and B passed through for the macro's own use (toolkit.h's
 * st__ew kinds, ops_impl.h's ST__EW_OPS). */
#define ST__EW_MAP(XX, A, B) ST__BUILTIN_OP_ROWS(ST__EW_ROW, (XX, A, B))
#define ST__EW_ROW(P, name, n, t0, t1, t2, scalar, dtypes, shapes, written,    \
                   read, widen, flops, per, bound_n, exact_r, family, kind,    \
                   formula)                                                    \
  ST__EW_IF_##family(P, name, kind)
#define ST__EW_IF_NO(P, name, kind)
#define ST__EW_IF_EW(P, name, kind) ST__EW_APPLY(ST__EW_UNPACK P, name, kind)
#define ST__EW_UNPACK(XX, A, B) XX, A, B
#define ST__EW_APPLY(...) ST__EW_APPLY_(__VA_ARGS__)
#define ST__EW_APPLY_(XX, A, B, name, kind) XX(A, B, name, kind)

#endif
