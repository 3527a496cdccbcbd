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

static const char *const CMD = "tally slurm";
static const char *const MPIS[] = {"pmix", "pmi2", "none"};
static const char *const KINDS[] = {"vllm", "llamacpp", "test"};

/* Steps return this to go on; any other value is the command's exit code. */
enum { GO_ON = -1 };

/* The command line, as slurm_options fills it (defaults first) and slurm_check completes it. */
typedef struct {
  const char *timel, *part, *name, *account, *qos, *mem, *constraint, *prologue;
  const char *sbargs[32]; /* each --sbatch-arg, in order; nsbargs of them */
  int nsbargs;
  int mpi; /* 0 pmix, 1 pmi2, 2 none (mpirun): MPIS */
  uint64_t ntasks, gpus, maxrq, cpus, throttle, serve_gpus, serve_wait;
  int submit, wait, array, after_any, force;
  int serve; /* -1: no --serve; else an index of KINDS (2: test) */
  const char *serve_model, *serve_args, *serve_script;
  int serve_script_given;
  const char *jpath; /* the one operand, JOB.json */
} slurm_opts;

/* What the job gives the scripts, resolved by slurm_prepare; job is loaded (released by the
 * caller) once slurm_prepare has returned GO_ON or failed after loading it (loaded = 1). */
typedef struct {
  tl_job job;
  int loaded;
  char jabs[PATH_MAX], self[PATH_MAX]; /* the job file and this program, absolute */
  const char *jn;                      /* the job name: --name, else the job's, else "tally" */
  long ncell;                          /* with --array: the sweep's cells; else 0 */
  char out_abs[PATH_MAX + 64];         /* the job's output, absolute */
  char cells[PATH_MAX + 96];           /* OUT.cells: the folder of the cells' outputs */
  char dir[PATH_MAX + 64];             /* the log's folder: out_abs's */
  const char *pro;                     /* the prologue's text ("" without --prologue) */
  int per_model;                       /* --array with --serve: one array task per model */
  int nseeds;                          /* the first benchmark's seeds (1 without benchmarks) */
} slurm_ctx;

/* The getopt_long loop: fills o from argv (o->jpath from the one operand). Returns GO_ON, or
 * the exit code of --help, of a bad option or value (its message printed), or of a usage error. */
static int slurm_options(int argc, char **argv, slurm_opts *o) {
  *o = (slurm_opts){.timel = "02:00:00", .ntasks = 4, .maxrq = 3, .serve_wait = 900, .serve = -1,
                    .serve_script = TALLY_SOURCE_DIR "/slurm/serve.sh"};
  tl_opt_begin();
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", tl_opts_slurm, NULL)) != -1) {
    switch (ch) {
    case O_NT:
      if (tl_opt_u64(CMD, "--ntasks", optarg, 1, 100000, &o->ntasks)) return TL_EXIT_USAGE;
      break;
    case O_GPU:
      if (tl_opt_u64(CMD, "--gpus-per-task", optarg, 0, 1024, &o->gpus)) return TL_EXIT_USAGE;
      break;
    case O_MAXRQ:
      if (tl_opt_u64(CMD, "--max-requeue", optarg, 0, 100000, &o->maxrq)) return TL_EXIT_USAGE;
      break;
    case O_TIME: o->timel = optarg; break;
    case O_PART: o->part = optarg; break;
    case O_NAME: o->name = optarg; break;
    case O_SUBMIT: o->submit = 1; break;
    case O_ACCOUNT: o->account = optarg; break;
    case O_QOS: o->qos = optarg; break;
    case O_MEM: o->mem = optarg; break;
    case O_CONSTRAINT: o->constraint = optarg; break;
    case O_PROLOGUE: o->prologue = optarg; break;
    case O_CPUS:
      if (tl_opt_u64(CMD, "--cpus-per-task", optarg, 1, 100000, &o->cpus)) return TL_EXIT_USAGE;
      break;
    case O_MPI:
      if ((o->mpi = tl_opt_choice(CMD, "--mpi", optarg, MPIS, 3)) < 0) return TL_EXIT_USAGE;
      break;
    case O_SBARG:
      if (o->nsbargs == 32) return fprintf(stderr, "%s: at most 32 --sbatch-arg\n", CMD), TL_EXIT_USAGE;
      o->sbargs[o->nsbargs++] = optarg;
      break;
    case O_FORCE: o->force = 1; break;
    case O_WAIT: o->wait = 1; break;
    case O_ARRAY: o->array = 1; break;
    case O_SERVE:
      if ((o->serve = tl_opt_choice(CMD, "--serve", optarg, KINDS, 3)) < 0) return TL_EXIT_USAGE;
      break;
    case O_SMODEL: o->serve_model = optarg; break;
    case O_SARGS: o->serve_args = optarg; break;
    case O_SSCRIPT: o->serve_script = optarg, o->serve_script_given = 1; break;
    case O_SGPUS:
      if (tl_opt_u64(CMD, "--serve-gpus", optarg, 1, 1024, &o->serve_gpus)) return TL_EXIT_USAGE;
      break;
    case O_SWAIT:
      if (tl_opt_u64(CMD, "--serve-wait", optarg, 1, 86400, &o->serve_wait)) return TL_EXIT_USAGE;
      break;
    case O_THROTTLE:
      if (tl_opt_u64(CMD, "--array-throttle", optarg, 1, 100000, &o->throttle)) return TL_EXIT_USAGE;
      break;
    case O_AFTER: {
      static const char *const AFTER[] = {"ok", "any"};
      int k = tl_opt_choice(CMD, "--merge-after", optarg, AFTER, 2);
      if (k < 0) return TL_EXIT_USAGE;
      o->after_any = k == 1;
      break;
    }
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_slurm);
    default: return tl_usage_bad_option(CMD, ch, argv, tl_usage_slurm);
    }
  }
  if (optind != argc - 1) return tl_usage_error(tl_usage_slurm);
  o->jpath = argv[optind];
  return GO_ON;
}

