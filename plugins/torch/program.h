/* SPDX-License-Identifier: MIT */
/* Private to the torch plugin: golden programs (docs/torch.md). The op
 * ST_PROGRAM_OP takes its program from st_op_call.program: TorchScript
 * (program.cpp) or a list of ATen steps (steps.cpp); both hand their
 * results to the outputs the same way. */
#ifndef SCENETEST_PLUGIN_TORCH_PROGRAM_H
#define SCENETEST_PLUGIN_TORCH_PROGRAM_H

#include "torch_plugin.h"

#include <string>

namespace st_torch {

/* The op ST_PROGRAM_OP on backend torch (program.cpp). */
st_status program_call(st_op_call *call /* IN/OUT */);

/* A steps program (steps.cpp): binds every step (prog.compile_only: only
 * that), runs them on device, stores the returns. */
st_status steps_run(st_op_call *call /* IN/OUT */, const st_program &prog,
                    const at::Device &device);

/* Tensor i of the call as a program argument on device: an input over its
 * own buffer (so that a write shows), an output or inout as a copy. */
at::Tensor program_arg(const st_op_call *call /* IN */, size_t i,
                       const at::Device &device);

/* Copies ret into output (or inout) i, converted to its dtype; a shape
 * other than the output's is an error naming both. what says where ret
 * came from ("return 0", "key 'y'"). */
st_status program_store(st_op_call *call /* IN/OUT */, size_t i,
                        const at::Tensor &ret, const std::string &what);

/* Whether tensor i takes a result: an output or inout that the scene
 * compares (the harness marks the others written[i] == 2 on entry). */
bool program_is_output(const st_op_call *call /* IN */, size_t i);

/* The names of the call's outputs and inouts, ", "-separated. */
std::string program_outputs(const st_op_call *call /* IN */);

/* The index of the output or inout named name, or -1. */
long program_output(const st_op_call *call /* IN */, const std::string &name);

} // namespace st_torch

#endif
