/* cmd_merge.c - `tally merge A.h5 B.h5 ... -o SWEEP.h5`: the outputs of several runs of one study
 * (the tasks of a sweep: other models, seeds or benchmarks, same settings) as one file that
 * equals a single run over all of them (docs/MERGE.md).
 *
 * Nothing is averaged from the inputs' tables. Each input must have kept its journal
 * (`A.h5.journal/`, `tally run --keep-journal`; the sweep scripts pass it): the journal holds
 * every stage's reply of every unit, with its evidence. Rank 0 reads each input's `job`,
 * `job_dir` and `input_files` root attributes and refuses inputs whose settings disagree (naming
 * the first setting that differs) or whose items changed since they ran (SHA-256). It writes the
 * merged job - the shared settings, each benchmark with the union of the inputs' answers, models
 * and seeds - next to the output as `SWEEP.h5.merge-job.json` (removed at the end), and every
 * rank runs it through the driver in merge mode (tl_run_job with tl_run_opts.merge): the cfgs
 * are the (model, variant, seed) the journals record, every unit is rebuilt from its records and
 * scored again by its module, no engine is opened, and the tables, metrics and studies are
 * computed as `tally run` computes them, so the file is byte-identical in its datasets to one run
 * of the merged job, on any rank count. A unit two inputs hold is refused unless --overlap says
 * which to keep. Rerunning a merge with the same inputs gives the same file (idempotent). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "driver.h"
#include "h5_read.h"
#include "journal.h"
#include "outsafe.h"
#include "provenance.h"
#include "tally/job.h"
#include "tally/str.h"
#include "usage.h"

static const char *const OVERLAP[] = {"error", "first", "last", "identical"};

typedef struct {
  char **inputs;
  int n;
  const char *out;
  const char *name;
  int overlap, quiet, partial, force, break_lock;
} merge_args;

/* A merge of the cells of one sweep (inputs written by `tally run --cell K`), rank 0. */
typedef struct {
  long n;          /* the sweep's cells (models x seeds); 0: the inputs are no cells */
  char *merged;    /* "0,2" */
  char *missing;   /* "1,3", "" when none */
  char *missing_named; /* "1 (model b, seed 0), 3 (...)" for messages */
  long n_merged;
} sweep_cells;

/* The keys of a job that name what was run rather than how: they may differ between inputs. */
static const char *const TOP_FREE[] = {"name", "output", NULL};
static const char *const BENCH_FREE[] = {"answers", "judgments", "models", "seeds", NULL};

static int in_list(const char *const *l, const char *s) {
  for (; *l; l++)
    if (strcmp(*l, s) == 0) return 1;
  return 0;
}

/* The first place where a and b differ, as a path ("engines.model.sampling.temperature"), into
 * out; returns 1 when they differ. */
static int json_diff(const cJSON *a, const cJSON *b, const char *path, tl_buf *out) {
  if (cJSON_Compare(a, b, 1)) return 0;
  if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
    const cJSON *c;
    for (int pass = 0; pass < 2; pass++)
      for (c = (pass ? b : a)->child; c; c = c->next) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(pass ? a : b, c->string);
        char sub[512];
        snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", c->string);
        if (!o) {
          tl_buf_printf(out, "%s (set in one, absent in the other)", sub);
          return 1;
        }
        if (!pass && json_diff(c, o, sub, out)) return 1;
      }
  }
  if (cJSON_IsArray(a) && cJSON_IsArray(b) && cJSON_GetArraySize(a) == cJSON_GetArraySize(b)) {
    int i = 0;
    for (const cJSON *x = a->child, *y = b->child; x && y; x = x->next, y = y->next, i++) {
      char sub[512];
      snprintf(sub, sizeof sub, "%s[%d]", path, i);
      if (json_diff(x, y, sub, out)) return 1;
    }
  }
  tl_buf_printf(out, "%s", path[0] ? path : "(the whole job)");
  return 1;
}

/* Appends v (or each item of v, a list) to list, each value once (cJSON_Compare). */
static void union_into(cJSON *list, const cJSON *v) {
  if (!v) return;
  if (cJSON_IsArray(v)) {
    for (const cJSON *e = v->child; e; e = e->next) union_into(list, e);
    return;
  }
  for (const cJSON *x = list->child; x; x = x->next)
    if (cJSON_Compare(x, v, 1)) return;
  cJSON_AddItemToArray(list, cJSON_Duplicate(v, 1));
}

