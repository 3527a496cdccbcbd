/* render_json.c - a report document as JSON (schema "tally-report/1", docs/REPORT.md), built
 * with cJSON and printed by cJSON_Print (tabs, its own number form: deterministic).
 *
 * { "schema": "tally-report/1", "title": S, "sections": [ { "title": S, "blocks": [
 *     {"type": "text", "text": S}
 *   | {"type": "table", "title": S, "note": S|null,
 *      "columns": [{"name": S, "kind": "text|int|real|estimate|p", "align": "left|right"}],
 *      "rows": [[CELL, ...], ...]}
 *   | {"type": "chart", "kind": "bars_ci|forest|heatmap|strip", "title": S, "x": S, "y": S,
 *      "ref": N|null, "series": [{"name": S, "points": [{"label": S, "value": N, "lo": N, "hi": N}]}]}
 * ] } ] }
 * CELL: null (missing), a string (text), a number (int, real, p), {"value", "lo", "hi"}
 * (estimate). A number that is NaN or infinite is the string "NaN", "Infinity", "-Infinity". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tally/report.h"

tl_status tl_doc_render_json(const tl_doc *d, tl_buf *out);

/* A number, or its name when not finite. */
static cJSON *num(double v) {
  if (isnan(v)) return cJSON_CreateString("NaN");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "Infinity" : "-Infinity");
  return cJSON_CreateNumber(v);
}

/* Adds item to o under key (or to array o when key is NULL); 0, or -1 (item freed) on failure. */
static int put(cJSON *o, const char *key, cJSON *item) {
  if (!item) return -1;
  if (key ? !cJSON_AddItemToObject(o, key, item) : !cJSON_AddItemToArray(o, item)) return cJSON_Delete(item), -1;
  return 0;
}

static const char *const KIND[] = {"text", "int", "real", "estimate", "p"};
static const char *const CHART[] = {"bars_ci", "forest", "heatmap", "strip"};

static cJSON *cell(const tl_rcell *x) {
  switch (x->tag) {
  case TL_CELL_MISSING: return cJSON_CreateNull();
  case TL_CELL_TEXT: return cJSON_CreateString(x->s);
  case TL_CELL_INT: return cJSON_CreateNumber((double)x->i);
  case TL_CELL_REAL: return num(x->v);
  case TL_CELL_EST: {
    cJSON *o = cJSON_CreateObject();
    if (!o || put(o, "value", num(x->v)) || put(o, "lo", num(x->lo)) || put(o, "hi", num(x->hi))) return cJSON_Delete(o), NULL;
    return o;
  }
  }
  return NULL;
}

static cJSON *table(const tl_rtable *t) {
  cJSON *o = cJSON_CreateObject(), *cols = cJSON_CreateArray(), *rows = cJSON_CreateArray();
  int bad = !o || put(o, "type", cJSON_CreateString("table")) || put(o, "title", cJSON_CreateString(t->title)) ||
            put(o, "note", t->note ? cJSON_CreateString(t->note) : cJSON_CreateNull()) || put(o, "columns", cols);
  if (bad) cols = NULL;
  bad = bad || put(o, "rows", rows);
  if (bad) {
    cJSON_Delete(o);
    return NULL;
  }
  for (int c = 0; c < t->ncols && !bad; c++) {
    cJSON *k = cJSON_CreateObject();
    int right = t->cols[c].align == TL_AL_AUTO ? t->cols[c].kind != TL_RC_TEXT : t->cols[c].align == TL_AL_RIGHT;
    bad = put(cols, NULL, k) || put(k, "name", cJSON_CreateString(t->cols[c].name)) ||
          put(k, "kind", cJSON_CreateString(KIND[t->cols[c].kind])) ||
          put(k, "align", cJSON_CreateString(right ? "right" : "left"));
  }
  for (size_t r = 0; r < t->nrows && !bad; r++) {
    cJSON *row = cJSON_CreateArray();
    bad = put(rows, NULL, row);
    for (int c = 0; c < t->ncols && !bad; c++) bad = put(row, NULL, cell(&t->cells[r * (size_t)t->ncols + (size_t)c]));
  }
  if (bad) cJSON_Delete(o), o = NULL;
  return o;
}

