/* registry.c - the benchmark modules tally knows, by name, and the lookups over their hooks
 * (tally/registry.h). A new benchmark adds one line to MODULES_LIST. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/registry.h"

/* The modules, one line each: X(name) is the table tl_bench_<name> of src/core/bench/<name>/. */
#define MODULES_LIST(X) \
  X(spatialeval)        \
  X(mtbench101)         \
  X(vqa)                \
  X(mcq)                \
  X(gen)

/* Modules for the test suite only (a two-stage module over replay files): known only when
 * TALLY_TEST_MODULES=1 is in the environment, so a user's job can never name one by accident. */
#define TEST_MODULES_LIST(X) \
  X(test_judged)

#define DECLARE(name) extern const tl_bench_vt tl_bench_##name;
#define ENTRY(name) &tl_bench_##name,
MODULES_LIST(DECLARE)
TEST_MODULES_LIST(DECLARE)
static const tl_bench_vt *const MODULES[] = {MODULES_LIST(ENTRY)};
static const tl_bench_vt *const TEST_MODULES[] = {TEST_MODULES_LIST(ENTRY)};

enum { N_MODULES = sizeof MODULES / sizeof *MODULES, N_TEST_MODULES = sizeof TEST_MODULES / sizeof *TEST_MODULES };

static int test_modules_on(void) {
  const char *v = getenv("TALLY_TEST_MODULES");
  return v && strcmp(v, "1") == 0;
}

size_t tl_bench_count(void) { return N_MODULES + (test_modules_on() ? N_TEST_MODULES : 0); }

const tl_bench_vt *tl_bench_at(size_t i) {
  if (i < N_MODULES) return MODULES[i];
  i -= N_MODULES;
  return i < N_TEST_MODULES && test_modules_on() ? TEST_MODULES[i] : NULL;
}

const tl_bench_vt *tl_bench_find(const char *name) {
  const size_t n = tl_bench_count();
  for (size_t i = 0; i < n; i++)
    if (strcmp(tl_bench_at(i)->name, name) == 0) return tl_bench_at(i);
  return NULL;
}

void tl_bench_known(tl_buf *out) {
  const size_t n = tl_bench_count();
  for (size_t i = 0; i < n; i++) tl_buf_printf(out, "%s%s", i ? ", " : "", tl_bench_at(i)->name);
}

/* ---- checks ---- */

tl_status tl_bench_check(const tl_bench_vt *vt, tl_err *err) {
  if (!vt || !vt->name || !*vt->name)
    return tl_err_set(err, TL_EINTERNAL, "internal error: a benchmark module has no name");
  const char *n = vt->name;
  if (!vt->create || !vt->load || !vt->n_items || !vt->item_id || !vt->item_find || !vt->n_subs || !vt->n_modes ||
      !vt->mode_name || !vt->default_variant || !vt->request || !vt->score || !vt->acc_layout || !vt->acc_add ||
      !vt->items_table || !vt->tables || !vt->summary)
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s' lacks a required callback", n);
  if (vt->nstages < 1 || vt->nstages > TL_MAX_STAGES)
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': nstages %d is outside 1..%d "
                      "(TL_MAX_STAGES)", n, vt->nstages, TL_MAX_STAGES);
  if (vt->max_modes < 1 || vt->max_modes > TL_MAX_MODES)
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': max_modes %d is outside 1..%d "
                      "(TL_MAX_MODES, the results a row holds)", n, vt->max_modes, TL_MAX_MODES);
  if (vt->max_acc < 1 || vt->max_acc > TL_MAX_ACC)
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': max_acc %d is outside 1..%d "
                      "(TL_MAX_ACC, the accumulator blocks of a benchmark)", n, vt->max_acc, TL_MAX_ACC);
  if (!vt->variants || !vt->variants[0] || !vt->keys)
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s' lists no prompt variant or keys", n);
  for (const tl_answer_format *const *f = vt->formats; f && *f; f++)
    if (!(*f)->name || !(*f)->claims || !(*f)->read)
      return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': an answer format lacks its name "
                        "or callbacks", n);
  if (vt->parsers) {
    if (!vt->parsers->list || !vt->parsers->list[0] || !vt->parsers->kind || !vt->parsers->help)
      return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': its parser set lacks parsers, "
                        "a kind or help", n);
    for (const tl_named_parser *const *p = vt->parsers->list; *p; p++)
      if (!(*p)->name || !*(*p)->name || !(*p)->open || !(*p)->run)
        return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': a parser lacks its name or "
                          "callbacks", n);
  }
  if (vt->compare && (!vt->compare->metric || !*vt->compare->metric || !vt->compare->by || !vt->compare->status))
    return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s': its compare defaults lack a "
                      "metric, by or status", n);
  return TL_OK;
}

