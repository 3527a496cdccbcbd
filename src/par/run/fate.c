/* fate.c - after scoring: engine failures by reason, and a model or judge that answered nothing fails the run. */
#include "run.h"

/* Collective: each role's engine failures by reason, gathered to rank 0, which prints the
 * three commonest ("tally: model engine_error: 21 units; top reasons: 9 x ..."). */
typedef struct {
  const char *why;
  size_t n;
} reason_n;
static int cmp_reason(const void *a, const void *b) {
  const reason_n *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? 1 : -1;
  return strcmp(x->why, y->why);
}
static tl_status report_reasons(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err) {
  int bad = 0;
  for (int role = 0; role < TL_ROLE__N; role++) {
    tl_buf mine;
    tl_buf_init(&mine);
    for (size_t i = 0; r->tal.reasons_init && i < r->tal.reasons[role].cap; i++)
      if (r->tal.reasons[role].keys[i])
        bad |= tl_buf_printf(&mine, "%zu\x1f%s\n", r->tal.reasons[role].vals[i], r->tal.reasons[role].keys[i]) != TL_OK;
    char *all = NULL;
    size_t all_len = 0;
    tl_status st = tl_agree(bad ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK, err, comm);
    if (!st) st = run_gather_bytes(mine.data, mine.len, "the engine failures' reasons", comm, &all, &all_len, err);
    tl_buf_release(&mine);
    if (st) return st;
    if (r->rank == 0) {
      tl_strmap m;
      tl_strmap_init(&m);
      size_t total = 0;
      for (char *p = all, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        char *sep = strchr(p, 0x1f);
        if (!nl || !sep) break;
        *nl = 0;
        size_t n = strtoull(p, NULL, 10);
        total += n;
        tl_strmap_add(&m, sep + 1, n, NULL);
      }
      reason_n *v = malloc((m.n ? m.n : 1) * sizeof *v);
      size_t k = 0;
      for (size_t i = 0; v && i < m.cap; i++)
        if (m.keys[i]) v[k++] = (reason_n){m.keys[i], m.vals[i]};
      if (v && k) {
        qsort(v, k, sizeof *v, cmp_reason);
        fprintf(o->log, "tally: %s engine_error: %zu unit stage%s; top reason%s:", tl_role_name((tl_role)role), total,
                total == 1 ? "" : "s", k == 1 ? "" : "s");
        for (size_t i = 0; i < k && i < 3; i++) fprintf(o->log, "%s %zu x %s", i ? ";" : "", v[i].n, v[i].why);
        fprintf(o->log, "%s\n", k > 3 ? "; ... (every reason is in the item table's engine_error column)" : "");
      }
      free(v);
      tl_strmap_release(&m);
    }
    free(all);
  }
  return TL_OK;
}

/* Collective, after the tables are built (the writer is then aborted: no output; the journal keeps
 * every reply and failure for --resume): a run in which no unit of a
 * model got an answer, or in which the judge answered none of the units it was asked about, has
 * scored nothing that model or judge was run for. It fails (TL_EXIT_FAIL), saying so on rank 0
 * (also under --quiet), with the first engine failure a rank saw. */
tl_status run_fate_check(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err) {
  int bad = 0, rank = r->rank;
  if (r->dry) return TL_OK; /* a dry run asks nothing: no unit has an answer */
  tl_status st = report_reasons(o, r, comm, err);
  if (st) return st;
  for (size_t b = 0; b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    size_t n = rb->ncfgs * FATE_N;
    uint64_t *all = calloc(n + 1, sizeof *all), *mine = calloc(n + 1, sizeof *mine);
    if ((st = tl_agree(!all || !mine ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK, err, comm))) {
      free(all), free(mine);
      return st;
    }
    if (r->tal.fate && r->tal.fate[b]) memcpy(mine, r->tal.fate[b], n * sizeof *mine);
    if ((st = tl_agree(TL_MPI(err, MPI_Reduce(mine, all, (int)n, MPI_UINT64_T, MPI_SUM, 0, comm)), err, comm))) {
      free(all), free(mine);
      return st;
    }
    /* per model (its cfgs: variants and seeds), then the judge over every cfg */
    uint64_t ju = 0, jok = 0, jerr = 0;
    for (size_t c = 0; rank == 0 && c < rb->ncfgs; c++) {
      const uint64_t *f = all + c * FATE_N;
      ju += f[FATE_UNITS], jok += f[FATE_JUDGED], jerr += f[FATE_JUDGE_ERROR];
      if (c && strcmp(rb->cfgs[c - 1].model, rb->cfgs[c].model) == 0) continue; /* sorted by model */
      uint64_t u = 0, ans = 0, nerr = 0, jd = 0, je = 0;
      for (size_t d = c; d < rb->ncfgs && strcmp(rb->cfgs[d].model, rb->cfgs[c].model) == 0; d++)
        u += all[d * FATE_N + FATE_UNITS], ans += all[d * FATE_N + FATE_ANSWERED],
            nerr += all[d * FATE_N + FATE_ENGINE_ERROR], jd += all[d * FATE_N + FATE_JUDGED],
            je += all[d * FATE_N + FATE_JUDGE_ERROR];
      if (rb->nstages > 1 && ans && !jd && !je) { /* no judgment for any of its answers */
        bad = 1;
        fprintf(o->log, "tally: %s: model '%s': none of its %llu answered units got a verdict from the judge: no "
                        "judgment matched them (check the judgments' model, seed and turn)\n",
                rb->vt->name, rb->cfgs[c].model, (unsigned long long)ans);
      }
      if (u && !ans) {
        bad = 1;
        fprintf(o->log, "tally: %s: model '%s' answered none of its %llu units (%llu engine_error, %llu missing)%s%s%s\n",
                rb->vt->name, rb->cfgs[c].model, (unsigned long long)u, (unsigned long long)nerr,
                (unsigned long long)(u - nerr), nerr ? "; the engine said: " : "",
                nerr && r->tal.first_error[TL_ROLE_MODEL] ? r->tal.first_error[TL_ROLE_MODEL] : "",
                nerr && !r->tal.first_error[TL_ROLE_MODEL] ? "(see the item table's error column)" : "");
      }
    }
    if (rank == 0 && rb->nstages > 1 && jerr && !jok) {
      bad = 1;
      fprintf(o->log, "tally: %s: the judge answered none of the %llu units (%llu engine_error)%s%s\n", rb->vt->name,
              (unsigned long long)ju, (unsigned long long)jerr, r->tal.first_error[TL_ROLE_JUDGE] ? "; the engine said: " : "",
              r->tal.first_error[TL_ROLE_JUDGE] ? r->tal.first_error[TL_ROLE_JUDGE] : "");
    }
    free(all), free(mine);
  }
  if (bad) /* (rank 0's, printed once by the caller) */
    st = tl_err_set(err, TL_ENGINE, "the run scored nothing for the model(s) or judge above: failed, no output written "
                    "(the journal keeps every reply and failure: fix the engine, then --resume asks only the failed "
                    "units)");
  return tl_agree(st, err, comm);
}