/* One input as read on rank 0. */
typedef struct {
  char *job, *job_dir, *files, *jdir;
  char hash[TL_JOB_HASH_LEN];
  cJSON *root;
  int64_t cell; /* its sweep_cell attribute, -1 when it has none */
} input;

static void input_release(input *in) {
  free(in->job);
  free(in->job_dir);
  free(in->files);
  free(in->jdir);
  cJSON_Delete(in->root);
}

/* The path strings of a job as absolute paths: every string value v of `node` (but the top-level
 * "output") that, resolved against the job's folder `dir`, names one of the files the run read
 * (its input_files attribute, absolute) is replaced by that absolute path. So the jobs of inputs
 * that ran from different folders compare by the files they name, not by their folders. */
static void absolutize(cJSON *node, const char *dir, const cJSON *files, int top) {
  for (cJSON *c = node->child; c; c = c->next) {
    if (top && c->string && !strcmp(c->string, "output")) continue;
    if (cJSON_IsString(c) && c->valuestring[0]) {
      char *r = tl_path_resolve(dir, c->valuestring), *a = r ? tl_path_absolute(r) : NULL;
      const cJSON *f;
      int hit = 0;
      cJSON_ArrayForEach(f, files) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path");
        if (a && cJSON_IsString(p) && (!strcmp(p->valuestring, a) || tl_same_file(p->valuestring, a))) hit = 1;
      }
      if (hit && strcmp(a, c->valuestring)) cJSON_SetValuestring(c, a);
      free(r);
      free(a);
    } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      absolutize(c, dir, files, 0);
    }
  }
}

/* The first benchmark's `key` list of a job ("models", "seeds"), or NULL. */
static const cJSON *sweep_list(const cJSON *root, const char *key) {
  const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "benchmarks"), 0);
  const cJSON *l = b ? cJSON_GetObjectItemCaseSensitive(b, key) : NULL;
  return cJSON_IsArray(l) && cJSON_GetArraySize(l) > 0 ? l : NULL;
}

/* Rank 0: the sweep cells the inputs hold (each cell input's sweep_cell attribute, its job the
 * whole sweep). Inputs that are no cells: c->n = 0. Mixed inputs, or cells of different sweeps,
 * are refused (exit 2). Returns an exit code. */
