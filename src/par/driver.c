/* driver.c - `tally run` (see driver.h). */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "correlate.h"
#include "driver.h"
#include "tally/boot.h"
#include "replay.h"
#include "tally/inlog.h"
#include "tally/job.h"
#include "tally/se_eval.h"
#include "tally/str.h"
#include "writer.h"

typedef struct {
  const tl_job *job;
  const tl_job_bench *jb;
  tl_se_itemset items;
  tl_replay *replay;
  tl_se_cfg *cfgs;
  size_t ncfgs;
  tl_se_row *rows;
  size_t nrows;
  tl_se_parser *parsers[TL_SE__NMODES];
} se_run;

static void se_run_release(se_run *r) {
  for (size_t i = 0; i < r->nrows; i++) tl_se_row_release(&r->rows[i]);
  free(r->rows);
  for (size_t i = 0; i < r->ncfgs; i++) free(r->cfgs[i].model);
  free(r->cfgs);
  if (r->replay) tl_replay_engine(r->replay)->vt->free(tl_replay_engine(r->replay));
  for (int m = 0; m < TL_SE__NMODES; m++) tl_se_parser_free(r->parsers[m]);
  tl_se_itemset_release(&r->items);
}

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

/* Adds cfg (model, variant, seed) unless present. */
static tl_status add_cfg(se_run *r, tl_strmap *seen, size_t *cap, const char *model, int variant,
                         int seed) {
  tl_buf k;
  tl_buf_init(&k);
  if (tl_buf_printf(&k, "%s\x1f%d\x1f%d", model, variant, seed)) return TL_ENOMEM;
  bool ins;
  tl_status st = tl_strmap_put(seen, k.data, r->ncfgs, &ins, NULL);
  tl_buf_release(&k);
  if (st || !ins) return st;
  if (r->ncfgs == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    tl_se_cfg *p = realloc(r->cfgs, *cap * sizeof *p);
    if (!p) return TL_ENOMEM;
    r->cfgs = p;
  }
  r->cfgs[r->ncfgs].model = tl_strdup(model);
  r->cfgs[r->ncfgs].variant = variant;
  r->cfgs[r->ncfgs].seed = seed;
  if (!r->cfgs[r->ncfgs].model) return TL_ENOMEM;
  r->ncfgs++;
  return TL_OK;
}

/* The cfgs of a run: the (model, variant, seed) combinations found in the answers, kept only
 * when they match the job's model/seed lists; when the job lists both models and seeds, every
 * listed combination is a cfg even without answers (its units are then counted "missing"). */
static tl_status build_cfgs(se_run *r) {
  const tl_job_bench *jb = r->jb;
  tl_strmap seen;
  tl_strmap_init(&seen);
  size_t cap = 0;
  tl_status st = TL_OK;
  size_t na = tl_replay_count(r->replay);
  for (size_t i = 0; i < na && st == TL_OK; i++) {
    const char *id, *model;
    int seed, variant;
    tl_replay_key(r->replay, i, &id, &model, &seed, &variant, NULL);
    if (variant < 0) variant = jb->variant;
    if (jb->models && !has_str(jb->models, jb->n_models, model)) continue;
    if (jb->seeds && !has_int(jb->seeds, jb->n_seeds, seed)) continue;
    st = add_cfg(r, &seen, &cap, model, variant, seed);
  }
  if (jb->models && jb->seeds) {
    for (int m = 0; m < jb->n_models && st == TL_OK; m++) {
      int any = 0;
      for (size_t c = 0; c < r->ncfgs; c++) any |= strcmp(r->cfgs[c].model, jb->models[m]) == 0;
      if (any) {
        /* every listed seed for every variant this model was seen with */
        size_t n0 = r->ncfgs;
        for (size_t c = 0; c < n0 && st == TL_OK; c++)
          if (strcmp(r->cfgs[c].model, jb->models[m]) == 0)
            for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
              st = add_cfg(r, &seen, &cap, jb->models[m], r->cfgs[c].variant, jb->seeds[s]);
      } else {
        for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
          st = add_cfg(r, &seen, &cap, jb->models[m], jb->variant, jb->seeds[s]);
      }
    }
  }
  tl_strmap_release(&seen);
  if (st == TL_OK) tl_se_cfgs_sort(r->cfgs, r->ncfgs);
  return st;
}

