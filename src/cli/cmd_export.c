/* cmd_export.c - `tally export RUN.h5 --format eee`: a run's per-item results as Every Eval Ever
 * instance lines (issue 31 item 5), so tally's re-scores can be published and compared.
 *
 * Every Eval Ever (evaleval/every_eval_ever, MIT) keeps one JSON object per evaluated sample
 * (its instance-level schema, the version named in EEE_SCHEMA below); tally writes the required
 * members and the single-turn ones: schema_version, evaluation_id, model_id, evaluation_name,
 * sample_id, interaction_type ("single_turn"), input {raw, reference[], choices?}, output {raw[]},
 * messages (null), answer_attribution [{turn_idx 0, source "output.raw", extracted_value,
 * extraction_method (the tally mode and the rule that fired: "tally/strict/letter_final"),
 * is_terminal}], evaluation {score, is_correct}, error (why a unit has no scored answer:
 * missing, engine_error, unparsed status), metadata (string values: seed, prompt variant, task,
 * status, rule, tally mode). One line per unit of the benchmark's item table, in its order.
 *
 * A benchmark whose units are turns of dialogues (a "turn" column: MT-Bench-101) is refused:
 * EEE's multi-turn form needs the whole transcript, which the item table does not hold. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "cli.h"
#include "h5_read.h"
#include "journal.h" /* tl_journal_job_hash: the evaluation id */
#include "outsafe.h"
#include "tally/exit.h"
#include "tally/registry.h"
#include "tally/str.h"
#include "usage.h"

#define EEE_SCHEMA "0.3.0"

enum { O_FORMAT = 1, O_BENCH, O_MODE, O_OUTPUT, O_HELP };
const struct option tl_opts_export[] = {{"format", required_argument, NULL, O_FORMAT},
                                        {"benchmark", required_argument, NULL, O_BENCH},
                                        {"mode", required_argument, NULL, O_MODE},
                                        {"output", required_argument, NULL, O_OUTPUT},
                                        {"out", required_argument, NULL, O_OUTPUT},
                                        {"help", no_argument, NULL, O_HELP},
                                        {NULL, 0, NULL, 0}};

static const char *const CMD = "tally export";

typedef struct {
  const char *path, *bench, *mode, *outp;
  char grp[256];
  char *parsers, *job, *job_name; /* root attributes (owned) */
  char mode_buf[128];
} export_t;

/* The benchmark (--benchmark, else the only one with an item table in the file) and its mode
 * (--mode, else the first the root attribute "parsers" names for it: the primary). Returns -1 to
 * go on, or an exit code with its message printed. */
