/* dry.c - `--dry-run`: every request the job would send, written as JSONL; nothing sent. */
#include "run.h"

/* `--dry-run`: rank 0 builds every request the job would send - to models, and to judges where
 * the answers are known (replay files, the cache) - and writes them as JSONL to the dry-run file
 * (written as FILE.part, then renamed), sending none; no output, no journal. The other ranks
 * only wait. Returns an exit code (the same on every rank). */
int run_dry(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int rc = TL_EXIT_OK;
  if (rank != 0) return run_agree(rc, comm);
  tl_buf path;
  tl_buf_init(&path);
  if (o->dry_path && *o->dry_path) tl_buf_puts(&path, o->dry_path);
  else tl_buf_printf(&path, "%s.requests.jsonl", output);
  /* never over an input of the job, and only where it can be written: "-" is standard output
   * (the summary lines then go to the log), a device or FIFO is written in place, a file through
   * a temporary file renamed at the end (tl_out_stream) */
  tl_path_role *in = NULL;
  int k = run_job_inputs(o, job, &in);
  tl_err perr = {{0}};
  if (k < 0 || tl_out_check_inputs(path.data, "the dry-run file", in, k, &perr) ||
      tl_out_check_stream_place(path.data, &perr)) {
    fprintf(o->log, "tally: %s\n", k < 0 ? "out of memory" : perr.msg);
    rc = TL_EXIT_USAGE;
  }
  free(in);
  FILE *f = NULL, *sum = tl_path_is_std(path.data) ? o->log : o->out;
  tl_out_stream os;
  memset(&os, 0, sizeof os);
  if (!rc && tl_out_stream_open(&os, path.data, &perr) != TL_OK) {
    fprintf(o->log, "tally: the dry-run file: %s\n", perr.msg);
    rc = TL_EXIT_FAIL;
  }
  f = os.f;
  tl_inlog log;
  bench_run r;
  memset(&r, 0, sizeof r);
  tl_err err = {{0}};
  int log_ok = !rc && tl_inlog_init(&log, o->log, o->strict_input) == TL_OK;
  if (!rc && !log_ok) rc = TL_EXIT_FAIL;
  tl_status st = TL_OK;
  if (!rc) {
    st = run_bench_setup(o, &r, job, 0, 1, MPI_COMM_SELF, &log, &err);
    if (!st && !(r.pipe = tl_pipe_new(r.rbs, r.nb, run_on_submit, run_on_unit_done, &r))) st = tl_err_set(&err, TL_ENOMEM, "out of memory");
    if (st) {
      fprintf(o->log, "tally: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EINPUT ? TL_EXIT_BAD_INPUT : st == TL_EJOB ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  if (!rc && (rc = tl_http_open(job, o->cache_dir, f, NULL, MPI_COMM_SELF, o->log, r.en.http)) == 0)
    for (int q = 0; q < TL_ROLE__N; q++)
      if (r.en.http[q]) r.en.eng[q] = tl_openai_engine(r.en.http[q]);
  r.dry = 1;
  /* the units in key order, 1024 at a time: each one's stages as far as known replies go */
  for (uint64_t g0 = 0; !rc && g0 < r.U && !g_stop; g0 += 1024) {
    uint64_t g1 = g0 + 1024 < r.U ? g0 + 1024 : r.U;
    for (uint64_t g = g0; g < g1 && !st; g++) st = tl_pipe_start(r.pipe, g, NULL, &err);
    while (!st && tl_pipe_in_flight(r.pipe)) {
      int nrep;
      st = run_poll_engines(&r, 50, 256, &nrep, &err);
    }
    if (st) {
      fprintf(o->log, "tally: %s\n", err.msg);
      rc = TL_EXIT_FAIL;
    }
  }
  if (!rc && g_stop) rc = TL_EXIT_INTERRUPTED;
  uint64_t calls[TL_MAX_STAGES] = {0}, hits = 0;
  for (int s = 0; r.pipe && s < TL_MAX_STAGES; s++) calls[s] = tl_pipe_calls(r.pipe, s);
  uint64_t judge_calls = 0; /* every judge stage (sample) */
  for (int s = 1; s < TL_MAX_STAGES; s++) judge_calls += calls[s];
  for (int q = 0; q < TL_ROLE__N; q++)
    if (r.en.http[q]) {
      tl_openai_stats hs;
      tl_openai_stats_get(r.en.http[q], &hs);
      hits += hs.cache_hits;
    }
  if (f && tl_out_stream_close(&os, !rc, &perr) != TL_OK && !rc) {
    fprintf(o->log, "tally: the dry-run file: %s\n", perr.msg);
    rc = TL_EXIT_FAIL;
  }
  uint64_t unbuilt = 0; /* requests that could not be built (an unreadable image, ...): "error" lines */
  for (int q = 0; q < TL_ROLE__N; q++)
    if (r.en.http[q]) {
      tl_openai_stats hs;
      tl_openai_stats_get(r.en.http[q], &hs);
      unbuilt += hs.failed;
    }
  if (!rc)
    fprintf(sum, "dry run: %llu units; %llu requests to the model, %llu to the judge (%llu of them answered "
                    "from the cache, sent by neither); nothing was sent\n",
            (unsigned long long)r.U, (unsigned long long)calls[0], (unsigned long long)judge_calls, (unsigned long long)hits);
  if (!rc && unbuilt)
    fprintf(sum, "dry run: %llu requests could not be built: their lines carry \"error\" (why: e.g. an unreadable "
                    "image); a real run leaves those units engine_error\n", (unsigned long long)unbuilt);
  if (!rc) fprintf(sum, "wrote %s\n", tl_path_is_std(path.data) ? "the requests to standard output" : path.data);
  run_bench_run_release(&r);
  if (log_ok) tl_inlog_release(&log);
  tl_buf_release(&path);
  return run_agree(rc, comm);
}
