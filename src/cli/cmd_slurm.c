/* cmd_slurm.c - `tally slurm JOB.json`: prints (or submits) a ready sbatch script for one
 * distributed, preemption-safe run of the job, so nobody writes one by hand.
 *
 * The script: srun --mpi=pmix over the allocation's tasks; --requeue, and --signal=B:USR1@120
 * forwarded to the ranks, so tally flushes its journals and exits with code 4 before the time
 * limit; the requeued run resumes from the journals (--resume is always passed: a first run has
 * none), at most --max-requeue times (SLURM_RESTART_COUNT); the log beside the job's output,
 * named from the job name and id (tally-NAME-ID.out). The job file is loaded first: a job tally would refuse is never
 * submitted. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
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
  int submit = 0, wait = 0;
  enum { O_NT = 1, O_TIME, O_PART, O_GPU, O_NAME, O_MAXRQ, O_SUBMIT, O_WAIT, O_HELP };
  static const struct option LONG[] = {{"ntasks", required_argument, NULL, O_NT},
                                       {"time", required_argument, NULL, O_TIME},
                                       {"partition", required_argument, NULL, O_PART},
                                       {"gpus-per-task", required_argument, NULL, O_GPU},
                                       {"name", required_argument, NULL, O_NAME},
                                       {"max-requeue", required_argument, NULL, O_MAXRQ},
                                       {"submit", no_argument, NULL, O_SUBMIT},
                                       {"wait", no_argument, NULL, O_WAIT},
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
    case O_WAIT: wait = 1; break;
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
  if (!sbatch_safe(timel) || (part && !sbatch_safe(part)) || (name && !sbatch_safe(name))) {
    fprintf(stderr, "%s: --time, --partition and --name take letters, digits and - _ . : , only\n", CMD);
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
  char dir[PATH_MAX]; /* the log goes beside the output (else beside the job file) */
  if (!job.output || !realpath(job.output, dir)) {
    snprintf(dir, sizeof dir, "%s", job.output ? job.output : jabs);
    if (dir[0] != '/') snprintf(dir, sizeof dir, "%s", jabs);
  }
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  tl_buf s;
  tl_buf_init(&s);
  tl_buf_printf(&s, "#!/bin/bash\n# generated by `tally slurm` (tally %s) for %s\n", TALLY_VERSION, jabs);
  tl_buf_puts(&s, "# One distributed run: srun --mpi=pmix over the tasks. Preemption-safe: on the time-limit\n"
                  "# notice (USR1, 120 s before) tally flushes its journals and exits 4, and the job requeues itself\n"
                  "# to resume from them (at most MAX_REQUEUE times); a requeue after a node failure resumes too.\n");
  tl_buf_printf(&s, "#SBATCH --job-name=%s\n#SBATCH --ntasks=%llu\n#SBATCH --time=%s\n", jn, (unsigned long long)ntasks, timel);
  if (part) tl_buf_printf(&s, "#SBATCH --partition=%s\n", part);
  if (gpus) tl_buf_printf(&s, "#SBATCH --gpus-per-task=%llu\n", (unsigned long long)gpus);
  tl_buf_puts(&s, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n");
  tl_buf_printf(&s, "#SBATCH --output=%s/tally-%%x-%%j.out\n", dir);
  tl_buf_puts(&s, "set -euo pipefail\nTALLY=");
  shq(&s, self);
  tl_buf_puts(&s, "\nJOB=");
  shq(&s, jabs);
  tl_buf_printf(&s, "\nMAX_REQUEUE=%llu\n", (unsigned long long)maxrq);
  tl_buf_puts(&s, "trap 'scancel --signal=USR1 --batch=false \"$SLURM_JOB_ID\"' USR1\n"
                  "rc=0\n"
                  "srun --mpi=pmix \"$TALLY\" run \"$JOB\" --resume &\n"
                  "wait $! || rc=$?\n"
                  "if [ \"$rc\" = 4 ]; then\n"
                  "  if [ \"${SLURM_RESTART_COUNT:-0}\" -lt \"$MAX_REQUEUE\" ]; then\n"
                  "    echo \"tally: stopped before the time limit; requeueing to resume from the journals\"\n"
                  "    scontrol requeue \"$SLURM_JOB_ID\"\n"
                  "  else\n"
                  "    echo \"tally: stopped before the time limit after $MAX_REQUEUE requeues; resubmit to resume\" >&2\n"
                  "  fi\n"
                  "fi\n"
                  "exit \"$rc\"\n");
  tl_job_release(&job);
  int rc = 0;
  if (!submit) {
    if (fputs(s.data, stdout) < 0 || fflush(stdout) != 0) rc = 1;
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
  return rc;
}