static int pick(export_t *x) {
  tl_err err = {{0}};
  if (tl_h5_check_output(x->path, &err)) return fprintf(stderr, "%s: %s\n", CMD, err.msg), TL_EXIT_FAIL;
  if (!x->bench) {
    int found = 0;
    for (size_t i = 0; i < tl_bench_count(); i++) {
      snprintf(x->grp, sizeof x->grp, "/items/%s", tl_bench_at(i)->name);
      if (tl_h5_has_column(x->path, x->grp, "id")) x->bench = tl_bench_at(i)->name, found++;
    }
    if (found != 1) {
      fprintf(stderr, "%s: %s: %s; give --benchmark\n", CMD, x->path,
              found ? "several benchmarks" : "no benchmark's item table");
      return found ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  snprintf(x->grp, sizeof x->grp, "/items/%s", x->bench);
  if (!tl_h5_has_column(x->path, x->grp, "id"))
    return fprintf(stderr, "%s: %s has no item table of benchmark '%s'\n", CMD, x->path, x->bench), TL_EXIT_USAGE;
  if (tl_h5_has_column(x->path, x->grp, "turn"))
    return fprintf(stderr, "%s: the units of '%s' are turns of dialogues: Every Eval Ever's multi-turn form needs "
                           "each whole transcript, which the item table does not hold (not exported)\n",
                   CMD, x->bench),
           TL_EXIT_USAGE;
  if (tl_h5_read_attr_str(x->path, "parsers", &x->parsers, &err) ||
      tl_h5_read_attr_str(x->path, "job", &x->job, &err) || tl_h5_read_attr_str(x->path, "job_name", &x->job_name, &err))
    return fprintf(stderr, "%s: %s\n", CMD, err.msg), TL_EXIT_FAIL;
  if (!x->mode) { /* "strict,pr3" or, with several benchmarks, "spatialeval:strict,pr3;vqa:..." */
    const char *p = x->parsers, *own = NULL;
    char pre[160];
    snprintf(pre, sizeof pre, "%s:", x->bench);
    if (strchr(p, ':')) own = strstr(p, pre) ? strstr(p, pre) + strlen(pre) : NULL;
    else own = p;
    if (!own || !*own) return fprintf(stderr, "%s: no modes recorded for '%s': give --mode\n", CMD, x->bench), TL_EXIT_USAGE;
    size_t n = strcspn(own, ",;");
    snprintf(x->mode_buf, sizeof x->mode_buf, "%.*s", (int)n, own);
    x->mode = x->mode_buf;
  }
  char col[200];
  snprintf(col, sizeof col, "correct_%s", x->mode);
  if (!tl_h5_has_column(x->path, x->grp, col) && !tl_h5_has_column(x->path, x->grp, x->mode))
    return fprintf(stderr, "%s: benchmark '%s' has no mode '%s' (its modes: %s)\n", CMD, x->bench, x->mode, x->parsers),
           TL_EXIT_USAGE;
  return -1;
}

/* Column index of name in t, or -1. */
static int col(const tl_table *t, const char *name) { return name ? tl_table_col(t, name) : -1; }

/* A cell as text ("" when the column is absent). */
static const char *cell(const tl_table *t, int c, size_t r, char *num, size_t nn) {
  if (c < 0) return "";
  const tl_col *k = &t->cols[c];
  if (tl_col_is_str(k->type)) return k->v.s[r] ? k->v.s[r] : "";
  if (k->type == TL_COL_I64) snprintf(num, nn, "%lld", (long long)k->v.i[r]);
  else snprintf(num, nn, "%.17g", k->v.f[r]);
  return num;
}

static double num_cell(const tl_table *t, int c, size_t r) {
  if (c < 0) return NAN;
  const tl_col *k = &t->cols[c];
  return k->type == TL_COL_I64 ? (double)k->v.i[r] : k->type == TL_COL_F64 ? k->v.f[r] : NAN;
}

/* Reads what the lines need: every column of the item table that exists among these names. */
static tl_status read_items(const export_t *x, tl_table **t, tl_err *err) {
  char names[12][200];
  const char *want[12];
  int n = 0;
  const char *fixed[] = {"id", "model", "seed", "response", "prompt_variant", "task", "gold", "oracle_option",
                         "oracle_answer", "question"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (tl_h5_has_column(x->path, x->grp, fixed[i])) want[n++] = fixed[i];
  const char *per[] = {"answer_%s", "correct_%s", "rule_%s", "status_%s", "%s"};
  for (size_t i = 0; i < sizeof per / sizeof *per && n < 12; i++) {
    snprintf(names[n], sizeof names[n], per[i], x->mode);
    if (tl_h5_has_column(x->path, x->grp, names[n])) want[n] = names[n], n++;
  }
  return tl_h5_read_table(x->path, x->grp, want, n, t, err);
}

/* One unit's line. */
static cJSON *line(const export_t *x, const tl_table *t, size_t r, const char *eval_id) {
  char nbuf[8][48];
  char name[200];
  const int c_id = col(t, "id"), c_model = col(t, "model"), c_seed = col(t, "seed"), c_resp = col(t, "response");
  const int c_var = col(t, "prompt_variant"), c_task = col(t, "task"), c_q = col(t, "question");
  int c_ref = col(t, "gold");
  if (c_ref < 0) c_ref = col(t, "oracle_option");
  snprintf(name, sizeof name, "answer_%s", x->mode);
  const int c_ans = col(t, name);
  snprintf(name, sizeof name, "correct_%s", x->mode);
  const int c_cor = col(t, name);
  snprintf(name, sizeof name, "rule_%s", x->mode);
  const int c_rule = col(t, name);
  snprintf(name, sizeof name, "status_%s", x->mode);
  const int c_st = col(t, name);
  const int c_score = col(t, x->mode); /* a graded mode (VQA accuracy) */
  const char *status = cell(t, c_st, r, nbuf[0], sizeof nbuf[0]), *rule = cell(t, c_rule, r, nbuf[1], sizeof nbuf[1]);
  double score = c_cor >= 0 ? num_cell(t, c_cor, r) : num_cell(t, c_score, r);
  if (!isfinite(score)) score = 0;
  char method[400], evname[300];
  snprintf(method, sizeof method, "tally/%s/%s", x->mode, rule[0] ? rule : "none");
  const char *task = cell(t, c_task, r, nbuf[2], sizeof nbuf[2]);
  snprintf(evname, sizeof evname, "%s%s%s", x->bench, task[0] ? "/" : "", task);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "schema_version", EEE_SCHEMA);
  cJSON_AddStringToObject(o, "evaluation_id", eval_id);
  cJSON_AddStringToObject(o, "model_id", cell(t, c_model, r, nbuf[3], sizeof nbuf[3]));
  cJSON_AddStringToObject(o, "evaluation_name", evname);
  cJSON_AddStringToObject(o, "sample_id", cell(t, c_id, r, nbuf[4], sizeof nbuf[4]));
  cJSON_AddStringToObject(o, "interaction_type", "single_turn");
  cJSON *in = cJSON_AddObjectToObject(o, "input");
  cJSON_AddStringToObject(in, "raw", cell(t, c_q, r, nbuf[5], sizeof nbuf[5]));
  cJSON *ref = cJSON_AddArrayToObject(in, "reference");
  if (c_ref >= 0) cJSON_AddItemToArray(ref, cJSON_CreateString(cell(t, c_ref, r, nbuf[6], sizeof nbuf[6])));
  cJSON *out = cJSON_AddObjectToObject(o, "output");
  cJSON *raw = cJSON_AddArrayToObject(out, "raw");
  cJSON_AddItemToArray(raw, cJSON_CreateString(cell(t, c_resp, r, nbuf[7], sizeof nbuf[7])));
  cJSON_AddNullToObject(o, "messages");
  cJSON *aa = cJSON_AddArrayToObject(o, "answer_attribution");
  cJSON *a = cJSON_CreateObject();
  cJSON_AddNumberToObject(a, "turn_idx", 0);
  cJSON_AddStringToObject(a, "source", "output.raw");
  cJSON_AddStringToObject(a, "extracted_value", cell(t, c_ans, r, nbuf[0], sizeof nbuf[0]));
  cJSON_AddStringToObject(a, "extraction_method", method);
  cJSON_AddBoolToObject(a, "is_terminal", 1);
  cJSON_AddItemToArray(aa, a);
  cJSON *ev = cJSON_AddObjectToObject(o, "evaluation");
  cJSON_AddNumberToObject(ev, "score", score);
  cJSON_AddBoolToObject(ev, "is_correct", score == 1.0);
  status = cell(t, c_st, r, nbuf[0], sizeof nbuf[0]);
  if (status[0] && strcmp(status, "ok") != 0) cJSON_AddStringToObject(o, "error", status);
  else cJSON_AddNullToObject(o, "error");
  cJSON *md = cJSON_AddObjectToObject(o, "metadata");
  cJSON_AddStringToObject(md, "seed", cell(t, c_seed, r, nbuf[1], sizeof nbuf[1]));
  if (c_var >= 0) cJSON_AddStringToObject(md, "prompt_variant", cell(t, c_var, r, nbuf[2], sizeof nbuf[2]));
  if (task[0]) cJSON_AddStringToObject(md, "task", cell(t, c_task, r, nbuf[3], sizeof nbuf[3]));
  cJSON_AddStringToObject(md, "tally_mode", x->mode);
  cJSON_AddStringToObject(md, "status", status);
  cJSON_AddStringToObject(md, "rule", cell(t, c_rule, r, nbuf[4], sizeof nbuf[4]));
  return o;
}

static int write_lines(export_t *x) {
  tl_err err = {{0}};
  tl_table *t = NULL;
  if (read_items(x, &t, &err)) return fprintf(stderr, "%s: %s\n", CMD, err.msg), TL_EXIT_FAIL;
  char hash[TL_JOB_HASH_LEN], eval_id[TL_JOB_HASH_LEN + 300];
  tl_journal_job_hash(x->job, hash);
  snprintf(eval_id, sizeof eval_id, "tally-%.16s-%s", hash, x->bench);
  tl_out_stream os;
  if (tl_out_stream_open(&os, x->outp ? x->outp : "-", &err) != TL_OK) {
    tl_table_free(t);
    return fprintf(stderr, "%s: %s\n", CMD, err.msg), TL_EXIT_FAIL;
  }
  int ok = 1;
  for (size_t r = 0; ok && r < t->nrows; r++) {
    cJSON *o = line(x, t, r, eval_id);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    ok = s && fputs(s, os.f) >= 0 && fputc('\n', os.f) != EOF;
    free(s);
    cJSON_Delete(o);
  }
  const size_t n = t->nrows;
  tl_table_free(t);
  if (tl_out_stream_close(&os, ok, &err) != TL_OK || !ok)
    return fprintf(stderr, "%s: %s\n", CMD, err.msg[0] ? err.msg : "cannot write the lines"), TL_EXIT_FAIL;
  fprintf(stderr, "%s: %zu Every Eval Ever instance lines (schema %s) of %s, mode %s, to %s\n", CMD, n, EEE_SCHEMA,
          x->bench, x->mode, x->outp && strcmp(x->outp, "-") ? x->outp : "standard output");
  return TL_EXIT_OK;
}

int tl_cmd_export(int argc, char **argv) {
  export_t x;
  memset(&x, 0, sizeof x);
  const char *fmt = NULL;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", tl_opts_export, NULL)) != -1) {
    switch (c) {
    case O_FORMAT: fmt = optarg; break;
    case O_BENCH: x.bench = optarg; break;
    case O_MODE: x.mode = optarg; break;
    case 'o':
    case O_OUTPUT:
      if (tl_opt_nonempty(CMD, "--output", optarg)) return TL_EXIT_USAGE;
      x.outp = optarg;
      break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_export);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_export);
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "%s: %s\n", CMD, optind < argc ? "one run file only" : "the run file is missing");
    return tl_usage_error(tl_usage_export);
  }
  x.path = argv[optind];
  static const char *const FORMATS[] = {"eee"};
  if (!fmt || tl_opt_choice(CMD, "--format", fmt, FORMATS, 1) < 0) {
    if (!fmt) fprintf(stderr, "%s: --format is required: eee (Every Eval Ever instance lines)\n", CMD);
    return TL_EXIT_USAGE;
  }
  tl_err err = {{0}};
  tl_path_role roles[1] = {{x.path, "the run file"}};
  if (x.outp && tl_path_is_std(x.outp)) x.outp = NULL;
  tl_status st = x.outp ? tl_out_check_inputs(x.outp, "the output", roles, 1, &err) : TL_OK;
  if (!st && x.outp) st = tl_out_check_stream_place(x.outp, &err);
  if (st) return fprintf(stderr, "%s: %s\n", CMD, err.msg), tl_exit_code(st);
  int rc = pick(&x);
  if (rc < 0) rc = write_lines(&x);
  free(x.parsers);
  free(x.job);
  free(x.job_name);
  return rc;
}
