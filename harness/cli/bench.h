/* SPDX-License-Identifier: MIT */
/* `scenetest bench` (docs/bench.md): its own options, taken out of the
 * command line before `run`'s parser reads the rest, and the command. */
#ifndef SCENETEST_HARNESS_CLI_BENCH_H
#define SCENETEST_HARNESS_CLI_BENCH_H

#include <scenetest/registry.h>
#include <scenetest/run.h>
#include <scenetest/scene.h>

#include "case/bench.h"

typedef struct st__cli_bench {
  st__bench_config cfg;
  int no_check;         /* --no-check */
  int allow_suspicious; /* --allow-suspicious */
  int format;           /* --format: 0 text, 1 csv, 2 json */
  const char *html;     /* --report html:PATH; NULL: none */
} st__cli_bench;

/* Parses the bench options of argv[2..argc) into *b (defaults first) and
 * writes the other arguments, argv[0] and argv[1] first, to rest (room
 * for argc + 1), *n_rest their count. 0 or a usage exit status. */
int st__cli_bench_args(int argc, char **argv /* IN */,
                       st__cli_bench *b /* OUT */, char **rest /* OUT */,
                       int *n_rest /* OUT */);

/* Runs the selected cases of set as a bench with opts (-j 1; supervised,
 * isolated or in this process as opts say); prints the figures. The exit
 * status. */
int st__cli_bench_run(const st__cli_bench *b /* IN */,
                      const st_scene_set *set /* IN */,
                      st_run_options *opts /* IN/OUT */,
                      st_registry *reg /* IN */);

#endif
