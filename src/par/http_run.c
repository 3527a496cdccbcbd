/* http_run.c - the job's HTTP engines on the ranks (see http_run.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "http_run.h"
#include "tally/str.h"
#include "tally/table.h"

static int env_int(const char *name, int *out) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  long x = strtol(v, &end, 10);
  if (*end || x < 0 || x > 1 << 20) return 0;
  *out = (int)x;
  return 1;
}

int tl_http_open(const tl_job *job, const char *cache_dir, FILE *dry, const volatile sig_atomic_t *stop,
                 MPI_Comm comm, FILE *log, tl_openai *out[TL_ROLE__N]) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  for (int k = 0; k < TL_ROLE__N; k++) out[k] = NULL;
  int any = 0;
  for (int k = 0; k < TL_ROLE__N; k++) any |= job->engines[k].type && !strcmp(job->engines[k].type, "openai");
  if (!any) return 0;
  /* where this rank sits on its node */
  MPI_Comm node;
  int nrank = 0, nsize = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
  }
  int local = nrank;
  if (!env_int("SLURM_LOCALID", &local)) env_int("OMPI_COMM_WORLD_LOCAL_RANK", &local);
  int rc = 0;
  tl_err err = {{0}};
  for (int k = 0; k < TL_ROLE__N && !rc; k++) {
    if (!job->engines[k].type || strcmp(job->engines[k].type, "openai")) continue;
    tl_openai_opts op = {&job->engines[k].http, (tl_role)k, local, nsize, cache_dir, dry, stop, rank == 0 ? log : NULL};
    tl_status st = tl_openai_open(&op, &out[k], &err);
    if (st) {
      fprintf(log, "tally: rank %d: %s\n", rank, err.msg);
      rc = st == TL_EJOB ? 2 : 1;
    }
  }
  for (int k = 0; k < TL_ROLE__N && !rc; k++) {
    if (!out[k]) continue;
    tl_status st = tl_openai_wait_healthy(out[k], &err);
    if (st) {
      fprintf(log, "tally: rank %d: %s; nothing was run\n", rank, err.msg);
      rc = 1;
    }
  }
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm);
  if (all)
    for (int k = 0; k < TL_ROLE__N; k++) {
      if (out[k]) tl_openai_engine(out[k])->vt->free(tl_openai_engine(out[k]));
      out[k] = NULL;
    }
  return all;
}

enum { NSTAT = 16 };
static void stats_vec(const tl_openai_stats *st, uint64_t v[NSTAT]) {
  const tl_openai_stats s = *st;
  uint64_t x[NSTAT] = {s.sent, s.replies, s.cache_hits, s.cache_writes, s.retries, s.failed,
                       s.http_429, s.http_5xx, s.timeouts, s.conn_errors, s.malformed, s.dead_endpoints,
                       s.cache_write_errors, s.server_timed, s.server_us, s.latency_timed_us};
  memcpy(v, x, sizeof x);
}
static const char *const STAT_NAMES[NSTAT] = {"sent", "replies", "cache_hits", "cache_writes", "retries", "failed",
                                              "http_429", "http_5xx", "timeouts", "conn_errors", "malformed",
                                              "dead_endpoints", "cache_write_errors", "server_timed", "server_us",
                                              "latency_timed_us"};

