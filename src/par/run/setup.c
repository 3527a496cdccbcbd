/* setup.c - loading a run on every rank: items, replies, cfgs, units, accumulators (no collective but the merge scan
 * and, on several ranks, the shared load of the replay files: share.c). */
#include "run.h"

/* The key of a replay source's default variant: the source's, else the benchmark's. */
static const char *default_variant(const tl_job_bench *jb, const tl_job_answers *a) {
  return a->variant ? a->variant : jb->vt->variants[jb->vt->default_variant(jb->mod)];
}

/* The cfgs of benchmark b (tl_cfgs_select): from what its answers hold (stage 0), kept by the
 * job's lists; a merge's cfgs are what its inputs ran. */
static tl_status build_cfgs(bench_run *r, size_t b) {
  const tl_job_bench *jb = &r->job->benches[b];
  const struct found *fd = &r->found[b];
  return tl_cfgs_select(fd->cfgs, fd->ncfgs, jb->models, jb->n_models, jb->seeds, jb->n_seeds,
                        jb->vt->default_variant(jb->mod), !r->merging, &r->rbs[b].cfgs, &r->rbs[b].ncfgs);
}

/* A filter that names what no answer holds: TL_EJOB (tl_cfgs_check_filter). */
static tl_status check_filters(const bench_run *r, size_t b, tl_err *err) {
  const tl_job_bench *jb = &r->job->benches[b];
  const struct found *fd = &r->found[b];
  return tl_cfgs_check_filter(fd->cfgs, fd->ncfgs, jb->models, jb->n_models, jb->seeds, jb->n_seeds, err);
}

/* The replay's discovery callback, once per accepted line: a reply for an item the job does
 * not have is reported and counted, never scored; the answers' (model, variant, seed) and
 * models are noted for the cfgs and the filter checks. Nonzero stops loading (strict input). */
int run_replay_key(void *ctx, const tl_unit_key *k, const char *path, long line) {
  bench_run *r = ctx;
  int b = run_bench_index(r, k->bench);
  size_t item;
  if (b < 0 || !r->rbs[b].vt->item_find(r->rbs[b].b, k->id, &item))
    return tl_inlog_report(r->log, TL_IN_UNKNOWN_ITEM, path, line, "%s for unknown item '%s'",
                           k->stage == 0 ? "answer" : "judgment", k->id) != TL_OK;
  /* an item the module leaves out (found at index n_items: SpatialEval's unselected modes) */
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return 0;
  struct found *fd = &r->found[b];
  if (k->stage != 0) { /* a judgment matches when its model answered (the answers load first) */
    if ((fd->models.n == 0 || tl_strmap_get(&fd->models, k->model, NULL)) && tl_inlog_matched(r->log, path, 1)) return 1;
    return 0;
  }
  if (tl_inlog_matched(r->log, path, 1)) return 1;
  const int variant = tl_bench_variant(r->rbs[b].vt, k->variant);
  if (fd->last_model && fd->last_variant == variant && fd->last_seed == k->seed && strcmp(fd->last_model, k->model) == 0)
    return 0; /* the configuration of the line before */
  if (tl_strmap_put(&fd->models, k->model, 0, NULL, NULL)) return 1;
  if (tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, k->model, variant, k->seed) != TL_OK) return 1;
  char *m = tl_strdup(k->model);
  if (!m) return 1;
  free(fd->last_model);
  fd->last_model = m;
  fd->last_variant = variant;
  fd->last_seed = k->seed;
  return 0;
}

/* The replay's sub of a line (a tl_replay_sub_fn, given to tl_replay_open_subs): "turn" is the
 * unit's sub (from 0) and must be one of the item's; "turn_id" is the item's 1-based turn, which
 * the module maps to its sub (vt->turn_sub; without one turn t is sub t - 1); with both they
 * must agree. A line that
 * names no unit is a bad line (file:line), never a reply that is silently never asked for. An
 * item the job does not have passes: run_replay_key reports it. */
