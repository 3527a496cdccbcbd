/* restore.c - one journal record into the row of its unit: what a resume reads from the journals
 * of earlier attempts and what a merge reads from its inputs' journals (both through
 * run_on_journal_rec), with a merge's rule for a unit two inputs hold (merge_overlap). Below
 * resume.c and merge.c, which both call it. */
#include "run.h"

/* tally merge: a record of unit (b, local u) from input c->input, which another input already
 * gave. Returns 1 to store the record (the caller goes on), 0 to drop it. */
static int merge_overlap(resume_ctx *c, size_t b, size_t i, const tl_journal_rec *rec) {
  const uint32_t in1 = (uint32_t)c->input + 1;
  uint32_t *fr = &c->from[b][i];
  if (!*fr) {
    *fr = in1;
    return 1;
  }
  if (*fr == in1) return 1;
  const tl_unit_key *k = &rec->key;
  const int s = k->stage;
  tl_row *row = &c->part[b][i];
  int differ = 0;
  if (c->overlap == TL_OVERLAP_IDENTICAL && (c->mask[b][i] & (1u << s))) {
    const char *t = row->text[s];
    differ = (t == NULL) != (rec->text == NULL) || (t && strcmp(t, rec->text) != 0) ||
             (row->error[s] != NULL) != (rec->failed != 0);
  }
  if (!c->ovl[b][i] || differ) {
    if (!c->ovl[b][i]) c->overlaps++;
    if (differ) c->conflicts++;
    if (!c->example.len || (differ && c->conflicts == 1)) {
      tl_buf_reset(&c->example);
      tl_buf_printf(&c->example, "'%s' and '%s' both hold %s item '%s' (model '%s', variant '%s', seed %d, sub %d)%s",
                    c->inputs[*fr - 1].name, c->inputs[c->input].name, k->bench, k->id, k->model, k->variant, k->seed,
                    k->sub, differ ? ", with different replies" : "");
    }
    c->ovl[b][i] = 1;
  }
  switch (c->overlap) {
  case TL_OVERLAP_LAST: /* the later input replaces the unit's records */
    if (c->mask[b][i]) tl_row_release(row);
    c->mask[b][i] = 0;
    *fr = in1;
    return 1;
  case TL_OVERLAP_IDENTICAL: return !(c->mask[b][i] & (1u << s)); /* a stage the first lacked */
  default: return 0; /* first: kept; error: counted, reported after reading */
  }
}

/* A restored stage whose text a journal line referenced (rec->has_ref, read back and checked):
 * its reference noted (run_pref_note) in this run's replay engine's terms, so the unit's spilled
 * row names the answers line as a fresh run's does. Not in a merge (no engine), nor when the
 * engine does not read that file. */
static tl_status note_restored_ref(resume_ctx *c, uint64_t g, int s, const tl_journal_rec *rec, const char *text) {
  bench_run *r = c->r;
  tl_replay *rp = r->en.replay[s ? TL_ROLE_JUDGE : TL_ROLE_MODEL];
  if (c->merge || !rec->has_ref || rec->stale || !text || !rp || r->en.eng[s ? TL_ROLE_JUDGE : TL_ROLE_MODEL] !=
                                                                       tl_replay_engine(rp))
    return TL_OK;
  if (!c->last_ref_path || strcmp(c->last_ref_path, rec->ref.path) != 0) {
    c->last_ref_src = tl_replay_source_find(rp, rec->ref.path);
    c->last_ref_path = tl_replay_source_path(rp, c->last_ref_src);
  }
  if (!c->last_ref_src) return TL_OK;
  tl_reply_ref ref = rec->ref;
  ref.src = c->last_ref_src;
  ref.path = c->last_ref_path;
  return run_pref_note(&r->sp, g, s, text, &ref);
}

/* A journal record (a tl_journal_read_all / tl_jfiles_read callback; vctx: the resume_ctx): the
 * stage's texts go into the row of its unit when this rank restores that unit's key block. */
tl_status run_on_journal_rec(void *vctx, const tl_journal_rec *rec) {
  resume_ctx *c = vctx;
  bench_run *r = c->r;
  const tl_unit_key *k = &rec->key;
  int b = run_bench_index(r, k->bench);
  if (b < 0 || k->stage < 0 || k->stage >= r->rbs[b].nstages) return TL_OK; /* not of this job */
  const tl_run_bench *rb = &r->rbs[b];
  tl_buf kb;
  tl_buf_init(&kb);
  tl_buf_printf(&kb, "%s\x1f%d\x1f%d", k->model, tl_bench_variant(rb->vt, k->variant), k->seed);
  size_t cfg, item;
  int known = kb.data && tl_strmap_get(&c->cfg_of[b], kb.data, &cfg) && rb->vt->item_find(rb->b, k->id, &item) &&
              item < rb->vt->n_items(rb->b) && k->sub < rb->vt->n_subs(rb->b, item);
  tl_buf_release(&kb);
  if (!known) return TL_OK; /* not a unit of this job any more: ignored */
  if (rec->failed && !c->merge) return TL_OK; /* the engine gave up on it: asked again (a merge keeps
                                                   the failure: the unit stays engine_error) */
  if (rec->stale) { /* its answers line changed since it was journaled: done again, never with another text */
    if (!c->stale++ && tl_buf_printf(&c->stale_example, "%s", rec->source ? rec->source : "?")) return TL_ENOMEM;
    return TL_OK;
  }
  tl_unit x = {(uint32_t)cfg, (uint32_t)item, k->sub};
  uint64_t u = tl_rb_index(rb, &x);
  c->done[rb->base + u] = 1;
  if (u < c->lo[b] || u >= c->hi[b]) return TL_OK; /* another rank's block: it restores this one */
  size_t i = (size_t)(u - c->lo[b]);
  if (c->merge && !merge_overlap(c, (size_t)b, i, rec)) return TL_OK;
  if (c->mask[b][i] & (1u << k->stage)) return TL_OK; /* recorded twice (redone after a kill): first kept */
  tl_row *row = &c->part[b][i];
  if (!c->mask[b][i]) tl_row_init(row);
  int s = k->stage;
  row->text[s] = rec->text ? tl_strdup(rec->text) : NULL;
  row->prompt[s] = rec->prompt ? tl_strdup(rec->prompt) : NULL;
  row->source[s] = rec->source ? tl_strdup(rec->source) : NULL;
  row->meta[s] = rec->meta ? cJSON_PrintUnformatted(rec->meta) : NULL;
  row->error[s] = rec->failed ? tl_strdup(rec->error ? rec->error : "the engine gave up") : NULL;
  if ((rec->text && !row->text[s]) || (rec->prompt && !row->prompt[s]) || (rec->source && !row->source[s]) ||
      (rec->meta && !row->meta[s]) || (rec->failed && !row->error[s]))
    return TL_ENOMEM;
  c->mask[b][i] |= (uint8_t)(1u << s);
  return note_restored_ref(c, rb->base + u, s, rec, row->text[s]);
}
