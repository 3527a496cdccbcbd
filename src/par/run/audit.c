/* audit.c - the harness audit of imported answers (issue 31 item 4): an answer line converted
 * from another harness's output carries that harness's own verdict ("harness": {"verdict", ...},
 * tl_import_convert); tally scores the same reply with its own parsers, and the audit sets the
 * two side by side, unit by unit: agreement, flips each way with the first example, McNemar's
 * exact test, and each side's accuracy, per model (its variants and seeds) - in /audit/harness/
 * <benchmark> and in the summary ("lm-eval 0.100, tally strict 0.300: 2 items flip up, 0 down").
 *
 * The verdicts are read on every rank, once, at setup (run_audit_load: the answer files again,
 * only the "harness" members; a file whose first line has none - tally's own answers - is left
 * after that line, so a run without imports pays one line per file); each rank counts the units it finishes (run_audit_note, from the
 * pipeline's done callback), and the counts are reduced to rank 0 after the tables are written
 * (run_audit_write, collective). tally's side is the benchmark's mode named as the harness's
 * metric when it has one (VQA's exact_match against lmms-eval's), else the mode of the metric's
 * alias (METRIC_ALIAS: the gen module's exact for exact_match), else its primary mode;
 * a harness verdict other than 0 or 1 (a rating, a partial credit) is counted as not binary and
 * left out of the comparison. A benchmark whose answers carry no harness verdict has no audit;
 * one whose imported lines carry only null verdicts says so. */
#include "run.h"
#include "tally/stats.h"

enum { AU_UNITS, AU_H1, AU_T1, AU_UP, AU_DOWN, AU_NONBIN, AU_N };

/* The (model, variant, seed) of benchmark b as a key, for the cfg lookup. */
static void cfg_key(tl_buf *k, const char *model, int variant, int seed) {
  tl_buf_reset(k);
  tl_buf_printf(k, "%s\x1f%d\x1f%d", model, variant, seed);
}

/* The unit (local index) of benchmark b an imported line names, or UINT64_MAX (not a unit of
 * the run: the replay engine reports such lines). a: the answer file's defaults. */
static uint64_t line_unit(const bench_run *r, size_t b, const tl_strmap *cfg_of, const tl_job_answers *a,
                          const cJSON *o, tl_buf *k) {
  const tl_run_bench *rb = &r->rbs[b];
  const tl_job_bench *jb = &r->job->benches[b];
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "model");
  const cJSON *sd = cJSON_GetObjectItemCaseSensitive(o, "seed");
  const cJSON *pv = cJSON_GetObjectItemCaseSensitive(o, "prompt_variant");
  const cJSON *tn = cJSON_GetObjectItemCaseSensitive(o, "turn");
  const cJSON *ti = cJSON_GetObjectItemCaseSensitive(o, "turn_id");
  size_t item;
  if (!cJSON_IsString(id) || !rb->vt->item_find(rb->b, id->valuestring, &item) || item >= rb->vt->n_items(rb->b))
    return UINT64_MAX;
  const char *model = cJSON_IsString(m) ? m->valuestring : a->model;
  if (!model) return UINT64_MAX;
  const int seed = tl_json_is_int(sd, 0, 2147483647) ? (int)sd->valuedouble : a->seed;
  const char *vname = cJSON_IsString(pv) ? pv->valuestring
                      : a->variant     ? a->variant
                                       : jb->vt->variants[jb->vt->default_variant(jb->mod)];
  const int variant = tl_bench_variant(rb->vt, vname);
  uint32_t sub = 0;
  if (tl_json_is_int(tn, 0, 4294967295.0)) sub = (uint32_t)tn->valuedouble;
  else if (tl_json_is_int(ti, 1, 4294967295.0)) {
    char why[64];
    sub = (uint32_t)ti->valuedouble - 1;
    if (rb->vt->turn_sub && rb->vt->turn_sub(rb->b, item, (uint64_t)ti->valuedouble, &sub, why, sizeof why) != 0)
      return UINT64_MAX;
  }
  if (variant < 0 || sub >= rb->vt->n_subs(rb->b, item)) return UINT64_MAX;
  cfg_key(k, model, variant, seed);
  size_t cfg;
  if (!k->data || !tl_strmap_get(cfg_of, k->data, &cfg)) return UINT64_MAX;
  tl_unit x = {(uint32_t)cfg, (uint32_t)item, sub};
  return tl_rb_index(rb, &x);
}

