/* units.c - the benchmarks of a run, their cfgs and unit numbering (tally/run.h). */
#include <stdlib.h>
#include <string.h>

#include "tally/run.h"

tl_status tl_rb_units(tl_run_bench *rb) {
  rb->nitems = rb->vt->n_items(rb->b);
  rb->nmodes = rb->vt->n_modes(rb->b);
  if (rb->nmodes < 1 || rb->nmodes > rb->vt->max_modes) return TL_EINTERNAL; /* tl_row.res holds max_modes */
  rb->nstages = tl_bench_nstages(rb->vt, rb->b);
  free(rb->sub_off);
  rb->sub_off = malloc((rb->nitems + 1) * sizeof *rb->sub_off);
  if (!rb->sub_off) return TL_ENOMEM;
  uint64_t s = 0;
  for (size_t i = 0; i < rb->nitems; i++) {
    rb->sub_off[i] = s;
    s += rb->vt->n_subs(rb->b, i);
  }
  rb->sub_off[rb->nitems] = s;
  rb->S = s;
  rb->U = (uint64_t)rb->ncfgs * s;
  return TL_OK;
}

void tl_rb_release(tl_run_bench *rb) {
  tl_cfgs_free(rb->cfgs, rb->ncfgs);
  free(rb->sub_off);
  rb->cfgs = NULL;
  rb->sub_off = NULL;
  rb->ncfgs = 0;
}

tl_unit tl_rb_unit(const tl_run_bench *rb, uint64_t u) {
  tl_unit x;
  uint64_t w = u % rb->S;
  x.cfg = (uint32_t)(u / rb->S);
  if (rb->S == rb->nitems) { /* one unit per item: no search */
    x.item = (uint32_t)w;
    x.sub = 0;
    return x;
  }
  /* the last item i with sub_off[i] <= w (items with no units have sub_off[i] == sub_off[i+1]) */
  size_t lo = 0, hi = rb->nitems; /* sub_off[lo] <= w < sub_off[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (rb->sub_off[mid] <= w) lo = mid;
    else hi = mid;
  }
  x.item = (uint32_t)lo;
  x.sub = (uint32_t)(w - rb->sub_off[lo]);
  return x;
}

uint64_t tl_rb_index(const tl_run_bench *rb, const tl_unit *x) {
  return (uint64_t)x->cfg * rb->S + rb->sub_off[x->item] + x->sub;
}

size_t tl_rb_find(const tl_run_bench *rbs, size_t n, uint64_t g) {
  size_t lo = 0, hi = n; /* the last b with base <= g */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (rbs[mid].base <= g) lo = mid;
    else hi = mid;
  }
  return lo;
}

static int cfg_cmp(const void *a, const void *b) {
  const tl_cfg *x = a, *y = b;
  int c = strcmp(x->model, y->model);
  if (c) return c;
  if (x->variant != y->variant) return x->variant < y->variant ? -1 : 1;
  return (x->seed > y->seed) - (x->seed < y->seed);
}

void tl_cfgs_sort(tl_cfg *cfgs, size_t n) {
  if (n > 1) qsort(cfgs, n, sizeof *cfgs, cfg_cmp); /* cfgs may be NULL when n == 0 */
}

tl_status tl_cfgs_add(tl_cfg **cfgs, size_t *n, size_t *cap, tl_strmap *seen, const char *model,
                      int variant, int seed) {
  tl_buf k;
  tl_buf_init(&k);
  if (tl_buf_printf(&k, "%s\x1f%d\x1f%d", model, variant, seed)) return TL_ENOMEM;
  bool ins;
  tl_status st = tl_strmap_put(seen, k.data, *n, &ins, NULL);
  tl_buf_release(&k);
  if (st || !ins) return st;
  if (*n == *cap) {
    size_t c2 = *cap ? *cap * 2 : 16;
    tl_cfg *p = realloc(*cfgs, c2 * sizeof *p);
    if (!p) return TL_ENOMEM;
    *cfgs = p;
    *cap = c2;
  }
  tl_cfg *c = &(*cfgs)[*n];
  c->model = tl_strdup(model);
  c->variant = variant;
  c->seed = seed;
  if (!c->model) return TL_ENOMEM;
  (*n)++;
  return TL_OK;
}

void tl_cfgs_free(tl_cfg *cfgs, size_t n) {
  for (size_t i = 0; i < n; i++) free(cfgs[i].model);
  free(cfgs);
}

tl_status tl_rb_score(const tl_run_bench *rb, const tl_unit *u, tl_row *row, tl_err *err) {
  tl_status st = rb->vt->score(rb->b, rb->cfgs, u, row, err);
  if (st) return st;
  int failed = 0;
  for (int s = 0; s < rb->nstages; s++) failed |= row->error[s] != NULL;
  if (!failed) return TL_OK;
  for (int m = 0; m < rb->nmodes; m++) {
    tl_parsed_release(&row->res[m]);
    row->res[m].status = TL_PS_ENGINE_ERROR;
    row->res[m].rule = "engine_error";
  }
  return TL_OK;
}

uint64_t tl_block_lo(uint64_t U, int q, int nranks) {
  return (uint64_t)(((unsigned __int128)U * (unsigned)q) / (unsigned)nranks);
}

int tl_block_owner(uint64_t u, uint64_t U, int nranks) {
  /* the q with tl_block_lo(q) <= u < tl_block_lo(q + 1): the estimate, then corrected */
  int q = (int)(((unsigned __int128)u * (unsigned)nranks) / U);
  while (q + 1 < nranks && tl_block_lo(U, q + 1, nranks) <= u) q++;
  while (q > 0 && tl_block_lo(U, q, nranks) > u) q--;
  return q;
}

uint64_t tl_chunk_size(uint64_t P, int nranks) {
  uint64_t c = P / ((uint64_t)nranks * 8u);
  return c < 1 ? 1 : c > 1024 ? 1024 : c;
}
