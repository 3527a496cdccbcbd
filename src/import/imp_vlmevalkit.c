/* imp_vlmevalkit.c - VLMEvalKit's prediction tables (../shared/spec/harness-formats.md,
 * "VLMEvalKit"): <work_dir>/<model>/<eval_id>/<model>_<dataset>.<fmt>, the benchmark's TSV less
 * its image column (index, question, hint, A, B, C, D, ..., answer, category, split, ...) plus
 * prediction (and thinking), and the evaluation's <model>_<dataset>_<judge>_result.<fmt>, the
 * same rows with hit (the harness's verdict, 1/0) and log.
 *
 * Formats: tsv and csv (VLMEvalKit writes every field quoted, QUOTE_ALL; read by the project's
 * RFC 4180 table reader, tabin.c), json (VLMEvalKit's dump writes a table as a list of row
 * objects, to_dict('records'); its loader also takes pandas' {"columns", "data"} and
 * {column: [values]} forms, read here too; Python's NaN tokens are read as null), and xlsx, the
 * default (its first worksheet, xlsx.h: the zip reader and libxml2).
 *
 * Model and dataset come from the file name. Model names and dataset names both hold
 * underscores (llava_v1.5_7b, MMBench_DEV_EN), so the model is the folder's name when the file
 * name starts with it (<model>/<eval_id>/<model>_<dataset>.tsv, or <model>/<model>_...), else
 * the name up to its first underscore.
 *
 * Each row is one answer: id = index, response = prediction, item in the generic multiple-choice
 * schema {"id", "question", "choices": [A, B, ...: the letters present, from A], "answer": the
 * gold letter, "hint", "category", "split", ...the other columns}. The dataset SpatialEval
 * (VLMEvalKit's "SpatialEval" ImageMCQ dataset) gives items in SpatialEval's own schema instead,
 * for tally's SpatialEval module and parsers: see spatialeval_item below and docs/IMPORT.md. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spatialeval.h"
#include "tally/import.h"
#include "imp_util.h"
#include "tally/str.h"
#include "tally/tabin.h"
#include "xlsx.h"

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static const char *base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* ---- the file name: model, dataset, judge ---- */

typedef struct {
  char *model, *dataset, *judge; /* judge: NULL for a predictions table */
  int result;                    /* an evaluation's _result table */
} vk_name;

static void name_release(vk_name *n) {
  free(n->model);
  free(n->dataset);
  free(n->judge);
}

/* "T20250101-120000" (VLMEvalKit's eval id; later ones add "_G<commit>"). */
static int is_eval_id(const char *s, size_t n) {
  if (n < 16 || s[0] != 'T') return 0;
  for (int i = 1; i < 16; i++)
    if (i == 9 ? s[i] != '-' : !isdigit((unsigned char)s[i])) return 0;
  return 1;
}