/* Reads the "harness" members of benchmark b's answer files into r->au.v. */
static tl_status load_bench(bench_run *r, size_t b, tl_err *err) {
  const tl_job_bench *jb = &r->job->benches[b];
  const tl_run_bench *rb = &r->rbs[b];
  run_audit *au = &r->au;
  tl_strmap cfg_of;
  tl_strmap_init(&cfg_of);
  tl_buf k;
  tl_buf_init(&k);
  tl_status st = TL_OK;
  for (size_t c = 0; c < rb->ncfgs && !st; c++) {
    cfg_key(&k, rb->cfgs[c].model, rb->cfgs[c].variant, rb->cfgs[c].seed);
    if (!k.data || tl_strmap_put(&cfg_of, k.data, c, NULL, NULL)) st = TL_ENOMEM;
  }
  for (int i = 0; i < jb->n_answers && !st; i++) {
    tl_jsonl in;
    if (tl_jsonl_open(&in, jb->answers[i].path, r->job->max_line, err) != TL_OK) {
      st = TL_EIO;
      break;
    }
    cJSON *o = NULL;
    tl_jl_result jr;
    tl_err e = {{0}};
    int first = 1;
    while (!st && (jr = tl_jsonl_next(&in, &o, &e)) != TL_JL_EOF && jr != TL_JL_IOERR) {
      if (jr != TL_JL_RECORD) continue; /* (a bad line: the replay engine reports it) */
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "harness");
      if (first && !cJSON_IsObject(h)) { /* tally's own answers (a converted file has it on every
                                            line): not read further, so a plain run pays one line */
        cJSON_Delete(o);
        o = NULL;
        break;
      }
      first = 0;
      if (cJSON_IsObject(h)) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(h, "format");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, "verdict");
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(h, "metric");
        if (!au->fmt[b] && cJSON_IsString(f) && !(au->fmt[b] = tl_strdup(f->valuestring))) st = TL_ENOMEM;
        if (!au->metric[b] && cJSON_IsString(mt) && !(au->metric[b] = tl_strdup(mt->valuestring))) st = TL_ENOMEM;
        au->lines[b]++;
        const uint64_t u = line_unit(r, b, &cfg_of, &jb->answers[i], o, &k);
        if (u != UINT64_MAX && cJSON_IsNumber(v))
          au->v[rb->base + u] = v->valuedouble == 0.0 ? 0 : v->valuedouble == 1.0 ? 1 : 2;
      }
      cJSON_Delete(o);
      o = NULL;
    }
    tl_jsonl_close(&in);
  }
  tl_buf_release(&k);
  tl_strmap_release(&cfg_of);
  return st == TL_ENOMEM ? tl_err_set(err, st, "out of memory reading the harness verdicts") : st;
}

/* A harness metric whose tally mode has a name of its own: lm-eval's exact_match is the gen
 * module's "exact" mode (VQA's mode has the metric's name, which is looked for first). */
static const char *const METRIC_ALIAS[][2] = {{"exact_match", "exact"}};

/* tally's side of the audit: the mode named as the metric, else as its alias, else 0 (the
 * primary). */