static int find_cells(const merge_args *a, const input *in, sweep_cells *c) {
  memset(c, 0, sizeof *c);
  int ncell_in = 0;
  for (int i = 0; i < a->n; i++) ncell_in += in[i].cell >= 0;
  if (!ncell_in) return TL_EXIT_OK;
  int first = 0;
  while (in[first].cell < 0) first++; /* the first cell input */
  for (int i = 0; i < a->n; i++)
    if (in[i].cell < 0) {
      fprintf(stderr, "tally merge: '%s' is a cell of a sweep (tally run --cell) and '%s' is not: merge the cells of "
                      "one sweep, or whole runs\n", a->inputs[first], a->inputs[i]);
      return TL_EXIT_USAGE;
    }
  const cJSON *m0 = sweep_list(in[first].root, "models"), *s0 = sweep_list(in[first].root, "seeds");
  if (!m0 || !s0) {
    fprintf(stderr, "tally merge: '%s' records sweep cell %lld, but its job lists no models and seeds\n",
            a->inputs[first], (long long)in[first].cell);
    return TL_EXIT_USAGE;
  }
  const int nm = cJSON_GetArraySize(m0), ns = cJSON_GetArraySize(s0);
  c->n = (long)nm * ns;
  for (int i = 0; i < a->n; i++) {
    const cJSON *m = sweep_list(in[i].root, "models"), *sd = sweep_list(in[i].root, "seeds");
    if (!m || !sd || !cJSON_Compare(m, m0, 1) || !cJSON_Compare(sd, s0, 1)) {
      fprintf(stderr, "tally merge: '%s' and '%s' are cells of different sweeps (their jobs' models or seeds differ)\n",
              a->inputs[i], a->inputs[first]);
      return TL_EXIT_USAGE;
    }
    if (in[i].cell >= c->n) {
      fprintf(stderr, "tally merge: '%s' records sweep cell %lld of a sweep of %ld cells\n", a->inputs[i],
              (long long)in[i].cell, c->n);
      return TL_EXIT_USAGE;
    }
  }
  char *have = calloc((size_t)c->n, 1);
  tl_buf mg, ms, mn;
  tl_buf_init(&mg);
  tl_buf_init(&ms);
  tl_buf_init(&mn);
  if (!have) return TL_EXIT_FAIL;
  for (int i = 0; i < a->n; i++) have[in[i].cell] = 1;
  long shown = 0;
  for (long k = 0; k < c->n; k++) {
    if (have[k]) {
      tl_buf_printf(&mg, "%s%ld", c->n_merged++ ? "," : "", k);
      continue;
    }
    tl_buf_printf(&ms, "%s%ld", ms.len ? "," : "", k);
    if (shown++ < 20) {
      const cJSON *mk = cJSON_GetArrayItem(m0, (int)(k / ns)), *sk = cJSON_GetArrayItem(s0, (int)(k % ns));
      char *mt = cJSON_PrintUnformatted(mk), *stx = cJSON_PrintUnformatted(sk);
      tl_buf_printf(&mn, "%s%ld (model %s, seed %s)", mn.len ? ", " : "", k, mt ? mt : "?", stx ? stx : "?");
      free(mt);
      free(stx);
    } else if (shown == 21) {
      tl_buf_puts(&mn, ", ...");
    }
  }
  free(have);
  tl_buf_puts(&mg, "");
  tl_buf_puts(&ms, "");
  tl_buf_puts(&mn, "");
  c->merged = tl_buf_detach(&mg);
  c->missing = tl_buf_detach(&ms);
  c->missing_named = tl_buf_detach(&mn);
  if (!c->merged || !c->missing || !c->missing_named) return TL_EXIT_FAIL;
  if (c->missing[0] && !a->partial) {
    fprintf(stderr, "tally merge: the inputs hold %ld of the sweep's %ld cells; missing: %s. Merge every cell, or pass "
                    "--partial to write an output marked partial (nothing was written)\n", c->n_merged, c->n,
            c->missing_named);
    return TL_EXIT_USAGE;
  }
  return TL_EXIT_OK;
}

static void cells_release(sweep_cells *c) {
  free(c->merged);
  free(c->missing);
  free(c->missing_named);
  memset(c, 0, sizeof *c);
}

/* Steps of prepare return this to go on; any other value is the command's exit code. */
enum { GO_ON = -1 };

/* The output is none of the inputs, nor their journals, nor the merged job file at job_path.
 * Sets each in[i].jdir (the input's journal folder). Returns GO_ON, or TL_EXIT_USAGE (with its
 * message, but none when out of memory). */
static int check_places(const merge_args *a, const char *job_path, input *in) {
  tl_err err = {{0}};
  tl_path_role *roles = calloc((size_t)a->n * 2 + 1, sizeof *roles);
  if (!roles) return TL_EXIT_USAGE;
  for (int i = 0; i < a->n; i++) {
    in[i].jdir = tl_journal_dir(a->inputs[i]);
    roles[2 * i] = (tl_path_role){a->inputs[i], "an input of the merge"};
    roles[2 * i + 1] = (tl_path_role){in[i].jdir, "an input's journal"};
  }
  int bad = tl_out_check_place(a->out, &err) || tl_out_check_inputs(a->out, "the merged output", roles, 2 * a->n, &err) ||
            tl_out_check_inputs(job_path, "the merged job file", roles, 2 * a->n, &err);
  free(roles);
  if (bad) return fprintf(stderr, "tally merge: %s\n", err.msg), TL_EXIT_USAGE;
  return GO_ON;
}

/* The items (and every other input but answers) are what input i's units are scored against:
 * each file its input_files attribute names must still be the file the run read (SHA-256).
 * Returns GO_ON, or TL_EXIT_USAGE with its message. */
