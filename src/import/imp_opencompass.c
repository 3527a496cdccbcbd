/* imp_opencompass.c - OpenCompass's saved outputs (../shared/spec/harness-formats.md, "OpenCompass"):
 *
 *  - predictions: outputs/<cfg>/<time>/predictions/<model>/<dataset>.json, a split task as
 *    <dataset>_0.json, <dataset>_1.json, ... (read in that order when the path names the first
 *    file or the folder). One JSON object keyed "0", "1", ...; each value has origin_prompt (a
 *    string, or a list of {"role", "prompt"}), prediction (a string; a list, one entry per round,
 *    for multi-round outputs) and gold, written only when it is truthy (a gold of 0 or "" is
 *    absent, so an absent gold is not an error).
 *  - judged results: results/<model>_judged-by--<judge>/<dataset>.json: {"avg", ..., "details":
 *    {"0": {origin_prompt, prediction: the judge's text, gold}, ...}}.
 *
 * MT-Bench-101 (gold = {"task", "multi_id", "turn_id"}): a record is keyed by the dialogue, the
 * module's item id being the decimal text of the benchmark file's integer "id", which is what
 * OpenCompass copies into multi_id (its loader writes multi_id as that integer and turn_id as
 * the 1-based turn's text, "2"; both spellings, number or digit string, are read). Predictions
 * give the model's turn answers (stage 0), judged results the judge's raw texts (stage 1); the
 * model is the folder's name, less "_judged-by--<judge>". A results detail's own parsed rating
 * ("score" or "rating", a number) is the harness's verdict; OpenCompass's MT-Bench-101 saves
 * none per detail, so its judgments carry no verdict and tally's parsers read the texts.
 *
 * Other datasets: the record's key is the id, the prediction the response, and gold (when
 * present) the item's answer: {"id", "question": the prompt (a list's last HUMAN prompt),
 * "answer": gold}. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/import.h"
#include "imp_util.h"
#include "tally/str.h"

#define JUDGED "_judged-by--"

/* ---- paths ---- */

static const char *base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* The folder of a file ("." for a bare name), malloc'd. */
static char *dir_of(const char *p) {
  const char *s = strrchr(p, '/');
  if (!s) return tl_strdup(".");
  if (s == p) return tl_strdup("/");
  return tl_strndup(p, (size_t)(s - p));
}

static int is_file(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* "x_12.json": 12, with *stem_len the length of "x"; -1 when the name has no "_<digits>.json". */
static long split_no(const char *name, size_t *stem_len) {
  size_t n = strlen(name);
  if (!ends_with(name, ".json")) return -1;
  size_t e = n - 5, d = e;
  while (d > 0 && isdigit((unsigned char)name[d - 1])) d--;
  if (d == e || d < 2 || name[d - 1] != '_' || e - d > 9) return -1;
  *stem_len = d - 1;
  return strtol(name + d, NULL, 10);
}

/* Whether dir/<stem>_0.json exists: a numbered name is a split only then. */
static int has_first_split(const char *dir, const char *name, size_t stem_len) {
  tl_buf b;
  tl_buf_init(&b);
  int ok = tl_buf_printf(&b, "%s/%.*s_0.json", dir, (int)stem_len, name) == TL_OK && is_file(b.data);
  tl_buf_release(&b);
  return ok;
}

/* One file to read: its path and its dataset (the split stem for a split). */
typedef struct {
  char *path, *task;
  long no; /* split number, -1 when not a split */
} oc_file;

typedef struct {
  oc_file *v;
  size_t n, cap;
} oc_files;

static tl_status files_add(oc_files *f, char *path, char *task, long no) {
  if (!path || !task) goto oom;
  if (f->n == f->cap) {
    size_t c = f->cap ? f->cap * 2 : 8;
    oc_file *p = realloc(f->v, c * sizeof *p);
    if (!p) goto oom;
    f->v = p;
    f->cap = c;
  }
  f->v[f->n++] = (oc_file){path, task, no};
  return TL_OK;
oom:
  free(path);
  free(task);
  return TL_ENOMEM;
}

static void files_release(oc_files *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->v[i].path);
    free(f->v[i].task);
  }
  free(f->v);
}

