/* http_run.c - the job's HTTP engines on the ranks (see http_run.h).
 *
 * The collective error contract (comm.h): every collective step ends in tl_agree, so a failure
 * on one rank (an engine that does not open, an allocation, an MPI call) ends the step on every
 * rank with the lowest failing rank's status and message; every MPI call's result is checked
 * (TL_MPI: TL_EMPI naming the call). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "http_run.h"
#include "tally/exit.h"
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

/* Collective (MPI_Comm_split_type). This rank's place on its node: *nrank its rank there,
 * *nsize the ranks there; 0 and 1 when MPI cannot say which ranks share the node. TL_EMPI when
 * an MPI call on the node's communicator failed. */
static tl_status node_place(MPI_Comm comm, int rank, int *nrank, int *nsize, tl_err *err) {
  MPI_Comm node;
  *nrank = 0;
  *nsize = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return TL_OK; /* no shared-memory information: the defaults */
  tl_status st = TL_MPI(err, MPI_Comm_rank(node, nrank));
  if (st == TL_OK) st = TL_MPI(err, MPI_Comm_size(node, nsize));
  tl_status fr = TL_MPI(err, MPI_Comm_free(&node));
  return st != TL_OK ? st : fr;
}

int tl_http_open(const tl_job *job, const char *cache_dir, FILE *dry, const volatile sig_atomic_t *stop,
                 MPI_Comm comm, FILE *log, tl_openai *out[TL_ROLE__N]) {
  for (int k = 0; k < TL_ROLE__N; k++) out[k] = NULL;
  int any = 0;
  for (int k = 0; k < TL_ROLE__N; k++) any |= job->engines[k].type && !strcmp(job->engines[k].type, "openai");
  if (!any) return TL_EXIT_OK;
  tl_err err = {{0}};
  int rank = 0, nrank = 0, nsize = 1;
  tl_status st = TL_MPI(&err, MPI_Comm_rank(comm, &rank));
  if (st == TL_OK) st = node_place(comm, rank, &nrank, &nsize, &err);
  int local = nrank;
  if (!env_int("SLURM_LOCALID", &local)) env_int("OMPI_COMM_WORLD_LOCAL_RANK", &local);
  for (int k = 0; k < TL_ROLE__N && st == TL_OK; k++) {
    if (!job->engines[k].type || strcmp(job->engines[k].type, "openai")) continue;
    tl_openai_opts op = {&job->engines[k].http, (tl_role)k, local, nsize, cache_dir, dry, stop, rank == 0 ? log : NULL};
    tl_err e = {{0}};
    if ((st = tl_openai_open(&op, &out[k], &e)) != TL_OK)
      tl_err_set(&err, st, "rank %d: %s", rank, e.msg);
  }
  for (int k = 0; k < TL_ROLE__N && st == TL_OK; k++) {
    if (!out[k]) continue;
    tl_err e = {{0}};
    if ((st = tl_openai_wait_healthy(out[k], &e)) != TL_OK)
      st = tl_err_set(&err, TL_ENGINE, "rank %d: %s; nothing was run", rank, e.msg);
  }
  /* exit 2 for a job problem (an unset API key variable), else 1 */
  if (st != TL_OK && st != TL_EJOB) st = TL_ENGINE;
  st = tl_agree(st, &err, comm);
  if (st == TL_OK) return TL_EXIT_OK;
  if (rank == 0) fprintf(log, "tally: %s\n", err.msg);
  for (int k = 0; k < TL_ROLE__N; k++) {
    if (out[k]) tl_openai_engine(out[k])->vt->free(tl_openai_engine(out[k]));
    out[k] = NULL;
  }
  return tl_exit_code(st);
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

/* One role's report on the ranks (tl_http_report's steps share it). */
typedef struct {
  tl_openai *const *http; /* [TL_ROLE__N] this rank's engines */
  tl_writer *w;           /* NULL: a dry run */
  MPI_Comm comm;
  int rank, nranks;
  FILE *log;
  int quiet;
} http_rep;

/* Step: the role's counts summed over ranks (tot[NSTAT]; maxw the most requests waiting on any
 * rank); agreed, then *counted = 1. Then the "<role>_http" attribute (w's collective, agreed by
 * the writer) and rank 0's log lines, which are printed even when the attribute failed. */
static tl_status role_counts(const http_rep *h, int k, uint64_t tot[NSTAT], int *counted, tl_err *err) {
  tl_openai_stats s; /* this rank's; zeros where it has no engine of the role */
  memset(&s, 0, sizeof s);
  if (h->http[k]) tl_openai_stats_get(h->http[k], &s);
  uint64_t v[NSTAT], maxw = 0;
  stats_vec(&s, v);
  tl_status st = tl_allreduce(v, tot, NSTAT, MPI_UINT64_T, MPI_SUM, h->comm, err);
  if (st == TL_OK) st = tl_allreduce(&s.max_waiting, &maxw, 1, MPI_UINT64_T, MPI_MAX, h->comm, err);
  if ((st = tl_agree(st, err, h->comm)) != TL_OK) return st;
  *counted = 1;
  tl_buf j;
  tl_buf_init(&j);
  for (int i = 0; i < NSTAT && st == TL_OK; i++)
    st = tl_buf_printf(&j, "%s\"%s\":%llu", i ? "," : "{", STAT_NAMES[i], (unsigned long long)tot[i]);
  if (st == TL_OK) st = tl_buf_printf(&j, ",\"max_waiting\":%llu}", (unsigned long long)maxw);
  if (st != TL_OK) tl_err_set(err, st, "out of memory");
  char name[32];
  snprintf(name, sizeof name, "%s_http", tl_role_name((tl_role)k));
  /* the text is agreed on before the attribute, the writer's collective */
  if ((st = tl_agree(st, err, h->comm)) == TL_OK && h->w) st = h->w->vt->attr_str(h->w, name, j.data, err);
  tl_buf_release(&j);
  const char *role = tl_role_name((tl_role)k);
  if (h->rank == 0 && !h->quiet)
    fprintf(h->log, "tally: %s engine: %llu requests sent, %llu replies, %llu from the cache, %llu retries, %llu gave up "
                    "(429: %llu, 5xx: %llu, timeouts: %llu, connection errors: %llu, malformed: %llu)\n",
            role, (unsigned long long)tot[0], (unsigned long long)tot[1], (unsigned long long)tot[2],
            (unsigned long long)tot[4], (unsigned long long)tot[5], (unsigned long long)tot[6],
            (unsigned long long)tot[7], (unsigned long long)tot[8], (unsigned long long)tot[9],
            (unsigned long long)tot[10]);
  if (h->rank == 0 && tot[11]) /* said under --quiet too: part of the run is lost to it */
    fprintf(h->log, "tally: %s engine: %llu endpoint%s refused the credentials (HTTP 401/403) and got no more "
                    "requests; the item table's error column says which\n",
            role, (unsigned long long)tot[11], tot[11] == 1 ? "" : "s");
  if (h->rank == 0 && !h->quiet && tot[13] && tot[15])
    fprintf(h->log, "tally: %s engine: %llu replies with the server's timings: the server worked %.0f%% of their "
                    "latency, they waited (queued, in transit) %.0f%%\n",
            role, (unsigned long long)tot[13], 100.0 * (double)tot[14] / (double)tot[15],
            100.0 - 100.0 * (double)tot[14] / (double)tot[15]);
  return st;
}

/* Step, when some cache entries could not be written (n of them over all ranks): the lowest
 * rank that had such a failure prints its first one. Agreed. */
static tl_status role_cache_errors(const http_rep *h, int k, uint64_t n, tl_err *err) {
  const char *ce = h->http[k] ? tl_openai_cache_error(h->http[k]) : NULL;
  int first = h->nranks, cand = ce ? h->rank : h->nranks;
  tl_status st = tl_allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, h->comm, err);
  if ((st = tl_agree(st, err, h->comm)) != TL_OK) return st;
  if (h->rank == first)
    fprintf(h->log, "tally: %s engine: %llu cache entr%s could not be written (the replies are in the output and the "
                    "journal); the first: %s\n",
            tl_role_name((tl_role)k), (unsigned long long)n, n == 1 ? "y" : "ies", ce);
  return TL_OK;
}

