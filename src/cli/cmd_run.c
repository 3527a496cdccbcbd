/* cmd_run.c - `tally run JOB.json`: parses the options and hands the job to the driver under
 * MPI (tl_cli_with_mpi). A plain `tally run` is a one-rank run; `mpirun -n N` and
 * `srun --mpi=pmix` launch the same binary. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "driver.h"
#include "tally/import.h"
#include "tally/inlog.h"
#include "tally/str.h"
#include "usage.h"

enum { O_OUT = 1, O_STRICT, O_QUIET, O_RESUME, O_KEEP, O_BREAK, O_CACHE, O_DRY, O_CELL, O_FORCE, O_JSON, O_HELP };
const struct option tl_opts_run[] = {
    {"output", required_argument, NULL, O_OUT},    {"out", required_argument, NULL, O_OUT},
    {"strict-input", no_argument, NULL, O_STRICT}, {"quiet", no_argument, NULL, O_QUIET},
    {"resume", no_argument, NULL, O_RESUME},       {"keep-journal", no_argument, NULL, O_KEEP},
    {"break-lock", no_argument, NULL, O_BREAK},    {"cache", required_argument, NULL, O_CACHE},
    {"dry-run", optional_argument, NULL, O_DRY},   {"cell", required_argument, NULL, O_CELL},
    {"force", no_argument, NULL, O_FORCE},         {"help", no_argument, NULL, O_HELP},
    {"json", no_argument, NULL, O_JSON},           {NULL, 0, NULL, 0}};

/* --json: the driver's text summary is caught in memory (rank 0 writes it to o.out) and, when the
 * run succeeds, replaced by the report of the file it wrote (tally/report.h, JSON schema
 * tally-report/1, the same document `tally report --format json` gives); the file is the one the
 * summary's last line names ("wrote PATH", driver.c). */
typedef struct {
  int on;
  char *text; /* the caught summary (open_memstream) */
  size_t len;
} run_json;
static run_json g_json;

/* Rank 0, after a successful run: the JSON report of the output on stdout. An exit code. */
static int print_json(void) {
  const char *w = NULL;
  for (const char *p = g_json.text; p && (p = strstr(p, "wrote ")); p++)
    if (p == g_json.text || p[-1] == '\n') w = p + 6;
  if (!w) return fprintf(stderr, "tally run: --json: the run named no output file\n"), TL_EXIT_FAIL;
  char *path = tl_strndup(w, strcspn(w, "\n"));
  tl_doc *d = NULL;
  tl_err err = {{0}};
  tl_status st = path ? tl_report_file(path, &d, &err) : TL_ENOMEM;
  int rc = st ? (fprintf(stderr, "tally run: --json: %s\n", err.msg[0] ? err.msg : tl_strerror(st)), TL_EXIT_FAIL)
              : tl_report_print(d, TL_FMT_JSON, NULL, "tally run");
  tl_doc_free(d);
  free(path);
  return rc;
}

/* Removes the import folder and the files in it (made by this process: no subfolders). */
static void rm_tmp(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX + 256];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* Converts the job's foreign inputs into the folder tmp (made by the caller) and writes the
 * rewritten job there as *jobp (when anything was converted; *after its text, *written the job
 * as the user wrote it, compact: NULL when written is NULL). echo: messages (NULL: silent, the
 * ranks other than 0). Returns an exit code. */