static int file_cmp(const void *a, const void *b) {
  const oc_file *x = a, *y = b;
  int c = strcmp(x->task, y->task);
  if (c) return c;
  return (x->no > y->no) - (x->no < y->no);
}

/* The entry for dir/name: its dataset is the split stem when <stem>_0.json sits beside it. */
static tl_status add_named(oc_files *f, const char *dir, const char *name) {
  size_t sl = 0;
  long no = split_no(name, &sl);
  if (no >= 0 && !has_first_split(dir, name, sl)) no = -1;
  if (no < 0) sl = strlen(name) - (ends_with(name, ".json") ? 5 : 0);
  tl_buf p;
  tl_buf_init(&p);
  if (tl_buf_printf(&p, "%s/%s", dir, name)) {
    tl_buf_release(&p);
    return TL_ENOMEM;
  }
  return files_add(f, tl_buf_detach(&p), tl_strndup(name, sl), no);
}

/* The files a path names: a folder's *.json, datasets in name order and splits in number order;
 * a first split X_0.json and X_1.json, X_2.json, ... while they exist; any other file alone. */
static tl_status collect(const char *path, int is_dir, oc_files *f, tl_err *err) {
  if (is_dir) {
    DIR *d = opendir(path);
    if (!d) return tl_err_set(err, TL_EIO, "cannot open folder '%s': %s", path, strerror(errno));
    struct dirent *e;
    tl_status st = TL_OK;
    while (!st && (e = readdir(d))) {
      if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json")) continue;
      tl_buf p;
      tl_buf_init(&p);
      if (tl_buf_printf(&p, "%s/%s", path, e->d_name)) st = TL_ENOMEM;
      else if (is_file(p.data)) st = add_named(f, path, e->d_name);
      tl_buf_release(&p);
    }
    closedir(d);
    if (st) return tl_err_set(err, st, "out of memory");
    if (!f->n) return tl_err_set(err, TL_EINPUT, "folder '%s' holds no OpenCompass .json file", path);
    qsort(f->v, f->n, sizeof *f->v, file_cmp);
    return TL_OK;
  }
  char *dir = dir_of(path);
  if (!dir) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const char *name = base_of(path);
  size_t sl = 0;
  tl_status st;
  if (split_no(name, &sl) == 0) {
    for (long k = 0;; k++) {
      tl_buf p;
      tl_buf_init(&p);
      if (tl_buf_printf(&p, "%s/%.*s_%ld.json", dir, (int)sl, name, k)) {
        tl_buf_release(&p);
        st = TL_ENOMEM;
        break;
      }
      if (k > 0 && !is_file(p.data)) {
        tl_buf_release(&p);
        st = TL_OK;
        break;
      }
      /* the first split is the path as given (so that its messages name it as the user did) */
      char *fp = k == 0 ? tl_strdup(path) : tl_buf_detach(&p);
      tl_buf_release(&p);
      if ((st = files_add(f, fp, tl_strndup(name, sl), k))) break;
    }
  } else {
    long no = split_no(name, &sl);
    if (no < 0 || !has_first_split(dir, name, sl)) {
      no = -1;
      sl = strlen(name) - (ends_with(name, ".json") ? 5 : 0);
    }
    st = files_add(f, tl_strdup(path), tl_strndup(name, sl), no);
  }
  free(dir);
  return st ? tl_err_set(err, st, "out of memory") : TL_OK;
}