/* The i-th folder above the file (0: its own), into out; 0 when there is none. */
static int folder_up(const char *path, int up, char *out, size_t cap) {
  const char *end = strrchr(path, '/');
  while (end && up-- > 0) {
    const char *p = end;
    while (p > path && p[-1] != '/') p--;
    if (p == path) return 0;
    end = p - 1;
  }
  if (!end || end == path) return 0;
  const char *s = end;
  while (s > path && s[-1] != '/') s--;
  size_t n = (size_t)(end - s);
  if (n == 0 || n >= cap || (n == 1 && *s == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
  memcpy(out, s, n);
  out[n] = 0;
  return 1;
}

static tl_status parse_name(const char *path, vk_name *nm) {
  memset(nm, 0, sizeof *nm);
  const char *base = base_of(path);
  const char *dot = strrchr(base, '.');
  size_t len = dot ? (size_t)(dot - base) : strlen(base);
  char *stem = tl_strndup(base, len);
  if (!stem) return TL_ENOMEM;
  /* <...>_<judge>_result: the judge is the part before _result ("exact_matching" keeps its _) */
  if (len > 7 && strcmp(stem + len - 7, "_result") == 0) {
    nm->result = 1;
    stem[len -= 7] = 0;
    const char *j = NULL;
    if (len > 15 && strcmp(stem + len - 15, "_exact_matching") == 0) j = stem + len - 14;
    else if ((j = strrchr(stem, '_'))) j++;
    if (j && j > stem + 1) {
      nm->judge = tl_strdup(j);
      stem[len = (size_t)(j - 1 - stem)] = 0;
    }
  }
  char dir[512];
  int found = 0;
  for (int up = 0; up < 2 && !found; up++) {
    if (!folder_up(path, up, dir, sizeof dir)) break;
    if (up == 0 && is_eval_id(dir, strlen(dir))) continue;
    size_t dl = strlen(dir);
    if (dl < len && strncmp(stem, dir, dl) == 0 && stem[dl] == '_') {
      nm->model = tl_strdup(dir);
      nm->dataset = tl_strdup(stem + dl + 1);
      found = 1;
    }
  }
  if (!found) {
    const char *u = strchr(stem, '_');
    if (u && u > stem && u[1]) {
      nm->model = tl_strndup(stem, (size_t)(u - stem));
      nm->dataset = tl_strdup(u + 1);
    } else {
      nm->dataset = tl_strdup(stem);
    }
  }
  free(stem);
  return nm->dataset && (!found || nm->model) ? TL_OK : TL_ENOMEM;
}

/* ---- detection ---- */

/* Whether the header line (first line of head) has the columns index and prediction (or hit,
 * for a result table), with sep between cells that may be quoted. */
static int header_has(const unsigned char *head, size_t n, char sep) {
  int idx = 0, pred = 0;
  size_t i = 0;
  if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0) i = 3;
  while (i < n && head[i] != '\n' && head[i] != '\r') {
    char cell[64];
    size_t c = 0;
    int q = head[i] == '"';
    if (q) i++;
    while (i < n && (q ? head[i] != '"' : head[i] != (unsigned char)sep && head[i] != '\n' && head[i] != '\r')) {
      if (c + 1 < sizeof cell) cell[c++] = (char)head[i];
      i++;
    }
    if (q && i < n) i++;
    cell[c] = 0;
    idx |= strcmp(cell, "index") == 0;
    pred |= strcmp(cell, "prediction") == 0 || strcmp(cell, "hit") == 0;
    if (i < n && head[i] == (unsigned char)sep) i++;
    else break;
  }
  return idx && pred;
}

static int has(const unsigned char *head, size_t n, const char *s) {
  size_t m = strlen(s);
  for (size_t i = 0; i + m <= n; i++)
    if (head[i] == (unsigned char)s[0] && memcmp(head + i, s, m) == 0) return 1;
  return 0;
}

static int vk_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  if (is_dir) return 0;
  const char *base = base_of(path);
  if (!strchr(base, '_')) return 0; /* <model>_<dataset>.<fmt> */
  if (ends_with(base, ".xlsx")) return n >= 4 && memcmp(head, "PK\x03\x04", 4) == 0;
  if (ends_with(base, ".tsv")) return header_has(head, n, '\t');
  if (ends_with(base, ".csv")) return header_has(head, n, ',');
  if (ends_with(base, ".json")) {
    size_t i = 0;
    while (i < n && isspace(head[i])) i++;
    if (i >= n) return 0;
    if (head[i] == '[' || head[i] == '{')
      return has(head, n, "\"index\"") && (has(head, n, "\"prediction\"") || has(head, n, "\"hit\""));
  }
  return 0;
}

/* ---- json tables ---- */

static char *cell_of(const cJSON *v) {
  char tmp[64];
  if (!v || cJSON_IsNull(v)) return tl_strdup("");
  if (cJSON_IsString(v)) return tl_strdup(v->valuestring);
  if (cJSON_IsBool(v)) return tl_strdup(cJSON_IsTrue(v) ? "True" : "False");
  if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == floor(d) && fabs(d) < 1e15) snprintf(tmp, sizeof tmp, "%.0f", d);
    else snprintf(tmp, sizeof tmp, "%.17g", d);
    return tl_strdup(tmp);
  }
  return cJSON_PrintUnformatted(v);
}

