/* cmd_slurm.c - `tally slurm JOB.json`: prints (or submits) a ready sbatch script for one
 * distributed, preemption-safe run of the job, so nobody writes one by hand.
 *
 * The script: srun --mpi=pmix over the allocation's tasks; --requeue, and --signal=B:USR1@120
 * forwarded to the ranks, so tally flushes its journals and exits with code 4 before the time
 * limit; the requeued run resumes from the journals (--resume when OUTPUT.journal/ exists: a
 * first run scores the job, replacing an earlier output as `tally run` does), at most
 * --max-requeue times (SLURM_RESTART_COUNT); the log beside the job's output,
 * named from the job name and id (tally-NAME-ID.out). The job file is loaded first: a job tally would refuse is never
 * submitted.
 *
 * With --array, a sweep (every benchmark lists the same models and seeds): an array job with one
 * cell (model, seed) per task (`tally run --cell K --keep-journal`, each preemption-safe as
 * above, writing OUTPUT.cells/cell-K.h5), throttled by --array-throttle, and a merge job that
 * depends on it (afterok, or afterany with --merge-after any) and runs `tally merge` of every
 * cell into the job's output. When cells are missing (afterany after some tasks failed) the
 * merge job merges those that finished into OUTPUT's stem + ".partial.h5", names the missing
 * cells, and exits 1: rerun them, then the merge job (a merge is idempotent).
 *
 * With --serve KIND (vllm, llamacpp, or test: tally-testserver), for a job whose model engine is
 * openai on this node's ports ("url": "http://127.0.0.1:{port}/v1"): slurm/serve.sh starts one
 * server per GPU on port_base + i, waits until each is healthy, runs the ranks (srun --overlap),
 * and stops the servers however the run ends. The model served is --serve-model, else the job's
 * one model (with --array: the cell's model). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "journal.h"
#include "outsafe.h"
#include "tally/job.h"
#include "tally/str.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally slurm JOB.json [options]\n"
          "  --ntasks N          MPI ranks (default 4)\n"
          "  --time T            time limit, SLURM's format (default 02:00:00)\n"
          "  --partition P       partition (default: the cluster's)\n"
          "  --gpus-per-task G   GPUs per rank (default none)\n"
          "  --name NAME         job name (default: the job's \"name\")\n"
          "  --max-requeue N     requeues after a time-limit stop before giving up (default 3)\n"
          "  --array             a sweep: one array task per cell (model x seed) and a merge job after it\n"
          "  --array-throttle N  at most N array tasks at once (default: no limit)\n"
          "  --merge-after ok|any  the merge job's dependency on the array (default ok: every cell\n"
          "                      finished; any: merge what finished, name what did not, exit 1)\n"
          "  --serve KIND        start one inference server per GPU with slurm/serve.sh first (vllm,\n"
          "                      llamacpp, or test); the job's model engine is openai at\n"
          "                      http://127.0.0.1:{port}/v1\n"
          "  --serve-model M     the model to serve (default: the job's one model; with --array, each cell's)\n"
          "  --serve-gpus N      servers per node (default: serve.sh finds the node's GPUs)\n"
          "  --serve-args \"...\"  more arguments for every server\n"
          "  --serve-wait S      seconds to wait for the servers' health (default 900)\n"
          "  --serve-script P    serve.sh to use (default: this build's source tree's)\n"
          "  --force             the job's output exists (a finished run's): the script replaces it (tally run\n"
          "                      --force); without it that is refused, as tally run refuses it\n"
          "  --submit            submit it with sbatch (prints the job id) instead of printing it\n"
          "  --wait              with --submit: sbatch --wait (returns when the job ends, with its exit code)\n"
          "exit codes: 0 ok, 1 failure (sbatch failed), 2 usage or an invalid job\n");
}

/* Single-quotes s for the shell. */
static void shq(tl_buf *b, const char *s) {
  tl_buf_puts(b, "'");
  for (; *s; s++) {
    if (*s == '\'') tl_buf_puts(b, "'\\''");
    else tl_buf_append(b, s, 1);
  }
  tl_buf_puts(b, "'");
}

