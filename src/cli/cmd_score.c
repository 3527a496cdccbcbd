/* cmd_score.c - `tally score vqa`: the official VQA accuracy of one results file, a drop-in for
 * GT-Vision-Lab/VQA's vqaEval.py (docs/VQA.md).
 *
 *   tally score vqa --annotations A [--questions Q] --results R [--version V] [--output F]
 *   tally score vqa --items ITEMS.jsonl --results R ...
 *
 * Prints (or writes to --output, through a temporary file renamed at the end) one JSON object:
 * {"overall": x, "perQuestionType": {...}, "perAnswerType": {...}, "perQuestion": {"id": x}},
 * each x as the official script computes and rounds it. Input problems are reported on stderr
 * with file:line and counted; questions without a result are left out of every accuracy and
 * counted. An input that is not valid JSON (a file cut mid-way, a broken line) is fatal: nothing
 * is printed but the error. Exit: 0 ok, 1 failure (I/O, nothing to score), 2 usage, 3 bad input with
 * --strict-input. No MPI: the work is one pass over the files. The benchmark (vqa, the only one)
 * is the one operand; options may come before or after it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outsafe.h"
#include "tally/inlog.h"
#include "vqa_data.h"
#include "vqa_eval.h"
#include "usage.h"

static const char *const CMD = "tally score vqa";

typedef struct {
  const char *questions, *annotations, *items, *results, *output;
  int version, strict;
} score_opts;

enum { O_Q = 1, O_A, O_I, O_R, O_V, O_O, O_STRICT, O_HELP };
const struct option tl_opts_score[] = {
    {"questions", required_argument, NULL, O_Q},   {"annotations", required_argument, NULL, O_A},
    {"items", required_argument, NULL, O_I},       {"results", required_argument, NULL, O_R},
    {"version", required_argument, NULL, O_V},     {"output", required_argument, NULL, O_O},
    {"out", required_argument, NULL, O_O},         {"strict-input", no_argument, NULL, O_STRICT},
    {"help", no_argument, NULL, O_HELP},           {NULL, 0, NULL, 0}};

/* Parses argv (argv[0] = "score"; the benchmark "vqa" is the one operand, "help" prints the
 * usage); returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, score_opts *o) {
  static const char *const VERSIONS[] = {"official", "2017", "normalized"};
  _Static_assert(sizeof VERSIONS / sizeof VERSIONS[0] == TL_VQA__COUNT, "one name per version");
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_score, NULL)) != -1) {
    switch (c) {
    case O_Q: o->questions = optarg; break;
    case O_A: o->annotations = optarg; break;
    case O_I: o->items = optarg; break;
    case O_R: o->results = optarg; break;
    case O_V:
      if ((o->version = tl_opt_choice(CMD, "--version", optarg, VERSIONS, TL_VQA__COUNT)) < 0) return TL_EXIT_USAGE;
      break;
    case O_O: o->output = optarg; break;
    case O_STRICT: o->strict = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_score);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_score);
    }
  }
  if (optind < argc && !strcmp(argv[optind], "help")) return tl_usage_help(CMD, tl_usage_score);
  if (optind >= argc) {
    fprintf(stderr, "tally score: the benchmark is missing (known: vqa)\n");
    return tl_usage_error(tl_usage_score);
  }
  if (strcmp(argv[optind], "vqa") != 0) {
    fprintf(stderr, "tally score: unknown benchmark '%s' (known: vqa)\n", argv[optind]);
    return tl_usage_error(tl_usage_score);
  }
  const char *why = NULL;
  if (optind + 1 < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", CMD, argv[optind + 1]);
    return tl_usage_error(tl_usage_score);
  }
  if (o->items && (o->annotations || o->questions)) why = "--items replaces --annotations and --questions: give one form";
  else if (!o->items && !o->annotations) why = "--annotations (or --items) is required";
  else if (!o->results) why = "--results is required";
  if (why) {
    fprintf(stderr, "%s: %s\n", CMD, why);
    return tl_usage_error(tl_usage_score);
  }
  return -1;
}

/* Refuses an output that is an input, or a place that cannot be written (exit 2 / 1). */
static int check_output(const score_opts *o) {
  tl_path_role roles[4];
  int n = 0;
  if (o->questions) roles[n++] = (tl_path_role){o->questions, "the questions file"};
  if (o->annotations) roles[n++] = (tl_path_role){o->annotations, "the annotations file"};
  if (o->items) roles[n++] = (tl_path_role){o->items, "the items file"};
  roles[n++] = (tl_path_role){o->results, "the results file"};
  tl_err err = {{0}};
  tl_status st = o->output ? tl_out_check_stream_place(o->output, &err) : TL_OK;
  if (st == TL_OK && o->output) st = tl_out_check_inputs(o->output, "the output", roles, n, &err);
  if (st == TL_OK && !o->output) st = tl_stdout_check_inputs(roles, n, &err);
  if (st == TL_OK) return -1;
  fprintf(stderr, "%s: %s\n", CMD, err.msg);
  return tl_exit_code(st); /* TL_EUSAGE: 2; TL_EIO, TL_ENOMEM: 1 */
}

