/* report_examples.c - the parser audit's diverging examples in `tally report` (issue 33): for a
 * benchmark whose item table scores every unit under several parsers (columns correct_<mode>,
 * rule_<mode>, answer_<mode> beside the raw `response`: SpatialEval, mcq, gen), the first units in
 * key order that the primary parser (the first mode) and each other parser score differently,
 * with the raw reply and what each parser read. Not collective: one process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_read.h"
#include "report_h5.h"
#include "tally/report.h"
#include "tally/str.h"

#define EX_MAX_ROWS 200000 /* an item table past this is not read whole for examples */
#define EX_PER_PAIR 5      /* examples per pair of parsers */
#define EX_TEXT 400        /* bytes of each reply shown (cut at a UTF-8 boundary) */
#define EX_MODES 8

/* The modes of the item table's columns: correct_<m> with rule_<m> and answer_<m>, in order. */
static int find_modes(const rpt_tab *t, char modes[EX_MODES][64]) {
  int n = 0;
  for (int c = 0; c < t->ncols && n < EX_MODES; c++) {
    if (strncmp(t->cols[c], "correct_", 8) != 0 || strlen(t->cols[c] + 8) >= 64) continue;
    char rule[80], ans[80];
    snprintf(rule, sizeof rule, "rule_%s", t->cols[c] + 8);
    snprintf(ans, sizeof ans, "answer_%s", t->cols[c] + 8);
    int hr = 0, ha = 0;
    for (int k = 0; k < t->ncols; k++) hr |= !strcmp(t->cols[k], rule), ha |= !strcmp(t->cols[k], ans);
    if (hr && ha) snprintf(modes[n++], 64, "%s", t->cols[c] + 8);
  }
  return n;
}

static int has_col(const rpt_tab *t, const char *name) {
  for (int c = 0; c < t->ncols; c++)
    if (!strcmp(t->cols[c], name)) return 1;
  return 0;
}

