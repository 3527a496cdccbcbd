/* cfgs.c - which (model, variant, seed) configurations a benchmark of a job runs (tally/run.h):
 * the selection by the job's "models"/"seeds" lists and the check that those lists name
 * something the answers hold. Pure: the driver calls them on every rank with the same input. */
#include <stdlib.h>
#include <string.h>

#include "tally/run.h"
#include "tally/str.h"

static int has_str(char *const *l, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return 1;
  return 0;
}

static int has_int(const int *l, int n, int v) {
  for (int i = 0; i < n; i++)
    if (l[i] == v) return 1;
  return 0;
}

tl_status tl_cfgs_select(const tl_cfg *found, size_t nfound, char *const *models, int n_models, const int *seeds,
                         int n_seeds, int dv, int list_all, tl_cfg **out, size_t *n) {
  tl_strmap seen;
  tl_strmap_init(&seen);
  size_t cap = 0;
  tl_status st = TL_OK;
  *out = NULL;
  *n = 0;
  for (size_t i = 0; i < nfound && st == TL_OK; i++) {
    const tl_cfg *k = &found[i];
    if (models && !has_str(models, n_models, k->model)) continue;
    if (seeds && !has_int(seeds, n_seeds, k->seed)) continue;
    st = tl_cfgs_add(out, n, &cap, &seen, k->model, k->variant, k->seed);
  }
  for (int m = 0; list_all && models && seeds && m < n_models && st == TL_OK; m++) {
    int any = 0;
    for (size_t c = 0; c < *n; c++) any |= strcmp((*out)[c].model, models[m]) == 0;
    if (any) { /* every listed seed for every variant this model was seen with */
      const size_t n0 = *n;
      for (size_t c = 0; c < n0 && st == TL_OK; c++)
        if (strcmp((*out)[c].model, models[m]) == 0)
          for (int s = 0; s < n_seeds && st == TL_OK; s++)
            st = tl_cfgs_add(out, n, &cap, &seen, models[m], (*out)[c].variant, seeds[s]);
    } else {
      for (int s = 0; s < n_seeds && st == TL_OK; s++) st = tl_cfgs_add(out, n, &cap, &seen, models[m], dv, seeds[s]);
    }
  }
  tl_strmap_release(&seen);
  if (st == TL_OK) tl_cfgs_sort(*out, *n);
  return st;
}

tl_status tl_cfgs_check_filter(const tl_cfg *found, size_t nfound, char *const *models, int n_models,
                               const int *seeds, int n_seeds, tl_err *err) {
  tl_buf bad, held;
  tl_buf_init(&bad);
  tl_buf_init(&held);
  tl_strmap distinct;
  tl_strmap_init(&distinct);
  tl_status st = TL_OK;
  for (size_t i = 0; i < nfound && !st; i++) { /* the models the answers hold, first 8 in order */
    bool ins = false;
    st = tl_strmap_put(&distinct, found[i].model, 0, &ins, NULL);
    if (!st && ins && distinct.n <= 8) st = tl_buf_printf(&held, "%s'%s'", held.len ? ", " : "", found[i].model);
  }
  for (int m = 0; m < n_models && !st; m++)
    if (!tl_strmap_get(&distinct, models[m], NULL))
      st = tl_buf_printf(&bad, "%smodel '%s'", bad.len ? "; " : "", models[m]);
  for (int s = 0; s < n_seeds && !st; s++) {
    int any = 0;
    for (size_t i = 0; i < nfound && !any; i++) any = found[i].seed == seeds[s];
    if (!any) st = tl_buf_printf(&bad, "%sseed %d", bad.len ? "; " : "", seeds[s]);
  }
  if (st) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  else if (bad.len)
    st = tl_err_set(err, TL_EJOB, "the job's filter names what no answer file holds: %s (the answers have "
                    "model%s %s%s); fix the \"models\"/\"seeds\" lists of the benchmark", bad.data,
                    distinct.n == 1 ? "" : "s", held.data ? held.data : "", distinct.n > 8 ? ", ..." : "");
  tl_buf_release(&bad);
  tl_buf_release(&held);
  tl_strmap_release(&distinct);
  return st;
}