static int metric_mode(const tl_run_bench *rb, const char *metric) {
  for (int k = 0; k < rb->nmodes; k++)
    if (strcmp(rb->vt->mode_name(rb->b, k), metric) == 0) return k;
  for (size_t a = 0; a < sizeof METRIC_ALIAS / sizeof *METRIC_ALIAS; a++)
    if (strcmp(METRIC_ALIAS[a][0], metric) == 0)
      for (int k = 0; k < rb->nmodes; k++)
        if (strcmp(rb->vt->mode_name(rb->b, k), METRIC_ALIAS[a][1]) == 0) return k;
  return 0;
}

tl_status run_audit_load(bench_run *r, tl_err *err) {
  run_audit *au = &r->au;
  if (r->merging || r->dry) return TL_OK;
  au->fmt = calloc(r->nb, sizeof *au->fmt);
  au->metric = calloc(r->nb, sizeof *au->metric);
  au->lines = calloc(r->nb, sizeof *au->lines);
  au->cnt = calloc(r->nb, sizeof *au->cnt);
  au->first = calloc(r->nb, sizeof *au->first);
  au->mode = calloc(r->nb, sizeof *au->mode);
  au->v = malloc(r->U ? r->U : 1);
  if (!au->fmt || !au->metric || !au->lines || !au->cnt || !au->first || !au->mode || !au->v)
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  memset(au->v, 0xff, r->U ? r->U : 1); /* -1: no verdict */
  tl_status st = TL_OK;
  for (size_t b = 0; b < r->nb && !st; b++) {
    st = load_bench(r, b, err);
    const tl_run_bench *rb = &r->rbs[b];
    if (!st && au->metric[b]) au->mode[b] = metric_mode(rb, au->metric[b]);
    const size_t n = rb->ncfgs;
    if (!st && au->lines[b]) {
      au->cnt[b] = calloc(n * AU_N + 1, sizeof **au->cnt);
      au->first[b] = malloc((n * 2 + 1) * sizeof **au->first);
      if (!au->cnt[b] || !au->first[b]) st = tl_err_set(err, TL_ENOMEM, "out of memory");
      for (size_t i = 0; !st && i < n * 2; i++) au->first[b][i] = UINT64_MAX;
    }
  }
  return st;
}

void run_audit_note(bench_run *r, size_t b, uint64_t g, const tl_unit *u, const tl_row *row) {
  run_audit *au = &r->au;
  if (!au->v || !au->cnt[b] || au->v[g] < 0) return;
  uint64_t *c = au->cnt[b] + (size_t)u->cfg * AU_N;
  c[AU_UNITS]++;
  if (au->v[g] == 2) {
    c[AU_NONBIN]++;
    return;
  }
  const int m = au->mode[b];
  const int h = au->v[g], t = row->res[m].status == TL_PS_OK && row->res[m].correct;
  c[AU_H1] += (uint64_t)h;
  c[AU_T1] += (uint64_t)t;
  const uint64_t local = g - r->rbs[b].base;
  uint64_t *first = au->first[b] + (size_t)u->cfg * 2;
  if (!h && t) {
    c[AU_UP]++;
    if (local < first[0]) first[0] = local;
  } else if (h && !t) {
    c[AU_DOWN]++;
    if (local < first[1]) first[1] = local;
  }
}

/* Rank 0: the audit table of benchmark b from the reduced counts (cnt: [ncfgs * AU_N], first:
 * [ncfgs * 2]); per model (its cfgs together) one summary line. */