static int col_index(tl_tabin *t, const char *name, int add) {
  for (int c = 0; c < t->ncols; c++)
    if (strcmp(t->colnames[c], name) == 0) return c;
  if (!add || t->ncols >= TL_TABIN_MAX_COLS) return -1;
  char **p = realloc(t->colnames, (size_t)(t->ncols + 1) * sizeof *p);
  if (!p) return -2;
  t->colnames = p;
  if (!(p[t->ncols] = tl_strdup(name))) return -2;
  return t->ncols++;
}

static tl_status add_row(tl_tabin *t, size_t *cap, long line) {
  if (t->nrows == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    char ***p = realloc(t->cells, c * sizeof *p);
    if (!p) return TL_ENOMEM;
    t->cells = p;
    long *l = realloc(t->line, c * sizeof *l);
    if (!l) return TL_ENOMEM;
    t->line = l;
    *cap = c;
  }
  t->cells[t->nrows] = calloc(TL_TABIN_MAX_COLS, sizeof(char *));
  if (!t->cells[t->nrows]) return TL_ENOMEM;
  t->line[t->nrows++] = line;
  return TL_OK;
}

/* Sets row r's column name to the text of v. */
static tl_status set_cell(tl_tabin *t, size_t r, const char *name, const cJSON *v) {
  int c = col_index(t, name, 1);
  if (c == -2) return TL_ENOMEM;
  if (c < 0) return TL_OK; /* past the column bound: left out */
  char *s = cell_of(v);
  if (!s) return TL_ENOMEM;
  free(t->cells[r][c]);
  t->cells[r][c] = s;
  return TL_OK;
}


/* The rows of a records table ([{"index": 0, ...}, ...]) into t; a row that is not an object is
 * reported and left out (TL_EINPUT, err set, under --strict-input). */
static tl_status records_rows(const cJSON *root, const char *path, tl_inlog *log, tl_tabin *t, size_t *cap,
                              tl_err *err) {
  tl_status st = TL_OK;
  const cJSON *row;
  long k = 0;
  cJSON_ArrayForEach(row, root) {
    k++;
    if (!cJSON_IsObject(row)) {
      if (tl_inlog_report(log, TL_IN_BAD_FIELD, path, k, "row %ld is not an object", k) == TL_EINPUT)
        return tl_err_set(err, TL_EINPUT, "%s: row %ld is not an object (strict input)", path, k);
      continue;
    }
    if ((st = add_row(t, cap, k))) return st;
    const cJSON *v;
    cJSON_ArrayForEach(v, row) if ((st = set_cell(t, t->nrows - 1, v->string, v))) return st;
  }
  return TL_OK;
}

/* The rows of an orient="split" table ({"columns": [...], "data": [[...], ...]}) into t; a row
 * that is not a list of as many cells as columns is reported and left out (as records_rows). */
static tl_status split_rows(const cJSON *cols, const cJSON *data, const char *path, tl_inlog *log, tl_tabin *t,
                            size_t *cap, tl_err *err) {
  tl_status st = TL_OK;
  const cJSON *row;
  long k = 0;
  int nc = cJSON_GetArraySize(cols);
  cJSON_ArrayForEach(row, data) {
    k++;
    if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != nc) {
      if (tl_inlog_report(log, TL_IN_BAD_FIELD, path, k, "row %ld is not a list of %d cells", k, nc) == TL_EINPUT)
        return tl_err_set(err, TL_EINPUT, "%s: row %ld is not a list of %d cells (strict input)", path, k, nc);
      continue;
    }
    if ((st = add_row(t, cap, k))) return st;
    for (int c = 0; c < nc && !st; c++) {
      const cJSON *name = cJSON_GetArrayItem(cols, c);
      if (cJSON_IsString(name)) st = set_cell(t, t->nrows - 1, name->valuestring, cJSON_GetArrayItem(row, c));
    }
    if (st) return st;
  }
  return TL_OK;
}