static int check_input_files(const merge_args *a, int i, const input *in) {
  tl_err err = {{0}};
  cJSON *files = cJSON_Parse(in[i].files);
  const cJSON *f;
  int bad = !cJSON_IsArray(files);
  cJSON_ArrayForEach(f, files) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path"), *w = cJSON_GetObjectItemCaseSensitive(f, "what"),
                *h = cJSON_GetObjectItemCaseSensitive(f, "sha256");
    if (!cJSON_IsString(p) || !cJSON_IsString(w) || !cJSON_IsString(h)) {
      bad = 1;
      break;
    }
    if (!strcmp(w->valuestring, "the job file") || !strcmp(w->valuestring, "an answers file") ||
        !strcmp(w->valuestring, "a judgments file"))
      continue;
    char hex[65];
    if (tl_sha256_file(p->valuestring, hex, &err)) {
      fprintf(stderr, "tally merge: '%s' was scored against %s '%s', which cannot be read now: %s\n", a->inputs[i],
              w->valuestring, p->valuestring, err.msg);
      cJSON_Delete(files);
      return TL_EXIT_USAGE;
    }
    if (strcmp(hex, h->valuestring) != 0) {
      fprintf(stderr, "tally merge: %s '%s' changed since '%s' was written (SHA-256 %.12s..., now %.12s...): its "
                      "units would be scored against other data\n", w->valuestring, p->valuestring, a->inputs[i],
              h->valuestring, hex);
      cJSON_Delete(files);
      return TL_EXIT_USAGE;
    }
  }
  cJSON_Delete(files);
  if (bad) return fprintf(stderr, "tally merge: '%s': its input_files attribute is malformed\n", a->inputs[i]), TL_EXIT_USAGE;
  return GO_ON;
}

/* Input i: given once, a readable output of tally run with its job, job_dir, input_files and
 * sweep_cell attributes (into in[i]), its journal kept, its job a JSON object (in[i].root), and
 * its files unchanged (check_input_files). hashes[i] = in[i].hash, the job's hash. Returns
 * GO_ON, or TL_EXIT_USAGE with its message. */
static int read_input(const merge_args *a, int i, input *in, char (*hashes)[TL_JOB_HASH_LEN]) {
  tl_err err = {{0}};
  for (int k = 0; k < i; k++)
    if (tl_same_file(a->inputs[i], a->inputs[k]))
      return fprintf(stderr, "tally merge: '%s' is given twice (as '%s' too)\n", a->inputs[i], a->inputs[k]), TL_EXIT_USAGE;
  if (tl_h5_check_output(a->inputs[i], &err)) /* not HDF5, truncated, a folder, missing: one line */
    return fprintf(stderr, "tally merge: %s\n", err.msg), TL_EXIT_USAGE;
  if (tl_h5_read_attr_i64(a->inputs[i], "sweep_cell", &in[i].cell, &err) != TL_OK) in[i].cell = -1;
  if (tl_h5_read_attr_str(a->inputs[i], "job", &in[i].job, &err))
    return fprintf(stderr, "tally merge: %s (not an output of tally run?)\n", err.msg), TL_EXIT_USAGE;
  if (tl_h5_read_attr_str(a->inputs[i], "job_dir", &in[i].job_dir, &err) ||
      tl_h5_read_attr_str(a->inputs[i], "input_files", &in[i].files, &err)) {
    fprintf(stderr, "tally merge: %s: written by a tally older than merge (no job_dir/input_files); run it "
                    "again with this tally (with --keep-journal)\n", err.msg);
    return TL_EXIT_USAGE;
  }
  if (!tl_journal_exists(in[i].jdir)) {
    fprintf(stderr, "tally merge: '%s' kept no journal ('%s' is missing or empty): a merge re-scores every unit "
                    "from the records a run keeps with --keep-journal (tally slurm's sweep tasks pass it); run that "
                    "job again with --keep-journal (with the replay engine, or --cache, no request is sent twice)\n",
            a->inputs[i], in[i].jdir);
    return TL_EXIT_USAGE;
  }
  tl_journal_job_hash(in[i].job, in[i].hash);
  memcpy(hashes[i], in[i].hash, TL_JOB_HASH_LEN);
  if (!(in[i].root = cJSON_Parse(in[i].job)) || !cJSON_IsObject(in[i].root))
    return fprintf(stderr, "tally merge: '%s': its job attribute is not a JSON object\n", a->inputs[i]), TL_EXIT_USAGE;
  return check_input_files(a, i, in);
}

