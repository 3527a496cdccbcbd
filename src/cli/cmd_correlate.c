/* cmd_correlate.c - `tally correlate`: argument parsing; the work is in src/par/correlate.c. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "correlate.h"
#include "driver.h"
#include "tally/boot.h"
#include "usage.h"

enum { O_INPUT = 1, O_HUMAN, O_METRICS, O_GROUP, O_RESAMPLES, O_SEED, O_CI, O_INDICES, O_OUT, O_METHOD,
       O_STATS, O_DEVICE, O_JSON, O_TTEST, O_PERM, O_STRICT, O_QUIET, O_BREAK, O_FORCE, O_HELP,
       O_CLUSTER, O_SYSTEM, O_AGREE, O_AGREE_SCALE, O_AGREE_CLUSTER };
const struct option tl_opts_correlate[] = {
    {"input", required_argument, NULL, O_INPUT},         {"human", required_argument, NULL, O_HUMAN},
    {"metrics", required_argument, NULL, O_METRICS},     {"group-by", required_argument, NULL, O_GROUP},
    {"resamples", required_argument, NULL, O_RESAMPLES}, {"seed", required_argument, NULL, O_SEED},
    {"ci", required_argument, NULL, O_CI},               {"indices", required_argument, NULL, O_INDICES},
    {"output", required_argument, NULL, O_OUT},          {"out", required_argument, NULL, O_OUT},
    {"method", required_argument, NULL, O_METHOD},       {"stats", required_argument, NULL, O_STATS},
    {"device", required_argument, NULL, O_DEVICE},       {"json", no_argument, NULL, O_JSON},
    {"ttest-compat", no_argument, NULL, O_TTEST},        {"permutation", no_argument, NULL, O_PERM},
    {"strict-input", no_argument, NULL, O_STRICT},       {"quiet", no_argument, NULL, O_QUIET},
    {"break-lock", no_argument, NULL, O_BREAK},          {"force", no_argument, NULL, O_FORCE},
    {"help", no_argument, NULL, O_HELP},                 {"cluster", required_argument, NULL, O_CLUSTER},
    {"system", required_argument, NULL, O_SYSTEM},       {"agreement", required_argument, NULL, O_AGREE},
    {"agreement-scale", required_argument, NULL, O_AGREE_SCALE},
    {"agreement-cluster", required_argument, NULL, O_AGREE_CLUSTER}, {NULL, 0, NULL, 0}};

static int corr_mpi(void *ctx, MPI_Comm comm) { return tl_correlate_run((const tl_corr_opts *)ctx, comm); }

/* --agreement A,B[,C...], repeatable: the lists joined with ';' into all[cap] (a fixed buffer:
 * nothing to free on the many early returns). */
static int add_agreement(const char *cmd, const char *list, char *all, size_t cap) {
  if (tl_opt_names(cmd, "--agreement", list)) return -1;
  size_t old = strlen(all);
  if (old + strlen(list) + 2 > cap) {
    fprintf(stderr, "%s: --agreement: the column lists are longer than %zu bytes in all\n", cmd, cap - 2);
    return -1;
  }
  if (old) all[old++] = ';';
  strcpy(all + old, list);
  return 0;
}

/* After the options: the agreement columns are two or more per list. */
static int check_agreement(const char *cmd, const tl_corr_opts *o) {
  if (!o->agreement) {
    if (o->agreement_cluster || o->agreement_scale)
      fprintf(stderr, "%s: --agreement-scale and --agreement-cluster go with --agreement\n", cmd);
    return o->agreement_cluster || o->agreement_scale ? -1 : 0;
  }
  for (const char *s = o->agreement; *s;) {
    size_t len = strcspn(s, ";");
    if (memchr(s, ',', len) == NULL) {
      fprintf(stderr, "%s: --agreement needs two columns or more (A,B), got '%.*s'\n", cmd, (int)len, s);
      return -1;
    }
    s += len + (s[len] == ';');
  }
  if (o->json) {
    fprintf(stderr, "%s: --json does not include the agreement table yet: leave out --json, or read the "
                    "table from --output (/stats/correlate/agreement)\n", cmd);
    return -1;
  }
  return 0;
}