int run_replay_sub(void *ctx, const char *bench, const char *id, int64_t turn, int64_t turn_id, uint32_t *sub,
                   char *msg, size_t msz) {
  const bench_run *r = ctx;
  int b = run_bench_index(r, bench);
  size_t item;
  *sub = turn >= 0 ? (uint32_t)turn : 0;
  if (b < 0 || !r->rbs[b].vt->item_find(r->rbs[b].b, id, &item)) return 0;
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return 0; /* left out by the module: no unit */
  const tl_bench_vt *vt = r->rbs[b].vt;
  const uint32_t n = vt->n_subs(r->rbs[b].b, item);
  if (turn_id >= 0) {
    uint32_t s = (uint32_t)(turn_id - 1);
    char why[256];
    if (vt->turn_sub && vt->turn_sub(r->rbs[b].b, item, (uint64_t)turn_id, &s, why, sizeof why) != 0)
      return snprintf(msg, msz, "field 'turn_id' is %lld: %s", (long long)turn_id, why), -1;
    if (!vt->turn_sub && turn_id > (int64_t)n)
      return snprintf(msg, msz, "field 'turn_id' is %lld but item '%s' has %u turn%s (turn_id counts from 1)",
                      (long long)turn_id, id, (unsigned)n, n == 1 ? "" : "s"), -1;
    if (turn >= 0 && (uint32_t)turn != s)
      return snprintf(msg, msz, "fields 'turn' (%lld: the judged-turn index, from 0) and 'turn_id' (%lld: the "
                      "dialogue's turn, from 1) name different turns of item '%s' (turn_id %lld is 'turn' %u)",
                      (long long)turn, (long long)turn_id, id, (long long)turn_id, (unsigned)s), -1;
    *sub = s;
    return 0;
  }
  if (*sub >= n)
    return snprintf(msg, msz, "field 'turn' is %lld but item '%s' has %u judged turn%s, 'turn' 0 to %u ('turn' is "
                    "the judged-turn index, from 0; the dialogue's turn, from 1, is 'turn_id')",
                    (long long)turn, id, (unsigned)n, n == 1 ? "" : "s", n ? (unsigned)n - 1 : 0u), -1;
  return 0;
}

/* A rank that fails before the shared load of the replay files (share.c) while the others go on
 * into it meets them at its first tl_agree, so that none waits for it: collective on several
 * ranks when the job replays files, st otherwise. */
static tl_status join_shared_load(const bench_run *r, tl_status st, MPI_Comm comm, tl_err *err) {
  int replays = 0;
  for (int b = 0; b < r->job->n_benches; b++) replays |= r->job->benches[b].n_answers + r->job->benches[b].n_judgments > 0;
  return r->nranks > 1 && !r->merging && replays ? tl_agree(st, err, comm) : st;
}

/* Opens the replay engine of each role from the benchmarks' files (answers: stage 0 for the
 * model; judgments: stage 1 for the judge). */