static cJSON *chart(const tl_chart *c) {
  cJSON *o = cJSON_CreateObject(), *ser = cJSON_CreateArray();
  int bad = !o || put(o, "type", cJSON_CreateString("chart")) || put(o, "kind", cJSON_CreateString(CHART[c->kind])) ||
            put(o, "title", cJSON_CreateString(c->title)) || put(o, "x", cJSON_CreateString(c->x)) ||
            put(o, "y", cJSON_CreateString(c->y)) ||
            put(o, "ref", isnan(c->ref) ? cJSON_CreateNull() : num(c->ref));
  if (bad || put(o, "series", ser)) {
    if (!bad) ser = NULL;
    cJSON_Delete(o), cJSON_Delete(ser);
    return NULL;
  }
  for (int k = 0; k < c->nseries && !bad; k++) {
    cJSON *s = cJSON_CreateObject(), *pts = cJSON_CreateArray();
    bad = put(ser, NULL, s) || put(s, "name", cJSON_CreateString(c->series[k].name));
    if (bad || put(s, "points", pts)) {
      cJSON_Delete(pts), bad = 1;
      break;
    }
    for (size_t i = 0; i < c->series[k].n && !bad; i++) {
      const tl_chart_point *p = &c->series[k].pts[i];
      cJSON *q = cJSON_CreateObject();
      bad = put(pts, NULL, q) || put(q, "label", cJSON_CreateString(p->label)) || put(q, "value", num(p->value)) ||
            put(q, "lo", num(p->lo)) || put(q, "hi", num(p->hi));
    }
  }
  if (bad) cJSON_Delete(o), o = NULL;
  return o;
}

/* The document as a cJSON tree (caller deletes), NULL on allocation failure. */
static cJSON *doc_json(const tl_doc *d) {
  cJSON *o = cJSON_CreateObject(), *secs = cJSON_CreateArray();
  if (!o || put(o, "schema", cJSON_CreateString("tally-report/1")) || put(o, "title", cJSON_CreateString(d->title)) ||
      put(o, "sections", secs))
    return cJSON_Delete(o), NULL;
  for (int i = 0; i < d->nsec; i++) {
    const tl_section *s = &d->secs[i];
    cJSON *so = cJSON_CreateObject(), *bl = cJSON_CreateArray();
    if (put(secs, NULL, so) || put(so, "title", cJSON_CreateString(s->title))) return cJSON_Delete(bl), cJSON_Delete(o), NULL;
    if (put(so, "blocks", bl)) return cJSON_Delete(o), NULL;
    for (int k = 0; k < s->nblocks; k++) {
      const tl_block *b = &s->blocks[k];
      cJSON *x = NULL;
      if (b->kind == TL_BLOCK_TABLE) x = table(b->table);
      else if (b->kind == TL_BLOCK_CHART) x = chart(b->chart);
      else if ((x = cJSON_CreateObject()) &&
               (put(x, "type", cJSON_CreateString("text")) || put(x, "text", cJSON_CreateString(b->text))))
        cJSON_Delete(x), x = NULL;
      if (put(bl, NULL, x)) return cJSON_Delete(o), NULL;
    }
  }
  return o;
}

tl_status tl_doc_render_json(const tl_doc *d, tl_buf *out) {
  cJSON *o = doc_json(d);
  char *s = o ? cJSON_Print(o) : NULL;
  cJSON_Delete(o);
  tl_status st = s ? tl_buf_puts(out, s) : TL_ENOMEM;
  if (!st) st = tl_buf_puts(out, "\n");
  free(s);
  return st;
}
