/* cmd_correlate.c - `tally correlate`: argument parsing; the work is in src/par/correlate.c. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "correlate.h"
#include "driver.h"
#include "tally/boot.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally correlate --input TABLE --human COL --metrics A,B,... [options]\n"
          "  --input FILE        .csv, .tsv or .jsonl (one object per line)\n"
          "  --human COL         the human judgment column\n"
          "  --metrics A,B,...   metric columns to correlate with the human score\n"
          "  --group-by C,D      one study per distinct value combination\n"
          "  --resamples B       paired bootstrap resamples (default 5000)\n"
          "  --seed S            resample r draws from Philox keyed by (S, r) (default 0)\n"
          "  --ci LEVEL          confidence level (default 0.95)\n"
          "  --method percentile|bca   CI method (default bca)\n"
          "  --stats spearman,kendall  statistics (default both; kendall = tau-b)\n"
          "  --indices FILE      explicit resample index matrix (.npy int32/int64 [B, n], or text:\n"
          "                      one resample per line) instead of Philox, for cross-checks\n"
          "  --out FILE.h5       write summary, comparisons and every resample value\n"
          "  --json              print JSON instead of the table\n"
          "  --ttest-compat      also print the paper-style t-test on bootstrap vectors (COMPAT:\n"
          "                      its p-value shrinks as B grows; not evidence)\n"
          "  --permutation       also run the paired permutation test (B permutations, split over\n"
          "                      ranks; about as costly as the bootstrap itself per metric pair)\n"
          "  --device auto|cpu|cuda   where resamples run (default auto: CUDA when present)\n"
          "  --strict-input --quiet\n"
          "exit codes: 0 ok, 1 runtime failure, 2 usage, 3 bad input with --strict-input\n");
}

static int corr_mpi(void *ctx, MPI_Comm comm) { return tl_correlate_run((const tl_corr_opts *)ctx, comm); }

int tl_cmd_correlate(int argc, char **argv) {
  tl_corr_opts o;
  memset(&o, 0, sizeof o);
  o.resamples = 5000;
  o.ci = 0.95;
  o.method = TL_CI_BCA;
  o.stats_mask = 3;
  o.outf = stdout;
  o.log = stderr;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && (i++, 1))
    if (OPT("--input")) o.input = v;
    else if (OPT("--human")) o.human = v;
    else if (OPT("--metrics")) o.metrics = v;
    else if (OPT("--group-by")) o.group_by = v;
    else if (OPT("--resamples")) o.resamples = strtoull(v, NULL, 10);
    else if (OPT("--seed")) o.seed = strtoull(v, NULL, 10);
    else if (OPT("--ci")) o.ci = atof(v);
    else if (OPT("--indices")) o.indices = v;
    else if (OPT("--out")) o.out = v;
    else if (OPT("--method")) {
      if (!strcmp(v, "percentile")) o.method = TL_CI_PERCENTILE;
      else if (!strcmp(v, "bca")) o.method = TL_CI_BCA;
      else { fprintf(stderr, "tally correlate: --method must be percentile or bca\n"); return TL_EXIT_USAGE; }
    } else if (OPT("--stats")) {
      o.stats_mask = 0;
      if (strstr(v, "spearman")) o.stats_mask |= 1;
      if (strstr(v, "kendall")) o.stats_mask |= 2;
      if (!o.stats_mask) { fprintf(stderr, "tally correlate: --stats takes spearman and/or kendall\n"); return TL_EXIT_USAGE; }
    } else if (OPT("--device")) {
      if (!strcmp(v, "auto")) o.device = 0;
      else if (!strcmp(v, "cpu")) o.device = 1;
      else if (!strcmp(v, "cuda")) o.device = 2;
      else { fprintf(stderr, "tally correlate: --device must be auto, cpu or cuda\n"); return TL_EXIT_USAGE; }
    } else if (!strcmp(a, "--json")) o.json = 1;
    else if (!strcmp(a, "--ttest-compat")) o.ttest_compat = 1;
    else if (!strcmp(a, "--permutation")) o.permutation = 1;
    else if (!strcmp(a, "--strict-input")) o.strict_input = 1;
    else if (!strcmp(a, "--quiet")) o.quiet = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    else {
      fprintf(stderr, "tally correlate: unexpected argument '%s'\n", a);
      usage(stderr);
      return TL_EXIT_USAGE;
    }
#undef OPT
  }
  if (!o.input || !o.human || !o.metrics) {
    fprintf(stderr, "tally correlate: --input, --human and --metrics are required\n");
    usage(stderr);
    return TL_EXIT_USAGE;
  }
  if (!(o.ci > 0 && o.ci < 1)) { fprintf(stderr, "tally correlate: --ci must be in (0, 1)\n"); return TL_EXIT_USAGE; }
  if (!o.indices && (o.resamples < 2 || o.resamples > 100000000ull)) {
    fprintf(stderr, "tally correlate: --resamples must be in [2, 1e8]\n");
    return TL_EXIT_USAGE;
  }
  return tl_cli_with_mpi(&argc, &argv, "tally correlate", corr_mpi, &o);
}
