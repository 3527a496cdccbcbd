/* state.c - the run state: release, the item table of a unit, held rows, unit keys. */
#include "run.h"

void run_bench_run_release(bench_run *r) {
  run_audit_release(&r->au, r->nb);
  tl_pipe_free(r->pipe);
  for (size_t b = 0; r->sp.held && b < r->nb; b++) free(r->sp.held[b].rec);
  free(r->sp.held);
  for (size_t b = 0; r->found && b < r->nb; b++) {
    tl_cfgs_free(r->found[b].cfgs, r->found[b].ncfgs);
    tl_strmap_release(&r->found[b].seen);
    tl_strmap_release(&r->found[b].models);
    free(r->found[b].last_model);
  }
  free(r->found);
  for (size_t b = 0; r->tal.fate && b < r->nb; b++) free(r->tal.fate[b]);
  free(r->tal.fate);
  for (int k = 0; k < TL_ROLE__N; k++) free(r->tal.first_error[k]);
  for (int k = 0; r->tal.reasons_init && k < TL_ROLE__N; k++) tl_strmap_release(&r->tal.reasons[k]);
  for (size_t b = 0; r->tal.acc && b < r->nb; b++)
    for (int k = 0; k < TL_MAX_ACC; k++) free(r->tal.acc[b][k]);
  for (size_t b = 0; r->sp.strb && b < r->nb; b++) free(r->sp.strb[b]);
  free(r->sp.strb);
  for (size_t b = 0; r->sp.rowtab && b < r->nb; b++) tl_table_free(r->sp.rowtab[b]);
  free(r->sp.rowtab);
  free(r->sp.nstr);
  run_spill_frames_release(&r->sp); /* both were done at the end of scheduling, unless the run stopped before */
  run_pref_release(&r->sp);
  free(r->tal.acc);
  free(r->tal.lay);
  free(r->tal.nblk);
  tl_jfiles_release(&r->jf);
  if (r->sp.spill) fclose(r->sp.spill);
  free(r->sp.spill_vbuf);
  for (int q = 0; r->sp.spill_fd && q < r->nranks; q++)
    if (r->sp.spill_fd[q] >= 0) close(r->sp.spill_fd[q]);
  free(r->sp.spill_fd);
  free(r->sp.rows_dir);
  tl_buf_release(&r->sp.spill_buf);
  if (r->m) {
    tl_buf_release(&r->m->merge_msg);
    free(r->m->file_input);
    free(r->m->mrecs);
    tl_strmap_release(&r->m->lcfg_of);
    for (size_t i = 0; i < r->m->nlcfg; i++) free(r->m->lcfg_key[i]);
    free(r->m->lcfg_key);
    free(r->m);
    r->m = NULL;
  }
  for (size_t b = 0; r->rbs && b < r->nb; b++) tl_rb_release(&r->rbs[b]);
  free(r->rbs);
  for (int k = 0; k < TL_ROLE__N; k++) {
    if (r->en.replay[k]) tl_replay_engine(r->en.replay[k])->vt->free(tl_replay_engine(r->en.replay[k]));
    if (r->en.http[k]) tl_openai_engine(r->en.http[k])->vt->free(tl_openai_engine(r->en.http[k]));
  }
}

/* Benchmark b's item table of n rows (units[i], rows[i]; n = 0 and NULL: the schema): the
 * module's columns, then the evidence of the stages HTTP engines answer. */
tl_table *run_items_table(const bench_run *r, size_t b, const tl_unit *units, const tl_row *rows, size_t n,
                             tl_table *into) {
  const tl_run_bench *rb = &r->rbs[b];
  tl_table *t = rb->vt->items_table(rb->b, rb->cfgs, units, rows, n, into);
  unsigned mask = r->en.evidence & ((1u << rb->nstages) - 1);
  if (t && mask && tl_evidence_cols(t, rows, n, mask) != TL_OK) {
    if (t != into) tl_table_free(t);
    t = NULL;
  }
  return t;
}

/* Keeps unit u (local index) of a finished row: its journal refs only. */
tl_status run_push_row(held_rows *h, uint64_t u, uint64_t spilled) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 1024;
    uint64_t *p = realloc(h->rec, cap * (size_t)h->w * sizeof *p);
    if (!p) return TL_ENOMEM;
    h->rec = p;
    h->cap = cap;
  }
  uint64_t *x = h->rec + h->n * (size_t)h->w;
  x[0] = u;
  x[1] = spilled;
  h->n++;
  return TL_OK;
}

/* The benchmark of a run named `name`, or -1. */
int run_bench_index(const bench_run *r, const char *name) {
  for (size_t b = 0; b < r->nb; b++)
    if (strcmp(r->rbs[b].vt->name, name) == 0) return (int)b;
  return -1;
}

/* The key of stage s of global unit g (strings borrowed from the run). */
tl_unit_key run_unit_key(const bench_run *r, uint64_t g, int s) {
  size_t b = tl_rb_find(r->rbs, r->nb, g);
  const tl_run_bench *rb = &r->rbs[b];
  tl_unit u = tl_rb_unit(rb, g - rb->base);
  const tl_cfg *c = &rb->cfgs[u.cfg];
  tl_unit_key k = {rb->vt->name, rb->vt->item_id(rb->b, u.item), c->model, rb->vt->variants[c->variant],
                   c->seed, u.sub, s};
  return k;
}