tl_status tl_bench_registry_check(tl_err *err) {
  const size_t n = tl_bench_count();
  for (size_t i = 0; i < n; i++) {
    const tl_bench_vt *vt = tl_bench_at(i);
    tl_status st = tl_bench_check(vt, err);
    if (st) return st;
    for (size_t j = 0; j < i; j++)
      if (strcmp(tl_bench_at(j)->name, vt->name) == 0)
        return tl_err_set(err, TL_EINTERNAL, "internal error: two benchmark modules are named '%s'", vt->name);
    for (const tl_named_parser *const *p = vt->parsers ? vt->parsers->list : NULL; p && *p; p++) {
      const tl_bench_vt *other = NULL;
      if (tl_bench_parser((*p)->name, &other) != *p)
        return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark modules '%s' and '%s' both name a parser '%s'",
                          other->name, vt->name, (*p)->name);
    }
  }
  return TL_OK;
}

/* ---- per module ---- */

int tl_bench_variant(const tl_bench_vt *vt, const char *name) {
  for (int i = 0; vt->variants[i]; i++)
    if (strcmp(vt->variants[i], name) == 0) return i;
  return -1;
}

int tl_bench_nstages(const tl_bench_vt *vt, const tl_bench *b) {
  int n = vt->n_stages && b ? vt->n_stages(b) : vt->nstages;
  return n < 1 ? 1 : n > TL_MAX_STAGES ? TL_MAX_STAGES : n;
}

/* ---- hooks ---- */

const tl_answer_format *tl_bench_answer_format(const cJSON *o, const tl_bench_vt **vt) {
  const size_t n = tl_bench_count();
  for (size_t i = 0; i < n; i++)
    for (const tl_answer_format *const *f = tl_bench_at(i)->formats; f && *f; f++)
      if ((*f)->claims(o)) {
        if (vt) *vt = tl_bench_at(i);
        return *f;
      }
  return NULL;
}

const tl_named_parser *tl_bench_parser(const char *name, const tl_bench_vt **vt) {
  const size_t n = tl_bench_count();
  for (size_t i = 0; i < n; i++) {
    const tl_parser_set *ps = tl_bench_at(i)->parsers;
    for (const tl_named_parser *const *p = ps ? ps->list : NULL; p && *p; p++)
      if (strcmp((*p)->name, name) == 0) {
        if (vt) *vt = tl_bench_at(i);
        return *p;
      }
  }
  return NULL;
}

int tl_bench_parser_names(const char **names, int max) {
  const size_t n = tl_bench_count();
  int k = 0;
  for (size_t i = 0; i < n; i++) {
    const tl_parser_set *ps = tl_bench_at(i)->parsers;
    for (const tl_named_parser *const *p = ps ? ps->list : NULL; p && *p; p++, k++)
      if (k < max) names[k] = (*p)->name;
  }
  return k;
}

/* "  NAME: a | b (kind)\n      | c (kind)\n", then each set's help block. */
void tl_bench_parser_usage(tl_buf *out) {
  const size_t n = tl_bench_count();
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    const tl_parser_set *ps = tl_bench_at(i)->parsers;
    if (!ps) continue;
    tl_buf_puts(out, first ? "  NAME: " : "      | ");
    first = 0;
    for (const tl_named_parser *const *p = ps->list; *p; p++)
      tl_buf_printf(out, "%s%s", p == ps->list ? "" : " | ", (*p)->name);
    tl_buf_printf(out, " (%s)\n", ps->kind);
  }
  for (size_t i = 0; i < n; i++)
    if (tl_bench_at(i)->parsers) tl_buf_puts(out, tl_bench_at(i)->parsers->help);
}

/* Each set: its names ", "-joined (with a brief: the last by " or ", then " (brief)"); the sets
 * ", "-joined, the last after "or ". */
void tl_bench_parser_list(tl_buf *out) {
  const size_t n = tl_bench_count();
  size_t nsets = 0, k = 0;
  for (size_t i = 0; i < n; i++) nsets += tl_bench_at(i)->parsers != NULL;
  for (size_t i = 0; i < n; i++) {
    const tl_parser_set *ps = tl_bench_at(i)->parsers;
    if (!ps) continue;
    if (k) tl_buf_puts(out, k + 1 == nsets ? ", or " : ", ");
    k++;
    for (const tl_named_parser *const *p = ps->list; *p; p++) {
      const char *sep = p == ps->list ? "" : ps->brief && !p[1] ? " or " : ", ";
      tl_buf_printf(out, "%s%s", sep, (*p)->name);
    }
    if (ps->brief) tl_buf_printf(out, " (%s)", ps->brief);
  }
}

const tl_compare_defaults *tl_bench_compare_defaults(const char *name) {
  const tl_bench_vt *vt = tl_bench_find(name);
  return vt ? vt->compare : NULL;
}
