/* SPDX-License-Identifier: MIT */
/* `scenetest timing` and `scenetest compare`: their command lines. */
#ifndef SCENETEST_HARNESS_CLI_MEASURE_H
#define SCENETEST_HARNESS_CLI_MEASURE_H

/* argv[1] is "timing" or "compare". Returns the exit status
 * (docs/measuring.md#the-statistics: 0 done, 1 --fail-above tripped, 2 usage
 * error, unreadable file or refusal). Thread-safety: main thread. */
int st__cli_measure_main(int argc, char **argv /* IN */);

#endif