/* The model and judge a file's folder names: "<model>" or "<model>_judged-by--<judge>". */
static tl_status folder_names(const char *file, char **model, char **judge) {
  *model = *judge = NULL;
  char *dir = dir_of(file);
  if (!dir) return TL_ENOMEM;
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
  const char *name = base_of(dir);
  tl_status st = TL_OK;
  if (strcmp(name, ".") && strcmp(name, "..") && *name) {
    const char *j = strstr(name, JUDGED);
    if (j) {
      *model = tl_strndup(name, (size_t)(j - name));
      *judge = tl_strdup(j + strlen(JUDGED));
      if (!*model || !*judge) st = TL_ENOMEM;
    } else if (!(*model = tl_strdup(name))) {
      st = TL_ENOMEM;
    }
  }
  free(dir);
  return st;
}

/* ---- detection ---- */

static const unsigned char *skip_ws(const unsigned char *p, const unsigned char *e) {
  while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

static int has(const unsigned char *head, size_t n, const char *s) {
  size_t m = strlen(s);
  for (size_t i = 0; i + m <= n; i++)
    if (head[i] == (unsigned char)s[0] && memcmp(head + i, s, m) == 0) return 1;
  return 0;
}

/* A predictions object ({"0": {"origin_prompt": ..., "prediction": ...}}) or a results object
 * with "details" holding such records. */
static int detect_head(const unsigned char *head, size_t n) {
  const unsigned char *p = head, *e = head + n;
  p = skip_ws(p, e);
  if (p >= e || *p != '{') return 0;
  if (!has(head, n, "\"origin_prompt\"") || !has(head, n, "\"prediction\"")) return 0;
  p = skip_ws(p + 1, e);
  if (p < e && *p == '"') { /* the first key: all digits for predictions */
    const unsigned char *k = p + 1;
    while (k < e && isdigit(*k)) k++;
    if (k > p + 1 && k < e && *k == '"') return 1;
  }
  return has(head, n, "\"details\"");
}

static int oc_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  if (!is_dir) return ends_with(path, ".json") && detect_head(head, n);
  /* a folder: predictions/<model>/ or results/<model>_judged-by--<judge>/ whose first .json is ours */
  DIR *d = opendir(path);
  if (!d) return 0;
  struct dirent *e;
  int yes = 0;
  static unsigned char buf[TL_IMPORT_HEAD];
  while (!yes && (e = readdir(d))) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json")) continue;
    tl_buf p;
    tl_buf_init(&p);
    if (tl_buf_printf(&p, "%s/%s", path, e->d_name) == TL_OK) {
      FILE *f = fopen(p.data, "rb");
      if (f) {
        size_t m = fread(buf, 1, sizeof buf, f);
        fclose(f);
        yes = detect_head(buf, m);
      }
    }
    tl_buf_release(&p);
    break; /* the first .json decides */
  }
  closedir(d);
  return yes;
}

/* ---- records ---- */

typedef struct {
  const char *file, *task, *model, *judge;
  int stage;
  long offset;    /* a split file: the records of the splits before it (-1: not a split) */
  tl_inlog *log;
  tl_imp_emit emit;
  void *ctx;
  tl_err *err;
  long bad;
} oc_read;

/* Reports a bad record; TL_EINPUT (err set) under strict input. */
static tl_status bad(oc_read *r, tl_in_kind kind, long line, const char *where, const char *fmt, const char *a) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, a ? a : "");
  r->bad++;
  /* the log names the file itself: the message starts at the record ("key '3': ...") */
  const char *rec = strncmp(where, r->file, strlen(r->file)) == 0 ? where + strlen(r->file) : where;
  if (rec[0] == ':' && rec[1] == ' ') rec += 2;
  if (tl_inlog_report(r->log, kind, r->file, line, "%s: %s", rec, msg) == TL_EINPUT)
    return tl_err_set(r->err, TL_EINPUT, "%s: %s (strict input)", where, msg);
  return TL_OK;
}

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* A positive integer given as a JSON number or a digit string (MT-Bench-101's multi_id is the
 * former, turn_id the latter); 0 when it is neither. */
static long pos_int(const cJSON *v) {
  if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    return d >= 1 && d <= 1e9 && d == floor(d) ? (long)d : 0;
  }
  if (cJSON_IsString(v) && all_digits(v->valuestring) && strlen(v->valuestring) <= 9)
    return strtol(v->valuestring, NULL, 10);
  return 0;
}