/* Writes text + "\n" to path ("-" or NULL: standard output; a device or FIFO in place; a file
 * through "<path>.tmp-XXXXXX" renamed over it: tl_out_stream). */
static int write_output(const char *path, const char *text) {
  tl_out_stream os;
  tl_err err = {{0}};
  if (tl_out_stream_open(&os, path ? path : "-", &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return TL_EXIT_FAIL;
  }
  int ok = fprintf(os.f, "%s\n", text) >= 0;
  int e = errno;
  if (tl_out_stream_close(&os, 1, &err) != TL_OK || !ok) {
    if (err.msg[0]) fprintf(stderr, "%s: %s\n", CMD, err.msg);
    else fprintf(stderr, "%s: cannot write %s: %s\n", CMD, path && !tl_path_is_std(path) ? path : "standard output", strerror(e));
    if (path && !tl_path_is_std(path)) fprintf(stderr, "%s: '%s' was not written\n", CMD, path);
    return TL_EXIT_FAIL;
  }
  return TL_EXIT_OK;
}

/* The exit code of a failed load or report. */
static int fail_code(tl_status st, const tl_err *err, int strict) {
  fprintf(stderr, "%s: %s\n", CMD, err->msg[0] ? err->msg : tl_strerror(st));
  /* not valid JSON: 1 (3 under --strict-input) */
  return st == TL_EINPUT && strict ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
}

/* Whether a file the log reported since row `from` of its table is not valid JSON (a malformed
 * or non-UTF-8 line or element of `path`): then TL_EINPUT with err "PATH: not valid JSON: line L:
 * why", else TL_OK. A JSONL file cut mid-way, or one broken line, is never scored as the whole
 * (the official JSON forms are refused by the loader itself, at the byte where they break). */
static tl_status whole_json(const tl_inlog *log, size_t from, const char *path, tl_err *err) {
  const tl_table *t = log->table;
  for (size_t r = from; t && r < t->nrows; r++) {
    const char *kind = t->cols[0].v.s[r];
    if (strcmp(t->cols[1].v.s[r], path) || (strcmp(kind, "malformed_json") && strcmp(kind, "invalid_utf8")))
      continue;
    return tl_err_set(err, TL_EINPUT, "%s: not valid JSON: line %lld: %s; the file is not used (a file cut short, "
                      "or an editing mistake?)", path, (long long)t->cols[2].v.i[r], t->cols[3].v.s[r]);
  }
  return TL_OK;
}

/* Loads, scores and prints; the exit code. */
static int score(const score_opts *o) {
  tl_inlog log;
  if (tl_inlog_init(&log, stderr, o->strict) != TL_OK) {
    fprintf(stderr, "%s: out of memory\n", CMD);
    return TL_EXIT_FAIL;
  }
  tl_vqa_set set;
  tl_vqa_results res;
  memset(&res, 0, sizeof res);
  tl_err err = {{0}};
  cJSON *json = NULL;
  tl_vqa_summary sum;
  int rc = TL_EXIT_OK;
  size_t rows0 = log.table->nrows;
  tl_status st = o->items ? tl_vqa_load_items(&set, o->items, &log, &err)
                          : tl_vqa_load_official(&set, o->questions, o->annotations, &log, &err);
  if (st == TL_OK && o->questions) st = whole_json(&log, rows0, o->questions, &err);
  if (st == TL_OK) st = whole_json(&log, rows0, o->items ? o->items : o->annotations, &err);
  rows0 = log.table->nrows;
  if (st == TL_OK) st = tl_vqa_load_results(&res, &set, o->results, &log, &err);
  if (st == TL_OK) st = whole_json(&log, rows0, o->results, &err);
  if (st == TL_OK) st = tl_vqa_report(&set, &res, (tl_vqa_version)o->version, &json, &sum, &err);
  if (st != TL_OK) {
    rc = fail_code(st, &err, o->strict);
  } else {
    char *text = cJSON_PrintUnformatted(json);
    rc = text ? write_output(o->output, text) : (fprintf(stderr, "%s: out of memory\n", CMD), TL_EXIT_FAIL);
    free(text);
    fprintf(stderr, "%s: %zu questions, %zu scored, %zu without a result (version %s)\n", CMD,
            sum.n_items, sum.n_scored, sum.n_missing, tl_vqa_version_name((tl_vqa_version)o->version));
    if (sum.n_not10)
      fprintf(stderr, "%s: note: %zu scored questions have a number of reference answers other than 10 "
              "(scored with the general leave-one-out formula)\n", CMD, sum.n_not10);
  }
  if (log.total)
    fprintf(stderr, "%s: %ld input problem%s (see above)\n", CMD, log.total, log.total == 1 ? "" : "s");
  cJSON_Delete(json);
  tl_vqa_results_release(&res);
  tl_vqa_set_release(&set);
  tl_inlog_release(&log);
  return rc;
}

int tl_cmd_score(int argc, char **argv) {
  if (argc < 2) return tl_usage_error(tl_usage_score);
  score_opts o;
  memset(&o, 0, sizeof o);
  o.version = TL_VQA_OFFICIAL;
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0) return rc;
  if ((rc = check_output(&o)) >= 0) return rc;
  /* '-' is standard input, for one of the inputs, and a named pipe or a process substitution
   * (`--results <(zcat r.json.gz)`) can be read once too: each is copied to a file first (the
   * readers open a path, and the results are read twice: their form, then their records) */
  const char **ins[] = {&o.questions, &o.annotations, &o.items, &o.results};
  const char **std_in = NULL;
  for (size_t i = 0; i < sizeof ins / sizeof *ins; i++)
    if (*ins[i] && tl_path_is_std(*ins[i])) {
      if (std_in) return fprintf(stderr, "%s: only one input can be standard input ('-')\n", CMD), TL_EXIT_USAGE;
      std_in = ins[i];
    }
  enum { NIN = sizeof ins / sizeof *ins };
  char *spool[NIN] = {NULL};
  tl_err err = {{0}};
  tl_status st = TL_OK;
  for (size_t i = 0; i < NIN && st == TL_OK; i++) {
    if (ins[i] == std_in) st = tl_in_spool_stdin(&spool[i], &err);
    else if (*ins[i] && tl_in_once(*ins[i])) {
      st = tl_in_spool(*ins[i], &spool[i], &err);
      if (!st) /* its messages name the copy: say whose copy it is */
        fprintf(stderr, "%s: '%s' can be read only once: it is read from its copy '%s'\n", CMD, *ins[i], spool[i]);
    }
    if (spool[i]) *ins[i] = spool[i];
  }
  rc = st == TL_OK ? score(&o) : (fprintf(stderr, "%s: %s\n", CMD, err.msg), TL_EXIT_FAIL);
  for (size_t i = 0; i < NIN; i++) tl_in_spool_release(spool[i]);
  return rc;
}
