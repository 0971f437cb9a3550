/* SPDX-License-Identifier: MIT */
/* The scene loader's parts, as load.c and scan.c call them: the sections
 * of a scene document (args in load_args.c, the golden program in
 * load_golden.c, cases in cases.c), and one file's load (load.c) for the
 * directory scan (scan.c). Each section function takes its node into s,
 * reporting every error through L (scene/schema.h). */
#ifndef SCENETEST_HARNESS_SCENE_LOAD_H
#define SCENETEST_HARNESS_SCENE_LOAD_H

#include "scene/schema.h"

/* `args:` (docs/scene-format.md#arguments) into s->args. */
void st__load_args(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                   st_scene *s /* IN/OUT */);
/* `golden:` as a mapping (docs/torch.md): a program into s->program. */
void st__load_golden(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                     st_scene *s /* IN/OUT */);
/* After the cases: golden_platform and golden_device (gp, dev: the
 * scene's nodes, NULL when not given) against s's golden program. */
void st__load_golden_check(st__loader *L /* IN/OUT */,
                           const st_scene *s /* IN */,
                           const st__ynode *gp /* IN */,
                           const st__ynode *dev /* IN */);
/* `cases:` (docs/scene-format.md#case-keys), matrices expanded, into
 * s->cases; L->valid_cases says which of them validated. */
void st__load_cases(st__loader *L /* IN/OUT */, const st__ynode *n /* IN */,
                    st_scene *s /* IN/OUT */);

/* One scene file (not a directory) into set, as
 * st__scene_set_load_path_ext; a file the set loaded before adds
 * nothing. */
st_status st__load_file(st_scene_set *set /* IN/OUT */,
                        const char *path /* IN */,
                        const st_load_options *opts /* IN, taken */,
                        const st__load_ext *ext /* IN, may be NULL */,
                        st_error_list *errors /* OUT, may be NULL */);
/* "FMT" with path and strerror(errnum) into errors: ST_ELOAD, or
 * ST_ENOMEM when it cannot be added. */
st_status st__load_io_error(st_error_list *errors /* OUT, may be NULL */,
                            const char *fmt, const char *path, int errnum);

#endif