/* Without --serve-script: an installed tally's serve.sh (PREFIX/share/tally/slurm, beside
 * PREFIX/bin/tally) when it is readable, else the source tree's (o->serve_script unchanged). */
static void find_serve_script(slurm_opts *o) {
  static char installed[PATH_MAX + 64]; /* static: o->serve_script may point here */
  if (o->serve_script_given) return;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char *sl = strrchr(exe, '/');
  if (sl) *sl = 0;
  snprintf(installed, sizeof installed, "%s/../share/tally/slurm/serve.sh", exe);
  if (access(installed, R_OK) == 0) o->serve_script = installed;
}

/* The values written into #SBATCH lines: --partition, --name, --account, --qos, --mem and
 * --constraint any non-empty text without a control character (quoted as sbatch reads it);
 * each --sbatch-arg one option, --opt=value or --flag. Returns GO_ON, or TL_EXIT_USAGE with its
 * message printed. */
static int check_sbatch_values(const slurm_opts *o) {
  const char *vals[] = {o->part, o->name, o->account, o->qos, o->mem, o->constraint};
  const char *opts[] = {"--partition", "--name", "--account", "--qos", "--mem", "--constraint"};
  for (int i = 0; i < 6; i++)
    if (vals[i] && (!vals[i][0] || has_ctl(vals[i])))
      return fprintf(stderr, "%s: %s takes a value without control characters (and not nothing)\n", CMD, opts[i]), TL_EXIT_USAGE;
  for (int i = 0; i < o->nsbargs; i++) {
    const char *a = o->sbargs[i], *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a) : strlen(a);
    int ok = a[0] == '-' && nl >= 2 && !has_ctl(a);
    for (size_t k = 0; ok && k < nl; k++)
      ok = a[k] == '-' || a[k] == '_' || (a[k] >= 'a' && a[k] <= 'z') || (a[k] >= 'A' && a[k] <= 'Z') ||
           (a[k] >= '0' && a[k] <= '9');
    if (!ok)
      return fprintf(stderr, "%s: --sbatch-arg takes one sbatch option, --opt=value or --flag (the value without "
                             "control characters), not '%s'\n", CMD, a), TL_EXIT_USAGE;
  }
  return GO_ON;
}

/* The options together, before the job is read: options that go with another, and the values
 * written into the script. Also settles o->serve_script (find_serve_script). Returns GO_ON, or
 * TL_EXIT_USAGE with its message printed. */
static int slurm_check(slurm_opts *o) {
  if (o->wait && !o->submit) return fprintf(stderr, "%s: --wait goes with --submit\n", CMD), TL_EXIT_USAGE;
  find_serve_script(o);
  if ((o->throttle || o->after_any) && !o->array)
    return fprintf(stderr, "%s: --array-throttle and --merge-after go with --array\n", CMD), TL_EXIT_USAGE;
  if (o->serve < 0 && (o->serve_model || o->serve_gpus || o->serve_args || o->serve_wait != 900))
    return fprintf(stderr, "%s: --serve-model, --serve-gpus, --serve-args and --serve-wait go with --serve\n", CMD), TL_EXIT_USAGE;
  if (o->serve_model && !o->serve_model[0]) return fprintf(stderr, "%s: --serve-model needs a model\n", CMD), TL_EXIT_USAGE;
  if (!sbatch_safe(o->timel)) {
    fprintf(stderr, "%s: --time takes SLURM's time format (digits, - and :), not '%s'\n", CMD, o->timel);
    return TL_EXIT_USAGE;
  }
  return check_sbatch_values(o);
}