static tl_table *audit_table(const bench_run *r, size_t b, const uint64_t *cnt, const uint64_t *first, FILE *out) {
  const tl_run_bench *rb = &r->rbs[b];
  const run_audit *au = &r->au;
  tl_buf path;
  tl_buf_init(&path);
  tl_buf_printf(&path, "/audit/harness/%s", rb->vt->name);
  tl_table *t = path.data ? tl_table_new(path.data) : NULL;
  tl_buf_release(&path);
  static const tl_col_spec cols[] = {
      {"model", TL_COL_STR, "the model (its variants and seeds together)"},
      {"harness", TL_COL_STR, "the harness whose saved verdicts are audited (the import format)"},
      {"metric", TL_COL_STR, "the harness's per-item metric"},
      {"n", TL_COL_I64, "units with a 0/1 harness verdict, scored by both"},
      {"not_binary", TL_COL_I64, "units whose harness verdict is neither 0 nor 1 (left out)"},
      {"harness_accuracy", TL_COL_F64, "the harness's mean verdict over n"},
      {"tally_mode", TL_COL_STR, "tally's mode compared: the one named as the harness's metric, else the primary"},
      {"tally_accuracy", TL_COL_F64, "tally's mode over the same n units"},
      {"agree", TL_COL_F64, "share of the n units on which both say the same"},
      {"flips_up", TL_COL_I64, "units the harness scored 0 and tally 1"},
      {"flips_down", TL_COL_I64, "units the harness scored 1 and tally 0"},
      {"mcnemar_p", TL_COL_F64, "McNemar's exact two-sided p over the flips"},
      {"first_up", TL_COL_STR, "the first unit (in key order) flipping up: item id, seed"},
      {"first_down", TL_COL_STR, "the first unit flipping down"},
  };
  if (!t || tl_table_add_cols(t, cols, (int)(sizeof cols / sizeof *cols)) != 0) {
    tl_table_free(t);
    return NULL;
  }
  uint64_t any = 0;
  for (size_t c = 0; c < rb->ncfgs; c++) any += cnt[c * AU_N + AU_UNITS];
  if (!any) /* said once for the benchmark, not per model */
    fprintf(out, "audit %s: the imported answers (%s) carry no per-item verdict of the harness: nothing to "
                 "compare\n", rb->vt->name, au->fmt[b] ? au->fmt[b] : "?");
  for (size_t c = 0; c < rb->ncfgs; c++) {
    if (c && strcmp(rb->cfgs[c - 1].model, rb->cfgs[c].model) == 0) continue; /* sorted by model */
    uint64_t s[AU_N] = {0}, fu = UINT64_MAX, fd = UINT64_MAX;
    for (size_t d = c; d < rb->ncfgs && strcmp(rb->cfgs[d].model, rb->cfgs[c].model) == 0; d++) {
      for (int k = 0; k < AU_N; k++) s[k] += cnt[d * AU_N + k];
      if (first[d * 2] < fu) fu = first[d * 2];
      if (first[d * 2 + 1] < fd) fd = first[d * 2 + 1];
    }
    const uint64_t n = s[AU_UNITS] - s[AU_NONBIN];
    char ex[2][512] = {"", ""};
    for (int k = 0; k < 2; k++) {
      const uint64_t f = k ? fd : fu;
      if (f == UINT64_MAX) continue;
      tl_unit x = tl_rb_unit(rb, f);
      snprintf(ex[k], sizeof ex[k], "%s seed %d%s", rb->vt->item_id(rb->b, x.item), rb->cfgs[x.cfg].seed,
               rb->vt->n_subs(rb->b, x.item) > 1 ? " (a turn of it)" : "");
    }
    const double ha = n ? (double)s[AU_H1] / (double)n : NAN, ta = n ? (double)s[AU_T1] / (double)n : NAN;
    const double p = n ? tl_mcnemar_exact_p((int64_t)s[AU_UP], (int64_t)s[AU_DOWN]) : NAN;
    size_t row = tl_table_add_row(t);
    tl_table_set_str(t, row, 0, rb->cfgs[c].model);
    tl_table_set_str(t, row, 1, au->fmt[b] ? au->fmt[b] : "?");
    tl_table_set_str(t, row, 2, au->metric[b] ? au->metric[b] : "");
    tl_table_set_i64(t, row, 3, (int64_t)n);
    tl_table_set_i64(t, row, 4, (int64_t)s[AU_NONBIN]);
    tl_table_set_f64(t, row, 5, ha);
    tl_table_set_str(t, row, 6, rb->vt->mode_name(rb->b, au->mode[b]));
    tl_table_set_f64(t, row, 7, ta);
    tl_table_set_f64(t, row, 8, n ? (double)(n - s[AU_UP] - s[AU_DOWN]) / (double)n : NAN);
    tl_table_set_i64(t, row, 9, (int64_t)s[AU_UP]);
    tl_table_set_i64(t, row, 10, (int64_t)s[AU_DOWN]);
    tl_table_set_f64(t, row, 11, p);
    tl_table_set_str(t, row, 12, ex[0]);
    tl_table_set_str(t, row, 13, ex[1]);
    if (!n && any) {
      fprintf(out, "audit %s: model '%s': %s saved no 0/1 verdict for its units%s\n", rb->vt->name,
              rb->cfgs[c].model, au->fmt[b] ? au->fmt[b] : "the harness",
              s[AU_NONBIN] ? " (its verdicts are not 0/1: a rating or a partial credit)" : "");
      continue;
    }
    if (!n) continue;
    fprintf(out, "audit %s: model '%s': %s %s %.3f, tally %s %.3f over %llu units: %llu flip%s up, %llu down; "
                 "agree %.3f; McNemar exact p = %.3g%s%s%s%s\n",
            rb->vt->name, rb->cfgs[c].model, au->fmt[b] ? au->fmt[b] : "harness", au->metric[b] ? au->metric[b] : "",
            ha, rb->vt->mode_name(rb->b, au->mode[b]), ta, (unsigned long long)n, (unsigned long long)s[AU_UP],
            s[AU_UP] == 1 ? "" : "s", (unsigned long long)s[AU_DOWN],
            (double)(n - s[AU_UP] - s[AU_DOWN]) / (double)n, p, ex[0][0] ? "; first up: " : "", ex[0],
            ex[1][0] ? "; first down: " : "", ex[1]);
  }
  return t;
}

