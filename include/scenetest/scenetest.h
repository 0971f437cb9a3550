/* SPDX-License-Identifier: MIT */
/* The umbrella header: includes every public header but testing.h (which
 * needs cmocka) and testing_hooks.h (for tests only, no ABI promise). */
#ifndef SCENETEST_SCENETEST_H
#define SCENETEST_SCENETEST_H

#include <scenetest/version.h>
#include <scenetest/common.h>
#include <scenetest/log.h>
#include <scenetest/op.h>
#include <scenetest/plugin.h>
#include <scenetest/program.h>
#include <scenetest/record.h>
#include <scenetest/registry.h>
#include <scenetest/run.h>
#include <scenetest/scene.h>
#include <scenetest/tensor.h>

#endif