static int convert_job(const tl_run_opts *o, const char *tmp, const char *jdir, FILE *echo, char **jobp,
                       char **after, char **written, tl_table **problems) {
  *jobp = *after = NULL;
  if (written) *written = NULL;
  if (problems) *problems = NULL;
  tl_buf text;
  tl_buf_init(&text);
  tl_err err = {{0}};
  cJSON *job = NULL;
  if (tl_file_read(o->job_path, 16u * 1024 * 1024, &text, &err) == TL_OK)
    job = cJSON_ParseWithLength(text.data ? text.data : "", text.len);
  tl_buf_release(&text);
  char *before = job ? cJSON_PrintUnformatted(job) : NULL; /* the loader reports an unreadable job */
  int rc = TL_EXIT_OK;
  tl_inlog in;
  if (before && tl_inlog_init(&in, echo, o->strict_input) == TL_OK) {
    tl_status st = tl_import_job(job, jdir, tmp, &in, echo && !o->quiet ? echo : NULL, &err);
    tl_inlog_flush(&in);
    if (problems && in.table && in.table->nrows) { /* kept for the run's /input_problems */
      *problems = in.table;
      in.table = NULL;
    }
    tl_inlog_release(&in);
    if (st) {
      if (echo) fprintf(echo, "tally run: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EJOB ? TL_EXIT_USAGE : tl_exit_code(st);
    }
  } else if (before) {
    rc = TL_EXIT_FAIL;
  }
  char *a = !rc && before ? cJSON_PrintUnformatted(job) : NULL;
  if (!rc && a && strcmp(before, a) != 0) { /* something was converted: the rewritten job */
    const char *b = strrchr(o->job_path, '/');
    tl_buf p;
    tl_buf_init(&p);
    tl_buf_printf(&p, "%s/%s", tmp, b ? b + 1 : o->job_path);
    *jobp = tl_buf_detach(&p);
    FILE *f = *jobp ? fopen(*jobp, "w") : NULL;
    if (!f || fputs(a, f) < 0 || fclose(f) != 0) {
      fprintf(o->log, "tally run: cannot write the job with its imported inputs in %s\n", tmp);
      rc = TL_EXIT_FAIL;
    }
    *after = a;
    a = NULL;
    if (written) {
      *written = before;
      before = NULL;
    }
  }
  free(a);
  free(before);
  cJSON_Delete(job);
  return rc;
}

/* Sends a string (NULL: none) from rank 0 to every rank. */
static void bcast_str(char **s, int rank, MPI_Comm comm) {
  long n = rank == 0 && *s ? (long)strlen(*s) + 1 : 0;
  MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
  if (rank != 0) *s = n ? malloc((size_t)n) : NULL;
  if (n && *s) MPI_Bcast(*s, (int)n, MPI_CHAR, 0, comm);
}

/* The job's inputs given in another harness's format ({"format"?, "path"}: tally/import.h),
 * converted before the job is loaded, into a private folder: rank 0 makes it (mkdtemp under
 * $TMPDIR) and converts; the ranks must all load the same job text (the output and the journal
 * name it), so on every other node the first rank makes the same folder name (mkdir 0700) and
 * converts the same way, and checks it wrote the same job (with a TMPDIR that the nodes share,
 * rank 0's files are found there and used). The job is then run with job_dir = the job's own
 * folder. *own: this rank made a folder and removes it after the run. */
static int import_inputs(tl_run_opts *o, MPI_Comm comm, char **tmp, char **jobp, char **jdir, int *own,
                         char **written, tl_table **problems) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  *tmp = *jobp = *jdir = *written = NULL;
  *own = 0;
  const char *slash = strrchr(o->job_path, '/');
  *jdir = slash ? tl_strndup(o->job_path, (size_t)(slash - o->job_path + (slash == o->job_path))) : tl_strdup(".");
  char *after = NULL;
  int rc = *jdir ? TL_EXIT_OK : TL_EXIT_FAIL;
  if (rank == 0 && !rc) {
    const char *td = getenv("TMPDIR");
    tl_buf t;
    tl_buf_init(&t);
    tl_buf_printf(&t, "%s/tally-import-XXXXXX", td && *td ? td : "/tmp");
    *tmp = tl_buf_detach(&t);
    if (!*tmp || !mkdtemp(*tmp)) {
      fprintf(o->log, "tally run: cannot make a folder for the imported inputs (%s): %s\n", *tmp ? *tmp : "",
              strerror(errno));
      rc = TL_EXIT_FAIL;
    } else {
      *own = 1;
      rc = convert_job(o, *tmp, *jdir, o->log, jobp, &after, written, problems);
    }
    if (!*jobp && *own) { /* nothing converted (or failed): no folder kept */
      rm_tmp(*tmp);
      *own = 0;
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  bcast_str(&after, rank, comm);
  bcast_str(jobp, rank, comm);
  bcast_str(tmp, rank, comm);
  bcast_str(written, rank, comm);
  if (rc || !after) {
    free(after);
    return rc;
  }
  /* the other nodes: the same folder, the same files */
  MPI_Comm node;
  int lrank = 0, bad = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_free(&node);
  }
  MPI_Barrier(comm);
  if (rank != 0 && lrank == 0) {
    tl_buf have;
    tl_buf_init(&have);
    tl_err e = {{0}};
    if (tl_file_read(*jobp, 0, &have, &e) == TL_OK) { /* a TMPDIR the nodes share: rank 0's */
      bad = !have.data || strcmp(have.data, after) != 0;
    } else if (mkdir(*tmp, 0700) != 0) {
      bad = 1;
    } else {
      *own = 1;
      char *jp2 = NULL, *a2 = NULL;
      bad = convert_job(o, *tmp, *jdir, NULL, &jp2, &a2, NULL, NULL) != TL_EXIT_OK || !a2 || strcmp(a2, after) != 0;
      free(jp2);
      free(a2);
    }
    tl_buf_release(&have);
    if (bad) fprintf(o->log, "tally run: rank %d: cannot make the imported inputs in %s as rank 0 did\n", rank, *tmp);
  }
  free(after);
  MPI_Allreduce(&bad, &rc, 1, MPI_INT, MPI_MAX, comm);
  return rc ? TL_EXIT_FAIL : TL_EXIT_OK;
}

static int run_mpi(void *ctx, MPI_Comm comm) {
  tl_run_opts o = *(const tl_run_opts *)ctx;
  char *tmp = NULL, *jobp = NULL, *jdir = NULL, *written = NULL;
  tl_table *problems = NULL; /* rank 0: what the conversion reported */
  int own = 0;
  int rc = import_inputs(&o, comm, &tmp, &jobp, &jdir, &own, &written, &problems);
  if (rc == TL_EXIT_OK) {
    if (jobp) {
      o.job_path = jobp;
      o.job_dir = jdir;
      o.job_as_written = written; /* the journal names this job, not the folder's copy */
      o.import_problems = problems;
    }
    rc = tl_run_job(&o, comm);
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (g_json.on) {
    fclose(o.out); /* the caught summary: g_json.text (only rank 0 writes one) */
    if (rank == 0 && rc == TL_EXIT_OK) rc = print_json();
    else if (rank == 0 && g_json.text) fputs(g_json.text, stdout); /* a failed run's lines, as without --json */
    free(g_json.text);
  }
  if (jobp) MPI_Barrier(comm); /* every rank done with the files before they go */
  if (own) rm_tmp(tmp);
  free(tmp);
  free(jobp);
  free(jdir);
  free(written);
  tl_table_free(problems);
  return rc;
}

int tl_cmd_run(int argc, char **argv) {
  tl_run_opts o;
  memset(&o, 0, sizeof o);
  o.out = stdout;
  o.log = stderr;
  o.cell = -1;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_run, NULL)) != -1) {
    switch (c) {
    case O_OUT: o.out_override = optarg; break;
    case O_STRICT: o.strict_input = 1; break;
    case O_QUIET: o.quiet = 1; break;
    case O_RESUME: o.resume = 1; break;
    case O_KEEP: o.keep_journal = 1; break;
    case O_BREAK: o.break_lock = 1; break;
    case O_FORCE: o.force = 1; break;
    case O_JSON: g_json.on = 1; break;
    case O_CACHE: o.cache_dir = optarg; break;
    case O_CELL: {
      uint64_t k;
      if (tl_opt_u64("tally run", "--cell", optarg, 0, 1u << 30, &k)) return TL_EXIT_USAGE;
      o.cell = (long)k;
      break;
    }
    case O_DRY:
      o.dry_run = 1;
      o.dry_path = optarg;
      break;
    case 'h':
    case O_HELP: return tl_usage_help("tally run", tl_usage_run);
    default: return tl_usage_bad_option("tally run", c, argv, tl_usage_run);
    }
  }
  if (optind != argc - 1) {
    if (optind >= argc) fprintf(stderr, "tally run: the job file is missing\n");
    else fprintf(stderr, "tally run: one job file, please; unexpected argument '%s'\n", argv[optind + 1]);
    return tl_usage_error(tl_usage_run);
  }
  o.job_path = argv[optind];
  if (o.cache_dir && !o.cache_dir[0]) {
    fprintf(stderr, "tally run: --cache needs a folder\n");
    return TL_EXIT_USAGE;
  }
  if (o.dry_run && o.dry_path && !o.dry_path[0]) {
    fprintf(stderr, "tally run: --dry-run=FILE needs a file path\n");
    return TL_EXIT_USAGE;
  }
  if (o.dry_run && o.resume) {
    fprintf(stderr, "tally run: --dry-run writes no output and --resume continues one: give one of them\n");
    return TL_EXIT_USAGE;
  }
  if (o.out_override && !o.out_override[0]) {
    fprintf(stderr, "tally run: --output needs a file path\n");
    return TL_EXIT_USAGE;
  }
  if (g_json.on && o.dry_run) {
    fprintf(stderr, "tally run: --dry-run writes no output to report: --json needs a run\n");
    return TL_EXIT_USAGE;
  }
  if (g_json.on && !(o.out = open_memstream(&g_json.text, &g_json.len))) {
    fprintf(stderr, "tally run: out of memory\n");
    return TL_EXIT_FAIL;
  }
  return tl_cli_with_mpi(&argc, &argv, "tally run", run_mpi, &o);
}
