/* merge.c - `tally merge`: the scan of the inputs' journals and the placing of their records on their owners. */
#include "run.h"

/* Collective-free part of the setup, run by every rank: items, replies, cfgs, units, pipeline.
 * Rank 0's log echoes problems; the others' logs are silent (same input, same problems). */
/* tally merge, the scan (each rank its share of the files): a record's unit key is noted with
 * where the record is, and each stage-0 record's (model, variant, seed) is a cfg of its
 * benchmark, as the replay's discovery makes one of each answer. A record for an item the
 * benchmark does not have means the inputs ran on other items: TL_EJOB with the reason. */
static tl_status on_merge_scan(void *ctx, const tl_journal_rec *rec) {
  bench_run *r = ctx;
  const tl_unit_key *k = &rec->key;
  int b = run_bench_index(r, k->bench);
  size_t item;
  if (b < 0) return TL_OK; /* the merged job lists every input's benchmarks: not reached */
  if (!r->rbs[b].vt->item_find(r->rbs[b].b, k->id, &item)) {
    tl_buf_printf(&r->m->merge_msg, "its journal records %s item '%s', which the items of the job do not have",
                  k->bench, k->id);
    return TL_EJOB;
  }
  r->m->m_nrec++;
  if (k->stage < 0 || k->stage >= TL_MAX_STAGES) return TL_OK; /* not of this job */
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return TL_OK; /* an item the module leaves out */
  tl_buf kb;
  tl_buf_init(&kb);
  if (tl_buf_printf(&kb, "%d\x1f%s\x1f%d\x1f%d", b, k->model, tl_bench_variant(r->rbs[b].vt, k->variant), k->seed))
    return TL_ENOMEM;
  size_t id;
  if (!tl_strmap_get(&r->m->lcfg_of, kb.data, &id)) {
    if (r->m->nlcfg == r->m->caplcfg) {
      size_t nc = r->m->caplcfg ? 2 * r->m->caplcfg : 64;
      char **nk = realloc(r->m->lcfg_key, nc * sizeof *nk);
      if (!nk) return tl_buf_release(&kb), TL_ENOMEM;
      r->m->lcfg_key = nk;
      r->m->caplcfg = nc;
    }
    id = r->m->nlcfg;
    r->m->lcfg_key[r->m->nlcfg++] = tl_buf_detach(&kb);
    if (tl_strmap_put(&r->m->lcfg_of, r->m->lcfg_key[id], id, NULL, NULL)) return TL_ENOMEM;
  }
  tl_buf_release(&kb);
  if (k->stage == 0) {
    struct found *fd = &r->found[b];
    tl_status st = tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, k->model,
                               tl_bench_variant(r->rbs[b].vt, k->variant), k->seed);
    if (st) return st;
  }
  if (r->m->nmrecs == r->m->capmrecs) {
    size_t nc = r->m->capmrecs ? 2 * r->m->capmrecs : 1024;
    struct mrec *nm = realloc(r->m->mrecs, nc * sizeof *nm);
    if (!nm) return TL_ENOMEM;
    r->m->mrecs = nm;
    r->m->capmrecs = nc;
  }
  r->m->mrecs[r->m->nmrecs++] = (struct mrec){(uint32_t)id, (uint32_t)item, k->sub, (uint16_t)k->stage, (uint16_t)b,
                                        (uint32_t)rec->file, rec->offset};
  return TL_OK;
}

/* Collective. The merge's scan: every rank lists every input's journal files (r->jf, the same
 * on every rank), reads its share (file f on rank f mod N) once, and the stage-0 cfgs found
 * are gathered on every rank (build_cfgs then sorts them: the same cfgs everywhere). */
/* The scan's first half: every input's journal files listed (the same list on every rank: r->jf,
 * r->m->file_input), and this rank's share read; every input must record some unit. Agreed. */