/* Rank 0: the concurrency table of role k from the gathered changes (all[total], 5 doubles a
 * change: rank, endpoint, t, limit, why); NULL when out of memory. */
static tl_table *history_table(int k, const double *all, long total) {
  char path[64];
  snprintf(path, sizeof path, "/engine/%s/concurrency", tl_role_name((tl_role)k));
  tl_table *t = tl_table_new(path);
  if (t && (tl_table_add_col(t, "rank", TL_COL_I64, "the rank whose engine this is") < 0 ||
            tl_table_add_col(t, "endpoint", TL_COL_I64, "which of the rank's endpoints (0-based, in the order of the job's URLs)") < 0 ||
            tl_table_add_col(t, "t_s", TL_COL_F64, "seconds since the engine opened") < 0 ||
            tl_table_add_col(t, "limit", TL_COL_I64, "requests in flight allowed from then on") < 0 ||
            tl_table_add_col(t, "why", TL_COL_STR, "initial | grown (fast replies) | shrunk (HTTP 429) | slots (capped by the server's /props)") < 0)) {
    tl_table_free(t);
    return NULL;
  }
  for (long i = 0; t && i < total / 5; i++) {
    const double *x = all + 5 * i;
    size_t r = tl_table_add_row(t);
    if (r == (size_t)-1 ||
        tl_table_set_str(t, r, 4, x[4] == 'i' ? "initial" : x[4] == 'g' ? "grown" : x[4] == 'p' ? "slots" : "shrunk")) {
      tl_table_free(t);
      return NULL;
    }
    tl_table_set_i64(t, r, 0, (int64_t)x[0]);
    tl_table_set_i64(t, r, 1, (int64_t)x[1]);
    tl_table_set_f64(t, r, 2, x[2]);
    tl_table_set_i64(t, r, 3, (int64_t)x[3]);
  }
  return t;
}