/* Jobs that ran from different folders (resolved) compare by the files their paths name: each
 * job's paths are made absolute (the merged job then names every file absolutely). Returns 1
 * when the folders differ (the jobs were rewritten), else 0. */
static int resolve_dirs(const merge_args *a, input *in) {
  int dirs_differ = 0;
  for (int i = 1; i < a->n; i++)
    if (strcmp(in[i].job_dir, in[0].job_dir) != 0 && !tl_same_file(in[i].job_dir, in[0].job_dir)) dirs_differ = 1;
  for (int i = 0; dirs_differ && i < a->n; i++) {
    cJSON *files = cJSON_Parse(in[i].files);
    if (files) absolutize(in[i].root, in[i].job_dir, files, 1);
    cJSON_Delete(files);
  }
  return dirs_differ;
}

/* The merge's job so far: the settings (one copy), the benchmarks (bench), and the note the
 * messages add when the jobs' paths were resolved in their own folders. */
typedef struct {
  cJSON *merged; /* every top-level key but TOP_FREE and "benchmarks", from the first input */
  cJSON *bench;  /* the benchmarks, matched by name: the first input's settings, BENCH_FREE merged */
  const char *note;
  tl_buf diff;   /* scratch: json_diff's path */
} merged_job;

/* Benchmark entry e of input i into m->bench: the first with its name gives its settings (with
 * empty BENCH_FREE lists); a later one must have the same settings but for BENCH_FREE. Answers
 * and judgments: every source once; models and seeds: the union, and no filter (a null mark)
 * when some input had none (it ran on whatever its answers held). Returns GO_ON,
 * TL_EXIT_USAGE (the setting that differs named), or TL_EXIT_FAIL out of memory (with its
 * message). */
static int merge_bench_entry(const merge_args *a, int i, const cJSON *e, merged_job *m) {
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "benchmark");
  if (!cJSON_IsString(nm)) return GO_ON;
  cJSON *have = NULL, *x;
  cJSON_ArrayForEach(x, m->bench) if (!strcmp(cJSON_GetObjectItemCaseSensitive(x, "benchmark")->valuestring,
                                              nm->valuestring)) have = x;
  cJSON *norm = cJSON_CreateObject();
  for (const cJSON *c = e->child; norm && c; c = c->next)
    if (!in_list(BENCH_FREE, c->string)) cJSON_AddItemToObject(norm, c->string, cJSON_Duplicate(c, 1));
  if (!norm) return fprintf(stderr, "tally merge: out of memory\n"), TL_EXIT_FAIL;
  if (!have) { /* the first input with this benchmark: its settings */
    have = cJSON_Duplicate(norm, 1);
    cJSON_AddItemToArray(m->bench, have);
    for (const char *const *k = BENCH_FREE; *k; k++) cJSON_AddItemToObject(have, *k, cJSON_CreateArray());
  } else {
    cJSON *cmp = cJSON_Duplicate(have, 1);
    for (const char *const *k = BENCH_FREE; *k; k++) cJSON_DeleteItemFromObjectCaseSensitive(cmp, *k);
    tl_buf_reset(&m->diff);
    char where[256];
    snprintf(where, sizeof where, "benchmarks[%s]", nm->valuestring);
    int dd = json_diff(cmp, norm, where, &m->diff);
    cJSON_Delete(cmp);
    if (dd) {
      fprintf(stderr, "tally merge: cannot merge '%s' with the inputs before it: the setting %s differs%s\n",
              a->inputs[i], m->diff.data, m->note);
      cJSON_Delete(norm);
      return TL_EXIT_USAGE;
    }
  }
  cJSON_Delete(norm);
  for (const char *const *k = BENCH_FREE; *k; k++) {
    cJSON *list = cJSON_GetObjectItemCaseSensitive(have, *k);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, *k);
    if (!list) continue;
    if (!v && (!strcmp(*k, "models") || !strcmp(*k, "seeds"))) {
      cJSON_DeleteItemFromObjectCaseSensitive(have, *k);
      cJSON_AddItemToObject(have, *k, cJSON_CreateNull()); /* marks: no filter */
      continue;
    }
    if (cJSON_IsArray(list)) union_into(list, v);
  }
  return GO_ON;
}