static tl_status open_replays(bench_run *r, tl_inlog *log, MPI_Comm comm, tl_err *err) {
  const tl_job *job = r->job;
  r->log = log;
  for (int role = 0; role < TL_ROLE__N; role++) {
    int n = 0;
    for (int b = 0; b < job->n_benches; b++)
      n += role == TL_ROLE_MODEL ? job->benches[b].n_answers : job->benches[b].n_judgments;
    if (n == 0) continue;
    tl_replay_source *src = calloc((size_t)n, sizeof *src);
    if (!src) return join_shared_load(r, tl_err_set(err, TL_ENOMEM, "out of memory"), comm, err);
    int k = 0;
    for (int b = 0; b < job->n_benches; b++) {
      const tl_job_bench *jb = &job->benches[b];
      const tl_job_answers *a = role == TL_ROLE_MODEL ? jb->answers : jb->judgments;
      int na = role == TL_ROLE_MODEL ? jb->n_answers : jb->n_judgments;
      for (int i = 0; i < na; i++, k++) {
        src[k].path = a[i].path;
        src[k].bench = jb->benchmark;
        src[k].stage = role == TL_ROLE_MODEL ? 0 : 1;
        src[k].model = a[i].model;
        src[k].seed = a[i].seed;
        src[k].variant = default_variant(jb, &a[i]);
        src[k].variants = jb->vt->variants;
      }
    }
    tl_status st = TL_OK;
    for (int i = 0; i < n && !st; i++) /* their lines are matched to units: counted as such */
      if (tl_inlog_matched(log, src[i].path, 0)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (st) st = join_shared_load(r, st, comm, err);
    else if (r->nranks > 1) /* each rank reads a share of the bytes (collective: every rank gets here) */
      st = run_share_replay(r, src, n, job->max_line, log, comm, &r->en.replay[role], err);
    else if (!st)
      st = tl_replay_open_subs(src, n, job->max_line, log, run_replay_key, r, run_replay_sub, r, &r->en.replay[role], err);
    free(src);
    if (st) return st;
    tl_replay_set_latency(r->en.replay[role], job->engines[role].latency_ms);
  }
  return TL_OK;
}

tl_status run_bench_setup(const tl_run_opts *o, bench_run *r, const tl_job *job, int rank, int nranks,
                             MPI_Comm comm, tl_inlog *log, tl_err *err) {
  memset(r, 0, sizeof *r);
  r->merging = o->n_merge > 0;
  r->msg = o->log;
  if (r->merging) {
    if (!(r->m = calloc(1, sizeof *r->m))) return tl_err_set(err, TL_ENOMEM, "out of memory");
    tl_strmap_init(&r->m->lcfg_of);
    tl_buf_init(&r->m->merge_msg);
  }
  r->rank = rank;
  r->nranks = nranks;
  r->job = job;
  r->nb = (size_t)job->n_benches;
  r->rbs = calloc(r->nb, sizeof *r->rbs);
  r->sp.held = calloc(r->nb, sizeof *r->sp.held);
  r->tal.lay = calloc(r->nb, sizeof *r->tal.lay);
  r->tal.nblk = calloc(r->nb, sizeof *r->tal.nblk);
  r->tal.acc = calloc(r->nb, sizeof *r->tal.acc);
  r->found = calloc(r->nb, sizeof *r->found);
  r->sp.strb = calloc(r->nb, sizeof *r->sp.strb);
  r->sp.nstr = calloc(r->nb, sizeof *r->sp.nstr);
  r->sp.rowtab = calloc(r->nb, sizeof *r->sp.rowtab);
  for (size_t b = 0; r->found && b < r->nb; b++) {
    tl_strmap_init(&r->found[b].seen);
    tl_strmap_init(&r->found[b].models);
  }
  tl_jfiles_init(&r->jf);
  if (!r->rbs || !r->sp.held || !r->tal.lay || !r->tal.nblk || !r->tal.acc || !r->found || !r->sp.strb || !r->sp.nstr || !r->sp.rowtab)
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st;
  for (size_t b = 0; b < r->nb; b++) {
    const tl_job_bench *jb = &job->benches[b];
    r->rbs[b].vt = jb->vt;
    r->rbs[b].b = jb->mod;
    if ((st = jb->vt->load(jb->mod, job->max_line, log, err))) return join_shared_load(r, st, comm, err);
  }
  if (r->merging) {
    if ((st = run_merge_scan(o, r, comm, err))) return st;
  } else if ((st = open_replays(r, log, comm, err))) {
    return st;
  }
  for (int k = 0; k < TL_ROLE__N; k++) {
    if (r->en.replay[k]) r->en.eng[k] = tl_replay_engine(r->en.replay[k]);
    if (job->engines[k].type && strcmp(job->engines[k].type, "replay")) r->en.evidence |= k == TL_ROLE_MODEL ? 1u : ((1u << TL_MAX_STAGES) - 2u); /* the judge: every judge stage (sample) */
  }
  const int model_http = r->en.evidence & 1u; /* the cfgs are the job's models x seeds */
  uint64_t base = 0;
  for (size_t b = 0; b < r->nb; b++) {
    if (!model_http && !r->merging && (st = check_filters(r, b, err))) return st;
    if ((st = build_cfgs(r, b))) return tl_err_set(err, st, "out of memory");
    if ((st = tl_rb_units(&r->rbs[b])))
      return st == TL_EINTERNAL ? tl_err_set(err, st, "internal error: benchmark module '%s' has %d scoring modes, "
                                             "outside 1..%d (its max_modes)", r->rbs[b].vt->name, r->rbs[b].nmodes,
                                             r->rbs[b].vt->max_modes)
                                : tl_err_set(err, st, "out of memory");
    if (r->rbs[b].vt->check_cfgs && !r->merging &&
        (st = r->rbs[b].vt->check_cfgs(r->rbs[b].b, r->rbs[b].cfgs, r->rbs[b].ncfgs, err)))
      return st;
    r->rbs[b].base = base;
    base += r->rbs[b].U;
    r->sp.held[b].w = 2; /* unit, where its item-table row was spilled */
    tl_table *schema = run_items_table(r, b, NULL, NULL, 0, NULL);
    if (!schema) return tl_err_set(err, TL_ENOMEM, "out of memory");
    for (int c = 0; c < schema->ncols; c++) r->sp.nstr[b] += tl_col_is_str(schema->cols[c].type);
    tl_table_free(schema);
    if (!(r->sp.strb[b] = calloc((size_t)r->nranks * (size_t)r->sp.nstr[b] * 2 + 1, sizeof **r->sp.strb)))
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    /* this rank's accumulators: units are added as they finish */
    r->tal.nblk[b] = r->rbs[b].vt->acc_layout(r->rbs[b].b, r->rbs[b].ncfgs, r->tal.lay[b]);
    if (r->tal.nblk[b] < 0 || r->tal.nblk[b] > r->rbs[b].vt->max_acc) /* (max_acc <= TL_MAX_ACC: registry check) */
      return tl_err_set(err, TL_EINTERNAL, "internal error: benchmark module '%s' lays out %d accumulator blocks, "
                        "outside 0..%d (its max_acc)", r->rbs[b].vt->name, r->tal.nblk[b], r->rbs[b].vt->max_acc);
    for (int k = 0; k < r->tal.nblk[b]; k++) {
      const tl_acc_block *l = &r->tal.lay[b][k];
      if (!(r->tal.acc[b][k] = malloc((l->len ? l->len : 1) * sizeof **r->tal.acc[b]))) return tl_err_set(err, TL_ENOMEM, "out of memory");
      for (size_t i = 0; i < l->len; i++) r->tal.acc[b][k][i] = l->init;
    }
  }
  r->U = base;
  return run_audit_load(r, err);
}
/* Rank 0: why a run has no unit, said plainly (a run that scores nothing never succeeds). */
void run_nothing_to_run(FILE *log, const bench_run *r, const tl_inlog *in) {
  fprintf(log, "tally: nothing to run: the job has 0 units");
  for (size_t b = 0; b < r->nb; b++)
    fprintf(log, "%s %s: %zu items x %zu model/variant/seed configs", b ? ";" : " (", r->rbs[b].vt->name,
            r->rbs[b].vt->n_items(r->rbs[b].b), r->rbs[b].ncfgs);
  fprintf(log, "%s", r->nb ? ")" : "");
  if (in->total) fprintf(log, "; %ld input line%s rejected (above)", in->total, in->total == 1 ? " was" : "s were");
  fprintf(log, ". A config comes from the answer lines' (model, prompt_variant, seed), or from the \"models\" "
               "and \"seeds\" of the job with an engine; nothing was written\n");
}