/* Splits "path:line" (the replay source) for the inlog. */
static long split_source(const char *src, char *path, size_t psz) {
  const char *c = strrchr(src, ':');
  size_t n = c ? (size_t)(c - src) : strlen(src);
  if (n >= psz) n = psz - 1;
  memcpy(path, src, n);
  path[n] = 0;
  return c ? atol(c + 1) : 0;
}

static tl_status run_spatialeval(se_run *r, tl_inlog *log, const tl_run_opts *o, tl_err *err) {
  const tl_job_bench *jb = r->jb;
  tl_status st = tl_se_itemset_load(&r->items, jb->items, jb->n_items, r->job->max_line, log, err);
  if (st) return st;
  tl_replay_source *src = calloc((size_t)jb->n_answers, sizeof *src);
  if (!src) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int i = 0; i < jb->n_answers; i++) {
    src[i].path = jb->answers[i].path;
    src[i].model = jb->answers[i].model;
    src[i].seed = jb->answers[i].seed;
    src[i].variant = jb->answers[i].variant >= 0 ? jb->answers[i].variant : jb->variant;
  }
  st = tl_replay_open(src, jb->n_answers, r->job->max_line, log, &r->replay, err);
  free(src);
  if (st) return st;
  /* Answers for items the job does not have: reported and counted, never scored. */
  size_t na = tl_replay_count(r->replay);
  for (size_t i = 0; i < na; i++) {
    const char *id, *source;
    tl_replay_key(r->replay, i, &id, NULL, NULL, NULL, &source);
    if (tl_strmap_get(&r->items.by_id, id, NULL)) continue;
    char path[4096];
    long line = split_source(source, path, sizeof path);
    if (tl_inlog_report(log, TL_IN_UNKNOWN_ITEM, path, line, "answer for unknown item '%s'", id))
      return TL_EINPUT;
  }
  if ((st = build_cfgs(r))) return tl_err_set(err, st, "out of memory");
  for (int k = 0; k < jb->n_modes; k++) {
    r->parsers[jb->modes[k]] = tl_se_parser_new(jb->modes[k], err);
    if (!r->parsers[jb->modes[k]]) return TL_EINTERNAL;
  }
  r->nrows = r->ncfgs * r->items.n;
  r->rows = calloc(r->nrows ? r->nrows : 1, sizeof *r->rows);
  if (!r->rows) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t i = 0; i < r->nrows; i++) {
    tl_se_row_init(&r->rows[i]);
    r->rows[i].cfg = i / r->items.n;
    r->rows[i].item = i % r->items.n;
  }
  /* Ask the engine for every unit, in chunks, placing replies by tag. */
  tl_engine *eng = tl_replay_engine(r->replay);
  const size_t CHUNK = 4096;
  tl_eng_reply *rep = malloc(CHUNK * sizeof *rep);
  if (!rep) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t base = 0; base < r->nrows && st == TL_OK; base += CHUNK) {
    size_t end = base + CHUNK < r->nrows ? base + CHUNK : r->nrows;
    for (size_t i = base; i < end && st == TL_OK; i++) {
      const tl_se_cfg *c = &r->cfgs[r->rows[i].cfg];
      tl_eng_request q = {i, r->items.items[r->rows[i].item].id, c->model, c->seed, c->variant, NULL};
      st = eng->vt->submit(eng, &q);
    }
    while (st == TL_OK && eng->vt->in_flight(eng)) {
      int k = eng->vt->poll(eng, rep, (int)CHUNK, 1000);
      for (int j = 0; j < k; j++) {
        tl_se_row *row = &r->rows[rep[j].tag];
        row->response = rep[j].text;
        row->prompt = rep[j].prompt;
        row->source = rep[j].source;
        rep[j].text = rep[j].prompt = rep[j].source = NULL;
        tl_eng_reply_release(&rep[j]);
        if (st == TL_OK) st = tl_se_score_row(r->parsers, &r->items, r->cfgs, row);
      }
    }
    if (!o->quiet && r->nrows > 100000)
      fprintf(o->log, "tally: %zu/%zu units scored\n", end, r->nrows);
  }
  free(rep);
  if (st) return tl_err_set(err, st, "scoring failed: %s", tl_strerror(st));
  return TL_OK;
}