/* Settings: every top-level key but the free ones equal (m->merged from the first input);
 * benchmarks matched by name, each entry equal but for its answers, judgments, models and seeds
 * (merge_bench_entry); then the empty lists and no-filter marks dropped. Returns GO_ON, or the
 * exit code with its message. */
static int merge_settings(const merge_args *a, const input *in, merged_job *m) {
  for (const cJSON *c = in[0].root->child; c; c = c->next)
    if (!in_list(TOP_FREE, c->string) && strcmp(c->string, "benchmarks"))
      cJSON_AddItemToObject(m->merged, c->string, cJSON_Duplicate(c, 1));
  for (int i = 0; i < a->n; i++) {
    cJSON *rest = cJSON_CreateObject();
    for (const cJSON *c = in[i].root->child; rest && c; c = c->next)
      if (!in_list(TOP_FREE, c->string) && strcmp(c->string, "benchmarks"))
        cJSON_AddItemToObject(rest, c->string, cJSON_Duplicate(c, 1));
    tl_buf_reset(&m->diff);
    int d = rest && json_diff(m->merged, rest, "", &m->diff);
    cJSON_Delete(rest);
    if (d) {
      fprintf(stderr, "tally merge: cannot merge '%s' with '%s': the setting %s differs%s\n", a->inputs[i],
              a->inputs[0], m->diff.data, m->note);
      return TL_EXIT_USAGE;
    }
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(in[i].root, "benchmarks"), *e;
    cJSON_ArrayForEach(e, bs) {
      int rc = merge_bench_entry(a, i, e, m);
      if (rc != GO_ON) return rc;
    }
  }
  cJSON *x; /* drop empty lists and the no-filter marks */
  cJSON_ArrayForEach(x, m->bench) for (const char *const *k = BENCH_FREE; *k; k++) {
    cJSON *l = cJSON_GetObjectItemCaseSensitive(x, *k);
    if (l && (cJSON_IsNull(l) || cJSON_GetArraySize(l) == 0)) cJSON_DeleteItemFromObjectCaseSensitive(x, *k);
  }
  return GO_ON;
}

/* The merged job: m's settings, "name" (--name, else the first input's, else "merge"), "output"
 * (absolute) and "benchmarks" (m->bench moves into m->merged), printed as JSON into job_path
 * (written as job_path.tmp, then renamed). Returns TL_EXIT_OK, or TL_EXIT_FAIL with its message. */
static int write_job(const merge_args *a, const char *job_path, const input *in, merged_job *m) {
  const cJSON *nm0 = cJSON_GetObjectItemCaseSensitive(in[0].root, "name");
  cJSON_AddStringToObject(m->merged, "name", a->name ? a->name : cJSON_IsString(nm0) ? nm0->valuestring : "merge");
  char *abs_out = tl_path_absolute(a->out);
  if (!abs_out) return fprintf(stderr, "tally merge: out of memory\n"), TL_EXIT_FAIL;
  cJSON_AddStringToObject(m->merged, "output", abs_out);
  free(abs_out);
  cJSON_AddItemToObject(m->merged, "benchmarks", m->bench);
  m->bench = NULL;
  char *js = cJSON_Print(m->merged);
  if (!js) return fprintf(stderr, "tally merge: out of memory\n"), TL_EXIT_FAIL;
  tl_buf text, tmp;
  tl_buf_init(&text);
  tl_buf_puts(&text, js);
  tl_buf_puts(&text, "\n");
  free(js);
  tl_buf_init(&tmp);
  tl_buf_printf(&tmp, "%s.tmp", job_path);
  FILE *f = tmp.data ? fopen(tmp.data, "w") : NULL;
  int ok = f && fwrite(text.data, 1, text.len, f) == text.len;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp.data, job_path) != 0) ok = 0;
  int rc = TL_EXIT_OK;
  if (!ok) {
    fprintf(stderr, "tally merge: cannot write the merged job '%s': %s\n", job_path, strerror(errno));
    if (tmp.data) unlink(tmp.data);
    rc = TL_EXIT_FAIL;
  }
  tl_buf_release(&tmp);
  tl_buf_release(&text);
  return rc;
}

