/* SPDX-License-Identifier: MIT */
/* The run-time version: what this build of the library is, for programs
 * that compare it with the ST_VERSION_* macros they were compiled with. */
#include <scenetest/common.h>

unsigned st_version(void) { return ST_VERSION_HEX; }

const char *st_version_string(void) { return ST_VERSION_STRING; }
