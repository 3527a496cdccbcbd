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
 * one model (with --array: one array task per model, whose seeds' cells run one after the other
 * on the task's server). serve.sh picks free ports for the job and tells tally (TALLY_PORT_BASE).
 *
 * Safe by construction: a path with a control character is refused (a newline would become a
 * line of the script); every #SBATCH value is written as sbatch reads it (in double quotes, \ and
 * " escaped, % as %% in the log's file pattern); every shell value in single quotes. The site's
 * options (--account, --qos, --mem, --cpus-per-task, --constraint, --sbatch-arg), a --prologue
 * (its lines before the run) and the launcher (--mpi pmix|pmi2|none) go into every script. With
 * --array the two scripts are files beside the output, OUTPUT.array.sbatch and
 * OUTPUT.merge.sbatch, printed as such or submitted with the dependency. */
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
#include "usage.h"

/* Single-quotes s for the shell. */
static void shq(tl_buf *b, const char *s) {
  tl_buf_puts(b, "'");
  for (; *s; s++) {
    if (*s == '\'') tl_buf_puts(b, "'\\''");
    else tl_buf_append(b, s, 1);
  }
  tl_buf_puts(b, "'");
}

/* 1 when s holds a control character (a newline would end the line it is written into: in a
 * comment or an #SBATCH line it becomes a command of the script). */
static int has_ctl(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
  return 0;
}

/* Appends s as one #SBATCH value, as sbatch reads it (its _get_argument: a backslash escapes the
 * next character, quotes group, an unquoted # starts a comment): in double quotes, with \ and "
 * escaped. pattern: s is a file name pattern (--output), where sbatch expands %: a literal % is
 * written %%. s holds no control character (checked before). */
static void sbq(tl_buf *b, const char *s, int pattern) {
  tl_buf_puts(b, "\"");
  for (; *s; s++) {
    if (*s == '\\' || *s == '"') tl_buf_append(b, "\\", 1);
    if (pattern && *s == '%') tl_buf_append(b, "%", 1);
    tl_buf_append(b, s, 1);
  }
  tl_buf_puts(b, "\"");
}

/* 1 when s holds only characters safe in an #SBATCH line. */
static int sbatch_safe(const char *s);

/* dir/NAME as an #SBATCH --output value: dir's % written %%, NAME's patterns (%x, %j) kept. */
static void log_pattern(tl_buf *b, const char *dir, const char *name) {
  tl_buf_puts(b, "\"");
  for (const char *c = dir; *c; c++) {
    if (*c == '\\' || *c == '"') tl_buf_append(b, "\\", 1);
    if (*c == '%') tl_buf_append(b, "%", 1);
    tl_buf_append(b, c, 1);
  }
  tl_buf_printf(b, "/%s\"\n", name);
}

/* The site's #SBATCH lines: partition, account, qos, mem, constraint, cpus-per-task, then each
 * --sbatch-arg (its value quoted). */
static void site_options(tl_buf *b, const char *part, const char *account, const char *qos, const char *mem,
                         const char *constraint, uint64_t cpus, const char *const *sbargs, int nsbargs) {
  const char *vals[] = {part, account, qos, mem, constraint};
  const char *opts[] = {"partition", "account", "qos", "mem", "constraint"};
  for (int i = 0; i < 5; i++)
    if (vals[i]) {
      tl_buf_printf(b, "#SBATCH --%s=", opts[i]);
      sbq(b, vals[i], 0);
      tl_buf_puts(b, "\n");
    }
  if (cpus) tl_buf_printf(b, "#SBATCH --cpus-per-task=%llu\n", (unsigned long long)cpus);
  for (int i = 0; i < nsbargs; i++) {
    const char *eq = strchr(sbargs[i], '=');
    if (!eq) {
      tl_buf_printf(b, "#SBATCH %s\n", sbargs[i]);
      continue;
    }
    tl_buf_printf(b, "#SBATCH %.*s=", (int)(eq - sbargs[i]), sbargs[i]);
    sbq(b, eq + 1, !strncmp(sbargs[i], "--output=", 9) || !strncmp(sbargs[i], "--error=", 8));
    tl_buf_puts(b, "\n");
  }
}

static int sbatch_safe(const char *s) {
  if (!*s) return 0; /* an empty --time, --partition or --name: sbatch would read the next word */
  for (; *s; s++)
    if (!(*s == '-' || *s == '_' || *s == '.' || *s == ':' || *s == ',' || (*s >= '0' && *s <= '9') ||
          (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
      return 0;
  return 1;
}

enum { O_NT = 1, O_TIME, O_PART, O_GPU, O_NAME, O_MAXRQ, O_SUBMIT, O_WAIT, O_ARRAY, O_THROTTLE, O_AFTER, O_SERVE,
       O_SMODEL, O_SGPUS, O_SARGS, O_SWAIT, O_SSCRIPT, O_FORCE, O_ACCOUNT, O_QOS, O_MEM, O_CPUS, O_CONSTRAINT,
       O_SBARG, O_PROLOGUE, O_MPI, O_HELP };
const struct option tl_opts_slurm[] = {{"ntasks", required_argument, NULL, O_NT},
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
                                     {"account", required_argument, NULL, O_ACCOUNT},
                                     {"qos", required_argument, NULL, O_QOS},
                                     {"mem", required_argument, NULL, O_MEM},
                                     {"cpus-per-task", required_argument, NULL, O_CPUS},
                                     {"constraint", required_argument, NULL, O_CONSTRAINT},
                                     {"sbatch-arg", required_argument, NULL, O_SBARG},
                                     {"prologue", required_argument, NULL, O_PROLOGUE},
                                     {"mpi", required_argument, NULL, O_MPI},
                                     {"help", no_argument, NULL, O_HELP},
                                     {NULL, 0, NULL, 0}};

int tl_cmd_slurm(int argc, char **argv) {
  static const char *const CMD = "tally slurm";
  const char *timel = "02:00:00", *part = NULL, *name = NULL;
  const char *account = NULL, *qos = NULL, *mem = NULL, *constraint = NULL, *prologue = NULL;
  const char *sbargs[32];
  int nsbargs = 0, mpi = 0, serve_script_given = 0; /* mpi: 0 pmix, 1 pmi2, 2 none (mpirun) */
  static const char *const MPIS[] = {"pmix", "pmi2", "none"};
  uint64_t ntasks = 4, gpus = 0, maxrq = 3, cpus = 0;
  int submit = 0, wait = 0, array = 0, after_any = 0, force = 0;
  uint64_t throttle = 0, serve_gpus = 0, serve_wait = 900;
  int serve = -1;
  const char *serve_model = NULL, *serve_args = NULL, *serve_script = TALLY_SOURCE_DIR "/slurm/serve.sh";
  static const char *const KINDS[] = {"vllm", "llamacpp", "test"};
  tl_opt_begin();
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", tl_opts_slurm, NULL)) != -1) {
    switch (ch) {
    case O_NT:
      if (tl_opt_u64(CMD, "--ntasks", optarg, 1, 100000, &ntasks)) return TL_EXIT_USAGE;
      break;
    case O_GPU:
      if (tl_opt_u64(CMD, "--gpus-per-task", optarg, 0, 1024, &gpus)) return TL_EXIT_USAGE;
      break;
    case O_MAXRQ:
      if (tl_opt_u64(CMD, "--max-requeue", optarg, 0, 100000, &maxrq)) return TL_EXIT_USAGE;
      break;
    case O_TIME: timel = optarg; break;
    case O_PART: part = optarg; break;
    case O_NAME: name = optarg; break;
    case O_SUBMIT: submit = 1; break;
    case O_ACCOUNT: account = optarg; break;
    case O_QOS: qos = optarg; break;
    case O_MEM: mem = optarg; break;
    case O_CONSTRAINT: constraint = optarg; break;
    case O_PROLOGUE: prologue = optarg; break;
    case O_CPUS:
      if (tl_opt_u64(CMD, "--cpus-per-task", optarg, 1, 100000, &cpus)) return TL_EXIT_USAGE;
      break;
    case O_MPI:
      if ((mpi = tl_opt_choice(CMD, "--mpi", optarg, MPIS, 3)) < 0) return TL_EXIT_USAGE;
      break;
    case O_SBARG:
      if (nsbargs == 32) return fprintf(stderr, "%s: at most 32 --sbatch-arg\n", CMD), TL_EXIT_USAGE;
      sbargs[nsbargs++] = optarg;
      break;
    case O_FORCE: force = 1; break;
    case O_WAIT: wait = 1; break;
    case O_ARRAY: array = 1; break;
    case O_SERVE:
      if ((serve = tl_opt_choice(CMD, "--serve", optarg, KINDS, 3)) < 0) return TL_EXIT_USAGE;
      break;
    case O_SMODEL: serve_model = optarg; break;
    case O_SARGS: serve_args = optarg; break;
    case O_SSCRIPT: serve_script = optarg, serve_script_given = 1; break;
    case O_SGPUS:
      if (tl_opt_u64(CMD, "--serve-gpus", optarg, 1, 1024, &serve_gpus)) return TL_EXIT_USAGE;
      break;
    case O_SWAIT:
      if (tl_opt_u64(CMD, "--serve-wait", optarg, 1, 86400, &serve_wait)) return TL_EXIT_USAGE;
      break;
    case O_THROTTLE:
      if (tl_opt_u64(CMD, "--array-throttle", optarg, 1, 100000, &throttle)) return TL_EXIT_USAGE;
      break;
    case O_AFTER: {
      static const char *const AFTER[] = {"ok", "any"};
      int k = tl_opt_choice(CMD, "--merge-after", optarg, AFTER, 2);
      if (k < 0) return TL_EXIT_USAGE;
      after_any = k == 1;
      break;
    }
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_slurm);
    default: return tl_usage_bad_option(CMD, ch, argv, tl_usage_slurm);
    }
  }
  if (optind != argc - 1) return tl_usage_error(tl_usage_slurm);
  if (wait && !submit) return fprintf(stderr, "%s: --wait goes with --submit\n", CMD), TL_EXIT_USAGE;
  static char installed[PATH_MAX + 64]; /* an installed tally's serve.sh: PREFIX/share/tally/slurm */
  if (!serve_script_given) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = 0;
      char *sl = strrchr(exe, '/');
      if (sl) *sl = 0;
      snprintf(installed, sizeof installed, "%s/../share/tally/slurm/serve.sh", exe);
      if (access(installed, R_OK) == 0) serve_script = installed;
    }
  }
  if ((throttle || after_any) && !array)
    return fprintf(stderr, "%s: --array-throttle and --merge-after go with --array\n", CMD), TL_EXIT_USAGE;
  if (serve < 0 && (serve_model || serve_gpus || serve_args || serve_wait != 900))
    return fprintf(stderr, "%s: --serve-model, --serve-gpus, --serve-args and --serve-wait go with --serve\n", CMD), TL_EXIT_USAGE;
  if (serve_model && !serve_model[0]) return fprintf(stderr, "%s: --serve-model needs a model\n", CMD), TL_EXIT_USAGE;
  if (!sbatch_safe(timel)) {
    fprintf(stderr, "%s: --time takes SLURM's time format (digits, - and :), not '%s'\n", CMD, timel);
    return TL_EXIT_USAGE;
  }
  { /* every other value is quoted as sbatch reads it: any text but a control character */
    const char *vals[] = {part, name, account, qos, mem, constraint};
    const char *opts[] = {"--partition", "--name", "--account", "--qos", "--mem", "--constraint"};
    for (int i = 0; i < 6; i++)
      if (vals[i] && (!vals[i][0] || has_ctl(vals[i])))
        return fprintf(stderr, "%s: %s takes a value without control characters (and not nothing)\n", CMD, opts[i]), TL_EXIT_USAGE;
    for (int i = 0; i < nsbargs; i++) {
      const char *a = sbargs[i], *eq = strchr(a, '=');
      size_t nl = eq ? (size_t)(eq - a) : strlen(a);
      int ok = a[0] == '-' && nl >= 2 && !has_ctl(a);
      for (size_t k = 0; ok && k < nl; k++)
        ok = a[k] == '-' || a[k] == '_' || (a[k] >= 'a' && a[k] <= 'z') || (a[k] >= 'A' && a[k] <= 'Z') ||
             (a[k] >= '0' && a[k] <= '9');
      if (!ok)
        return fprintf(stderr, "%s: --sbatch-arg takes one sbatch option, --opt=value or --flag (the value without "
                               "control characters), not '%s'\n", CMD, a), TL_EXIT_USAGE;
    }
  }
  static char pro[1 << 16]; /* the prologue's text, inserted before the run (static: no path frees it) */
  if (prologue) {
    FILE *pf = fopen(prologue, "rb");
    size_t k = pf ? fread(pro, 1, sizeof pro, pf) : 0;
    int bad = !pf || ferror(pf) || k == sizeof pro || memchr(pro, 0, k);
    int e = errno;
    if (pf) fclose(pf);
    if (bad) {
      fprintf(stderr, "%s: --prologue '%s': %s\n", CMD, prologue,
              !pf ? strerror(e) : k == sizeof pro ? "64 KiB or more" : "not a text file (a NUL byte, or unreadable)");
      return TL_EXIT_USAGE;
    }
    pro[k] = 0;
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
    return TL_EXIT_USAGE;
  }
  tl_buf_release(&probs);
  char jabs[PATH_MAX], self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (!realpath(jpath, jabs) || sl <= 0) {
    fprintf(stderr, "%s: cannot resolve '%s' or this program's path\n", CMD, jpath);
    tl_job_release(&job);
    return TL_EXIT_FAIL;
  }
  self[sl] = 0;
  const char *jn = name ? name : job.name && job.name[0] && !has_ctl(job.name) ? job.name : "tally";
  /* a sweep: its cells, and where their outputs go (OUTPUT.cells/, beside the output) */
  long ncell = 0;
  char out_abs[PATH_MAX + 64] = "", cells[PATH_MAX + 96] = "";
  if (array && !(ncell = tl_job_sweep_cells(&job))) {
    fprintf(stderr, "%s: --array needs a sweep: every benchmark of '%s' lists the same \"models\" and \"seeds\" "
                    "(each (model, seed) is one array task)\n", CMD, jpath);
    tl_job_release(&job);
    return TL_EXIT_USAGE;
  }
  const tl_job_engine *me = &job.engines[TL_ROLE_MODEL];
  if (serve >= 0) { /* the servers listen on this node's ports: the engine must ask them there */
    const char *u = me->type && !strcmp(me->type, "openai") && me->http.nurls == 1 ? me->http.urls[0] : NULL;
    if (!u || !strstr(u, "{port}") || (!strstr(u, "//127.0.0.1:") && !strstr(u, "//localhost:"))) {
      fprintf(stderr, "%s: --serve starts a server per GPU of the node on port_base + i: the job's model engine must "
                      "be openai with \"url\": \"http://127.0.0.1:{port}/v1\"%s%s\n", CMD, u ? " (it is " : "",
              u ? u : "");
      tl_job_release(&job);
      return TL_EXIT_USAGE;
    }
    const tl_job_bench *b0 = job.n_benches ? &job.benches[0] : NULL;
    if (serve != 2 && !me->http.model && !array && !(b0 && b0->n_models == 1)) {
      fprintf(stderr, "%s: --serve %s serves one model, and the job asks for %d: run it as a sweep with --array (each "
                      "cell serves its own model), or name the served model in the engine's \"model\"\n", CMD,
              KINDS[serve], b0 ? b0->n_models : 0);
      tl_job_release(&job);
      return TL_EXIT_USAGE;
    }
    if (access(serve_script, X_OK) != 0 && access(serve_script, R_OK) != 0) {
      fprintf(stderr, "%s: cannot read the serve script '%s' (give --serve-script)\n", CMD, serve_script);
      tl_job_release(&job);
      return TL_EXIT_USAGE;
    }
  }
  { /* the output, absolute: the script resumes when its journal exists */
    tl_err e = {{0}};
    char *oa = tl_out_check_place(job.output, &e) ? NULL : tl_path_absolute(job.output);
    if (!oa) {
      fprintf(stderr, "%s: %s\n", CMD, e.msg[0] ? e.msg : "out of memory");
      tl_job_release(&job);
      return TL_EXIT_USAGE;
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
      return TL_EXIT_USAGE;
    }
  }
  { /* a path with a control character would break the script's lines: refused, whatever quoting */
    const char *paths[] = {jabs, self, out_abs, serve >= 0 ? serve_script : "", prologue ? prologue : ""};
    for (int i = 0; i < 5; i++)
      if (has_ctl(paths[i])) {
        fprintf(stderr, "%s: the path '", CMD);
        for (const char *c = paths[i]; *c; c++) fprintf(stderr, (unsigned char)*c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c", (unsigned char)*c);
        fprintf(stderr, "' holds a control character (a newline would become a line of the script): rename it\n");
        tl_job_release(&job);
        return TL_EXIT_USAGE;
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
  tl_buf_puts(&s, "#SBATCH --job-name=");
  sbq(&s, jn, 0);
  tl_buf_printf(&s, "\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", (unsigned long long)ntasks, timel);
  site_options(&s, part, account, qos, mem, constraint, cpus, sbargs, nsbargs);
  if (gpus) tl_buf_printf(&s, "#SBATCH --gpus-per-task=%llu\n", (unsigned long long)gpus);
  if (serve >= 0) tl_buf_puts(&s, "# serve.sh starts the servers on the batch node: one node\n#SBATCH --nodes=1\n");
  /* append: a requeued job writes its log again, and the earlier attempt's lines are evidence */
  tl_buf_puts(&s, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n#SBATCH --open-mode=append\n");
  /* with --serve, an array task per model: its seeds' cells run one after the other on the
   * task's server, which loads the model once */
  const int per_model = array && serve >= 0 && job.n_benches > 0;
  const int nseeds = job.n_benches > 0 ? job.benches[0].n_seeds : 1;
  if (array) {
    tl_buf_printf(&s, "#SBATCH --array=0-%ld", per_model ? ncell / nseeds - 1 : ncell - 1);
    if (throttle) tl_buf_printf(&s, "%%%llu", (unsigned long long)throttle);
    tl_buf_puts(&s, "\n#SBATCH --output=");
    log_pattern(&s, dir, "tally-%x-%A_%a.out");
  } else {
    tl_buf_puts(&s, "#SBATCH --output=");
    log_pattern(&s, dir, "tally-%x-%j.out");
  }
  if (prologue) tl_buf_printf(&s, "# ---- the prologue (--prologue %s) ----\n%s%s# ---- end of the prologue ----\n",
                              prologue, pro, pro[0] && pro[strlen(pro) - 1] != '\n' ? "\n" : "");
  tl_buf_puts(&s, "set -euo pipefail\nTALLY=");
  shq(&s, self);
  tl_buf_puts(&s, "\nJOB=");
  shq(&s, jabs);
  tl_buf_printf(&s, "\nMAX_REQUEUE=%llu\n", (unsigned long long)maxrq);
  if (per_model) { /* the model of this task: its cells, seed after seed, in OUTPUT.cells/ */
    tl_buf_puts(&s, "CELLS=");
    shq(&s, cells);
    tl_buf_printf(&s, "\nmkdir -p \"$CELLS\"\nSEEDS=%d\nOUT=\"$CELLS/cell-$((SLURM_ARRAY_TASK_ID * SEEDS)).h5\"\n", nseeds);
  } else if (array) { /* the cell of this task, its output in OUTPUT.cells/ */
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
        tl_buf_puts(&s, ")\nSERVE_NAME=\"${MODELS[$SLURM_ARRAY_TASK_ID]}\"\n");
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
    /* serve.sh picks free ports for this job (--port-base auto) and exports TALLY_PORT_BASE,
     * which the engine's {port} follows */
    tl_buf_printf(&s, "\"$SERVE\" --kind %s%s --port-base auto --wait %llu", KINDS[serve],
                  serve != 2 ? " --model \"$SERVE_MODEL\" --name \"$SERVE_NAME\"" : "", (unsigned long long)serve_wait);
    if (serve_gpus) tl_buf_printf(&s, " --gpus %llu", (unsigned long long)serve_gpus);
    if (serve_args) {
      tl_buf_puts(&s, " --server-args ");
      shq(&s, serve_args);
    }
    tl_buf_puts(&s, " -- \\\n  ");
  }
  char srun[64];
  if (mpi == 2) snprintf(srun, sizeof srun, "mpirun"); /* the allocation's tasks, from SLURM's environment */
  else snprintf(srun, sizeof srun, "srun --mpi=%s%s", MPIS[mpi], serve >= 0 ? " --overlap" : "");
  if (per_model) {
    /* the function serve.sh runs once the server is up; a finished cell (its output written,
     * its journal kept for the merge) is not run again after a requeue */
    char *fn = NULL;
    tl_buf f;
    tl_buf_init(&f);
    tl_buf_printf(&f, "run_cells() {\n"
                      "  for s in $(seq 0 $((SEEDS - 1))); do\n"
                      "    K=$((SLURM_ARRAY_TASK_ID * SEEDS + s)); OUT=\"$CELLS/cell-$K.h5\"\n"
                      "    [ -f \"$OUT\" ] && continue\n"
                      "    RESUME=(); [ -d \"$OUT.journal\" ] && RESUME=(--resume)\n"
                      "    %s \"$TALLY\" run \"$JOB\" --cell \"$K\" --out \"$OUT\" --keep-journal "
                      "${RESUME[@]+\"${RESUME[@]}\"} || return $?\n"
                      "  done\n"
                      "}\n", srun);
    fn = tl_buf_detach(&f);
    /* placed before the serve.sh line: the script so far ends with that line's start */
    const char *mark = strstr(s.data, "\"$SERVE\" --kind");
    if (fn && mark) {
      size_t at = (size_t)(mark - s.data);
      tl_buf t;
      tl_buf_init(&t);
      tl_buf_append(&t, s.data, at);
      tl_buf_printf(&t, "%sexport -f run_cells\nexport TALLY JOB CELLS SEEDS\n", fn);
      tl_buf_puts(&t, s.data + at);
      tl_buf_release(&s);
      s = t;
    }
    free(fn);
    tl_buf_puts(&s, "bash -c run_cells &\n");
  } else if (array)
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
    tl_buf_printf(&m, "#SBATCH --job-name=");
    char mjn[512];
    snprintf(mjn, sizeof mjn, "%s-merge", jn);
    sbq(&m, mjn, 0);
    tl_buf_printf(&m, "\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", (unsigned long long)ntasks, timel);
    site_options(&m, part, account, qos, mem, constraint, cpus, sbargs, nsbargs);
    tl_buf_puts(&m, "#SBATCH --output=");
    log_pattern(&m, dir, "tally-%x-%j.out");
    if (prologue) tl_buf_printf(&m, "# ---- the prologue (--prologue %s) ----\n%s%s# ---- end of the prologue ----\n",
                                prologue, pro, pro[0] && pro[strlen(pro) - 1] != '\n' ? "\n" : "");
    tl_buf_puts(&m, "set -euo pipefail\nTALLY=");
    shq(&m, self);
    tl_buf_puts(&m, "\nCELLS=");
    shq(&m, cells);
    tl_buf_puts(&m, "\nOUT=");
    shq(&m, out_abs);
    tl_buf_printf(&m, "\nN=%ld\nLAUNCH=\"%s\"\n", ncell, mpi == 2 ? "mpirun" : mpi == 1 ? "srun --mpi=pmi2" : "srun --mpi=pmix");
    tl_buf_puts(&m, "files=(); missing=()\n"
                    "for k in $(seq 0 $((N - 1))); do\n"
                    "  if [ -f \"$CELLS/cell-$k.h5\" ]; then files+=(\"$CELLS/cell-$k.h5\"); else missing+=(\"$k\"); fi\n"
                    "done\n"
                    "if [ ${#missing[@]} -eq 0 ]; then\n"
                    "  exec $LAUNCH \"$TALLY\" merge \"${files[@]}\" -o \"$OUT\" --force\n"
                    "fi\n"
                    "echo \"tally: cells ${missing[*]} of $N did not finish: rerun them (sbatch --array=LIST), then this job\" >&2\n"
                    "if [ ${#files[@]} -gt 0 ]; then\n"
                    "  $LAUNCH \"$TALLY\" merge \"${files[@]}\" -o \"${OUT%.h5}.partial.h5\" --partial --force || true\n"
                    "fi\n"
                    "exit 1\n");
  }
  tl_job_release(&job);
  int rc = TL_EXIT_OK;
  if (!submit && !array) {
    if (fputs(s.data, stdout) < 0 || fflush(stdout) != 0) rc = TL_EXIT_FAIL;
  } else if (array) {
    /* two files beside the output, OUTPUT.array.sbatch and OUTPUT.merge.sbatch (two scripts are
     * never one stream: sbatch takes one); printed, or submitted with the dependency */
    char ap[PATH_MAX + 128], mp[PATH_MAX + 128];
    snprintf(ap, sizeof ap, "%s.array.sbatch", out_abs);
    snprintf(mp, sizeof mp, "%s.merge.sbatch", out_abs);
    const char *paths[2] = {ap, mp}, *texts[2] = {s.data, m.data};
    for (int i = 0; i < 2 && !rc; i++) {
      FILE *f = fopen(paths[i], "w");
      int bad = !f || fputs(texts[i], f) < 0;
      if (f && fclose(f) != 0) bad = 1;
      if (bad) {
        fprintf(stderr, "%s: cannot write the script '%s': %s\n", CMD, paths[i], strerror(errno));
        rc = TL_EXIT_FAIL;
      }
    }
    if (!rc && !submit) {
      tl_buf c;
      tl_buf_init(&c);
      tl_buf_puts(&c, "jid=$(sbatch --parsable ");
      shq(&c, ap);
      tl_buf_printf(&c, ") && sbatch --dependency=after%s:\"${jid%%%%;*}\" ", after_any ? "any" : "ok");
      shq(&c, mp);
      printf("wrote %s (the array job: %ld cells in %ld task%s)\nwrote %s (the merge job, after%s the array job)\n"
             "submit both with:\n  %s\n(or: tally slurm ... --array --submit)\n",
             ap, ncell, per_model ? ncell / nseeds : ncell, (per_model ? ncell / nseeds : ncell) == 1 ? "" : "s", mp,
             after_any ? "any" : "ok", c.data);
      tl_buf_release(&c);
      if (fflush(stdout) != 0) rc = TL_EXIT_FAIL;
    }
    char id[64] = "";
    if (!rc && submit) {
      tl_buf c;
      tl_buf_init(&c);
      tl_buf_puts(&c, "sbatch --parsable ");
      shq(&c, ap);
      FILE *p = popen(c.data, "r");
      if (!p || !fgets(id, sizeof id, p) || pclose(p) != 0 || !(id[strcspn(id, ";\n")] = 0, id[0])) {
        fprintf(stderr, "%s: sbatch of the array job failed\n", CMD);
        rc = TL_EXIT_FAIL;
      }
      tl_buf_release(&c);
    }
    if (!rc && submit) {
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
        rc = TL_EXIT_FAIL;
      }
      mid[strcspn(mid, ";\n")] = 0;
      if (ok) printf("merge job %s (after%s:%s) -> %s\n", mid, after_any ? "any" : "ok", id, out_abs);
    }
  } else {
    FILE *p = popen(wait ? "sbatch --parsable --wait" : "sbatch --parsable", "w");
    if (!p) {
      fprintf(stderr, "%s: cannot run sbatch: %s\n", CMD, strerror(errno));
      rc = TL_EXIT_FAIL;
    } else {
      fputs(s.data, p);
      int ps = pclose(p);
      if (ps != 0) {
        fprintf(stderr, "%s: sbatch %s (status %d)\n", CMD, wait ? "or the job failed" : "failed", ps);
        rc = TL_EXIT_FAIL;
      }
    }
  }
  tl_buf_release(&s);
  tl_buf_release(&m);
  return rc;
}