/* The rows of a {column: [values]} table into t; every column must be a list as long as the
 * first (else TL_EINPUT, err set, nothing read). */
static tl_status column_rows(const cJSON *root, const char *path, tl_tabin *t, size_t *cap, tl_err *err) {
  tl_status st = TL_OK;
  int nr = cJSON_GetArraySize(root->child);
  const cJSON *col;
  cJSON_ArrayForEach(col, root) if (!cJSON_IsArray(col) || cJSON_GetArraySize(col) != nr) {
    return tl_err_set(err, TL_EINPUT, "%s: a JSON object of columns whose column '%s' is not a list of %d values", path,
                      col->string, nr);
  }
  for (int r = 0; r < nr && !st; r++) {
    if ((st = add_row(t, cap, r + 1))) break;
    cJSON_ArrayForEach(col, root) if ((st = set_cell(t, (size_t)r, col->string, cJSON_GetArrayItem(col, r)))) break;
  }
  return st;
}

/* Every row of t made ncols cells long, the cells never set "". TL_ENOMEM only. */
static tl_status fill_rows(tl_tabin *t) {
  for (size_t r = 0; r < t->nrows; r++) {
    char **row = realloc(t->cells[r], (size_t)(t->ncols ? t->ncols : 1) * sizeof *row);
    if (!row) return TL_ENOMEM;
    t->cells[r] = row;
    for (int c = 0; c < t->ncols; c++)
      if (!row[c] && !(row[c] = tl_strdup(""))) return TL_ENOMEM;
  }
  return TL_OK;
}

/* Parses the json file path (Python's NaN tokens read as null) into *root; a file that is not
 * JSON is reported and refused (TL_EINPUT, err set). */
static tl_status parse_json_file(const char *path, tl_inlog *log, cJSON **root, tl_err *err) {
  tl_buf raw, b;
  tl_buf_init(&raw);
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, 0, &raw, err);
  if (st) {
    tl_buf_release(&raw);
    return st;
  }
  st = tl_imp_nan_to_null(&raw, &b);
  tl_buf_release(&raw);
  if (st) {
    tl_buf_release(&b);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  const char *end = NULL;
  *root = cJSON_ParseWithLengthOpts(b.data ? b.data : "", b.len, &end, 0);
  size_t at = end && b.data ? (size_t)(end - b.data) : 0;
  tl_buf_release(&b);
  if (!*root) {
    tl_inlog_report(log, TL_IN_MALFORMED_JSON, path, 0, "not JSON (stops at byte %zu)", at);
    return tl_err_set(err, TL_EINPUT, "%s: not a VLMEvalKit json table: the JSON stops at byte %zu", path, at);
  }
  return TL_OK;
}

/* Reads a json table into t (cells as text, "" for null; rows numbered from 1): records,
 * orient="split" or {column: [values]}. A row of the wrong shape is reported and left out. */