static void print_summary(FILE *out, const se_run *r, tl_table *const *across, const tl_table *audit,
                          const tl_inlog *log) {
  const tl_job_bench *jb = r->jb;
  fprintf(out, "spatialeval: %zu items x %zu model/variant/seed configs = %zu units; parsers:",
          r->items.n, r->ncfgs, r->nrows);
  for (int k = 0; k < jb->n_modes; k++)
    fprintf(out, " %s%s", tl_se_mode_name(jb->modes[k]), k == 0 ? " (primary)" : "");
  fprintf(out, "\n\naccuracy, mean +/- std over seeds (all questions of each task)\n");
  fprintf(out, "%-22s %-7s %-12s %5s %6s", "model", "variant", "task", "seeds", "n");
  for (int k = 0; k < jb->n_modes; k++) fprintf(out, "  %-15s", tl_se_mode_name(jb->modes[k]));
  fprintf(out, "\n");
  const tl_table *a0 = across[0];
  int cq = tl_table_col(a0, "qid");
  for (size_t row = 0; row < a0->nrows; row++) {
    if (a0->cols[cq].v.i[row] != -1) continue;
    fprintf(out, "%-22s %-7s %-12s %5lld %6lld", a0->cols[0].v.s[row], a0->cols[1].v.s[row],
            a0->cols[2].v.s[row], (long long)a0->cols[tl_table_col(a0, "n_seeds")].v.i[row],
            (long long)a0->cols[tl_table_col(a0, "n")].v.i[row]);
    for (int k = 0; k < jb->n_modes; k++) {
      const tl_table *a = across[k]; /* same groups, same order in every mode */
      fprintf(out, "  %.3f +/- %.3f  ", a->cols[tl_table_col(a, "mean")].v.f[row],
              a->cols[tl_table_col(a, "std")].v.f[row]);
    }
    fprintf(out, "\n");
  }
  if (jb->n_modes > 1) {
    fprintf(out, "\nparser audit (all models, variants and seeds): accuracy per parser; units each pair scores differently\n");
    fprintf(out, "%-12s %6s", "task", "n");
    for (int k = 0; k < jb->n_modes; k++) fprintf(out, " %8s", tl_se_mode_name(jb->modes[k]));
    for (int x = 0; x < jb->n_modes; x++)
      for (int y = x + 1; y < jb->n_modes; y++) {
        char h[64];
        snprintf(h, sizeof h, "%s|%s", tl_se_mode_name(jb->modes[x]), tl_se_mode_name(jb->modes[y]));
        fprintf(out, " %14s", h);
      }
    fprintf(out, "\n");
    for (size_t row = 0; row < audit->nrows; row++) {
      fprintf(out, "%-12s %6lld", audit->cols[0].v.s[row], (long long)audit->cols[1].v.i[row]);
      int c = 2;
      for (int k = 0; k < jb->n_modes; k++) fprintf(out, " %8.3f", audit->cols[c++].v.f[row]);
      for (int x = 0; x < jb->n_modes; x++)
        for (int y = x + 1; y < jb->n_modes; y++) {
          char h[64];
          snprintf(h, sizeof h, "%lld (%lld/%lld)", (long long)audit->cols[c].v.i[row],
                   (long long)audit->cols[c + 1].v.i[row], (long long)audit->cols[c + 2].v.i[row]);
          fprintf(out, " %14s", h);
          c += 3;
        }
      fprintf(out, "\n");
    }
    fprintf(out, "(d (a/b): d units disagree; a correct only under the first parser, b only under the second)\n");
  }
  /* Parse statuses of the primary parser. */
  long st[TL_PS__COUNT] = {0};
  for (size_t i = 0; i < r->nrows; i++) st[r->rows[i].res[jb->modes[0]].status]++;
  fprintf(out, "\n%s parse statuses:", tl_se_mode_name(jb->modes[0]));
  for (int k = 0; k < TL_PS__COUNT; k++)
    if (st[k]) fprintf(out, " %s=%ld", tl_pstatus_name((tl_pstatus)k), st[k]);
  fprintf(out, "\n");
  if (log->total) {
    fprintf(out, "bad input lines: %ld (", log->total);
    int first = 1;
    for (int k = 0; k < TL_IN__NKINDS; k++)
      if (log->counts[k]) {
        fprintf(out, "%s%s=%ld", first ? "" : ", ", tl_in_kind_name((tl_in_kind)k), log->counts[k]);
        first = 0;
      }
    fprintf(out, "); see /input_problems in the output\n");
  } else {
    fprintf(out, "bad input lines: 0\n");
  }
}

