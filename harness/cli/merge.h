/* SPDX-License-Identifier: MIT */
/* `scenetest merge` (merge.c; docs/cli.md#merge): several shards' JSON
 * reports or --events files become one report. CLI-private. */
#ifndef SCENETEST_HARNESS_MERGE_H
#define SCENETEST_HARNESS_MERGE_H

/* argv[1] is "merge". Returns the exit status: 0 every merged case
 * passed (or was skipped or failed as expected), 1 one did not, 2 a
 * usage error or an input that is not a report (one FILE:LINE:COL line),
 * 3 internal. Thread-safety: main thread. */
int st__cli_merge_main(int argc, char **argv /* IN */);

#endif