/* The --prologue file's text, whole (under 64 KiB, no NUL byte), into *pro: a static buffer no
 * path frees; "" without --prologue. Returns GO_ON, or TL_EXIT_USAGE naming the file. */
static int read_prologue(const slurm_opts *o, const char **pro) {
  static char text[1 << 16];
  *pro = text;
  if (!o->prologue) return GO_ON;
  FILE *pf = fopen(o->prologue, "rb");
  size_t k = pf ? fread(text, 1, sizeof text, pf) : 0;
  int bad = !pf || ferror(pf) || k == sizeof text || memchr(text, 0, k);
  int e = errno;
  if (pf) fclose(pf);
  if (bad) {
    fprintf(stderr, "%s: --prologue '%s': %s\n", CMD, o->prologue,
            !pf ? strerror(e) : k == sizeof text ? "64 KiB or more" : "not a text file (a NUL byte, or unreadable)");
    return TL_EXIT_USAGE;
  }
  text[k] = 0;
  return GO_ON;
}

/* Loads the job (a typo is found here, not on the cluster an hour later; x->loaded = 1 once it
 * is), resolves the job file's and this program's paths, the job name and, with --array, the
 * sweep's cells. Returns GO_ON, or the exit code with its message printed. */
static int load_job(const slurm_opts *o, slurm_ctx *x) {
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  tl_status st = tl_job_load(o->jpath, &x->job, &probs, &nprob);
  x->loaded = !st;
  if (st || nprob) {
    fprintf(stderr, "%s: invalid job '%s'%s\n%s", CMD, o->jpath, st && !nprob ? " (cannot be read)" : "",
            probs.data ? probs.data : "");
    tl_buf_release(&probs);
    return TL_EXIT_USAGE;
  }
  tl_buf_release(&probs);
  ssize_t sl = readlink("/proc/self/exe", x->self, sizeof x->self - 1);
  if (!realpath(o->jpath, x->jabs) || sl <= 0) {
    fprintf(stderr, "%s: cannot resolve '%s' or this program's path\n", CMD, o->jpath);
    return TL_EXIT_FAIL;
  }
  x->self[sl] = 0;
  const tl_job *j = &x->job;
  x->jn = o->name ? o->name : j->name && j->name[0] && !has_ctl(j->name) ? j->name : "tally";
  if (o->array && !(x->ncell = tl_job_sweep_cells(&x->job))) {
    fprintf(stderr, "%s: --array needs a sweep: every benchmark of '%s' lists the same \"models\" and \"seeds\" "
                    "(each (model, seed) is one array task)\n", CMD, o->jpath);
    return TL_EXIT_USAGE;
  }
  return GO_ON;
}

/* With --serve: the job's model engine asks this node's servers (openai at 127.0.0.1:{port}),
 * one model is served (or --array, or the engine names it), and the serve script is readable.
 * Returns GO_ON, or TL_EXIT_USAGE with its message printed. */
static int check_serve(const slurm_opts *o, const slurm_ctx *x) {
  if (o->serve < 0) return GO_ON;
  const tl_job_engine *me = &x->job.engines[TL_ROLE_MODEL];
  const char *u = me->type && !strcmp(me->type, "openai") && me->http.nurls == 1 ? me->http.urls[0] : NULL;
  if (!u || !strstr(u, "{port}") || (!strstr(u, "//127.0.0.1:") && !strstr(u, "//localhost:"))) {
    fprintf(stderr, "%s: --serve starts a server per GPU of the node on port_base + i: the job's model engine must "
                    "be openai with \"url\": \"http://127.0.0.1:{port}/v1\"%s%s\n", CMD, u ? " (it is " : "",
            u ? u : "");
    return TL_EXIT_USAGE;
  }
  const tl_job_bench *b0 = x->job.n_benches ? &x->job.benches[0] : NULL;
  if (o->serve != 2 && !me->http.model && !o->array && !(b0 && b0->n_models == 1)) {
    fprintf(stderr, "%s: --serve %s serves one model, and the job asks for %d: run it as a sweep with --array (each "
                    "cell serves its own model), or name the served model in the engine's \"model\"\n", CMD,
            KINDS[o->serve], b0 ? b0->n_models : 0);
    return TL_EXIT_USAGE;
  }
  if (access(o->serve_script, X_OK) != 0 && access(o->serve_script, R_OK) != 0) {
    fprintf(stderr, "%s: cannot read the serve script '%s' (give --serve-script)\n", CMD, o->serve_script);
    return TL_EXIT_USAGE;
  }
  return GO_ON;
}

