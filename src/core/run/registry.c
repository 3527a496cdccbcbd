/* registry.c - the benchmark modules tally knows, by name (tally/bench.h). A new benchmark adds
 * one line to MODULES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/bench.h"

extern const tl_bench_vt tl_bench_spatialeval;
extern const tl_bench_vt tl_bench_mtbench101;
extern const tl_bench_vt tl_bench_vqa;
extern const tl_bench_vt tl_bench_test_judged;

static const tl_bench_vt *const MODULES[] = {
    &tl_bench_spatialeval,
    &tl_bench_mtbench101,
    &tl_bench_vqa,
};

/* Modules for the test suite only (a two-stage module over replay files): known only when
 * TALLY_TEST_MODULES=1 is in the environment, so a user's job can never name one by accident. */
static const tl_bench_vt *const TEST_MODULES[] = {
    &tl_bench_test_judged,
};

static int test_modules_on(void) {
  const char *v = getenv("TALLY_TEST_MODULES");
  return v && strcmp(v, "1") == 0;
}

const tl_bench_vt *tl_bench_find(const char *name) {
  for (size_t i = 0; i < sizeof MODULES / sizeof *MODULES; i++)
    if (strcmp(MODULES[i]->name, name) == 0) return MODULES[i];
  if (test_modules_on())
    for (size_t i = 0; i < sizeof TEST_MODULES / sizeof *TEST_MODULES; i++)
      if (strcmp(TEST_MODULES[i]->name, name) == 0) return TEST_MODULES[i];
  return NULL;
}

void tl_bench_known(tl_buf *out) {
  for (size_t i = 0; i < sizeof MODULES / sizeof *MODULES; i++)
    tl_buf_printf(out, "%s%s", i ? ", " : "", MODULES[i]->name);
  if (test_modules_on())
    for (size_t i = 0; i < sizeof TEST_MODULES / sizeof *TEST_MODULES; i++)
      tl_buf_printf(out, ", %s", TEST_MODULES[i]->name);
}

int tl_bench_variant(const tl_bench_vt *vt, const char *name) {
  for (int i = 0; vt->variants[i]; i++)
    if (strcmp(vt->variants[i], name) == 0) return i;
  return -1;
}

int tl_bench_nstages(const tl_bench_vt *vt, const tl_bench *b) {
  int n = vt->n_stages && b ? vt->n_stages(b) : vt->nstages;
  return n < 1 ? 1 : n > TL_MAX_STAGES ? TL_MAX_STAGES : n;
}

const char *tl_stage_prefix(int s, char *buf, size_t n) {
  if (s <= 0) snprintf(buf, n, "%s", "");
  else if (s == 1) snprintf(buf, n, "judge_");
  else snprintf(buf, n, "judge%d_", s - 1);
  return buf;
}