/* The prompt text of origin_prompt: a string as is; a list of {role, prompt} as its last HUMAN
 * prompt (the question), *json the whole list as JSON text (the prompt as saved). */
static const char *question_of(const cJSON *op) {
  if (cJSON_IsString(op)) return op->valuestring;
  const char *q = NULL;
  const cJSON *m;
  cJSON_ArrayForEach(m, op) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(m, "prompt");
    if (cJSON_IsString(pr) && (!cJSON_IsString(role) || strcmp(role->valuestring, "HUMAN") == 0)) q = pr->valuestring;
  }
  return q;
}

static tl_status emit_rec(oc_read *r, tl_imp_rec *rec) {
  tl_status st = r->emit(r->ctx, rec, r->err);
  return st;
}

/* One MT-Bench-101 record (gold has multi_id and turn_id). */
static tl_status mt_record(oc_read *r, const cJSON *v, const cJSON *gold, long line, const char *where,
                           const char *prompt) {
  const cJSON *mid = cJSON_GetObjectItemCaseSensitive(gold, "multi_id");
  const cJSON *tid = cJSON_GetObjectItemCaseSensitive(gold, "turn_id");
  const cJSON *pred = cJSON_GetObjectItemCaseSensitive(v, "prediction");
  long dialogue = pos_int(mid), turn = pos_int(tid);
  char *txt = cJSON_PrintUnformatted(mid);
  tl_status st = TL_OK;
  if (!dialogue) st = bad(r, TL_IN_BAD_ID, line, where, "gold.multi_id %s is not a dialogue id (a positive integer)", txt);
  free(txt);
  if (st || !dialogue) return st;
  if (!turn) {
    txt = cJSON_PrintUnformatted(tid);
    st = bad(r, TL_IN_BAD_FIELD, line, where, "gold.turn_id %s is not a turn (an integer from 1)", txt);
    free(txt);
    return st;
  }
  if (!cJSON_IsString(pred) && !cJSON_IsNull(pred))
    return bad(r, TL_IN_BAD_FIELD, line, where, "prediction is not a string (MT-Bench-101 answers one turn per record)%s", NULL);
  char id[24];
  snprintf(id, sizeof id, "%ld", dialogue);
  cJSON *extra = cJSON_CreateObject();
  if (!extra) return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  const cJSON *task = cJSON_GetObjectItemCaseSensitive(gold, "task");
  if ((cJSON_IsString(task) && !cJSON_AddStringToObject(extra, "task", task->valuestring)) ||
      (r->judge && r->stage == 1 && !cJSON_AddStringToObject(extra, "judge", r->judge))) {
    cJSON_Delete(extra);
    return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  }
  tl_imp_rec rec = {.where = where, .line = line, .task = r->task, .id = id, .model = r->model, .seed = -1,
                    .turn_id = (int)turn, .stage = r->stage, .response = cJSON_IsString(pred) ? pred->valuestring : NULL,
                    .prompt = prompt, .extra = extra};
  const cJSON *score = cJSON_GetObjectItemCaseSensitive(v, "score");
  if (!cJSON_IsNumber(score)) score = cJSON_GetObjectItemCaseSensitive(v, "rating");
  if (r->stage == 1 && cJSON_IsNumber(score)) {
    rec.has_verdict = 1;
    rec.verdict = score->valuedouble;
    rec.verdict_metric = "rating";
  }
  st = emit_rec(r, &rec);
  cJSON_Delete(extra);
  return st;
}

