/* studies.c - the job's studies: each run collectively with the engine of `tally correlate`. */
#include "run.h"

/* Collective. Runs one study of the job with the engine of `tally correlate`. */
/* Rank 0, a study over the run's own columns: the benchmark's gathered item columns (left),
 * joined with the study's table when it has one. Returns an exit code. */
static int study_table(const tl_run_opts *o, const tl_job_study *js, tl_tabin *left, tl_tabin *out) {
  if (!js->join) {
    *out = *left;
    memset(left, 0, sizeof *left);
    return TL_EXIT_OK;
  }
  tl_inlog log;
  tl_err err = {{0}};
  if (tl_inlog_init(&log, o->log, o->strict_input)) return TL_EXIT_FAIL;
  tl_tabin right;
  tl_status st = tl_tabin_read(js->join, 0, &log, &right, &err);
  int rc = TL_EXIT_OK;
  if (st) {
    fprintf(o->log, "tally: study '%s': %s\n", js->name, err.msg[0] ? err.msg : tl_strerror(st));
    rc = st == TL_EINPUT && o->strict_input ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
  } else {
    int non = 0;
    char *on[16];
    for (const char *p = js->on; p && *p && non < 16;) {
      const char *e = strchr(p, ',');
      on[non++] = e ? tl_strndup(p, (size_t)(e - p)) : tl_strdup(p);
      p = e ? e + 1 : NULL;
    }
    size_t unmatched = 0;
    st = tl_tabin_join(left, &right, on, non, &log, out, &unmatched, &err);
    for (int i = 0; i < non; i++) free(on[i]);
    if (st) {
      fprintf(o->log, "tally: study '%s': %s\n", js->name, err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EJOB ? TL_EXIT_USAGE : st == TL_EINPUT ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
    } else if (out->nrows == 0) {
      fprintf(o->log, "tally: study '%s': no unit of /items/%s has a row in '%s' (joined on %s)\n", js->name, js->from,
              js->join, js->on);
      tl_tabin_release(out);
      rc = TL_EXIT_USAGE;
    } else if (!o->quiet) { /* every join says what it matched */
      fprintf(o->log, "tally: study '%s': %zu of %zu units of /items/%s matched a row of '%s' (joined on %s)%s\n",
              js->name, left->nrows - unmatched, left->nrows, js->from, js->join, js->on,
              unmatched ? "; the others are left out" : "");
    }
    tl_tabin_release(&right);
  }
  tl_inlog_release(&log);
  return rc;
}

/* 1 when `col` is one of the comma-joined names in list. */
static int in_list(const char *list, const char *col) {
  size_t n = strlen(col);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, col, n) == 0) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

/* The study's cluster and system columns (docs/JOBS.md): a named column, "none", or the
 * defaults of a study over the run's own columns: clusters = the item id ("id") where a
 * question has several rows (one per model), system = "model" unless it is a group_by column
 * (one system per group says nothing); either default is skipped when the table lacks it. */
static void study_ids(const tl_job_study *js, tl_corr_opts *co) {
  if (js->cluster) co->cluster = strcmp(js->cluster, "none") ? js->cluster : NULL;
  else if (js->from) co->cluster = "id", co->cluster_auto = 1;
  if (js->system) co->system = strcmp(js->system, "none") ? js->system : NULL;
  else if (js->from && !in_list(js->group_by, "model")) co->system = "model", co->system_auto = 1;
}

/* Collective. Runs one study of the job with the engine of `tally correlate`. stab: rank 0, the
 * gathered item columns when the study reads the run's own (taken). */
int run_study(const tl_run_opts *o, const tl_job_study *js, MPI_Comm comm, tl_writer *w, tl_tabin *stab) {
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
  co.agreement = js->agreement;
  co.agreement_scale = js->agreement_scale;
  co.strict_input = o->strict_input;
  co.quiet = o->quiet;
  co.outf = o->out;
  co.log = o->log;
  study_ids(js, &co);
  /* the agreement table resamples the study's clusters unless it names its own */
  co.agreement_cluster = js->agreement_cluster ? js->agreement_cluster : co.cluster;
  int rank;
  MPI_Comm_rank(comm, &rank);
  run_test_pause(rank, "study", o->log);
  tl_tabin table;
  memset(&table, 0, sizeof table);
  int rc = TL_EXIT_OK;
  if (js->from && rank == 0) {
    rc = study_table(o, js, stab, &table);
    co.table = &table;
    co.input = table.path;
  }
  rc = run_agree(rc, comm);
  if (rc) {
    tl_tabin_release(&table);
    return rc;
  }
  if (rank == 0) fprintf(o->out, "\nstudy '%s' (%s):\n", js->name, co.input);
  char label[300];
  snprintf(label, sizeof label, "tally: study '%s'", js->name);
  co.label = label;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "/stats/%s", js->name);
  rc = tl_corr_study(&co, comm, w, prefix);
  tl_tabin_release(&table);
  return rc;
}