tl_status tl_http_report(tl_openai *const http[TL_ROLE__N], tl_writer *w, MPI_Comm comm, FILE *log, int quiet,
                         tl_err *err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  tl_status st = TL_OK;
  for (int k = 0; k < TL_ROLE__N && !st; k++) {
    int mine = http[k] != NULL, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (!any) continue;
    tl_openai_stats s; /* this rank's; zeros where it has no engine of the role */
    memset(&s, 0, sizeof s);
    if (http[k]) tl_openai_stats_get(http[k], &s);
    uint64_t v[NSTAT], tot[NSTAT], maxw = 0;
    stats_vec(&s, v);
    MPI_Allreduce(v, tot, NSTAT, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&s.max_waiting, &maxw, 1, MPI_UINT64_T, MPI_MAX, comm);
    tl_buf j;
    tl_buf_init(&j);
    for (int i = 0; i < NSTAT; i++) tl_buf_printf(&j, "%s\"%s\":%llu", i ? "," : "{", STAT_NAMES[i], (unsigned long long)tot[i]);
    tl_buf_printf(&j, ",\"max_waiting\":%llu}", (unsigned long long)maxw);
    char name[32];
    snprintf(name, sizeof name, "%s_http", tl_role_name((tl_role)k));
    if (w) st = w->vt->attr_str(w, name, j.data, err);
    tl_buf_release(&j);
    if (rank == 0 && !quiet)
      fprintf(log, "tally: %s engine: %llu requests sent, %llu replies, %llu from the cache, %llu retries, %llu gave up "
                   "(429: %llu, 5xx: %llu, timeouts: %llu, connection errors: %llu, malformed: %llu)\n",
              tl_role_name((tl_role)k), (unsigned long long)tot[0], (unsigned long long)tot[1], (unsigned long long)tot[2],
              (unsigned long long)tot[4], (unsigned long long)tot[5], (unsigned long long)tot[6],
              (unsigned long long)tot[7], (unsigned long long)tot[8], (unsigned long long)tot[9],
              (unsigned long long)tot[10]);
    if (rank == 0 && tot[11]) /* said under --quiet too: part of the run is lost to it */
      fprintf(log, "tally: %s engine: %llu endpoint%s refused the credentials (HTTP 401/403) and got no more "
                   "requests; the item table's error column says which\n",
              tl_role_name((tl_role)k), (unsigned long long)tot[11], tot[11] == 1 ? "" : "s");
    if (rank == 0 && !quiet && tot[13] && tot[15])
      fprintf(log, "tally: %s engine: %llu replies with the server's timings: the server worked %.0f%% of their "
                   "latency, they waited (queued, in transit) %.0f%%\n",
              tl_role_name((tl_role)k), (unsigned long long)tot[13], 100.0 * (double)tot[14] / (double)tot[15],
              100.0 - 100.0 * (double)tot[14] / (double)tot[15]);
    if (tot[12]) { /* the first failure of the lowest rank that had one */
      const char *ce = http[k] ? tl_openai_cache_error(http[k]) : NULL;
      int have = ce != NULL, first = nranks;
      int cand = have ? rank : nranks;
      MPI_Allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, comm);
      if (rank == first)
        fprintf(log, "tally: %s engine: %llu cache entr%s could not be written (the replies are in the output and the "
                     "journal); the first: %s\n",
                tl_role_name((tl_role)k), (unsigned long long)tot[12], tot[12] == 1 ? "y" : "ies", ce);
    }
    if (!w || st) continue;
    /* the concurrency history, gathered to rank 0: 5 doubles a change (rank, endpoint, t, limit, why) */
    size_t n = 0;
    const tl_openai_change *h = http[k] ? tl_openai_history(http[k], &n) : NULL;
    int cnt = (int)(n * 5), *cnts = rank == 0 ? calloc((size_t)nranks, sizeof *cnts) : NULL;
    double *mine_v = malloc((n ? n : 1) * 5 * sizeof *mine_v);
    for (size_t i = 0; mine_v && i < n; i++) {
      double *x = mine_v + 5 * i;
      x[0] = rank;
      x[1] = h[i].endpoint;
      x[2] = h[i].t;
      x[3] = h[i].limit;
      x[4] = h[i].why;
    }
    if (!mine_v) cnt = 0;
    MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, comm);
    int *disp = NULL;
    double *all = NULL;
    long total = 0;
    if (rank == 0 && cnts) {
      disp = calloc((size_t)nranks, sizeof *disp);
      for (int q = 0; disp && q < nranks; q++) {
        disp[q] = (int)total;
        total += cnts[q];
      }
      all = malloc((size_t)(total ? total : 1) * sizeof *all);
    }
    MPI_Gatherv(mine_v, cnt, MPI_DOUBLE, all, cnts, disp, MPI_DOUBLE, 0, comm);
    tl_table *t = NULL;
    if (rank == 0 && all) {
      char path[64];
      snprintf(path, sizeof path, "/engine/%s/concurrency", tl_role_name((tl_role)k));
      t = tl_table_new(path);
      if (t && (tl_table_add_col(t, "rank", TL_COL_I64, "the rank whose engine this is") < 0 ||
                tl_table_add_col(t, "endpoint", TL_COL_I64, "which of the rank's endpoints (0-based, in the order of the job's URLs)") < 0 ||
                tl_table_add_col(t, "t_s", TL_COL_F64, "seconds since the engine opened") < 0 ||
                tl_table_add_col(t, "limit", TL_COL_I64, "requests in flight allowed from then on") < 0 ||
                tl_table_add_col(t, "why", TL_COL_STR, "initial | grown (fast replies) | shrunk (HTTP 429) | slots (capped by the server's /props)") < 0)) {
        tl_table_free(t);
        t = NULL;
      }
      for (long i = 0; t && i < total / 5; i++) {
        const double *x = all + 5 * i;
        size_t r = tl_table_add_row(t);
        if (r == (size_t)-1 ||
            tl_table_set_str(t, r, 4, x[4] == 'i' ? "initial" : x[4] == 'g' ? "grown" : x[4] == 'p' ? "slots" : "shrunk")) {
          tl_table_free(t);
          t = NULL;
          break;
        }
        tl_table_set_i64(t, r, 0, (int64_t)x[0]);
        tl_table_set_i64(t, r, 1, (int64_t)x[1]);
        tl_table_set_f64(t, r, 2, x[2]);
        tl_table_set_i64(t, r, 3, (int64_t)x[3]);
      }
    }
    int ok = rank != 0 || t, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
    if (allok) st = w->vt->write_table(w, rank == 0 ? t : NULL, err);
    else st = tl_err_set(err, TL_ENOMEM, "out of memory for the concurrency history");
    tl_table_free(t);
    free(all);
    free(disp);
    free(cnts);
    free(mine_v);
  }
  return st;
}