/* 1 when s holds only characters safe in an #SBATCH line. */
static int sbatch_safe(const char *s) {
  if (!*s) return 0; /* an empty --time, --partition or --name: sbatch would read the next word */
  for (; *s; s++)
    if (!(*s == '-' || *s == '_' || *s == '.' || *s == ':' || *s == ',' || (*s >= '0' && *s <= '9') ||
          (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
      return 0;
  return 1;
}

int tl_cmd_slurm(int argc, char **argv) {
  static const char *const CMD = "tally slurm";
  const char *timel = "02:00:00", *part = NULL, *name = NULL;
  uint64_t ntasks = 4, gpus = 0, maxrq = 3;
  int submit = 0, wait = 0, array = 0, after_any = 0, force = 0;
  uint64_t throttle = 0, serve_gpus = 0, serve_wait = 900;
  int serve = -1;
  const char *serve_model = NULL, *serve_args = NULL, *serve_script = TALLY_SOURCE_DIR "/slurm/serve.sh";
  static const char *const KINDS[] = {"vllm", "llamacpp", "test"};
  enum { O_NT = 1, O_TIME, O_PART, O_GPU, O_NAME, O_MAXRQ, O_SUBMIT, O_WAIT, O_ARRAY, O_THROTTLE, O_AFTER, O_SERVE,
         O_SMODEL, O_SGPUS, O_SARGS, O_SWAIT, O_SSCRIPT, O_FORCE, O_HELP };
  static const struct option LONG[] = {{"ntasks", required_argument, NULL, O_NT},
                                       {"time", required_argument, NULL, O_TIME},
                                       {"partition", required_argument, NULL, O_PART},
                                       {"gpus-per-task", required_argument, NULL, O_GPU},
                                       {"name", required_argument, NULL, O_NAME},
                                       {"max-requeue", required_argument, NULL, O_MAXRQ},
                                       {"submit", no_argument, NULL, O_SUBMIT},
                                       {"force", no_argument, NULL, O_FORCE},
                                       {"wait", no_argument, NULL, O_WAIT},
                                       {"array", no_argument, NULL, O_ARRAY},
                                       {"array-throttle", required_argument, NULL, O_THROTTLE},
                                       {"merge-after", required_argument, NULL, O_AFTER},
                                       {"serve", required_argument, NULL, O_SERVE},
                                       {"serve-model", required_argument, NULL, O_SMODEL},
                                       {"serve-gpus", required_argument, NULL, O_SGPUS},
                                       {"serve-args", required_argument, NULL, O_SARGS},
                                       {"serve-wait", required_argument, NULL, O_SWAIT},
                                       {"serve-script", required_argument, NULL, O_SSCRIPT},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":", LONG, NULL)) != -1) {
    switch (ch) {
    case O_NT:
      if (tl_opt_u64(CMD, "--ntasks", optarg, 1, 100000, &ntasks)) return 2;
      break;
    case O_GPU:
      if (tl_opt_u64(CMD, "--gpus-per-task", optarg, 0, 1024, &gpus)) return 2;
      break;
    case O_MAXRQ:
      if (tl_opt_u64(CMD, "--max-requeue", optarg, 0, 100000, &maxrq)) return 2;
      break;
    case O_TIME: timel = optarg; break;
    case O_PART: part = optarg; break;
    case O_NAME: name = optarg; break;
    case O_SUBMIT: submit = 1; break;
    case O_FORCE: force = 1; break;
    case O_WAIT: wait = 1; break;
    case O_ARRAY: array = 1; break;
    case O_SERVE:
      if ((serve = tl_opt_choice(CMD, "--serve", optarg, KINDS, 3)) < 0) return 2;
      break;
    case O_SMODEL: serve_model = optarg; break;
    case O_SARGS: serve_args = optarg; break;
    case O_SSCRIPT: serve_script = optarg; break;
    case O_SGPUS:
      if (tl_opt_u64(CMD, "--serve-gpus", optarg, 1, 1024, &serve_gpus)) return 2;
      break;
    case O_SWAIT:
      if (tl_opt_u64(CMD, "--serve-wait", optarg, 1, 86400, &serve_wait)) return 2;
      break;
    case O_THROTTLE:
      if (tl_opt_u64(CMD, "--array-throttle", optarg, 1, 100000, &throttle)) return 2;
      break;
    case O_AFTER: {
      static const char *const AFTER[] = {"ok", "any"};
      int k = tl_opt_choice(CMD, "--merge-after", optarg, AFTER, 2);
      if (k < 0) return 2;
      after_any = k == 1;
      break;
    }
    case O_HELP: usage(stdout); return 0;
    default:
      tl_opt_unknown(CMD, ch, optopt, argv[optind - 1]);
      usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    usage(stderr);
    return 2;
  }
  if (wait && !submit) return fprintf(stderr, "%s: --wait goes with --submit\n", CMD), 2;
  if ((throttle || after_any) && !array)
    return fprintf(stderr, "%s: --array-throttle and --merge-after go with --array\n", CMD), 2;
  if (serve < 0 && (serve_model || serve_gpus || serve_args || serve_wait != 900))
    return fprintf(stderr, "%s: --serve-model, --serve-gpus, --serve-args and --serve-wait go with --serve\n", CMD), 2;
  if (serve_model && !serve_model[0]) return fprintf(stderr, "%s: --serve-model needs a model\n", CMD), 2;
  if (!sbatch_safe(timel) || (part && !sbatch_safe(part)) || (name && !sbatch_safe(name))) {
    fprintf(stderr, "%s: --time, --partition and --name take letters, digits and - _ . : , only (and not nothing)\n", CMD);
    return 2;
  }
  /* the job must load: a typo is found here, not on the cluster an hour later */
  const char *jpath = argv[optind];
  tl_job job;
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  tl_status st = tl_job_load(jpath, &job, &probs, &nprob);
  if (st || nprob) {
    fprintf(stderr, "%s: invalid job '%s'%s\n%s", CMD, jpath, st && !nprob ? " (cannot be read)" : "",
            probs.data ? probs.data : "");
    tl_buf_release(&probs);
    if (!st) tl_job_release(&job);
    return 2;
  }
  tl_buf_release(&probs);
  char jabs[PATH_MAX], self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (!realpath(jpath, jabs) || sl <= 0) {
    fprintf(stderr, "%s: cannot resolve '%s' or this program's path\n", CMD, jpath);
    tl_job_release(&job);
    return 1;
  }
  self[sl] = 0;
  const char *jn = name ? name : job.name && sbatch_safe(job.name) ? job.name : "tally";
  /* a sweep: its cells, and where their outputs go (OUTPUT.cells/, beside the output) */
  long ncell = 0;
  char out_abs[PATH_MAX + 64] = "", cells[PATH_MAX + 96] = "";
  if (array && !(ncell = tl_job_sweep_cells(&job))) {
    fprintf(stderr, "%s: --array needs a sweep: every benchmark of '%s' lists the same \"models\" and \"seeds\" "
                    "(each (model, seed) is one array task)\n", CMD, jpath);
    tl_job_release(&job);
    return 2;
  }
  const tl_job_engine *me = &job.engines[TL_ROLE_MODEL];
  if (serve >= 0) { /* the servers listen on this node's ports: the engine must ask them there */
    const char *u = me->type && !strcmp(me->type, "openai") && me->http.nurls == 1 ? me->http.urls[0] : NULL;
    if (!u || !strstr(u, "{port}") || (!strstr(u, "//127.0.0.1:") && !strstr(u, "//localhost:"))) {
      fprintf(stderr, "%s: --serve starts a server per GPU of the node on port_base + i: the job's model engine must "
                      "be openai with \"url\": \"http://127.0.0.1:{port}/v1\"%s%s\n", CMD, u ? " (it is " : "",
              u ? u : "");
      tl_job_release(&job);
      return 2;
    }
    const tl_job_bench *b0 = job.n_benches ? &job.benches[0] : NULL;
    if (serve != 2 && !me->http.model && !array && !(b0 && b0->n_models == 1)) {
      fprintf(stderr, "%s: --serve %s serves one model, and the job asks for %d: run it as a sweep with --array (each "
                      "cell serves its own model), or name the served model in the engine's \"model\"\n", CMD,
              KINDS[serve], b0 ? b0->n_models : 0);
      tl_job_release(&job);
      return 2;
    }
    if (access(serve_script, X_OK) != 0 && access(serve_script, R_OK) != 0) {
      fprintf(stderr, "%s: cannot read the serve script '%s' (give --serve-script)\n", CMD, serve_script);
      tl_job_release(&job);
      return 2;
    }
  }
  { /* the output, absolute: the script resumes when its journal exists */
    tl_err e = {{0}};
    char *oa = tl_out_check_place(job.output, &e) ? NULL : tl_path_absolute(job.output);
    if (!oa) {
      fprintf(stderr, "%s: %s\n", CMD, e.msg[0] ? e.msg : "out of memory");
      tl_job_release(&job);
      return 2;
    }
    snprintf(out_abs, sizeof out_abs, "%s", oa);
    snprintf(cells, sizeof cells, "%s.cells", out_abs);
    free(oa);
    /* a finished output (no journal of an interrupted run beside it) is replaced only with
     * --force, as by tally run; the sweep's merge job replaces its output (it reruns) */
    char *jd = array ? NULL : tl_journal_dir(out_abs);
    struct stat sb;
    int finished = jd && stat(out_abs, &sb) == 0 && S_ISREG(sb.st_mode) && stat(jd, &sb) != 0;
    free(jd);
    if (finished && !force) {
      fprintf(stderr, "%s: output '%s' exists (a finished output): pass --force to replace it (the script then runs "
                      "tally run --force), or choose another output\n", CMD, out_abs);
      tl_job_release(&job);
      return 2;
    }
  }
  /* The log goes beside the output, whether or not the output exists yet (realpath of the
   * output itself failed before the first run and put the log beside the job file). */
  char dir[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s", out_abs);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;

  tl_buf s;
  tl_buf_init(&s);
  tl_buf_printf(&s, "#!/bin/bash\n# generated by `tally slurm` (tally %s) for %s\n", TALLY_VERSION, jabs);
  if (array)
    tl_buf_printf(&s, "# The sweep's %ld cells (models x seeds), one per array task, each a distributed run of one\n"
                      "# (model, seed) into %s/cell-K.h5; the merge job joins them.\n", ncell, cells);
  tl_buf_puts(&s, "# One distributed run: srun --mpi=pmix over the tasks. Preemption-safe: on the time-limit\n"
                  "# notice (USR1, 120 s before) tally flushes its journals and exits 4, and the job requeues itself\n"
                  "# to resume from them (at most MAX_REQUEUE times); a requeue after a node failure resumes too.\n");
  tl_buf_printf(&s, "#SBATCH --job-name=%s\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", jn, (unsigned long long)ntasks, timel);
  if (part) tl_buf_printf(&s, "#SBATCH --partition=%s\n", part);
  if (gpus) tl_buf_printf(&s, "#SBATCH --gpus-per-task=%llu\n", (unsigned long long)gpus);
  if (serve >= 0) tl_buf_puts(&s, "# serve.sh starts the servers on the batch node: one node\n#SBATCH --nodes=1\n");
  /* append: a requeued job writes its log again, and the earlier attempt's lines are evidence */
  tl_buf_puts(&s, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n#SBATCH --open-mode=append\n");
  if (array) {
    tl_buf_printf(&s, "#SBATCH --array=0-%ld", ncell - 1);
    if (throttle) tl_buf_printf(&s, "%%%llu", (unsigned long long)throttle);
    tl_buf_printf(&s, "\n#SBATCH --output=%s/tally-%%x-%%A_%%a.out\n", dir);
  } else {
    tl_buf_printf(&s, "#SBATCH --output=%s/tally-%%x-%%j.out\n", dir);
  }
  tl_buf_puts(&s, "set -euo pipefail\nTALLY=");
  shq(&s, self);
  tl_buf_puts(&s, "\nJOB=");
  shq(&s, jabs);
  tl_buf_printf(&s, "\nMAX_REQUEUE=%llu\n", (unsigned long long)maxrq);
  if (array) { /* the cell of this task, its output in OUTPUT.cells/ */
    tl_buf_puts(&s, "CELLS=");
    shq(&s, cells);
    tl_buf_puts(&s, "\nmkdir -p \"$CELLS\"\nOUT=\"$CELLS/cell-$SLURM_ARRAY_TASK_ID.h5\"\n");
  } else {
    tl_buf_puts(&s, "OUT=");
    shq(&s, out_abs);
    tl_buf_puts(&s, "\n");
  }
  /* a first run scores the job; a run that finds the journal of an interrupted attempt (a
   * requeue, a resubmission) resumes it. A finished output is replaced only when this command
   * was given --force (checked here, before anything is submitted) */
  tl_buf_puts(&s, "RESUME=()\n[ -d \"$OUT.journal\" ] && RESUME=(--resume)\n");
  /* The time-limit notice (USR1 to this shell) is forwarded to the ranks and noted: only then
   * does the script requeue the job itself. A stop by SLURM (scontrol requeue, preemption,
   * scancel) is SIGTERM to every process: tally exits 4 with its journals flushed, and SLURM
   * requeues the job (or not) itself; a second requeue from here would race it. `wait` returns
   * early when a trapped signal arrives, so it is repeated until srun has ended. */
  tl_buf_puts(&s, "notice=0\n"
                  "trap 'notice=1; scancel --signal=USR1 \"$SLURM_JOB_ID\"' USR1\n"
                  "trap 'true' TERM # SLURM signals the steps too: this shell waits for srun's code\n");
  if (serve >= 0) { /* the servers first: serve.sh runs the ranks once every server is healthy */
    char sabs[PATH_MAX];
    tl_buf_puts(&s, "SERVE=");
    shq(&s, realpath(serve_script, sabs) ? sabs : serve_script);
    tl_buf_puts(&s, "\n");
    if (serve == 2) tl_buf_puts(&s, "export TALLY_TESTSERVER=\"$(dirname \"$TALLY\")/tally-testserver\"\n");
    /* the name the requests carry (the engine's "model", else the cfg's model: the cell's with
     * --array) is the served name; --serve-model the model loaded under it (default the same) */
    const tl_job_bench *b0 = &job.benches[0];
    if (serve != 2) {
      if (me->http.model) {
        tl_buf_puts(&s, "SERVE_NAME=");
        shq(&s, me->http.model);
        tl_buf_puts(&s, "\n");
      } else if (array) { /* cell K serves model K / n_seeds */
        tl_buf_puts(&s, "MODELS=(");
        for (int i = 0; i < b0->n_models; i++) {
          if (i) tl_buf_puts(&s, " ");
          shq(&s, b0->models[i]);
        }
        tl_buf_printf(&s, ")\nSERVE_NAME=\"${MODELS[$((SLURM_ARRAY_TASK_ID / %d))]}\"\n", b0->n_seeds);
      } else {
        tl_buf_puts(&s, "SERVE_NAME=");
        shq(&s, b0->models[0]);
        tl_buf_puts(&s, "\n");
      }
      if (serve_model) {
        tl_buf_puts(&s, "SERVE_MODEL=");
        shq(&s, serve_model);
        tl_buf_puts(&s, "\n");
      } else {
        tl_buf_puts(&s, "SERVE_MODEL=\"$SERVE_NAME\"\n");
      }
    }
    tl_buf_printf(&s, "\"$SERVE\" --kind %s%s --port-base %d --wait %llu", KINDS[serve],
                  serve != 2 ? " --model \"$SERVE_MODEL\" --name \"$SERVE_NAME\"" : "", me->http.port_base,
                  (unsigned long long)serve_wait);
    if (serve_gpus) tl_buf_printf(&s, " --gpus %llu", (unsigned long long)serve_gpus);
    if (serve_args) {
      tl_buf_puts(&s, " --server-args ");
      shq(&s, serve_args);
    }
    tl_buf_puts(&s, " -- \\\n  ");
  }
  const char *srun = serve >= 0 ? "srun --mpi=pmix --overlap" : "srun --mpi=pmix";
  if (array)
    tl_buf_printf(&s, "%s \"$TALLY\" run \"$JOB\" --cell \"$SLURM_ARRAY_TASK_ID\" --out \"$OUT\" --keep-journal "
                      "${RESUME[@]+\"${RESUME[@]}\"} &\n", srun);
  else
    tl_buf_printf(&s, "%s \"$TALLY\" run \"$JOB\" --out \"$OUT\"%s ${RESUME[@]+\"${RESUME[@]}\"} &\n", srun,
                  force ? " --force" : "");
  tl_buf_puts(&s, "pid=$!\n"
                  "rc=0\n"
                  "while :; do\n"
                  "  rc=0\n"
                  "  wait \"$pid\" || rc=$?\n"
                  "  kill -0 \"$pid\" 2> /dev/null || break # srun has ended: rc is its code\n"
                  "done\n"
                  "if [ \"$rc\" = 4 ] && [ \"$notice\" = 1 ]; then\n"
                  "  if [ \"${SLURM_RESTART_COUNT:-0}\" -lt \"$MAX_REQUEUE\" ]; then\n"
                  "    echo \"tally: stopped before the time limit; requeueing to resume from the journals\"\n"
                  "    scontrol requeue \"$SLURM_JOB_ID\"\n"
                  "  else\n"
                  "    echo \"tally: stopped before the time limit after $MAX_REQUEUE requeues; resubmit to resume\" >&2\n"
                  "  fi\n"
                  "fi\n"
                  "exit \"$rc\"\n");
  /* the merge job: every cell's output into the job's output */
  tl_buf m;
  tl_buf_init(&m);
  if (array) {
    tl_buf_printf(&m, "#!/bin/bash\n# generated by `tally slurm --array` (tally %s) for %s: merges the sweep's %ld cells\n"
                      "# into the job's output once the array job ends (dependency after%s). Cells that did not\n"
                      "# finish are named, the others merged into OUT's stem + .partial.h5 (marked partial), and the job exits 1:\n"
                      "# rerun those cells, then this job (tally merge is idempotent).\n",
                  TALLY_VERSION, jabs, ncell, after_any ? "any" : "ok");
    tl_buf_printf(&m, "#SBATCH --job-name=%s-merge\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", jn,
                  (unsigned long long)ntasks, timel);
    if (part) tl_buf_printf(&m, "#SBATCH --partition=%s\n", part);
    tl_buf_printf(&m, "#SBATCH --output=%s/tally-%%x-%%j.out\n", dir);
    tl_buf_puts(&m, "set -euo pipefail\nTALLY=");
    shq(&m, self);
    tl_buf_puts(&m, "\nCELLS=");
    shq(&m, cells);
    tl_buf_puts(&m, "\nOUT=");
    shq(&m, out_abs);
    tl_buf_printf(&m, "\nN=%ld\n", ncell);
    tl_buf_puts(&m, "files=(); missing=()\n"
                    "for k in $(seq 0 $((N - 1))); do\n"
                    "  if [ -f \"$CELLS/cell-$k.h5\" ]; then files+=(\"$CELLS/cell-$k.h5\"); else missing+=(\"$k\"); fi\n"
                    "done\n"
                    "if [ ${#missing[@]} -eq 0 ]; then\n"
                    "  exec srun --mpi=pmix \"$TALLY\" merge \"${files[@]}\" -o \"$OUT\" --force\n"
                    "fi\n"
                    "echo \"tally: cells ${missing[*]} of $N did not finish: rerun them (sbatch --array=LIST), then this job\" >&2\n"
                    "if [ ${#files[@]} -gt 0 ]; then\n"
                    "  srun --mpi=pmix \"$TALLY\" merge \"${files[@]}\" -o \"${OUT%.h5}.partial.h5\" --partial --force || true\n"
                    "fi\n"
                    "exit 1\n");
  }
  tl_job_release(&job);
  int rc = 0;
  if (!submit) {
    if (fputs(s.data, stdout) < 0 ||
        (array && (printf("\n# ---- the merge job: sbatch --dependency=after%s:ARRAY_JOB_ID ----\n", after_any ? "any" : "ok") < 0 ||
                   fputs(m.data, stdout) < 0)) ||
        fflush(stdout) != 0)
      rc = 1;
  } else if (array) {
    /* both scripts are kept in the cells' folder (what was submitted), then submitted */
    char ap[PATH_MAX + 128], mp[PATH_MAX + 128];
    snprintf(ap, sizeof ap, "%s/array.sbatch", cells);
    snprintf(mp, sizeof mp, "%s/merge.sbatch", cells);
    FILE *fa = NULL, *fm = NULL;
    if ((mkdir(cells, 0777) != 0 && errno != EEXIST) || !(fa = fopen(ap, "w")) || fputs(s.data, fa) < 0 ||
        fclose(fa) != 0 || !(fm = fopen(mp, "w")) || fputs(m.data, fm) < 0 || fclose(fm) != 0) {
      fprintf(stderr, "%s: cannot write the scripts in '%s': %s\n", CMD, cells, strerror(errno));
      rc = 1;
    }
    char id[64] = "";
    if (!rc) {
      tl_buf c;
      tl_buf_init(&c);
      tl_buf_puts(&c, "sbatch --parsable ");
      shq(&c, ap);
      FILE *p = popen(c.data, "r");
      if (!p || !fgets(id, sizeof id, p) || pclose(p) != 0 || !(id[strcspn(id, ";\n")] = 0, id[0])) {
        fprintf(stderr, "%s: sbatch of the array job failed\n", CMD);
        rc = 1;
      }
      tl_buf_release(&c);
    }
    if (!rc) {
      printf("array job %s (%ld cells)\n", id, ncell);
      fflush(stdout);
      tl_buf c;
      tl_buf_init(&c);
      tl_buf_printf(&c, "sbatch --parsable%s --dependency=after%s:%s ", wait ? " --wait" : "", after_any ? "any" : "ok", id);
      shq(&c, mp);
      FILE *p = popen(c.data, "r");
      char mid[64] = "";
      int ok = p && fgets(mid, sizeof mid, p);
      int ps = p ? pclose(p) : -1;
      if (!ok || ps != 0) {
        fprintf(stderr, "%s: sbatch of the merge job %s (status %d)\n", CMD, wait && ok ? "or the merge failed" : "failed", ps);
        rc = 1;
      }
      mid[strcspn(mid, ";\n")] = 0;
      if (ok) printf("merge job %s (after%s:%s) -> %s\n", mid, after_any ? "any" : "ok", id, out_abs);
    }
  } else {
    FILE *p = popen(wait ? "sbatch --parsable --wait" : "sbatch --parsable", "w");
    if (!p) {
      fprintf(stderr, "%s: cannot run sbatch: %s\n", CMD, strerror(errno));
      rc = 1;
    } else {
      fputs(s.data, p);
      int ps = pclose(p);
      if (ps != 0) {
        fprintf(stderr, "%s: sbatch %s (status %d)\n", CMD, wait ? "or the job failed" : "failed", ps);
        rc = 1;
      }
    }
  }
  tl_buf_release(&s);
  tl_buf_release(&m);
  return rc;
}