/* Rank 0: every check, and the merged job written to job_path. Returns an exit code; on 0,
 * *jobdir_out is the inputs' job folder and hashes[i] each input's job hash. Steps: the
 * output's place (check_places), each input (read_input), the jobs' folders (resolve_dirs),
 * the sweep's cells (find_cells), the settings (merge_settings), the job file (write_job). */
static int prepare(const merge_args *a, const char *job_path, char **jobdir_out, char (*hashes)[TL_JOB_HASH_LEN],
                   sweep_cells *cells) {
  input *in = calloc((size_t)a->n, sizeof *in);
  if (!in) return TL_EXIT_FAIL;
  merged_job m = {0};
  tl_buf_init(&m.diff);
  int rc = check_places(a, job_path, in);
  for (int i = 0; rc == GO_ON && i < a->n; i++) rc = read_input(a, i, in, hashes);
  if (rc == GO_ON) {
    m.note = resolve_dirs(a, in) ? " (compared with the paths of each job resolved in its own folder)" : "";
    int crc = find_cells(a, in, cells);
    if (crc) rc = crc;
  }
  if (rc == GO_ON) {
    m.merged = cJSON_CreateObject();
    m.bench = cJSON_CreateArray();
    if (!m.merged || !m.bench) {
      fprintf(stderr, "tally merge: out of memory\n");
      rc = TL_EXIT_FAIL;
    }
  }
  if (rc == GO_ON) rc = merge_settings(a, in, &m);
  if (rc == GO_ON) rc = write_job(a, job_path, in, &m);
  if (rc == TL_EXIT_OK) {
    *jobdir_out = tl_strdup(in[0].job_dir);
    rc = *jobdir_out ? TL_EXIT_OK : TL_EXIT_FAIL;
  }
  for (int i = 0; i < a->n; i++) input_release(&in[i]);
  free(in);
  cJSON_Delete(m.merged);
  cJSON_Delete(m.bench);
  tl_buf_release(&m.diff);
  return rc;
}

/* Collective: rank 0 prepares, then every rank runs the merged job in merge mode. */
static int merge_mpi(void *ctx, MPI_Comm comm) {
  const merge_args *a = ctx;
  int rank;
  MPI_Comm_rank(comm, &rank);
  tl_buf jp;
  tl_buf_init(&jp);
  tl_buf_printf(&jp, "%s.merge-job.json", a->out);
  char (*hashes)[TL_JOB_HASH_LEN] = calloc((size_t)a->n, sizeof *hashes);
  char *jobdir = NULL;
  sweep_cells cells;
  memset(&cells, 0, sizeof cells);
  int rc = jp.data && hashes ? TL_EXIT_OK : TL_EXIT_FAIL;
  if (rank == 0 && !rc) rc = prepare(a, jp.data, &jobdir, hashes, &cells);
  if (rank == 0 && !rc && cells.missing && cells.missing[0]) /* the summary says it first */
    fprintf(stdout, "PARTIAL merge: %ld of the sweep's %ld cells (merged: %s; missing: %s); every table and "
                    "number below covers the merged cells only\n", cells.n_merged, cells.n, cells.merged,
            cells.missing_named);
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  int64_t dl = jobdir ? (int64_t)strlen(jobdir) : 0;
  if (!rc) {
    MPI_Bcast(&dl, 1, MPI_INT64_T, 0, comm);
    if (rank != 0) jobdir = calloc((size_t)dl + 1, 1);
    MPI_Bcast(jobdir, (int)dl, MPI_CHAR, 0, comm);
    MPI_Bcast(hashes, TL_JOB_HASH_LEN * a->n, MPI_CHAR, 0, comm);
    /* the cells: every rank writes the same attributes (collective) */
    int64_t cl[2] = {cells.merged ? (int64_t)strlen(cells.merged) : -1, cells.missing ? (int64_t)strlen(cells.missing) : 0};
    MPI_Bcast(cl, 2, MPI_INT64_T, 0, comm);
    if (cl[0] >= 0) {
      if (rank != 0) {
        cells.merged = calloc((size_t)cl[0] + 1, 1);
        cells.missing = calloc((size_t)cl[1] + 1, 1);
        if (!cells.merged || !cells.missing) {
          fprintf(stderr, "tally merge: rank %d: out of memory\n", rank);
          MPI_Abort(comm, TL_EXIT_FAIL);
        }
      }
      MPI_Bcast(cells.merged, (int)cl[0], MPI_CHAR, 0, comm);
      MPI_Bcast(cells.missing, (int)cl[1], MPI_CHAR, 0, comm);
    }
  }
  tl_merge_input *mi = rc ? NULL : calloc((size_t)a->n, sizeof *mi);
  char **jdirs = rc ? NULL : calloc((size_t)a->n, sizeof *jdirs);
  if (!rc && (!mi || !jdirs)) rc = TL_EXIT_FAIL;
  for (int i = 0; !rc && i < a->n; i++) {
    jdirs[i] = tl_journal_dir(a->inputs[i]);
    mi[i] = (tl_merge_input){a->inputs[i], jdirs[i], hashes[i]};
  }
  if (!rc) {
    tl_run_opts o;
    memset(&o, 0, sizeof o);
    o.job_path = jp.data;
    o.job_dir = jobdir;
    o.out_override = a->out;
    o.quiet = a->quiet;
    o.merge = mi;
    o.n_merge = a->n;
    o.overlap = a->overlap;
    o.force = a->force;
    o.break_lock = a->break_lock;
    o.cells_merged = cells.merged; /* rank 0 only: the attributes' values, agreed by the writer */
    o.cells_missing = cells.missing;
    o.cell = -1;
    o.out = stdout;
    o.log = stderr;
    rc = tl_run_job(&o, comm);
  }
  if (rank == 0 && !rc && cells.missing && cells.missing[0])
    fprintf(stderr, "tally merge: '%s' is PARTIAL: %ld of %ld cells; missing: %s (root attributes partial = 1, "
                    "cells_missing)\n", a->out, cells.n_merged, cells.n, cells.missing_named);
  cells_release(&cells);
  if (rank == 0 && jp.data) unlink(jp.data);
  for (int i = 0; jdirs && i < a->n; i++) free(jdirs[i]);
  free(jdirs);
  free(mi);
  free(jobdir);
  free(hashes);
  tl_buf_release(&jp);
  return rc;
}