static tl_status read_json_table(const char *path, tl_inlog *log, tl_tabin *t, tl_err *err) {
  memset(t, 0, sizeof *t);
  cJSON *root = NULL;
  tl_status st = parse_json_file(path, log, &root, err);
  if (st) return st;
  if (!(t->path = tl_strdup(path))) {
    cJSON_Delete(root);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  size_t cap = 0;
  const cJSON *cols = cJSON_GetObjectItemCaseSensitive(root, "columns");
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
  if (cJSON_IsArray(root))
    st = records_rows(root, path, log, t, &cap, err);
  else if (cJSON_IsObject(root) && cJSON_IsArray(cols) && cJSON_IsArray(data))
    st = split_rows(cols, data, path, log, t, &cap, err);
  else if (cJSON_IsObject(root) && root->child && cJSON_IsArray(root->child))
    st = column_rows(root, path, t, &cap, err);
  else
    st = tl_err_set(err, TL_EINPUT,
                    "%s: not a VLMEvalKit json table (a list of row objects, {\"columns\", \"data\"}, or {column: "
                    "[values]})",
                    path);
  cJSON_Delete(root);
  if (!st) st = fill_rows(t);
  if (st) {
    if (st == TL_ENOMEM) tl_err_set(err, st, "out of memory");
    /* rows past a failure may hold NULL cells: tl_tabin_release frees NULL safely */
    tl_tabin_release(t);
    return st;
  }
  if (t->nrows == 0) {
    tl_tabin_release(t);
    return tl_err_set(err, TL_EINPUT, "%s: no data rows", path);
  }
  return TL_OK;
}

/* ---- rows to records ---- */

typedef struct {
  const char *file;
  const tl_tabin *t;
  const vk_name *nm;
  int c_index, c_pred, c_hit, c_log, c_gt, c_think, c_question, c_answer, c_hint, c_id, c_text;
  int spatialeval;
  tl_inlog *log;
  tl_err *err;
} vk_read;

static const char *cell(const vk_read *r, size_t row, int c) {
  return c >= 0 ? r->t->cells[row][c] : NULL;
}

static const char *cell_named(const vk_read *r, size_t row, const char *name) {
  return cell(r, row, tl_tabin_col(r->t, name));
}

static tl_status bad(const vk_read *r, tl_in_kind kind, long line, const char *where, const char *msg) {
  /* the log names the file itself: the message starts at the row ("row 3 (index '2'): ...") */
  const char *row = strncmp(where, r->file, strlen(r->file)) == 0 ? where + strlen(r->file) : where;
  if (row[0] == ':' && row[1] == ' ') row += 2;
  if (tl_inlog_report(r->log, kind, r->file, line, "%s: %s", row, msg) == TL_EINPUT)
    return tl_err_set(r->err, TL_EINPUT, "%s: %s (strict input)", where, msg);
  return TL_OK;
}

/* The option letters present: A, B, ... while the column exists and the cell is not empty. */
static int n_choices(const vk_read *r, size_t row) {
  int k = 0;
  for (; k < 26; k++) {
    char name[2] = {(char)('A' + k), 0};
    const char *v = cell_named(r, row, name);
    if (!v || !*v) break;
  }
  return k;
}

/* Whether column name is one the item gets under its own name (not a column of the answer). */
static int item_column(const char *name) {
  static const char *const skip[] = {"index", "prediction", "thinking", "hit", "log", "GT", "image", "image_path",
                                     "question", "answer", NULL};
  if (name[0] >= 'A' && name[0] <= 'Z' && !name[1]) return 0;
  for (int i = 0; skip[i]; i++)
    if (strcmp(name, skip[i]) == 0) return 0;
  return 1;
}

static cJSON *generic_item(const vk_read *r, size_t row, const char *id) {
  cJSON *it = cJSON_CreateObject(), *ch = cJSON_CreateArray();
  if (!it || !ch) goto oom;
  if (!cJSON_AddStringToObject(it, "id", id)) goto oom;
  const char *q = cell(r, row, r->c_question);
  if (q && !cJSON_AddStringToObject(it, "question", q)) goto oom;
  int k = n_choices(r, row);
  for (int i = 0; i < k; i++) {
    char name[2] = {(char)('A' + i), 0};
    cJSON *s = cJSON_CreateString(cell_named(r, row, name));
    if (!s || !cJSON_AddItemToArray(ch, s)) {
      cJSON_Delete(s);
      goto oom;
    }
  }
  cJSON_AddItemToObject(it, "choices", ch);
  ch = NULL;
  const char *a = cell(r, row, r->c_answer);
  if (a && *a && !cJSON_AddStringToObject(it, "answer", a)) goto oom;
  for (int c = 0; c < r->t->ncols; c++) {
    const char *name = r->t->colnames[c], *v = r->t->cells[row][c];
    if (!item_column(name) || !*v || cJSON_GetObjectItemCaseSensitive(it, name)) continue;
    if (!cJSON_AddStringToObject(it, name, v)) goto oom;
  }
  return it;
oom:
  cJSON_Delete(ch);
  cJSON_Delete(it);
  return NULL;
}

/* "Spatial-Map", "spatial_map", "spatialmap_vqa" -> "spatialmapvqa": lower case, letters and
 * digits only. */
static void squash(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (; *s && n + 1 < cap; s++)
    if (isalnum((unsigned char)*s)) out[n++] = (char)tolower((unsigned char)*s);
  out[n] = 0;
}

/* SpatialEval's item for a row (tl_se_item_from_json reads it): "id" from the row's own id
 * column when it holds a SpatialEval id; else "<task>.<mode>.vlmevalkit-<index>.<qid>" with the
 * task from a column naming it (category, l2-category, task, subset, split), the mode likewise
 * (vqa when none names one: VLMEvalKit sends the image) and qid from a qid column (0 when none).
 * "text" is the row's text column, else the hint and question with SpatialEval's options block
 * ("... Available options:\nA. x\nB. y." from the A.. columns) unless it holds one;
 * "oracle_option" the answer letter, "oracle_answer" its option text, "oracle_full_answer"
 * "A. x"; "vlmevalkit_index" keeps the row's index. NULL with why set when the row cannot be
 * one. */
static cJSON *spatialeval_item(const vk_read *r, size_t row, const char *index, char *why, size_t wcap) {
  static const char *const task_cols[] = {"category", "l2-category", "task", "subset", "split", NULL};
  tl_err e = {0};
  tl_buf id, text;
  tl_buf_init(&id);
  tl_buf_init(&text);
  cJSON *it = NULL;
  const char *own = cell(r, row, r->c_id);
  if (own && *own && tl_se_parse_id(own, NULL, NULL, NULL, NULL, &e) == TL_OK) {
    if (tl_buf_puts(&id, own)) goto oom;
  } else {
    const char *task = NULL, *mode = NULL;
    for (int i = 0; task_cols[i]; i++) {
      const char *v = cell_named(r, row, task_cols[i]);
      char sq[128];
      if (!v) continue;
      squash(v, sq, sizeof sq);
      for (int k = 0; k < TL_SE__NTASKS && !task; k++)
        if (strstr(sq, tl_se_task_name((tl_se_task)k))) task = tl_se_task_name((tl_se_task)k);
      if (!mode) mode = strstr(sq, "vtqa") ? "vtqa" : strstr(sq, "vqa") ? "vqa" : strstr(sq, "tqa") ? "tqa" : NULL;
    }
    const char *m = cell_named(r, row, "mode");
    if (m && (!strcmp(m, "tqa") || !strcmp(m, "vqa") || !strcmp(m, "vtqa"))) mode = m;
    if (!task) {
      snprintf(why, wcap,
               "cannot tell its SpatialEval item: no 'id' column with a SpatialEval id (%.200s), and no category naming "
               "spatialmap, mazenav, spatialgrid or spatialreal",
               own && *own ? e.msg : "none");
      goto fail;
    }
    const char *qid = cell_named(r, row, "qid");
    int q = 0;
    if (qid && *qid) {
      char *endp;
      long v = strtol(qid, &endp, 10);
      if (*endp || v < 0 || v > 999999) {
        snprintf(why, wcap, "qid '%.40s' is not a question number", qid);
        goto fail;
      }
      q = (int)v;
    }
    if (tl_buf_printf(&id, "%s.%s.vlmevalkit-%s.%d", task, mode ? mode : "vqa", index, q)) goto oom;
  }
  const char *ans = cell(r, row, r->c_answer);
  int k = n_choices(r, row);
  if (!ans || strlen(ans) != 1 || ans[0] < 'A' || ans[0] > 'Z' || (k && ans[0] - 'A' >= k)) {
    snprintf(why, wcap, "answer '%.40s' is not the letter of one of its %d options", ans ? ans : "", k);
    goto fail;
  }
  const char *own_text = cell(r, row, r->c_text);
  if (own_text && *own_text) {
    if (tl_buf_puts(&text, own_text)) goto oom;
  } else {
    const char *hint = cell(r, row, r->c_hint), *q = cell(r, row, r->c_question);
    if (hint && *hint && tl_buf_printf(&text, "%s\n", hint)) goto oom;
    if (q && tl_buf_puts(&text, q)) goto oom;
    if (!q || !strstr(q, "Available options:")) {
      if (k == 0) {
        snprintf(why, wcap, "no options (columns A, B, ...) and no options block in its question");
        goto fail;
      }
      if (tl_buf_puts(&text, " Available options:")) goto oom;
      for (int i = 0; i < k; i++) {
        char name[2] = {(char)('A' + i), 0};
        if (tl_buf_printf(&text, "\n%c. %s%s", 'A' + i, cell_named(r, row, name), i == k - 1 ? "." : "")) goto oom;
      }
    }
  }
  char letter[2] = {ans[0], 0};
  const char *oracle = cell_named(r, row, "oracle_answer");
  if (!oracle || !*oracle) oracle = k ? cell_named(r, row, letter) : NULL;
  if (!oracle) {
    snprintf(why, wcap, "no text for its answer '%s'", letter);
    goto fail;
  }
  tl_buf full;
  tl_buf_init(&full);
  if (tl_buf_printf(&full, "%s. %s", letter, oracle)) {
    tl_buf_release(&full);
    goto oom;
  }
  it = cJSON_CreateObject();
  int ok = it && cJSON_AddStringToObject(it, "id", id.data) && cJSON_AddStringToObject(it, "text", text.data ? text.data : "") &&
           cJSON_AddStringToObject(it, "oracle_answer", oracle) && cJSON_AddStringToObject(it, "oracle_option", letter) &&
           cJSON_AddStringToObject(it, "oracle_full_answer", full.data) &&
           cJSON_AddStringToObject(it, "vlmevalkit_index", index);
  tl_buf_release(&full);
  if (!ok) goto oom;
  tl_buf_release(&id);
  tl_buf_release(&text);
  return it;
oom:
  snprintf(why, wcap, "out of memory");
fail:
  cJSON_Delete(it);
  tl_buf_release(&id);
  tl_buf_release(&text);
  return NULL;
}

/* hit as written: 1, 0, 1.0, True, false. -1 when it is none of these. */
static int hit_value(const char *s) {
  if (!strcmp(s, "1") || !strcmp(s, "1.0") || !strcasecmp(s, "true")) return 1;
  if (!strcmp(s, "0") || !strcmp(s, "0.0") || !strcasecmp(s, "false")) return 0;
  return -1;
}

static tl_status one_row(vk_read *r, size_t row, tl_imp_emit emit, void *ctx) {
  long line = r->t->line[row];
  const char *index = r->t->cells[row][r->c_index];
  char where[600];
  snprintf(where, sizeof where, "%s: row %zu (index '%.60s')", r->file, row + 1, index);
  if (!*index) return bad(r, TL_IN_BAD_ID, line, where, "empty index");
  char why[400] = "";
  cJSON *item = r->spatialeval ? spatialeval_item(r, row, index, why, sizeof why) : generic_item(r, row, index);
  if (!item && (!r->spatialeval || !strcmp(why, "out of memory"))) return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  tl_status st = TL_OK;
  if (!item) { /* a SpatialEval row without its item: reported, and kept with the generic item */
    char msg[500];
    snprintf(msg, sizeof msg, "SpatialEval row: %s; kept with a generic item", why);
    if ((st = bad(r, TL_IN_BAD_FIELD, line, where, msg))) return st;
    if (!(item = generic_item(r, row, index))) return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  }
  const cJSON *idv = cJSON_GetObjectItemCaseSensitive(item, "id");
  cJSON *extra = cJSON_CreateObject();
  if (!extra) {
    cJSON_Delete(item);
    return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  }
  const char *think = cell(r, row, r->c_think), *lg = cell(r, row, r->c_log), *gt = cell(r, row, r->c_gt);
  int ok = (!think || !*think || cJSON_AddStringToObject(extra, "thinking", think)) &&
           (!lg || !*lg || cJSON_AddStringToObject(extra, "log", lg)) &&
           (!gt || !*gt || cJSON_AddStringToObject(extra, "GT", gt)) &&
           (!r->nm->judge || cJSON_AddStringToObject(extra, "judge", r->nm->judge));
  if (!ok) {
    cJSON_Delete(item);
    cJSON_Delete(extra);
    return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  }
  tl_imp_rec rec = {.where = where, .line = line, .task = r->nm->dataset, .id = idv->valuestring,
                    .model = r->nm->model, .seed = -1, .turn_id = -1, .stage = 0,
                    .response = cell(r, row, r->c_pred), .item = item, .extra = extra->child ? extra : NULL};
  const char *hit = cell(r, row, r->c_hit);
  if (hit && *hit) {
    int h = hit_value(hit);
    if (h < 0) {
      char msg[200];
      snprintf(msg, sizeof msg, "hit '%.40s' is not 1 or 0: kept without the harness's verdict", hit);
      st = bad(r, TL_IN_BAD_FIELD, line, where, msg);
    } else {
      rec.has_verdict = 1;
      rec.verdict = h;
      rec.verdict_metric = "hit";
    }
  }
  if (!st) st = emit(ctx, &rec, r->err);
  cJSON_Delete(item);
  cJSON_Delete(extra);
  return st;
}

static tl_status vk_read_path(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  vk_name nm;
  if (parse_name(path, &nm)) {
    name_release(&nm);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  tl_tabin t;
  tl_status st;
  if (ends_with(path, ".csv") || ends_with(path, ".tsv")) st = tl_tabin_read(path, 0, log, &t, err);
  else if (ends_with(path, ".json")) st = read_json_table(path, log, &t, err);
  else if (ends_with(path, ".xlsx")) st = tl_xlsx_read(path, &t, err);
  else st = tl_err_set(err, TL_EINPUT, "'%s': not a VLMEvalKit table (.xlsx, .tsv, .csv, .json)", path);
  if (st) {
    name_release(&nm);
    return st;
  }
  vk_read r = {.file = path, .t = &t, .nm = &nm, .log = log, .err = err};
  r.c_index = tl_tabin_col(&t, "index");
  r.c_pred = tl_tabin_col(&t, "prediction");
  r.c_hit = tl_tabin_col(&t, "hit");
  r.c_log = tl_tabin_col(&t, "log");
  r.c_gt = tl_tabin_col(&t, "GT");
  r.c_think = tl_tabin_col(&t, "thinking");
  r.c_question = tl_tabin_col(&t, "question");
  r.c_answer = tl_tabin_col(&t, "answer");
  r.c_hint = tl_tabin_col(&t, "hint");
  r.c_id = tl_tabin_col(&t, "id");
  r.c_text = tl_tabin_col(&t, "text");
  r.spatialeval = strncasecmp(nm.dataset, "SpatialEval", 11) == 0;
  if (r.c_index < 0 || (r.c_pred < 0 && r.c_hit < 0)) {
    st = tl_err_set(err, TL_EINPUT, "%s: not a VLMEvalKit prediction table: it has no '%s' column", path,
                    r.c_index < 0 ? "index" : "prediction");
  } else {
    for (size_t i = 0; i < t.nrows && !st; i++) st = one_row(&r, i, emit, ctx);
  }
  tl_inlog_lines(log, path, "rows", (long)t.nrows);
  tl_tabin_release(&t);
  name_release(&nm);
  return st;
}

const tl_importer tl_imp_vlmevalkit = {
    .name = "vlmevalkit",
    .describe = "VLMEvalKit prediction tables <model>_<dataset>.xlsx/.tsv/.csv/.json and "
                "<...>_<judge>_result tables (hit)",
    .detect = vk_detect,
    .read = vk_read_path,
};