/* Step: role k's concurrency history gathered to rank 0 (MPI_Gather of the counts, then
 * MPI_Gatherv of 5 doubles a change) and written as /engine/<role>/concurrency. Agreed after
 * the send buffers, after the counts and rank 0's receive buffer, after rank 0's table; the
 * write is the writer's collective. */
static tl_status role_history(const http_rep *h, int k, tl_err *err) {
  const int rank = h->rank, nranks = h->nranks;
  size_t n = 0;
  const tl_openai_change *hist = h->http[k] ? tl_openai_history(h->http[k], &n) : NULL;
  int cnt = (int)(n * 5), *cnts = NULL, *disp = NULL;
  double *mine_v = malloc((n ? n : 1) * 5 * sizeof *mine_v), *all = NULL;
  tl_table *t = NULL;
  long total = 0;
  tl_status st = TL_OK;
  if (rank == 0 && !(cnts = calloc((size_t)nranks, sizeof *cnts))) st = TL_ENOMEM;
  if (!mine_v) st = TL_ENOMEM;
  for (size_t i = 0; mine_v && i < n; i++) {
    double *x = mine_v + 5 * i;
    x[0] = rank;
    x[1] = hist[i].endpoint;
    x[2] = hist[i].t;
    x[3] = hist[i].limit;
    x[4] = hist[i].why;
  }
  if (st != TL_OK) tl_err_set(err, st, "out of memory for the concurrency history");
  if ((st = tl_agree(st, err, h->comm)) != TL_OK) goto done;
  st = TL_MPI(err, MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, h->comm));
  if (st == TL_OK && rank == 0) {
    disp = calloc((size_t)nranks, sizeof *disp);
    for (int q = 0; disp && q < nranks; q++) {
      disp[q] = (int)total;
      total += cnts[q];
    }
    all = malloc((size_t)(total ? total : 1) * sizeof *all);
    if (!disp || !all) st = tl_err_set(err, TL_ENOMEM, "out of memory for the concurrency history");
  }
  if ((st = tl_agree(st, err, h->comm)) != TL_OK) goto done;
  st = TL_MPI(err, MPI_Gatherv(mine_v, cnt, MPI_DOUBLE, all, cnts, disp, MPI_DOUBLE, 0, h->comm));
  if (st == TL_OK && rank == 0 && !(t = history_table(k, all, total)))
    st = tl_err_set(err, TL_ENOMEM, "out of memory for the concurrency history");
  if ((st = tl_agree(st, err, h->comm)) == TL_OK) st = h->w->vt->write_table(h->w, rank == 0 ? t : NULL, err);
done:
  tl_table_free(t);
  free(all);
  free(disp);
  free(cnts);
  free(mine_v);
  return st;
}

tl_status tl_http_report(tl_openai *const http[TL_ROLE__N], tl_writer *w, MPI_Comm comm, FILE *log, int quiet,
                         tl_err *err) {
  http_rep h = {http, w, comm, 0, 1, log, quiet};
  tl_status st = TL_MPI(err, MPI_Comm_rank(comm, &h.rank));
  if (st == TL_OK) st = TL_MPI(err, MPI_Comm_size(comm, &h.nranks));
  if ((st = tl_agree(st, err, comm)) != TL_OK) return st;
  for (int k = 0; k < TL_ROLE__N && !st; k++) {
    int mine = http[k] != NULL, any = 0;
    st = tl_agree(tl_allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm, err), err, comm);
    if (st != TL_OK || !any) continue;
    uint64_t tot[NSTAT] = {0};
    int counted = 0;
    st = role_counts(&h, k, tot, &counted, err);
    if (counted && tot[12]) { /* said even when the attribute failed */
      tl_status cst = role_cache_errors(&h, k, tot[12], err);
      if (st == TL_OK) st = cst;
    }
    if (w && st == TL_OK) st = role_history(&h, k, err);
  }
  return st;
}
