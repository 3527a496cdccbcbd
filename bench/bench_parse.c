/* bench_parse.c - answers parsed and scored per second per core, for each SpatialEval mode.
 *
 * Input: the real Spatial-Map TQA items and the real model answers in ../shared/data (313 VLM
 * answers, 10 long reasoning answers), cycled to N units (default 1,000,000). Each mode runs
 * the same N units on one thread; time is wall clock (CLOCK_MONOTONIC) around the parse loop
 * only (loading excluded). Prints one line per mode and a JSON line for scripts.
 * usage: bench_parse [N] [SHARED_DATA_DIR] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally/jsonl.h"
#include "spatialeval.h"
#include "tally/strmap.h"

typedef struct {
  int item;
  char *response;
  char *model;
} unit;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int load_items(const char *path, tl_se_item **items, tl_strmap *idx) {
  tl_jsonl r;
  tl_err err;
  if (tl_jsonl_open(&r, path, 0, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
  int n = 0, cap = 0;
  cJSON *o;
  tl_jl_result res;
  while ((res = tl_jsonl_next(&r, &o, &err)) != TL_JL_EOF) {
    if (res != TL_JL_RECORD) continue;
    if (n == cap) { cap = cap ? 2 * cap : 2048; *items = realloc(*items, (size_t)cap * sizeof **items); }
    if (tl_se_item_from_json(o, &(*items)[n], &err) == TL_OK) {
      tl_strmap_put(idx, (*items)[n].id, (size_t)n, NULL, NULL);
      n++;
    }
    cJSON_Delete(o);
  }
  tl_jsonl_close(&r);
  return n;
}

/* Adds units from an answers file; `idf`/`respf`/`modelf` name the fields. VQA ids are mapped
 * to the TQA item of the same instance/qid (the options are the same in every mode). */
static void load_answers(const char *path, const char *idf, const char *respf, const char *modelf,
                         const tl_strmap *idx, unit **u, int *n, int *cap) {
  tl_jsonl r;
  tl_err err;
  if (tl_jsonl_open(&r, path, 0, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
  cJSON *o;
  tl_jl_result res;
  while ((res = tl_jsonl_next(&r, &o, &err)) != TL_JL_EOF) {
    if (res != TL_JL_RECORD) continue;
    const cJSON *id = cJSON_GetObjectItem(o, idf), *resp = cJSON_GetObjectItem(o, respf);
    const cJSON *model = modelf ? cJSON_GetObjectItem(o, modelf) : NULL;
    if (cJSON_IsString(id) && cJSON_IsString(resp)) {
      char key[256];
      snprintf(key, sizeof key, "%s", id->valuestring);
      char *v = strstr(key, ".vqa.");
      if (v) memcpy(v, ".tqa.", 5);
      size_t it;
      if (tl_strmap_get(idx, key, &it)) {
        if (*n == *cap) { *cap = *cap ? 2 * *cap : 512; *u = realloc(*u, (size_t)*cap * sizeof **u); }
        (*u)[*n].item = (int)it;
        (*u)[*n].response = strdup(resp->valuestring);
        (*u)[*n].model = strdup(cJSON_IsString(model) ? model->valuestring : "");
        (*n)++;
      }
    }
    cJSON_Delete(o);
  }
  tl_jsonl_close(&r);
}

int main(int argc, char **argv) {
  long N = argc > 1 ? atol(argv[1]) : 1000000;
  const char *dir = argc > 2 ? argv[2] : "../shared/data";
  char p[4096];
  tl_se_item *items = NULL;
  tl_strmap idx;
  tl_strmap_init(&idx);
  snprintf(p, sizeof p, "%s/spatialeval/spatialmap_tqa.jsonl", dir);
  int nitems = load_items(p, &items, &idx);
  unit *u = NULL;
  int nu = 0, cap = 0;
  snprintf(p, sizeof p, "%s/spatialeval/outputs/vlm_outputs_313.jsonl", dir);
  load_answers(p, "sample_id", "raw_answer", "model", &idx, &u, &nu, &cap);
  snprintf(p, sizeof p, "%s/spatialeval/outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl", dir);
  load_answers(p, "id", "response", NULL, &idx, &u, &nu, &cap);
  if (nu == 0) { fprintf(stderr, "bench_parse: no answers found under %s\n", dir); return 1; }
  size_t bytes = 0;
  for (int i = 0; i < nu; i++) bytes += strlen(u[i].response);
  printf("bench_parse: %d items, %d distinct real answers (mean %.0f bytes), cycled to %ld units, 1 thread\n",
         nitems, nu, (double)bytes / nu, N);
  char json[512] = "";
  for (int m = 0; m < TL_SE__NMODES; m++) {
    tl_err err;
    tl_se_parser *ps = tl_se_parser_new((tl_se_mode)m, &err);
    if (!ps) { fprintf(stderr, "%s\n", err.msg); return 1; }
    /* pr3 reads options from the prompt: build each item's prompt once, as a run does per unit. */
    char **prompts = calloc((size_t)nitems, sizeof *prompts);
    if (m == TL_SE_PR3)
      for (int i = 0; i < nitems; i++) prompts[i] = tl_se_build_prompt(&items[i], TL_SE_PROMPT_REASON, 0);
    tl_parsed r;
    tl_parsed_init(&r);
    long correct = 0;
    double t0 = now();
    for (long k = 0; k < N; k++) {
      const unit *x = &u[k % nu];
      tl_se_parse(ps, &items[x->item], prompts[x->item], x->response, x->model, &r);
      correct += r.correct;
    }
    double dt = now() - t0;
    tl_parsed_release(&r);
    printf("%-7s %10.0f units/s  (%.2f s, %.2f us/unit, %ld correct)\n", tl_se_mode_name((tl_se_mode)m),
           (double)N / dt, dt, 1e6 * dt / (double)N, correct);
    snprintf(json + strlen(json), sizeof json - strlen(json), ", \"%s_units_per_s\": %.0f",
             tl_se_mode_name((tl_se_mode)m), (double)N / dt);
    for (int i = 0; i < nitems; i++) free(prompts[i]);
    free(prompts);
    tl_se_parser_free(ps);
  }
  printf("{\"units\": %ld%s}\n", N, json);
  for (int i = 0; i < nu; i++) { free(u[i].response); free(u[i].model); }
  free(u);
  for (int i = 0; i < nitems; i++) tl_se_item_release(&items[i]);
  free(items);
  tl_strmap_release(&idx);
  return 0;
}