/* Rank 0: opens the output and writes the run's root attributes. */
static int open_output(const tl_run_opts *o, const tl_job *job, int nranks, tl_writer **wout) {
  tl_err err = {{0}};
  const char *output = o->out_override ? o->out_override : job->output;
  tl_writer *w = tl_h5_serial_open(output, &err);
  if (!w) {
    fprintf(o->log, "tally: %s\n", err.msg);
    return TL_EXIT_FAIL;
  }
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  char h5v[32];
  snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
  tl_status st = w->vt->attr_str(w, "job", job->json, &err);
  if (!st) st = w->vt->attr_str(w, "job_name", job->name, &err);
  if (!st) st = w->vt->attr_str(w, "tally_version", TALLY_VERSION, &err);
  if (!st) st = w->vt->attr_str(w, "hdf5_version", h5v, &err);
  if (!st) st = w->vt->attr_str(w, "engine", job->engine, &err);
  if (!st) st = w->vt->attr_i64(w, "n_ranks", nranks, &err);
  if (st) {
    fprintf(o->log, "tally: %s\n", err.msg);
    w->vt->abort(w);
    return TL_EXIT_FAIL;
  }
  *wout = w;
  return TL_EXIT_OK;
}

/* Rank 0: scores the job's benchmarks, writes their tables into w and prints the summary. */
static int run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w) {
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  tl_inlog log;
  se_run r;
  memset(&r, 0, sizeof r);
  tl_table *per_seed[TL_SE__NMODES] = {0}, *across[TL_SE__NMODES] = {0};
  tl_table *items = NULL, *audit = NULL;
  if (tl_inlog_init(&log, o->log, o->strict_input) != TL_OK) return TL_EXIT_FAIL;
  r.job = job;
  r.jb = &job->benches[0];
  tl_status st = run_spatialeval(&r, &log, o, &err);
  if (st == TL_EINPUT) {
    fprintf(o->log, "tally: stopped at the first input problem (--strict-input); nothing written\n");
    rc = TL_EXIT_BAD_INPUT;
    goto done;
  }
  if (st) {
    fprintf(o->log, "tally: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
    rc = TL_EXIT_FAIL;
    goto done;
  }
  const tl_job_bench *jb = r.jb;
  items = tl_se_items_table(&r.items, r.cfgs, r.rows, r.nrows, jb->modes, jb->n_modes);
  audit = tl_se_audit_table(&r.items, r.rows, r.nrows, jb->modes, jb->n_modes);
  int ok = items && audit;
  for (int k = 0; k < jb->n_modes && ok; k++)
    ok = tl_se_metric_tables(&r.items, r.cfgs, r.ncfgs, r.rows, r.nrows, jb->modes[k], &per_seed[k],
                             &across[k]) == TL_OK;
  if (!ok) {
    fprintf(o->log, "tally: out of memory building result tables\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  char parsers[64] = "";
  for (int k = 0; k < jb->n_modes; k++) {
    if (k) strcat(parsers, ",");
    strcat(parsers, tl_se_mode_name(jb->modes[k]));
  }
  st = w->vt->attr_str(w, "parsers", parsers, &err);
  if (!st) st = w->vt->attr_i64(w, "n_bad_input", log.total, &err);
  if (!st) st = w->vt->write_table(w, items, &err);
  for (int k = 0; k < jb->n_modes && !st; k++) {
    st = w->vt->write_table(w, per_seed[k], &err);
    if (!st) st = w->vt->write_table(w, across[k], &err);
  }
  if (!st) st = w->vt->write_table(w, audit, &err);
  if (!st) st = w->vt->write_table(w, log.table, &err);
  if (st) {
    fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  print_summary(o->out, &r, across, audit, &log);
done:
  for (int k = 0; k < TL_SE__NMODES; k++) {
    tl_table_free(per_seed[k]);
    tl_table_free(across[k]);
  }
  tl_table_free(items);
  tl_table_free(audit);
  se_run_release(&r);
  tl_inlog_release(&log);
  return rc;
}

/* Collective. Runs one study of the job with the engine of `tally correlate`. */
static int run_study(const tl_run_opts *o, const tl_job_study *js, MPI_Comm comm, tl_writer *w) {
  tl_corr_opts co;
  memset(&co, 0, sizeof co);
  co.input = js->input;
  co.human = js->human;
  co.metrics = js->metrics;
  co.group_by = js->group_by;
  co.resamples = js->resamples;
  co.seed = js->seed;
  co.ci = js->ci;
  co.method = js->method ? TL_CI_BCA : TL_CI_PERCENTILE;
  co.stats_mask = js->stats_mask;
  co.permutation = js->permutation;
  co.strict_input = o->strict_input;
  co.quiet = o->quiet;
  co.outf = o->out;
  co.log = o->log;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) fprintf(o->out, "\nstudy '%s' (%s):\n", js->name, js->input);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "/stats/%s", js->name);
  return tl_corr_study(&co, comm, w, prefix);
}

int tl_run_job(const tl_run_opts *o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int rc = TL_EXIT_OK;
  tl_job job;
  memset(&job, 0, sizeof job);
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  /* Rank 0 validates the job and reports every problem before any rank works. */
  if (rank == 0 && tl_job_load(o->job_path, &job, &probs, &nprob) != TL_OK) {
    fprintf(o->log, "tally: invalid job '%s' (%d problem%s); nothing was run:\n%s", o->job_path,
            nprob, nprob == 1 ? "" : "s", probs.data);
    rc = TL_EXIT_USAGE;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && rank != 0) {
    /* the job was valid on rank 0: the other ranks read the same file for the study specs */
    tl_buf_reset(&probs);
    if (tl_job_load(o->job_path, &job, &probs, &nprob) != TL_OK) rc = TL_EXIT_FAIL;
  }
  tl_buf_release(&probs);
  int bad = rc != TL_EXIT_OK, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
  if (anybad) {
    if (rank != 0 && rc) fprintf(o->log, "tally: rank %d cannot read the job file '%s'\n", rank, o->job_path);
    tl_job_release(&job);
    return rc ? rc : TL_EXIT_FAIL;
  }
  tl_writer *w = NULL;
  /* Benchmarks: rank 0 scores them (sharding over ranks comes with the distributed driver). */
  if (rank == 0) {
    rc = open_output(o, &job, nranks, &w);
    if (rc == TL_EXIT_OK && job.n_benches > 0) rc = run_benchmarks(o, &job, w);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  /* Studies: collective, resamples split over every rank. */
  for (int i = 0; i < job.n_studies && rc == TL_EXIT_OK; i++) rc = run_study(o, &job.studies[i], comm, w);
  if (rank == 0 && w) {
    tl_err err = {{0}};
    if (rc == TL_EXIT_OK) {
      if (w->vt->close(w, &err) != TL_OK) {
        fprintf(o->log, "tally: %s\n", err.msg);
        rc = TL_EXIT_FAIL;
      } else {
        fprintf(o->out, "wrote %s\n", o->out_override ? o->out_override : job.output);
      }
    } else {
      w->vt->abort(w);
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm); /* every rank exits with rank 0's code */
  tl_job_release(&job);
  return rc;
}
