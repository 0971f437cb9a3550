/* SPDX-License-Identifier: MIT */
/* The scene model: the scene set and its enumeration API, and freeing
 * scenes. The loader (load.c) builds the model; plan.c resolves one
 * case of it into a plan. */
#include <stdlib.h>
#include <string.h>

#include "scene/program.h"
#include "scene/quarantine.h"
#include "scene/scene.h"

/* ------------------------------------------------------------------ */
/* Options, set, enumeration                                           */

st_status st_scene_set_new(st_scene_set **out) {
  *out = st__zalloc(1, sizeof **out);
  return *out ? ST_OK : ST_ENOMEM;
}

void st_scene_set_free(st_scene_set *set) {
  if (set == NULL)
    return;
  for (size_t i = 0; i < set->count; i++)
    st__scene_free(set->scenes[i]);
  free(set->scenes);
  free(set->name_index);
  free(set->files);
  free(set);
}

size_t st_scene_set_count(const st_scene_set *set) { return set->count; }

const st_scene *st_scene_set_get(const st_scene_set *set, size_t index) {
  return index < set->count ? set->scenes[index] : NULL;
}

const char *st_scene_name(const st_scene *scene) { return scene->name; }
const char *st_scene_file(const st_scene *scene) { return scene->file; }
int st_scene_line(const st_scene *scene) { return scene->line; }
int st_scene_level(const st_scene *scene) { return scene->level; }
const char *st_scene_kernel(const st_scene *scene) { return scene->kernel; }
const char *st_scene_golden(const st_scene *scene) { return scene->golden; }
size_t st_scene_case_count(const st_scene *scene) { return scene->n_cases; }

const char *st_scene_case_name(const st_scene *scene, size_t index) {
  return index < scene->n_cases ? scene->cases[index].name : NULL;
}

int st_scene_case_line(const st_scene *scene, size_t index) {
  return index < scene->n_cases ? scene->cases[index].line : 0;
}

static int in_list(char *const *list, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], s) == 0)
      return 1;
  return 0;
}

int st_scene_case_is_manual(const st_scene *scene, size_t index,
                            const char *platform) {
  if (index >= scene->n_cases)
    return 0;
  const st__case *c = &scene->cases[index];
  if (c->manual_all)
    return 1;
  return platform != NULL &&
         in_list(c->manual_platforms, c->n_manual, platform);
}

int st_scene_case_runs_on(const st_scene *scene, size_t index,
                          const char *platform) {
  if (index >= scene->n_cases)
    return 0;
  const st__case *c = &scene->cases[index];
  /* An aten:: kernel is the torch plugin's, so it runs on platform torch
   * only; elsewhere its cases are left out as `platforms:` leaves them
   * (docs/torch.md). */
  if (scene->kernel != NULL && strncmp(scene->kernel, "aten::", 6) == 0 &&
      (platform == NULL || strcmp(platform, "torch") != 0))
    return 0;
  if (!c->has_platforms)
    return 1;
  return platform != NULL && in_list(c->platforms, c->n_platforms, platform);
}

/* ------------------------------------------------------------------ */
/* Freeing                                                             */

static void free_strv(char **v, size_t n) {
  if (v == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

static void val_free(st__val *v) { free(v->name); }

/* A list of n values (may be NULL). */
static void vals_free(st__val *v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++)
    val_free(&v[i]);
  free(v);
}

static void init_free(st__init *in) {
  val_free(&in->a);
  val_free(&in->b);
  vals_free(in->values, in->n_values);
  val_free(&in->values_list);
  free(in->path);
  free(in->path_given);
}

static void arg_free(st__arg *a) {
  init_free(&a->expected);
  free(a->name);
  val_free(&a->dtype);
  vals_free(a->shape, a->ndim);
  init_free(&a->init);
  val_free(&a->value);
  val_free(&a->rtol_param);
  val_free(&a->atol_param);
  vals_free(a->ints, a->n_ints);
  free(a->string);
  val_free(&a->shape_list);
  val_free(&a->ints_list);
}

void st__case_free_fields(st__case *c) {
  if (c->block == NULL)
    free(c->name);
  if (c->params) {
    for (size_t i = 0; i < c->n_params; i++) {
      if (c->block == NULL)
        free(c->params[i].name);
      free(c->params[i].str);
      val_free(&c->params[i].expr);
      for (size_t j = 0; c->params[i].list && j < c->params[i].n_list; j++)
        val_free(&c->params[i].list[j]);
      free(c->params[i].list);
    }
    if (c->block == NULL)
      free(c->params);
  }
  free(c->block);
  free_strv(c->platforms, c->n_platforms);
  free_strv(c->manual_platforms, c->n_manual);
  free_strv(c->tags, c->n_tags);
  free(c->golden_platform);
  free(c->expect_message);
  st__quarantine_free(c->quarantine);
  free(c->golden_args);
  st__env_free(&c->env);
}

void st__scene_free(st_scene *scene) {
  if (scene == NULL)
    return;
  free(scene->name);
  free(scene->file);
  free(scene->dir);
  free(scene->kernel);
  free(scene->golden);
  val_free(&scene->rtol_param);
  val_free(&scene->atol_param);
  free(scene->golden_platform);
  free(scene->expect_message);
  st__quarantine_free(scene->quarantine);
  free(scene->golden_args);
  free_strv(scene->tags, scene->n_tags);
  st__env_free(&scene->env);
  st__program_free(scene->program);
  if (scene->args) {
    for (size_t i = 0; i < scene->n_args; i++)
      arg_free(&scene->args[i]);
    free(scene->args);
  }
  if (scene->cases) {
    for (size_t i = 0; i < scene->n_cases; i++)
      st__case_free_fields(&scene->cases[i]);
    free(scene->cases);
  }
  free(scene);
}