/* The output, absolute (x->out_abs, x->cells, and x->dir, the log's folder: beside the output,
 * whether or not it exists yet): the script resumes when its journal exists. A finished output
 * (no journal of an interrupted run beside it) is replaced only with --force, as by tally run;
 * the sweep's merge job replaces its output (it reruns). Returns GO_ON, or TL_EXIT_USAGE. */
static int check_output(const slurm_opts *o, slurm_ctx *x) {
  tl_err e = {{0}};
  char *oa = tl_out_check_place(x->job.output, &e) ? NULL : tl_path_absolute(x->job.output);
  if (!oa) {
    fprintf(stderr, "%s: %s\n", CMD, e.msg[0] ? e.msg : "out of memory");
    return TL_EXIT_USAGE;
  }
  snprintf(x->out_abs, sizeof x->out_abs, "%s", oa);
  snprintf(x->cells, sizeof x->cells, "%s.cells", x->out_abs);
  free(oa);
  char *jd = o->array ? NULL : tl_journal_dir(x->out_abs);
  struct stat sb;
  int finished = jd && stat(x->out_abs, &sb) == 0 && S_ISREG(sb.st_mode) && stat(jd, &sb) != 0;
  free(jd);
  if (finished && !o->force) {
    fprintf(stderr, "%s: output '%s' exists (a finished output): pass --force to replace it (the script then runs "
                    "tally run --force), or choose another output\n", CMD, x->out_abs);
    return TL_EXIT_USAGE;
  }
  snprintf(x->dir, sizeof x->dir, "%s", x->out_abs);
  char *slash = strrchr(x->dir, '/');
  if (slash) *slash = 0;
  return GO_ON;
}

/* A path with a control character would break the script's lines: refused, whatever quoting.
 * Returns GO_ON, or TL_EXIT_USAGE naming the path (control characters as \xNN). */
static int check_paths(const slurm_opts *o, const slurm_ctx *x) {
  const char *paths[] = {x->jabs, x->self, x->out_abs, o->serve >= 0 ? o->serve_script : "",
                         o->prologue ? o->prologue : ""};
  for (int i = 0; i < 5; i++)
    if (has_ctl(paths[i])) {
      fprintf(stderr, "%s: the path '", CMD);
      for (const char *c = paths[i]; *c; c++) fprintf(stderr, (unsigned char)*c < 0x20 || *c == 0x7f ? "\\x%02x" : "%c", (unsigned char)*c);
      fprintf(stderr, "' holds a control character (a newline would become a line of the script): rename it\n");
      return TL_EXIT_USAGE;
    }
  return GO_ON;
}

/* Everything the scripts need, checked in the order a user meets it: the prologue, the job,
 * --serve, the output, the paths. Fills x. Returns GO_ON, or the exit code with its message
 * printed (the job, where x->loaded, is the caller's to release either way). */
static int slurm_prepare(const slurm_opts *o, slurm_ctx *x) {
  int rc = read_prologue(o, &x->pro);
  if (rc == GO_ON) rc = load_job(o, x);
  if (rc == GO_ON) rc = check_serve(o, x);
  if (rc == GO_ON) rc = check_output(o, x);
  if (rc == GO_ON) rc = check_paths(o, x);
  if (rc != GO_ON) return rc;
  /* with --serve, an array task per model: its seeds' cells run one after the other on the
   * task's server, which loads the model once */
  x->per_model = o->array && o->serve >= 0 && x->job.n_benches > 0;
  x->nseeds = x->job.n_benches > 0 ? x->job.benches[0].n_seeds : 1;
  return GO_ON;
}

/* The --prologue's lines between two marker comments (its last line ended by "\n"). */
static void put_prologue(tl_buf *b, const slurm_opts *o, const slurm_ctx *x) {
  if (o->prologue)
    tl_buf_printf(b, "# ---- the prologue (--prologue %s) ----\n%s%s# ---- end of the prologue ----\n", o->prologue,
                  x->pro, x->pro[0] && x->pro[strlen(x->pro) - 1] != '\n' ? "\n" : "");
}

/* The run script's head: comments, every #SBATCH line (the array and its log pattern with
 * --array), then the prologue. */