static tl_status scan_files(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err) {
  tl_status st = TL_OK;
  int *fi = NULL;
  for (int d = 0; d < o->n_merge && !st; d++) {
    int n = 0;
    char **names = NULL;
    st = tl_journal_files(o->merge[d].journal_dir, &names, &n, NULL);
    int *g = st ? NULL : realloc(fi, (size_t)(r->jf.n + n + 1) * sizeof *g);
    if (!g) st = TL_ENOMEM;
    else fi = g;
    for (int i = 0; i < n && !st; i++) {
      fi[r->jf.n] = d;
      st = tl_jfiles_add(&r->jf, names[i], NULL);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
  }
  r->m->file_input = fi;
  long *per = calloc((size_t)o->n_merge, sizeof *per), *all = calloc((size_t)o->n_merge, sizeof *all);
  if (st || !per || !all) st = tl_err_set(err, TL_ENOMEM, "out of memory listing the journals");
  for (int f = r->rank; f < r->jf.n && !st; f += r->nranks) {
    const tl_merge_input *in = &o->merge[r->m->file_input[f]];
    long before = r->m->m_nrec;
    tl_buf_reset(&r->m->merge_msg);
    st = tl_journal_read_file(r->jf.paths[f], in->journal_dir, f, in->job_hash, on_merge_scan, r, &(long){0},
                              &r->m->m_nskip, err);
    if (st == TL_EJOB && r->m->merge_msg.len)
      tl_err_set(err, TL_EJOB, "cannot merge '%s': %s", in->name, r->m->merge_msg.data);
    else if (st == TL_EJOB) {
      tl_err why = *err;
      tl_err_set(err, TL_EJOB, "cannot merge '%s': %s", in->name, why.msg);
    } else if (st == TL_ENOMEM)
      tl_err_set(err, TL_ENOMEM, "out of memory reading the journals");
    per[r->m->file_input[f]] += r->m->m_nrec - before;
  }
  /* every rank agrees before anything collective that depends on the scan */
  if (!(st = tl_agree(st, err, comm)))
    st = tl_agree(TL_MPI(err, MPI_Allreduce(per, all, o->n_merge, MPI_LONG, MPI_SUM, comm)), err, comm);
  for (int d = 0; d < o->n_merge && !st; d++)
    if (all[d] == 0)
      st = tl_err_set(err, TL_EJOB, "cannot merge '%s': its journal '%s' records no unit", o->merge[d].name,
                      o->merge[d].journal_dir);
  free(per);
  free(all);
  return st; /* (the last check: the same on every rank) */
}

/* Collective: the stage-0 cfgs every rank found, to every rank ("bench\x1fmodel\x1fvariant\x1fseed\n"
 * lines), added to r->found (build_cfgs then sorts them: the same cfgs everywhere). Agreed. */
static tl_status gather_cfgs(bench_run *r, MPI_Comm comm, tl_err *err) {
  tl_status st = TL_OK;
  tl_buf mine;
  tl_buf_init(&mine);
  for (size_t b = 0; b < r->nb; b++)
    for (size_t i = 0; i < r->found[b].ncfgs; i++) {
      const tl_cfg *c = &r->found[b].cfgs[i];
      if (tl_buf_printf(&mine, "%zu\x1f%s\x1f%d\x1f%d\n", b, c->model, c->variant, c->seed)) st = TL_ENOMEM;
    }
  int len = st || mine.len > INT_MAX ? -1 : (int)mine.len;
  int *lens = calloc((size_t)r->nranks, sizeof *lens), *offs = calloc((size_t)r->nranks, sizeof *offs);
  st = len < 0 || !lens || !offs ? tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs") : TL_OK;
  if (!(st = tl_agree(st, err, comm)))
    st = tl_agree(TL_MPI(err, MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm)), err, comm);
  long long tot = 0;
  for (int q = 0; !st && q < r->nranks; q++) offs[q] = (int)tot, tot += lens[q];
  char *every = !st && tot < INT_MAX ? malloc((size_t)tot + 1) : NULL;
  if (!st) st = tl_agree(every ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs"), err, comm);
  if (!st)
    st = tl_agree(TL_MPI(err, MPI_Allgatherv(mine.data ? mine.data : "", len, MPI_CHAR, every, lens, offs, MPI_CHAR, comm)),
                  err, comm);
  tl_buf_release(&mine);
  free(lens);
  free(offs);
  if (st) {
    free(every);
    return st;
  }
  every[tot] = 0;
  for (char *line = every; *line && !st;) {
    char *nl = strchr(line, '\n');
    *nl = 0;
    char *f1 = strchr(line, '\x1f'), *f3 = strrchr(line, '\x1f');
    *f1 = 0;
    *f3 = 0;
    char *f2 = strrchr(f1 + 1, '\x1f');
    *f2 = 0;
    size_t b = (size_t)strtoul(line, NULL, 10);
    struct found *fd = &r->found[b];
    st = tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, f1 + 1, atoi(f2 + 1), atoi(f3 + 1));
    line = nl + 1;
  }
  free(every);
  st = st ? tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs") : TL_OK;
  return tl_agree(st, err, comm);
}

