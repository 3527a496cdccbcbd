/* correlate_compute.c - `tally correlate`: the study's collective steps (correlate_int.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "correlate_int.h"
#include "tally/str.h"
#ifdef TALLY_HAVE_CUDA
#include "tally/cuda_boot.h"
#endif

/* Computes resamples [r0, r1) of one group on this rank: CUDA when asked/available, else CPU. */
static tl_status compute_block(const tl_study_in *in, const tl_study *s, uint64_t r0, uint64_t r1,
                               double *out, int device, int *used_gpu, FILE *log, tl_err *err) {
  *used_gpu = 0;
#ifdef TALLY_HAVE_CUDA
  /* the kernels draw items: a cluster study runs on the CPU (said in the study's log line) */
  if (device != 1 && !in->indices && !in->cluster && tl_cuda_devices() > 0) {
    tl_dense hy, *hx = calloc((size_t)in->nmetrics, sizeof *hx);
    tl_pair *pr = calloc((size_t)in->nmetrics, sizeof *pr);
    const uint32_t **xl = calloc((size_t)in->nmetrics, sizeof *xl), **ord = calloc((size_t)in->nmetrics, sizeof *ord);
    tl_status st = tl_dense_init(&hy, in->human, in->n);
    for (int m = 0; m < in->nmetrics && !st; m++) {
      st = tl_dense_init(&hx[m], in->metric[m], in->n);
      if (!st) st = tl_pair_init(&pr[m], &hx[m], &hy);
      xl[m] = hx[m].level;
      ord[m] = pr[m].order;
    }
    if (!st) {
      tl_cuda_study cs = {in->n, hy.nlevels, hy.level, in->nmetrics, xl, ord, in->nstats,
                          {in->stats[0], in->nstats > 1 ? in->stats[1] : 0}, in->seed};
      st = tl_cuda_resamples(&cs, r0, r1, out, err);
      if (!st) *used_gpu = 1;
      else if (device == 2) { /* required */ }
      else { fprintf(log, "tally correlate: %s; using the CPU\n", err->msg); }
    }
    for (int m = 0; m < in->nmetrics; m++) { tl_pair_release(&pr[m]); tl_dense_release(&hx[m]); }
    tl_dense_release(&hy);
    free(hx); free(pr); free(xl); free(ord);
    if (*used_gpu) return TL_OK;
    if (device == 2) return TL_ENGINE;
  }
#endif
  if (device == 2 && in->cluster)
    return tl_err_set(err, TL_ENGINE, "--device cuda: the CUDA kernels resample items, not clusters (use --device cpu or --cluster none)");
  if (device == 2) return tl_err_set(err, TL_ENGINE, "--device cuda: no usable CUDA device in this build/machine");
  (void)log;
  return tl_study_resamples(s, r0, r1, out);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One group's temporaries on this rank (group_free releases them). */
typedef struct {
  const double **mp;   /* [M]: the metric columns, into g->metric */
  tl_study_in in;
  tl_study *s;
  uint64_t r0, r1;     /* this rank's resamples [r0, r1) (and permutations) */
  double *mine;        /* [(r1 - r0) K]: their values */
  int *cnt, *dsp;      /* rank 0: [nranks] gatherv counts and displacements */
  int P;               /* permutation counts: pairs x statistics */
  int64_t *pc_mine, *pc_all; /* [P]: this rank's counts; rank 0: their sum */
  size_t T, j0, j1;    /* BCa jackknife tasks; this rank's [j0, j1) */
  double *jmine, *jack;/* [(j1 - j0) nstats]; rank 0: [T nstats] */
} group_work;

static void group_free(group_work *gw) {
  free(gw->mp);
  tl_study_free(gw->s);
  free(gw->mine);
  free(gw->cnt);
  free(gw->dsp);
  free(gw->pc_mine);
  free(gw->pc_all);
  free(gw->jmine);
  free(gw->jack);
}

/* Keeps the first failure: *st becomes next when it is still TL_OK. */
void corr_keep(tl_status *st, tl_status next) {
  if (*st == TL_OK) *st = next;
}

/* Test hook (tests/e2e/test_correlate_fail_rank.sh) and nothing else: with TALLY_TEST_CORR_FAIL=R
 * in the environment, rank R acts as if the allocation of its block of resample values failed,
 * in every group. Unset: no effect. */
static int test_alloc_fails(int rank) {
  const char *v = getenv("TALLY_TEST_CORR_FAIL");
  return v && *v && atoi(v) == rank;
}

/* The failing rank's message for group g: "rank R, group 'KEY': what" ('?' for the key off
 * rank 0, which alone holds the keys), so that rank 0 can print the agreed one as it is. */
static tl_status group_fail(const study *s, const group *g, tl_status st, tl_err *err) {
  char what[TL_ERR_MSG_MAX];
  snprintf(what, sizeof what, "%s", err->msg[0] ? err->msg : tl_strerror(st));
  err->msg[0] = '\0';
  return tl_err_set(err, st, "rank %d, group '%s': %s", s->rank, s->rank ? "?" : g->key, what);
}

/* Step: the study's own communicator, a duplicate of comm whose MPI calls return their errors
 * (TL_SOLO stays TL_SOLO). Collective over comm, agreed. */
tl_status corr_study_comm(study *s, MPI_Comm comm, tl_err *err) {
  s->c = TL_SOLO;
  tl_status st = comm == TL_SOLO ? TL_OK : tl_comm_dup(comm, &s->c, err);
  st = tl_agree(st, err, comm);
  if (st != TL_OK && s->c != TL_SOLO) {
    (void)TL_MPI(NULL, MPI_Comm_free(&s->c)); /* failing already: its result adds nothing */
    s->c = TL_SOLO;
  }
  return st;
}

/* Step: rank 0 loads the table (corr_load reports its failures), then the study's shape (metrics,
 * groups, B, --indices) and the metric names ("\n"-joined) go to every rank. Agreed after the
 * load, after the buffers, after the names. */
static tl_status study_names(study *s, tl_err *err);
tl_status corr_study_share(study *s, tl_inlog *log, tl_err *err) {
  tl_status st = s->rank == 0 ? corr_load(s->o, log, &s->d) : TL_OK;
  if ((st = tl_agree(st, err, s->c)) != TL_OK) return st; /* reported by corr_load */
  if ((st = study_names(s, err)) != TL_OK && s->rank == 0) fprintf(s->o->log, "%s: %s\n", LABEL(s->o), err->msg);
  return st;
}

/* corr_study_share's part after the load: the shape and the names. */
static tl_status study_names(study *s, tl_err *err) {
  corr_data *d = &s->d;
  const int rank = s->rank;
  tl_status st = TL_OK;
  tl_buf nb;
  tl_buf_init(&nb);
  for (int m = 0; rank == 0 && m < d->M && st == TL_OK; m++) st = tl_buf_printf(&nb, "%s\n", d->names[m]);
  uint64_t hdr[5] = {(uint64_t)d->M, (uint64_t)d->ngroups, d->B, d->indices != NULL, nb.len};
  corr_keep(&st, tl_bcast(hdr, 5, MPI_UINT64_T, 0, s->c, err));
  char *all = rank == 0 ? nb.data : NULL;
  if (st == TL_OK && rank) {
    d->M = (int)hdr[0];
    d->B = hdr[2];
    d->g = calloc((size_t)hdr[1] + 1, sizeof *d->g);
    d->names = calloc((size_t)d->M + 1, sizeof *d->names);
    all = calloc(hdr[4] + 1, 1);
    if (!d->g || !d->names || !all) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    else d->ngroups = (int)hdr[1]; /* corr_release walks d->g only when it is there */
  }
  s->has_indices = hdr[3] != 0;
  if ((st = tl_agree(st, err, s->c)) == TL_OK) st = tl_bcast(all, (int)hdr[4], MPI_CHAR, 0, s->c, err);
  char *p = all;
  for (int m = 0; rank && st == TL_OK && m < d->M; m++) {
    char *e = strchr(p, '\n');
    if (!(d->names[m] = tl_strndup(p, (size_t)(e - p)))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    p = e + 1;
  }
  if (rank) free(all);
  tl_buf_release(&nb);
  s->K = d->M * d->nstats;
  s->npairs = d->M * (d->M - 1) / 2;
  return tl_agree(st, err, s->c);
}

/* Step: group k's rows (n, human[n], metric[M][n], the cluster ids and the --indices matrix)
 * from rank 0 to every rank (the system ids stay on rank 0, which alone uses them). Two
 * agreements: after the sizes and the buffers, after the data. */
static tl_status group_receive(study *s, group *g, tl_err *err) {
  corr_data *d = &s->d;
  uint32_t hdr[2] = {g->n, g->ncl};
  tl_status st = tl_bcast(hdr, 2, MPI_UINT32_T, 0, s->c, err);
  if (st == TL_OK && s->rank) {
    g->n = hdr[0];
    g->ncl = hdr[1];
    const size_t n = g->n ? g->n : 1;
    g->human = malloc(n * sizeof(double));
    /* the block's layout as rank 0's (correlate_int.h): metric [M][n], then cl [n] */
    g->metric = malloc((size_t)d->M * n * sizeof(double) + n * sizeof(uint32_t));
    if (g->metric && g->ncl) g->cl = (uint32_t *)(g->metric + (size_t)d->M * n);
    if (s->has_indices) d->indices = malloc((d->B * g->n > 0 ? d->B * g->n : 1) * sizeof *d->indices);
    if (!g->human || !g->metric || (s->has_indices && !d->indices))
      st = group_fail(s, g, tl_err_set(err, TL_ENOMEM, "out of memory"), err);
  }
  if ((st = tl_agree(st, err, s->c)) != TL_OK) return st;
  st = tl_bcast(g->human, (int)g->n, MPI_DOUBLE, 0, s->c, err);
  corr_keep(&st, tl_bcast(g->metric, (int)((size_t)d->M * g->n), MPI_DOUBLE, 0, s->c, err));
  if (g->ncl) corr_keep(&st, tl_bcast(g->cl, (int)g->n, MPI_UINT32_T, 0, s->c, err));
  if (s->has_indices) /* --indices: small studies only */
    corr_keep(&st, tl_bcast(d->indices, (int)(d->B * g->n), MPI_UINT32_T, 0, s->c, err));
  return tl_agree(st, err, s->c);
}

/* Step: this rank's block of resamples of group g (and rank 0's gather buffers). Agreed; the
 * failing rank's message names it and the group (group_fail). */
static tl_status group_compute(study *s, group *g, group_work *gw, tl_err *err) {
  corr_data *d = &s->d;
  const uint64_t B = d->B, nr = (uint64_t)s->nranks;
  tl_status st = TL_OK;
  gw->mp = malloc((size_t)(d->M ? d->M : 1) * sizeof *gw->mp);
  if (!gw->mp) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int m = 0; m < d->M && st == TL_OK; m++) gw->mp[m] = g->metric + (size_t)m * g->n;
  gw->in = (tl_study_in){g->n, g->human, d->M, gw->mp, (const char *const *)d->names, d->nstats,
                         {d->stats[0], d->nstats > 1 ? d->stats[1] : TL_STAT_SPEARMAN}, s->o->seed, B,
                         s->has_indices ? d->indices : NULL, g->cl, g->ncl};
  if (st == TL_OK) st = tl_study_new(&gw->in, &gw->s, err);
  gw->r0 = B * (uint64_t)s->rank / nr;
  gw->r1 = B * (uint64_t)(s->rank + 1) / nr;
  gw->mine = test_alloc_fails(s->rank) ? NULL
             : malloc(((gw->r1 - gw->r0) ? (gw->r1 - gw->r0) : 1) * (size_t)s->K * sizeof *gw->mine);
  if (st == TL_OK && !gw->mine) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (st == TL_OK && s->rank == 0) {
    gw->cnt = malloc((size_t)s->nranks * sizeof *gw->cnt);
    gw->dsp = malloc((size_t)s->nranks * sizeof *gw->dsp);
    g->vals = malloc((B ? B : 1) * (size_t)s->K * sizeof *g->vals);
    if (!gw->cnt || !gw->dsp || !g->vals) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  int used_gpu = 0;
  double t0 = now_s();
  if (st == TL_OK) st = compute_block(&gw->in, gw->s, gw->r0, gw->r1, gw->mine, s->o->device, &used_gpu, s->o->log, err);
  s->t_res += now_s() - t0;
  s->gpu_groups += used_gpu;
  if (st != TL_OK) group_fail(s, g, st, err);
  return tl_agree(st, err, s->c);
}

/* Step: the blocks gathered to rank 0 in resample order (rank order = resample order); then the
 * permutation test and the BCa jackknife, split over ranks the same way: integer permutation
 * counts are summed later (MPI_Reduce), jackknife task values gathered in task order, so rank 0
 * summarizes identical inputs whatever the rank count. Agreed. */
static tl_status group_tests(study *s, group *g, group_work *gw, tl_err *err) {
  const corr_data *d = &s->d;
  const tl_corr_opts *o = s->o;
  const int nranks = s->nranks, K = s->K;
  for (int q = 0; s->rank == 0 && q < nranks; q++) {
    uint64_t a = d->B * (uint64_t)q / (uint64_t)nranks, b = d->B * (uint64_t)(q + 1) / (uint64_t)nranks;
    gw->cnt[q] = (int)((b - a) * (uint64_t)K);
    gw->dsp[q] = (int)(a * (uint64_t)K);
  }
  tl_status st = tl_gatherv(gw->mine, (int)((gw->r1 - gw->r0) * (uint64_t)K), MPI_DOUBLE, g->vals,
                            gw->cnt, gw->dsp, 0, s->c, err);
  double t0 = now_s();
  gw->P = s->npairs * d->nstats;
  gw->pc_mine = calloc((size_t)(gw->P ? gw->P : 1), sizeof *gw->pc_mine);
  gw->pc_all = calloc((size_t)(gw->P ? gw->P : 1), sizeof *gw->pc_all);
  tl_status pst = gw->pc_mine && gw->pc_all ? TL_OK : TL_ENOMEM;
  if (pst == TL_OK && gw->P && o->permutation) pst = tl_study_perm_counts(gw->s, gw->r0, gw->r1, gw->pc_mine);
  else for (int q = 0; pst == TL_OK && q < gw->P; q++) gw->pc_mine[q] = -1; /* not run: p_permutation is NaN */
  gw->T = o->method == TL_CI_BCA ? tl_study_jack_tasks(gw->s) : 0;
  gw->j0 = gw->T * (size_t)s->rank / (size_t)nranks;
  gw->j1 = gw->T * (size_t)(s->rank + 1) / (size_t)nranks;
  if (gw->T) {
    gw->jmine = malloc(((gw->j1 - gw->j0) ? (gw->j1 - gw->j0) : 1) * (size_t)d->nstats * sizeof *gw->jmine);
    if (s->rank == 0) gw->jack = malloc(gw->T * (size_t)d->nstats * sizeof *gw->jack);
    if (!gw->jmine || (s->rank == 0 && !gw->jack)) pst = TL_ENOMEM;
    if (pst == TL_OK) pst = tl_study_jack_values(gw->s, gw->j0, gw->j1, gw->jmine);
  }
  s->t_sum += now_s() - t0;
  if (st == TL_OK && pst != TL_OK) st = tl_err_set(err, pst, "out of memory in the tests");
  st = tl_agree(st, err, s->c);
  if (st != TL_OK && s->rank == 0) fprintf(o->log, "%s: group '%s': %s\n", LABEL(o), g->key, err->msg);
  return st;
}

/* Rank 0: the group's system-level agreement (tl_sys_*: per-system means, Spearman and Kendall
 * over the systems, bootstrap over the group's clusters, or its rows when it has none) into
 * g->per[K .. 2K). Cheap (B x rows x metrics), so rank 0 computes all of it: each value is a
 * pure function of (group, r), the same on any rank count. */
static tl_status group_system(study *s, group *g, const group_work *gw, tl_err *err) {
  const corr_data *d = &s->d;
  tl_sys_in si = {g->n, g->human, d->M, gw->mp, g->sys, g->nsys, g->cl, g->ncl, d->nstats,
                  {d->stats[0], d->nstats > 1 ? d->stats[1] : TL_STAT_SPEARMAN}, s->o->seed, d->B};
  double *full = malloc((size_t)s->K * sizeof *full);
  double *vals = malloc((d->B ? d->B : 1) * (size_t)s->K * sizeof *vals);
  tl_status st = full && vals ? tl_sys_values(&si, full, 0, d->B, vals) : TL_ENOMEM;
  if (st == TL_OK) st = tl_sys_summarize(&si, full, vals, s->o->ci, g->per + s->K);
  free(full);
  free(vals);
  return st == TL_OK ? TL_OK : tl_err_set(err, st, "system-level agreement failed (%s)", tl_strerror(st));
}

/* Step: the permutation counts summed and the jackknife values gathered to rank 0, which
 * summarizes the group (g->per, g->cmp) and its system-level agreement. Agreed. */
static tl_status group_summarize(study *s, group *g, group_work *gw, tl_err *err) {
  const corr_data *d = &s->d;
  const tl_corr_opts *o = s->o;
  const int nranks = s->nranks;
  tl_status st = TL_OK;
  if (gw->P) st = tl_reduce(gw->pc_mine, gw->pc_all, gw->P, MPI_INT64_T, MPI_SUM, 0, s->c, err);
  if (gw->T) {
    for (int q = 0; s->rank == 0 && q < nranks; q++) {
      size_t a = gw->T * (size_t)q / (size_t)nranks, b = gw->T * (size_t)(q + 1) / (size_t)nranks;
      gw->cnt[q] = (int)((b - a) * (size_t)d->nstats);
      gw->dsp[q] = (int)(a * (size_t)d->nstats);
    }
    corr_keep(&st, tl_gatherv(gw->jmine, (int)((gw->j1 - gw->j0) * (size_t)d->nstats), MPI_DOUBLE, gw->jack,
                              gw->cnt, gw->dsp, 0, s->c, err));
  }
  if (st == TL_OK && s->rank == 0) {
    g->per = calloc((size_t)s->K * 2, sizeof *g->per); /* [K] items, then [K] system-level */
    g->cmp = calloc((size_t)(d->nstats * s->npairs + 1), sizeof *g->cmp);
    if (!g->per || !g->cmp || !g->vals ||
        tl_study_summarize_with(gw->s, g->vals, o->ci, (tl_ci_method)o->method, gw->jack,
                                gw->P ? gw->pc_all : NULL, g->per, g->cmp))
      st = tl_err_set(err, TL_ENOMEM, "summarizing failed (out of memory?)");
    if (st == TL_OK && g->sys) st = group_system(s, g, gw, err);
  }
  st = tl_agree(st, err, s->c);
  if (st != TL_OK && s->rank == 0) fprintf(o->log, "%s: group '%s': %s\n", LABEL(o), g->key, err->msg);
  return st;
}

/* One group, start to end (the steps above); its temporaries freed, rank 0 keeps its results. */
tl_status corr_study_group(study *s, int k, tl_err *err) {
  group *g = &s->d.g[k];
  group_work gw;
  memset(&gw, 0, sizeof gw);
  tl_status st = group_receive(s, g, err);
  if (st == TL_OK) st = group_compute(s, g, &gw, err);
  if (st != TL_OK && s->rank == 0) fprintf(s->o->log, "%s: %s\n", LABEL(s->o), err->msg);
  if (st == TL_OK) st = group_tests(s, g, &gw, err);
  if (st == TL_OK) st = group_summarize(s, g, &gw, err);
  group_free(&gw);
  if (s->has_indices && s->rank) {
    free(s->d.indices);
    s->d.indices = NULL;
  }
  return st;
}