static void run_head(tl_buf *s, const slurm_opts *o, const slurm_ctx *x) {
  tl_buf_printf(s, "#!/bin/bash\n# generated by `tally slurm` (tally %s) for %s\n", TALLY_VERSION, x->jabs);
  if (o->array)
    tl_buf_printf(s, "# The sweep's %ld cells (models x seeds), one per array task, each a distributed run of one\n"
                     "# (model, seed) into %s/cell-K.h5; the merge job joins them.\n", x->ncell, x->cells);
  tl_buf_puts(s, "# One distributed run: srun --mpi=pmix over the tasks. Preemption-safe: on the time-limit\n"
                 "# notice (USR1, 120 s before) tally flushes its journals and exits 4, and the job requeues itself\n"
                 "# to resume from them (at most MAX_REQUEUE times); a requeue after a node failure resumes too.\n");
  tl_buf_puts(s, "#SBATCH --job-name=");
  sbq(s, x->jn, 0);
  tl_buf_printf(s, "\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", (unsigned long long)o->ntasks, o->timel);
  site_options(s, o->part, o->account, o->qos, o->mem, o->constraint, o->cpus, o->sbargs, o->nsbargs);
  if (o->gpus) tl_buf_printf(s, "#SBATCH --gpus-per-task=%llu\n", (unsigned long long)o->gpus);
  if (o->serve >= 0) tl_buf_puts(s, "# serve.sh starts the servers on the batch node: one node\n#SBATCH --nodes=1\n");
  /* append: a requeued job writes its log again, and the earlier attempt's lines are evidence */
  tl_buf_puts(s, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n#SBATCH --open-mode=append\n");
  if (o->array) {
    tl_buf_printf(s, "#SBATCH --array=0-%ld", x->per_model ? x->ncell / x->nseeds - 1 : x->ncell - 1);
    if (o->throttle) tl_buf_printf(s, "%%%llu", (unsigned long long)o->throttle);
    tl_buf_puts(s, "\n#SBATCH --output=");
    log_pattern(s, x->dir, "tally-%x-%A_%a.out");
  } else {
    tl_buf_puts(s, "#SBATCH --output=");
    log_pattern(s, x->dir, "tally-%x-%j.out");
  }
  put_prologue(s, o, x);
}

/* The run script's variables (TALLY, JOB, MAX_REQUEUE, CELLS/SEEDS/OUT or OUT, RESUME) and its
 * signal traps. */
static void run_vars(tl_buf *s, const slurm_opts *o, const slurm_ctx *x) {
  tl_buf_puts(s, "set -euo pipefail\nTALLY=");
  shq(s, x->self);
  tl_buf_puts(s, "\nJOB=");
  shq(s, x->jabs);
  tl_buf_printf(s, "\nMAX_REQUEUE=%llu\n", (unsigned long long)o->maxrq);
  if (x->per_model) { /* the model of this task: its cells, seed after seed, in OUTPUT.cells/ */
    tl_buf_puts(s, "CELLS=");
    shq(s, x->cells);
    tl_buf_printf(s, "\nmkdir -p \"$CELLS\"\nSEEDS=%d\nOUT=\"$CELLS/cell-$((SLURM_ARRAY_TASK_ID * SEEDS)).h5\"\n", x->nseeds);
  } else if (o->array) { /* the cell of this task, its output in OUTPUT.cells/ */
    tl_buf_puts(s, "CELLS=");
    shq(s, x->cells);
    tl_buf_puts(s, "\nmkdir -p \"$CELLS\"\nOUT=\"$CELLS/cell-$SLURM_ARRAY_TASK_ID.h5\"\n");
  } else {
    tl_buf_puts(s, "OUT=");
    shq(s, x->out_abs);
    tl_buf_puts(s, "\n");
  }
  /* a first run scores the job; a run that finds the journal of an interrupted attempt (a
   * requeue, a resubmission) resumes it. A finished output is replaced only when this command
   * was given --force (checked here, before anything is submitted) */
  tl_buf_puts(s, "RESUME=()\n[ -d \"$OUT.journal\" ] && RESUME=(--resume)\n");
  /* The time-limit notice (USR1 to this shell) is forwarded to the ranks and noted: only then
   * does the script requeue the job itself. A stop by SLURM (scontrol requeue, preemption,
   * scancel) is SIGTERM to every process: tally exits 4 with its journals flushed, and SLURM
   * requeues the job (or not) itself; a second requeue from here would race it. `wait` returns
   * early when a trapped signal arrives, so it is repeated until srun has ended. */
  tl_buf_puts(s, "notice=0\n"
                 "trap 'notice=1; scancel --signal=USR1 \"$SLURM_JOB_ID\"' USR1\n"
                 "trap 'true' TERM # SLURM signals the steps too: this shell waits for srun's code\n");
}

/* With --serve: SERVE, SERVE_NAME and SERVE_MODEL, then the start of the serve.sh line (its
 * options and " -- \", the run command to follow on the next line). Nothing without --serve. */
static void run_serve(tl_buf *s, const slurm_opts *o, const slurm_ctx *x) {
  if (o->serve < 0) return;
  char sabs[PATH_MAX];
  tl_buf_puts(s, "SERVE=");
  shq(s, realpath(o->serve_script, sabs) ? sabs : o->serve_script);
  tl_buf_puts(s, "\n");
  if (o->serve == 2) tl_buf_puts(s, "export TALLY_TESTSERVER=\"$(dirname \"$TALLY\")/tally-testserver\"\n");
  /* the name the requests carry (the engine's "model", else the cfg's model: the cell's with
   * --array) is the served name; --serve-model the model loaded under it (default the same) */
  const tl_job_engine *me = &x->job.engines[TL_ROLE_MODEL];
  const tl_job_bench *b0 = &x->job.benches[0];
  if (o->serve != 2) {
    if (me->http.model) {
      tl_buf_puts(s, "SERVE_NAME=");
      shq(s, me->http.model);
      tl_buf_puts(s, "\n");
    } else if (o->array) { /* cell K serves model K / n_seeds */
      tl_buf_puts(s, "MODELS=(");
      for (int i = 0; i < b0->n_models; i++) {
        if (i) tl_buf_puts(s, " ");
        shq(s, b0->models[i]);
      }
      tl_buf_puts(s, ")\nSERVE_NAME=\"${MODELS[$SLURM_ARRAY_TASK_ID]}\"\n");
    } else {
      tl_buf_puts(s, "SERVE_NAME=");
      shq(s, b0->models[0]);
      tl_buf_puts(s, "\n");
    }
    if (o->serve_model) {
      tl_buf_puts(s, "SERVE_MODEL=");
      shq(s, o->serve_model);
      tl_buf_puts(s, "\n");
    } else {
      tl_buf_puts(s, "SERVE_MODEL=\"$SERVE_NAME\"\n");
    }
  }
  /* serve.sh picks free ports for this job (--port-base auto) and exports TALLY_PORT_BASE,
   * which the engine's {port} follows */
  tl_buf_printf(s, "\"$SERVE\" --kind %s%s --port-base auto --wait %llu", KINDS[o->serve],
                o->serve != 2 ? " --model \"$SERVE_MODEL\" --name \"$SERVE_NAME\"" : "", (unsigned long long)o->serve_wait);
  if (o->serve_gpus) tl_buf_printf(s, " --gpus %llu", (unsigned long long)o->serve_gpus);
  if (o->serve_args) {
    tl_buf_puts(s, " --server-args ");
    shq(s, o->serve_args);
  }
  tl_buf_puts(s, " -- \\\n  ");
}

/* One task per model (--array --serve): the function run_cells, which runs the task's cells seed
 * after seed with launcher srun (a finished cell, its output written and its journal kept for the
 * merge, is not run again after a requeue), inserted before the serve.sh line (the script so far
 * ends with that line's start), then the line's command, run_cells. */
static void run_cells_fn(tl_buf *s, const char *srun) {
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
  char *fn = tl_buf_detach(&f);
  const char *mark = strstr(s->data, "\"$SERVE\" --kind");
  if (fn && mark) {
    size_t at = (size_t)(mark - s->data);
    tl_buf t;
    tl_buf_init(&t);
    tl_buf_append(&t, s->data, at);
    tl_buf_printf(&t, "%sexport -f run_cells\nexport TALLY JOB CELLS SEEDS\n", fn);
    tl_buf_puts(&t, s->data + at);
    tl_buf_release(s);
    *s = t;
  }
  free(fn);
  tl_buf_puts(s, "bash -c run_cells &\n");
}

/* The run command in the background (srun --mpi=..., or mpirun with --mpi none; --overlap under
 * serve.sh), then the loop that waits for its code and requeues after a time-limit notice. */
static void run_launch(tl_buf *s, const slurm_opts *o, const slurm_ctx *x) {
  char srun[64];
  if (o->mpi == 2) snprintf(srun, sizeof srun, "mpirun"); /* the allocation's tasks, from SLURM's environment */
  else snprintf(srun, sizeof srun, "srun --mpi=%s%s", MPIS[o->mpi], o->serve >= 0 ? " --overlap" : "");
  if (x->per_model)
    run_cells_fn(s, srun);
  else if (o->array)
    tl_buf_printf(s, "%s \"$TALLY\" run \"$JOB\" --cell \"$SLURM_ARRAY_TASK_ID\" --out \"$OUT\" --keep-journal "
                     "${RESUME[@]+\"${RESUME[@]}\"} &\n", srun);
  else
    tl_buf_printf(s, "%s \"$TALLY\" run \"$JOB\" --out \"$OUT\"%s ${RESUME[@]+\"${RESUME[@]}\"} &\n", srun,
                  o->force ? " --force" : "");
  tl_buf_puts(s, "pid=$!\n"
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
}

/* The run script (the array job's with --array) into s (initialised here). */
static void run_script(tl_buf *s, const slurm_opts *o, const slurm_ctx *x) {
  tl_buf_init(s);
  run_head(s, o, x);
  run_vars(s, o, x);
  run_serve(s, o, x);
  run_launch(s, o, x);
}

/* The merge job's script into m (initialised here; left empty without --array): every cell's
 * output into the job's output; when cells are missing, the others into OUT's stem +
 * .partial.h5, the missing named, exit 1. */
static void merge_script(tl_buf *m, const slurm_opts *o, const slurm_ctx *x) {
  tl_buf_init(m);
  if (!o->array) return;
  tl_buf_printf(m, "#!/bin/bash\n# generated by `tally slurm --array` (tally %s) for %s: merges the sweep's %ld cells\n"
                   "# into the job's output once the array job ends (dependency after%s). Cells that did not\n"
                   "# finish are named, the others merged into OUT's stem + .partial.h5 (marked partial), and the job exits 1:\n"
                   "# rerun those cells, then this job (tally merge is idempotent).\n",
                TALLY_VERSION, x->jabs, x->ncell, o->after_any ? "any" : "ok");
  tl_buf_printf(m, "#SBATCH --job-name=");
  char mjn[512];
  snprintf(mjn, sizeof mjn, "%s-merge", x->jn);
  sbq(m, mjn, 0);
  tl_buf_printf(m, "\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", (unsigned long long)o->ntasks, o->timel);
  site_options(m, o->part, o->account, o->qos, o->mem, o->constraint, o->cpus, o->sbargs, o->nsbargs);
  tl_buf_puts(m, "#SBATCH --output=");
  log_pattern(m, x->dir, "tally-%x-%j.out");
  put_prologue(m, o, x);
  tl_buf_puts(m, "set -euo pipefail\nTALLY=");
  shq(m, x->self);
  tl_buf_puts(m, "\nCELLS=");
  shq(m, x->cells);
  tl_buf_puts(m, "\nOUT=");
  shq(m, x->out_abs);
  tl_buf_printf(m, "\nN=%ld\nLAUNCH=\"%s\"\n", x->ncell,
                o->mpi == 2 ? "mpirun" : o->mpi == 1 ? "srun --mpi=pmi2" : "srun --mpi=pmix");
  tl_buf_puts(m, "files=(); missing=()\n"
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

/* One script (no --array): printed on standard output, or piped to sbatch --parsable (--wait
 * with --wait; sbatch prints the job id). Returns the exit code. */
static int emit_one(const slurm_opts *o, const char *script) {
  if (!o->submit) return fputs(script, stdout) < 0 || fflush(stdout) != 0 ? TL_EXIT_FAIL : TL_EXIT_OK;
  FILE *p = popen(o->wait ? "sbatch --parsable --wait" : "sbatch --parsable", "w");
  if (!p) {
    fprintf(stderr, "%s: cannot run sbatch: %s\n", CMD, strerror(errno));
    return TL_EXIT_FAIL;
  }
  fputs(script, p);
  int ps = pclose(p);
  if (ps != 0) {
    fprintf(stderr, "%s: sbatch %s (status %d)\n", CMD, o->wait ? "or the job failed" : "failed", ps);
    return TL_EXIT_FAIL;
  }
  return TL_EXIT_OK;
}

/* Without --submit: how to submit the two files ap (the array job) and mp (the merge job), on
 * standard output. Returns the exit code. */
static int print_array_howto(const slurm_opts *o, const slurm_ctx *x, const char *ap, const char *mp) {
  tl_buf c;
  tl_buf_init(&c);
  tl_buf_puts(&c, "jid=$(sbatch --parsable ");
  shq(&c, ap);
  tl_buf_printf(&c, ") && sbatch --dependency=after%s:\"${jid%%%%;*}\" ", o->after_any ? "any" : "ok");
  shq(&c, mp);
  const long ntask = x->per_model ? x->ncell / x->nseeds : x->ncell;
  printf("wrote %s (the array job: %ld cells in %ld task%s)\nwrote %s (the merge job, after%s the array job)\n"
         "submit both with:\n  %s\n(or: tally slurm ... --array --submit)\n",
         ap, x->ncell, ntask, ntask == 1 ? "" : "s", mp, o->after_any ? "any" : "ok", c.data);
  tl_buf_release(&c);
  return fflush(stdout) != 0 ? TL_EXIT_FAIL : TL_EXIT_OK;
}

/* --submit: sbatch the array job ap, then the merge job mp depending on it (afterok/afterany;
 * --wait: sbatch --wait, which returns when the merge job ends). Prints both job ids. Returns
 * the exit code. */
static int submit_array(const slurm_opts *o, const slurm_ctx *x, const char *ap, const char *mp) {
  char id[64] = "";
  tl_buf c;
  tl_buf_init(&c);
  tl_buf_puts(&c, "sbatch --parsable ");
  shq(&c, ap);
  FILE *p = popen(c.data, "r");
  tl_buf_release(&c);
  if (!p || !fgets(id, sizeof id, p) || pclose(p) != 0 || !(id[strcspn(id, ";\n")] = 0, id[0])) {
    fprintf(stderr, "%s: sbatch of the array job failed\n", CMD);
    return TL_EXIT_FAIL;
  }
  printf("array job %s (%ld cells)\n", id, x->ncell);
  fflush(stdout);
  tl_buf_init(&c);
  tl_buf_printf(&c, "sbatch --parsable%s --dependency=after%s:%s ", o->wait ? " --wait" : "", o->after_any ? "any" : "ok", id);
  shq(&c, mp);
  p = popen(c.data, "r");
  tl_buf_release(&c);
  char mid[64] = "";
  int ok = p && fgets(mid, sizeof mid, p);
  int ps = p ? pclose(p) : -1;
  int rc = TL_EXIT_OK;
  if (!ok || ps != 0) {
    fprintf(stderr, "%s: sbatch of the merge job %s (status %d)\n", CMD, o->wait && ok ? "or the merge failed" : "failed", ps);
    rc = TL_EXIT_FAIL;
  }
  mid[strcspn(mid, ";\n")] = 0;
  if (ok) printf("merge job %s (after%s:%s) -> %s\n", mid, o->after_any ? "any" : "ok", id, x->out_abs);
  return rc;
}

/* --array: the two scripts as files beside the output, OUTPUT.array.sbatch and
 * OUTPUT.merge.sbatch (two scripts are never one stream: sbatch takes one); then how to submit
 * them, or (--submit) submitted with the dependency. Returns the exit code. */
static int emit_array(const slurm_opts *o, const slurm_ctx *x, const char *run, const char *merge) {
  char ap[PATH_MAX + 128], mp[PATH_MAX + 128];
  snprintf(ap, sizeof ap, "%s.array.sbatch", x->out_abs);
  snprintf(mp, sizeof mp, "%s.merge.sbatch", x->out_abs);
  const char *paths[2] = {ap, mp}, *texts[2] = {run, merge};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(paths[i], "w");
    int bad = !f || fputs(texts[i], f) < 0;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) {
      fprintf(stderr, "%s: cannot write the script '%s': %s\n", CMD, paths[i], strerror(errno));
      return TL_EXIT_FAIL;
    }
  }
  return o->submit ? submit_array(o, x, ap, mp) : print_array_howto(o, x, ap, mp);
}

/* `tally slurm JOB.json [options]`: the options (slurm_options, slurm_check), the job and the
 * paths (slurm_prepare), the scripts (run_script, merge_script), then printed, written or
 * submitted (emit_one, emit_array). Returns the exit code. */
int tl_cmd_slurm(int argc, char **argv) {
  slurm_opts o;
  int rc = slurm_options(argc, argv, &o);
  if (rc == GO_ON) rc = slurm_check(&o);
  if (rc != GO_ON) return rc;
  static slurm_ctx x; /* large (paths); one call per process */
  memset(&x, 0, sizeof x);
  rc = slurm_prepare(&o, &x);
  if (rc != GO_ON) {
    if (x.loaded) tl_job_release(&x.job);
    return rc;
  }
  tl_buf s, m;
  run_script(&s, &o, &x);
  merge_script(&m, &o, &x);
  tl_job_release(&x.job);
  rc = o.array ? emit_array(&o, &x, s.data, m.data) : emit_one(&o, s.data);
  tl_buf_release(&s);
  tl_buf_release(&m);
  return rc;
}