/* One record of another dataset: one answer, or one per round for a list of predictions. */
static tl_status generic_record(oc_read *r, const char *key, const cJSON *v, const cJSON *gold, long line,
                                const char *where, const char *prompt, const char *question) {
  const cJSON *pred = cJSON_GetObjectItemCaseSensitive(v, "prediction");
  if (!cJSON_IsString(pred) && !cJSON_IsNull(pred) && !cJSON_IsArray(pred))
    return bad(r, TL_IN_BAD_FIELD, line, where, "prediction is not a string, null or a list of rounds%s", NULL);
  cJSON *item = NULL;
  if (gold) {
    item = cJSON_CreateObject();
    cJSON *g = cJSON_Duplicate(gold, 1);
    if (!item || !g || !cJSON_AddStringToObject(item, "id", key) ||
        (question && !cJSON_AddStringToObject(item, "question", question)) || !cJSON_AddItemToObject(item, "answer", g)) {
      if (g && !cJSON_GetObjectItemCaseSensitive(item, "answer")) cJSON_Delete(g);
      cJSON_Delete(item);
      return tl_err_set(r->err, TL_ENOMEM, "out of memory");
    }
  }
  tl_imp_rec rec = {.where = where, .line = line, .task = r->task, .id = key, .model = r->model, .seed = -1,
                    .turn_id = -1, .stage = r->stage, .prompt = prompt, .item = item};
  const cJSON *correct = cJSON_GetObjectItemCaseSensitive(v, "correct");
  if (cJSON_IsBool(correct)) {
    rec.has_verdict = 1;
    rec.verdict = cJSON_IsTrue(correct) ? 1 : 0;
    rec.verdict_metric = "correct";
  }
  tl_status st = TL_OK;
  char idbuf[32];
  if (r->offset >= 0) { /* splits key their records from "0" each: the id is the position overall */
    snprintf(idbuf, sizeof idbuf, "%ld", r->offset + strtol(key, NULL, 10));
    rec.id = idbuf;
    if (item) cJSON_ReplaceItemInObjectCaseSensitive(item, "id", cJSON_CreateString(idbuf));
  }
  if (!cJSON_IsArray(pred)) {
    rec.response = cJSON_IsString(pred) ? pred->valuestring : NULL;
    st = emit_rec(r, &rec);
  } else {
    int round = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pred) {
      round++;
      char w[600];
      snprintf(w, sizeof w, "%s round %d", where, round);
      if (!cJSON_IsString(p) && !cJSON_IsNull(p)) {
        if ((st = bad(r, TL_IN_BAD_FIELD, line, w, "prediction is not a string%s", NULL))) break;
        continue;
      }
      rec.where = w;
      rec.turn_id = round;
      rec.response = cJSON_IsString(p) ? p->valuestring : NULL;
      if ((st = emit_rec(r, &rec))) break;
    }
  }
  cJSON_Delete(item);
  return st;
}

static tl_status one_record(oc_read *r, const char *key, const cJSON *v, long line, int in_details) {
  char where[512];
  snprintf(where, sizeof where, "%s: %s'%.200s'", r->file, in_details ? "details " : "key ", key);
  if (!all_digits(key))
    return bad(r, TL_IN_BAD_ID, line, where, "not a decimal string (OpenCompass keys its records \"0\", \"1\", ...)%s", NULL);
  if (!cJSON_IsObject(v)) return bad(r, TL_IN_BAD_FIELD, line, where, "the record is not an object%s", NULL);
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(v, "origin_prompt");
  if (!cJSON_GetObjectItemCaseSensitive(v, "prediction"))
    return bad(r, TL_IN_MISSING_FIELD, line, where, "no 'prediction'%s", NULL);
  if (!op) return bad(r, TL_IN_MISSING_FIELD, line, where, "no 'origin_prompt'%s", NULL);
  if (!cJSON_IsString(op) && !cJSON_IsArray(op))
    return bad(r, TL_IN_BAD_FIELD, line, where, "origin_prompt is neither a string nor a list of {role, prompt}%s", NULL);
  char *list = cJSON_IsArray(op) ? cJSON_PrintUnformatted(op) : NULL;
  if (cJSON_IsArray(op) && !list) return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  const char *prompt = list ? list : op->valuestring;
  const cJSON *gold = cJSON_GetObjectItemCaseSensitive(v, "gold");
  tl_status st;
  if (cJSON_IsObject(gold) && cJSON_GetObjectItemCaseSensitive(gold, "multi_id") &&
      cJSON_GetObjectItemCaseSensitive(gold, "turn_id"))
    st = mt_record(r, v, gold, line, where, prompt);
  else
    st = generic_record(r, key, v, gold, line, where, prompt, question_of(op));
  free(list);
  return st;
}