/* A reply as one table cell: its first EX_TEXT bytes, line breaks and tabs written as \n, \r, \t. */
static char *cell_text(const char *s) {
  size_t n = strlen(s), cut = n > EX_TEXT ? tl_utf8_floor(s, EX_TEXT) : n;
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = TL_OK;
  for (size_t i = 0; !st && i < cut; i++)
    st = s[i] == '\n' ? tl_buf_puts(&b, "\\n") : s[i] == '\r' ? tl_buf_puts(&b, "\\r")
         : s[i] == '\t' ? tl_buf_puts(&b, "\\t") : tl_buf_append(&b, s + i, 1);
  if (!st && cut < n) st = tl_buf_printf(&b, " ... (%zu bytes in all)", n);
  if (st) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

static int64_t num(const tl_col *c, size_t r) { return c->type == TL_COL_F64 ? (int64_t)c->v.f[r] : c->v.i[r]; }

/* One pair (mode 0, mode k): its table of the first differing units, or a line saying none. */
static void pair_table(tl_doc *d, tl_section *s, const tl_table *t, const char (*modes)[64], int k) {
  static const tl_rcol_kind KINDS[10] = {TL_RC_TEXT, TL_RC_TEXT, TL_RC_INT, TL_RC_TEXT, TL_RC_TEXT,
                                         TL_RC_TEXT, TL_RC_INT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_INT};
  char h[6][80], title[200];
  const char *names[10] = {"id", "model", "seed", "reply", h[0], h[1], h[2], h[3], h[4], h[5]};
  for (int j = 0; j < 2; j++) {
    const char *m = modes[j ? k : 0];
    snprintf(h[3 * j], sizeof h[0], "rule_%.60s", m);
    snprintf(h[3 * j + 1], sizeof h[0], "answer_%.60s", m);
    snprintf(h[3 * j + 2], sizeof h[0], "correct_%.60s", m);
  }
  /* the table's columns: id model seed response, then per mode correct rule answer */
  const tl_col *c0 = &t->cols[4], *ck = &t->cols[4 + 3 * k];
  tl_rtable *rt = NULL;
  int shown = 0;
  size_t differ = 0;
  for (size_t r = 0; r < t->nrows; r++) {
    if (num(c0, r) == num(ck, r)) continue;
    differ++;
    if (shown == EX_PER_PAIR) continue;
    if (!rt) {
      snprintf(title, sizeof title, "%.60s against %.60s: the first units they score differently", modes[0], modes[k]);
      rt = tl_sec_table(d, s, title, 10, names, KINDS);
    }
    size_t row = tl_rtable_row(d, rt);
    char *rep = cell_text(t->cols[3].v.s[r]);
    tl_cell_text(d, rt, row, 0, t->cols[0].v.s[r]);
    tl_cell_text(d, rt, row, 1, t->cols[1].v.s[r]);
    tl_cell_int(rt, row, 2, num(&t->cols[2], r));
    tl_cell_text(d, rt, row, 3, rep ? rep : "");
    for (int j = 0; j < 2; j++) {
      int base = 4 + 3 * (j ? k : 0);
      tl_cell_text(d, rt, row, 4 + 3 * j, t->cols[base + 1].v.s[r]);
      tl_cell_text(d, rt, row, 5 + 3 * j, t->cols[base + 2].v.s[r]);
      tl_cell_int(rt, row, 6 + 3 * j, num(&t->cols[base], r));
    }
    free(rep);
    shown++;
  }
  char note[200];
  snprintf(note, sizeof note, "%zu unit(s) scored differently by %.60s and %.60s%s", differ, modes[0], modes[k],
           differ > EX_PER_PAIR ? "; the first 5 in key order shown" : "");
  if (rt) tl_rtable_note(d, rt, note);
  else tl_sec_text(d, s, note);
}

tl_status rpt_examples(const char *path, const char *bench, tl_doc *d, tl_err *err) {
  char g[300];
  snprintf(g, sizeof g, "/items/%.280s", bench);
  rpt_tabs ts;
  tl_status st = rpt_list(path, g, &ts, err);
  if (st) return st;
  const rpt_tab *it = NULL;
  for (int i = 0; i < ts.n; i++)
    if (!strcmp(ts.v[i].group, g)) it = &ts.v[i];
  char modes[EX_MODES][64];
  int nm = it ? find_modes(it, modes) : 0;
  if (nm < 2 || !has_col(it, "response") || !has_col(it, "id") || !has_col(it, "model") || !has_col(it, "seed")) {
    rpt_tabs_free(&ts);
    return TL_OK; /* one parser, or no reply kept: no pair to show */
  }
  rpt_tabs_free(&ts);
  char title[340];
  snprintf(title, sizeof title, "benchmark %.250s: the parser audit's diverging examples", bench);
  tl_section *s = tl_doc_section(d, title);
  tl_table *t = NULL;
  const char *one[] = {"seed"};
  if ((st = tl_h5_read_table(path, g, one, 1, &t, err))) return st;
  size_t rows = t->nrows;
  tl_table_free(t);
  if (rows > EX_MAX_ROWS) {
    char msg[400];
    snprintf(msg, sizeof msg, "not shown: %.200s has %zu rows, more than %d read for examples (tools/tally_h5.py reads it)",
             g, rows, EX_MAX_ROWS);
    tl_sec_text(d, s, msg);
    return tl_doc_ok(d);
  }
  char names[4 + 3 * EX_MODES][80];
  const char *cols[4 + 3 * EX_MODES] = {"id", "model", "seed", "response"};
  for (int k = 0; k < nm; k++) {
    snprintf(names[3 * k], sizeof names[0], "correct_%.60s", modes[k]);
    snprintf(names[3 * k + 1], sizeof names[0], "rule_%.60s", modes[k]);
    snprintf(names[3 * k + 2], sizeof names[0], "answer_%.60s", modes[k]);
    for (int j = 0; j < 3; j++) cols[4 + 3 * k + j] = names[3 * k + j];
  }
  if ((st = tl_h5_read_table(path, g, cols, 4 + 3 * nm, &t, err))) return st;
  tl_sec_text(d, s, "Each parser of the audit against the primary parser: the units whose correctness differs, the raw "
                    "reply (its first 400 bytes; line breaks written as \\n; the whole text is in the item table) and "
                    "what each parser read (the rule that fired, the answer).");
  for (int k = 1; k < nm; k++) pair_table(d, s, t, (const char (*)[64])modes, k);
  tl_table_free(t);
  return tl_doc_ok(d);
}