int tl_cmd_correlate(int argc, char **argv) {
  static const char *const CMD = "tally correlate";
  tl_corr_opts o;
  memset(&o, 0, sizeof o);
  o.resamples = 5000;
  o.ci = 0.95;
  o.method = TL_CI_BCA;
  o.stats_mask = 3;
  o.outf = stdout;
  o.log = stderr;
  static const char *const METHODS[] = {"percentile", "bca"};
  static const char *const STATS[] = {"spearman", "kendall"};
  static const char *const DEVICES[] = {"auto", "cpu", "cuda"};
  static const char *const SCALES[] = {"nominal", "ordinal", "interval"};
  static char agreement[4096];
  agreement[0] = '\0';
  tl_opt_begin();
  int c, k;
  unsigned mask;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_correlate, NULL)) != -1) {
    switch (c) {
    case O_INPUT: o.input = optarg; break;
    case O_HUMAN: o.human = optarg; break;
    case O_METRICS: o.metrics = optarg; break;
    case O_GROUP: o.group_by = optarg; break;
    case O_RESAMPLES:
      if (tl_opt_u64(CMD, "--resamples", optarg, 2, 100000000ull, &o.resamples)) return TL_EXIT_USAGE;
      break;
    case O_SEED:
      if (tl_opt_u64(CMD, "--seed", optarg, 0, UINT64_MAX, &o.seed)) return TL_EXIT_USAGE;
      break;
    case O_CI:
      if (tl_opt_open_unit(CMD, "--ci", optarg, &o.ci)) return TL_EXIT_USAGE;
      break;
    case O_INDICES: o.indices = optarg; break;
    case O_OUT: o.out = optarg; break;
    case O_METHOD:
      if ((k = tl_opt_choice(CMD, "--method", optarg, METHODS, 2)) < 0) return TL_EXIT_USAGE;
      o.method = k == 0 ? TL_CI_PERCENTILE : TL_CI_BCA;
      break;
    case O_STATS:
      if (tl_opt_choices(CMD, "--stats", optarg, STATS, 2, &mask)) return TL_EXIT_USAGE;
      o.stats_mask = (int)mask;
      break;
    case O_DEVICE:
      if ((k = tl_opt_choice(CMD, "--device", optarg, DEVICES, 3)) < 0) return TL_EXIT_USAGE;
      o.device = k;
      break;
    case O_JSON: o.json = 1; break;
    case O_TTEST: o.ttest_compat = 1; break;
    case O_PERM: o.permutation = 1; break;
    case O_STRICT: o.strict_input = 1; break;
    case O_QUIET: o.quiet = 1; break;
    case O_BREAK: o.break_lock = 1; break;
    case O_FORCE: o.force = 1; break;
    case O_CLUSTER: o.cluster = strcmp(optarg, "none") == 0 ? NULL : optarg; break; /* "none": items */
    case O_SYSTEM: o.system = optarg; break;
    case O_AGREE:
      if (add_agreement(CMD, optarg, agreement, sizeof agreement)) return TL_EXIT_USAGE;
      o.agreement = agreement;
      break;
    case O_AGREE_SCALE:
      if ((k = tl_opt_choice(CMD, "--agreement-scale", optarg, SCALES, 3)) < 0) return TL_EXIT_USAGE;
      o.agreement_scale = k;
      break;
    case O_AGREE_CLUSTER:
      if (tl_opt_nonempty(CMD, "--agreement-cluster", optarg)) return TL_EXIT_USAGE;
      o.agreement_cluster = optarg;
      break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_correlate);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_correlate);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", CMD, argv[optind]);
    return tl_usage_error(tl_usage_correlate);
  }
  if (!o.input || !o.human || !o.metrics) {
    fprintf(stderr, "%s: --input, --human and --metrics are required\n", CMD);
    return tl_usage_error(tl_usage_correlate);
  }
  if (tl_opt_nonempty(CMD, "--input", o.input) || tl_opt_nonempty(CMD, "--human", o.human) ||
      tl_opt_names(CMD, "--metrics", o.metrics) || (o.group_by && tl_opt_names(CMD, "--group-by", o.group_by)) ||
      (o.indices && tl_opt_nonempty(CMD, "--indices", o.indices)) ||
      (o.cluster && tl_opt_nonempty(CMD, "--cluster", o.cluster)) ||
      (o.system && tl_opt_nonempty(CMD, "--system", o.system)))
    return TL_EXIT_USAGE;
  if (o.cluster && o.indices) {
    fprintf(stderr, "%s: --cluster and --indices do not go together (the matrix gives the resamples)\n", CMD);
    return TL_EXIT_USAGE;
  }
  if (o.out && !o.out[0]) {
    fprintf(stderr, "%s: --output needs a file path\n", CMD);
    return TL_EXIT_USAGE;
  }
  if (check_agreement(CMD, &o)) return TL_EXIT_USAGE;
  return tl_cli_solo_or_mpi(&argc, &argv, CMD, corr_mpi, &o);
}