tl_status run_audit_write(const tl_run_opts *o, bench_run *r, tl_writer *w, MPI_Comm comm, tl_err *err) {
  run_audit *au = &r->au;
  tl_status st = TL_OK;
  for (size_t b = 0; au->v && b < r->nb && !st; b++) {
    if (!au->cnt[b]) continue; /* (the same on every rank: the same files were read) */
    const size_t n = r->rbs[b].ncfgs;
    uint64_t *cnt = r->rank == 0 ? calloc(n * AU_N + 1, sizeof *cnt) : NULL;
    uint64_t *first = r->rank == 0 ? calloc(n * 2 + 1, sizeof *first) : NULL;
    st = r->rank == 0 && (!cnt || !first) ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK;
    if (!(st = tl_agree(st, err, comm)))
      st = TL_MPI(err, MPI_Reduce(au->cnt[b], cnt, (int)(n * AU_N), MPI_UINT64_T, MPI_SUM, 0, comm));
    if (!st) st = TL_MPI(err, MPI_Reduce(au->first[b], first, (int)(n * 2), MPI_UINT64_T, MPI_MIN, 0, comm));
    tl_table *t = NULL;
    if (!(st = tl_agree(st, err, comm)) && r->rank == 0) {
      if (b || r->nb > 1) fprintf(o->out, "\n");
      if (!(t = audit_table(r, b, cnt, first, o->out))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    }
    if (!(st = tl_agree(st, err, comm))) st = tl_agree(w->vt->write_table(w, t, err), err, comm);
    tl_table_free(t);
    free(cnt);
    free(first);
  }
  return st;
}

void run_audit_release(run_audit *au, size_t nb) {
  for (size_t b = 0; b < nb; b++) {
    if (au->fmt) free(au->fmt[b]);
    if (au->metric) free(au->metric[b]);
    if (au->cnt) free(au->cnt[b]);
    if (au->first) free(au->first[b]);
  }
  free(au->fmt);
  free(au->metric);
  free(au->lines);
  free(au->cnt);
  free(au->first);
  free(au->mode);
  free(au->v);
  memset(au, 0, sizeof *au);
}