enum { O_OVERLAP = 1, O_NAME, O_QUIET, O_PARTIAL, O_FORCE, O_BREAK, O_HELP };
const struct option tl_opts_merge[] = {{"output", required_argument, NULL, 'o'},
                                       {"out", required_argument, NULL, 'o'},
                                       {"overlap", required_argument, NULL, O_OVERLAP},
                                       {"name", required_argument, NULL, O_NAME},
                                       {"quiet", no_argument, NULL, O_QUIET},
                                       {"partial", no_argument, NULL, O_PARTIAL},
                                       {"force", no_argument, NULL, O_FORCE},
                                       {"break-lock", no_argument, NULL, O_BREAK},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};

int tl_cmd_merge(int argc, char **argv) {
  merge_args a;
  memset(&a, 0, sizeof a);
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", tl_opts_merge, NULL)) != -1) {
    switch (c) {
    case 'o': a.out = optarg; break;
    case O_OVERLAP:
      if ((a.overlap = tl_opt_choice("tally merge", "--overlap", optarg, OVERLAP, 4)) < 0) return TL_EXIT_USAGE;
      break;
    case O_NAME: a.name = optarg; break;
    case O_QUIET: a.quiet = 1; break;
    case O_PARTIAL: a.partial = 1; break;
    case O_FORCE: a.force = 1; break;
    case O_BREAK: a.break_lock = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help("tally merge", tl_usage_merge);
    default: return tl_usage_bad_option("tally merge", c, argv, tl_usage_merge);
    }
  }
  if (!a.out || !a.out[0]) {
    fprintf(stderr, "tally merge: give the merged output with -o FILE.h5\n");
    return tl_usage_error(tl_usage_merge);
  }
  if (optind >= argc) {
    fprintf(stderr, "tally merge: no input files\n");
    return tl_usage_error(tl_usage_merge);
  }
  if (a.name && !a.name[0]) {
    fprintf(stderr, "tally merge: --name needs a name\n");
    return TL_EXIT_USAGE;
  }
  a.inputs = argv + optind;
  a.n = argc - optind;
  return tl_cli_with_mpi(&argc, &argv, "tally merge", merge_mpi, &a);
}