static tl_status read_file(oc_read *r, long *nrec) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(r->file, 0, &b, r->err);
  if (st) {
    tl_buf_release(&b);
    return st;
  }
  tl_buf j;
  tl_buf_init(&j);
  if (tl_imp_nan_to_null(&b, &j)) {
    tl_buf_release(&b);
    tl_buf_release(&j);
    return tl_err_set(r->err, TL_ENOMEM, "out of memory");
  }
  tl_buf_release(&b);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(j.data ? j.data : "", j.len, &end, 0);
  if (!root) {
    size_t at = end && j.data ? (size_t)(end - j.data) : 0;
    tl_buf_release(&j);
    tl_inlog_report(r->log, TL_IN_MALFORMED_JSON, r->file, 0, "not JSON (stops at byte %zu)", at);
    return tl_err_set(r->err, TL_EINPUT, "%s: not an OpenCompass JSON file: the JSON stops at byte %zu", r->file, at);
  }
  tl_buf_release(&j);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return tl_err_set(r->err, TL_EINPUT, "%s: not an OpenCompass predictions or results file (not a JSON object)", r->file);
  }
  /* a results file: {"<metric>": ..., "details": {...}}; predictions: {"0": {...}, ...} */
  const cJSON *details = cJSON_GetObjectItemCaseSensitive(root, "details");
  const cJSON *recs = details && (cJSON_IsObject(details) || cJSON_IsArray(details)) ? details : root;
  int in_details = recs == details;
  r->stage = in_details && r->judge ? 1 : 0;
  long n = 0;
  const cJSON *v;
  st = TL_OK;
  cJSON_ArrayForEach(v, recs) {
    n++;
    char k[24];
    const char *key = v->string;
    if (!key) { /* a details list: its position is the key */
      snprintf(k, sizeof k, "%ld", n - 1);
      key = k;
    }
    if ((st = one_record(r, key, v, n, in_details))) break;
  }
  cJSON_Delete(root);
  if (!st && n == 0 &&
      tl_inlog_report(r->log, TL_IN_EMPTY_FILE, r->file, 0, "no records (an empty OpenCompass %s)",
                      in_details ? "details object" : "predictions object") == TL_EINPUT)
    st = tl_err_set(r->err, TL_EINPUT, "%s: no records (strict input)", r->file);
  *nrec = n;
  return st;
}

static tl_status oc_read_path(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  oc_files f = {0};
  tl_status st = collect(path, S_ISDIR(sb.st_mode), &f, err);
  long offset = 0;
  for (size_t i = 0; !st && i < f.n; i++) {
    if (f.v[i].no == 0) offset = 0;
    char *model, *judge;
    if ((st = folder_names(f.v[i].path, &model, &judge))) {
      st = tl_err_set(err, st, "out of memory");
      break;
    }
    oc_read r = {.file = f.v[i].path, .task = f.v[i].task, .model = model, .judge = judge,
                 .offset = f.v[i].no >= 0 ? offset : -1, .log = log, .emit = emit, .ctx = ctx, .err = err};
    long n = 0;
    st = read_file(&r, &n);
    offset += n;
    if (!st || st == TL_EINPUT) tl_inlog_lines(log, f.v[i].path, "records", n);
    free(model);
    free(judge);
  }
  files_release(&f);
  return st;
}

const tl_importer tl_imp_opencompass = {
    .name = "opencompass",
    .describe = "OpenCompass predictions/<model>/<dataset>.json (split _0, _1, ...) and judged "
                "results/<model>_judged-by--<judge>/<dataset>.json (MT-Bench-101 turns and judge texts)",
    .detect = oc_detect,
    .read = oc_read_path,
};