tl_status run_merge_scan(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err) {
  tl_status st = scan_files(o, r, comm, err);
  return st ? st : gather_cfgs(r, comm, err);
}




/* Collective. Reads the journals of earlier attempts: every rank rebuilds the rows of its own
 * key blocks (so no rank holds, or sends, the whole restored run); the done-bitmaps are OR-ed.
 * Fully recorded units are scored at once; partly recorded ones are started at their next stage
 * (their replies come during scheduling). */
/* Orders merge records (2 uint64: file, offset) by file, then offset. */
static int cmp_file_offset(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

tl_status run_merge_exchange(const tl_run_opts *o, bench_run *r, resume_ctx *c, MPI_Comm comm, long *nf, long *nrec,
                             long *nskip, tl_err *err) {
  (void)o;
  run_merge *mg = r->m;
  /* each scanned cfg's index among the run's cfgs (-1: not a cfg of the run) */
  long *gcfg = malloc((mg->nlcfg ? mg->nlcfg : 1) * sizeof *gcfg);
  int *dest = malloc((mg->nmrecs ? mg->nmrecs : 1) * sizeof *dest);
  uint64_t *sbuf = malloc((mg->nmrecs ? mg->nmrecs : 1) * 2 * sizeof *sbuf), *rbuf = NULL;
  tl_status st = !gcfg || !dest || !sbuf ? tl_err_set(err, TL_ENOMEM, "out of memory placing the merge's records") : TL_OK;
  for (size_t i = 0; !st && i < mg->nlcfg; i++) {
    char *k = mg->lcfg_key[i], *sep = strchr(k, '\x1f');
    int b = atoi(k);
    size_t gi;
    gcfg[i] = sep && tl_strmap_get(&c->cfg_of[b], sep + 1, &gi) ? (long)gi : -1;
  }
  /* each record's owner (-1: no unit of the run) and where it is */
  for (size_t i = 0; !st && i < mg->nmrecs; i++) {
    const struct mrec *m = &mg->mrecs[i];
    const tl_run_bench *rb = &r->rbs[m->bench];
    dest[i] = -1;
    sbuf[2 * i] = m->file;
    sbuf[2 * i + 1] = m->offset;
    if (gcfg[m->lcfg] < 0 || m->stage >= rb->nstages || m->sub >= rb->vt->n_subs(rb->b, m->item)) continue;
    tl_unit x = {(uint32_t)gcfg[m->lcfg], m->item, m->sub};
    dest[i] = tl_block_owner(tl_rb_index(rb, &x), rb->U, r->nranks);
  }
  const size_t nm = mg->nmrecs;
  free(mg->mrecs); /* the scan's notes are spent */
  mg->mrecs = NULL;
  mg->nmrecs = mg->capmrecs = 0;
  size_t n = 0;
  tl_err e = {{0}};
  if (!(st = tl_agree(st, err, comm)) && (st = run_to_ranks(sbuf, nm, 2, dest, comm, &rbuf, &n, &e))) /* (agreed) */
    tl_err_set(err, st, "placing the merge's records: %s", e.msg);
  /* each rank reads the records it owns, in file order */
  if (!st) qsort(rbuf, n, 2 * sizeof *rbuf, cmp_file_offset);
  for (size_t i = 0; i < n && !st; i++) {
    const uint64_t *ent = rbuf + 2 * i;
    tl_journal_rec rec;
    cJSON *obj = NULL;
    st = tl_jfiles_read(&r->jf, (int)ent[0], ent[1], &rec, &obj, err);
    if (!st) {
      c->input = mg->file_input[ent[0]];
      c->file_base = 0;
      st = run_on_journal_rec(c, &rec);
      if (st && !err->msg[0]) tl_err_set(err, st, "%s", tl_strerror(st));
    }
    cJSON_Delete(obj);
  }
  long mine[2] = {mg->m_nrec, mg->m_nskip}, tot[2] = {0, 0};
  if ((st = tl_agree(st, err, comm)) == TL_OK)
    st = tl_agree(TL_MPI(err, MPI_Allreduce(mine, tot, 2, MPI_LONG, MPI_SUM, comm)), err, comm);
  *nf = r->jf.n;
  *nrec = tot[0];
  *nskip = tot[1];
  free(gcfg);
  free(dest);
  free(sbuf);
  free(rbuf);
  return st;
}
