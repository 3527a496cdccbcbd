/* spatialeval.c - SpatialEval items, ids, option blocks, prompts, and the mode dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spatialeval.h"
#include "tally/str.h"

static const char *const TASKS[TL_SE__NTASKS] = {"spatialmap", "mazenav", "spatialgrid",
                                                  "spatialreal"};
static const char *const MODES[TL_SE__NMODES] = {"strict", "pr3", "legacy"};
static const char *const QMODES[TL_SE__NQMODES] = {"tqa", "vqa", "vtqa"};

const char *tl_se_qmode_name(tl_se_qmode q) {
  return (q >= 0 && q < TL_SE__NQMODES) ? QMODES[q] : "unknown";
}
int tl_se_qmode_from_name(const char *name) {
  for (int i = 0; i < TL_SE__NQMODES; i++)
    if (strcmp(name, QMODES[i]) == 0) return i;
  return -1;
}

const char *tl_se_task_name(tl_se_task t) {
  return (t >= 0 && t < TL_SE__NTASKS) ? TASKS[t] : "unknown";
}
const char *tl_se_mode_name(tl_se_mode m) {
  return (m >= 0 && m < TL_SE__NMODES) ? MODES[m] : "unknown";
}
int tl_se_mode_from_name(const char *name) {
  for (int i = 0; i < TL_SE__NMODES; i++)
    if (strcmp(name, MODES[i]) == 0) return i;
  return -1;
}

void tl_se_item_init(tl_se_item *it) { memset(it, 0, sizeof *it); }

void tl_se_item_release(tl_se_item *it) {
  free(it->id);
  free(it->text);
  free(it->oracle_answer);
  free(it->oracle_option);
  free(it->oracle_full_answer);
  free(it->instance);
  free(it->image);
  for (int i = 0; i < it->n_options; i++) free(it->opt_text[i]);
  tl_se_item_init(it);
}

tl_status tl_se_parse_id(const char *id, tl_se_task *task, char mode[8], char **instance,
                         int *qid, tl_err *err) {
  /* task.mode.instance.qid: task and mode are the first two fields, qid the last, and the
   * instance everything between (it may itself contain no dots in practice, but be lenient). */
  const char *d1 = strchr(id, '.');
  const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  const char *dl = strrchr(id, '.');
  if (!d1 || !d2 || dl <= d2)
    return tl_err_set(err, TL_EINPUT, "id '%s' is not <task>.<mode>.<instance>.<qid>", id);
  int t = -1;
  for (int i = 0; i < TL_SE__NTASKS; i++)
    if ((size_t)(d1 - id) == strlen(TASKS[i]) && strncmp(id, TASKS[i], (size_t)(d1 - id)) == 0)
      t = i;
  if (t < 0)
    return tl_err_set(err, TL_EINPUT, "id '%s': unknown task '%.*s'", id, (int)(d1 - id), id);
  size_t ml = (size_t)(d2 - d1 - 1);
  if (!((ml == 3 && (!strncmp(d1 + 1, "tqa", 3) || !strncmp(d1 + 1, "vqa", 3))) ||
        (ml == 4 && !strncmp(d1 + 1, "vtqa", 4))))
    return tl_err_set(err, TL_EINPUT, "id '%s': unknown mode '%.*s' (want tqa, vqa or vtqa)", id,
                      (int)ml, d1 + 1);
  const char *q = dl + 1;
  if (!*q || strlen(q) > 6)
    return tl_err_set(err, TL_EINPUT, "id '%s': question id '%s' is not a small integer", id, q);
  int qv = 0;
  for (const char *c = q; *c; c++) {
    if (*c < '0' || *c > '9')
      return tl_err_set(err, TL_EINPUT, "id '%s': question id '%s' is not an integer", id, q);
    qv = qv * 10 + (*c - '0');
  }
  if (dl == d2 + 1)
    return tl_err_set(err, TL_EINPUT, "id '%s': empty instance", id);
  if (task) *task = (tl_se_task)t;
  if (mode) {
    memcpy(mode, d1 + 1, ml);
    mode[ml] = 0;
  }
  if (qid) *qid = qv;
  if (instance) {
    *instance = tl_strndup(d2 + 1, (size_t)(dl - d2 - 1));
    if (!*instance) return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  return TL_OK;
}

int tl_se_parse_options(const char *text, char letters[TL_SE_MAX_OPTIONS],
                        char *texts[TL_SE_MAX_OPTIONS]) {
  static const char MARK[] = "Available options:";
  const char *p = strstr(text, MARK);
  if (!p) return 0;
  p += sizeof MARK - 1;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '\r') p++;
  if (*p != '\n') return 0;
  p++;
  int n = 0;
  while (n < TL_SE_MAX_OPTIONS && p[0] == 'A' + n && p[1] == '.' && (p[2] == ' ' || p[2] == '\t')) {
    const char *s = p + 2;
    while (*s == ' ' || *s == '\t') s++;
    const char *e = strchr(s, '\n');
    const char *next = e ? e + 1 : s + strlen(s);
    if (!e) e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    letters[n] = (char)('A' + n);
    texts[n] = tl_strndup(s, (size_t)(e - s));
    if (!texts[n]) break;
    n++;
    p = next;
  }
  /* The benchmark ends the last option with a "." that is not part of the option. */
  if (n > 0) {
    size_t l = strlen(texts[n - 1]);
    if (l > 0 && texts[n - 1][l - 1] == '.') texts[n - 1][l - 1] = 0;
  }
  return n;
}

static tl_status json_text_field(const cJSON *obj, const char *name, int allow_number, char **out,
                                 tl_err *err) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, name);
  if (!f) return tl_err_set(err, TL_EINPUT, "missing field '%s'", name);
  if (cJSON_IsString(f)) {
    *out = tl_strdup(f->valuestring);
  } else if (allow_number && cJSON_IsNumber(f)) {
    char tmp[64];
    double v = f->valuedouble;
    /* (long long)v is undefined outside [-2^63, 2^63): test the range first (NaN fails it) */
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0 && v == (double)(long long)v)
      snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    else
      snprintf(tmp, sizeof tmp, "%.17g", v);
    *out = tl_strdup(tmp);
  } else {
    return tl_err_set(err, TL_EINPUT, "field '%s' is not a %s", name,
                      allow_number ? "string or number" : "string");
  }
  return *out ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
}

tl_status tl_se_item_from_json(const cJSON *obj, tl_se_item *it, tl_err *err) {
  tl_se_item_init(it);
  tl_status st;
  if (!cJSON_IsObject(obj)) return tl_err_set(err, TL_EINPUT, "item is not a JSON object");
  if ((st = json_text_field(obj, "id", 0, &it->id, err)) ||
      (st = json_text_field(obj, "text", 0, &it->text, err)) ||
      (st = json_text_field(obj, "oracle_answer", 1, &it->oracle_answer, err)) ||
      (st = json_text_field(obj, "oracle_option", 0, &it->oracle_option, err)) ||
      (st = json_text_field(obj, "oracle_full_answer", 0, &it->oracle_full_answer, err)))
    goto fail;
  if ((st = tl_se_parse_id(it->id, &it->task, it->mode, &it->instance, &it->qid, err))) goto fail;
  it->qmode = (tl_se_qmode)tl_se_qmode_from_name(it->mode); /* parse_id accepted one of the three */
  const cJSON *img = cJSON_GetObjectItemCaseSensitive(obj, "image");
  if (img && !cJSON_IsNull(img) && !cJSON_IsString(img)) {
    st = tl_err_set(err, TL_EINPUT, "item '%s': field 'image' is not a string (a path) or null", it->id);
    goto fail;
  }
  if (cJSON_IsString(img) && img->valuestring[0] && !(it->image = tl_strdup(img->valuestring))) {
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
    goto fail;
  }
  it->n_options = tl_se_parse_options(it->text, it->opt_letter, it->opt_text);
  const char *o = it->oracle_option;
  if (strlen(o) != 1 || o[0] < 'A' || o[0] > 'Z') {
    st = tl_err_set(err, TL_EINPUT, "item '%s': oracle_option '%s' is not a capital letter",
                    it->id, o);
    goto fail;
  }
  if (it->n_options > 0 && o[0] - 'A' >= it->n_options) {
    st = tl_err_set(err, TL_EINPUT, "item '%s': oracle_option '%s' but only %d options", it->id, o,
                    it->n_options);
    goto fail;
  }
  return TL_OK;
fail:
  tl_se_item_release(it);
  return st;
}

static const char REASON_TAIL[] =
    "First, provide a concise answer in one sentence. Then, elaborate on the reasoning behind "
    "your answer in a detailed, step-by-step explanation.";
static const char LETTER_MID[] =
    "\nFirst, provide a single letter response that selects the option which best answers the "
    "question. Then, elaborate on the reasoning behind your answer in a detailed, step-by-step "
    "explanation. Please strictly format the final response as follows -- Answer: <A single "
    "letter option that best answers the question>.\nReason: <reasoning behind the answer>\n"
    "Read the question again:\n";

char *tl_se_build_prompt(const tl_se_item *it, tl_se_prompt_kind kind, int lm) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st;
  if (kind == TL_SE_PROMPT_LETTER) {
    st = tl_buf_puts(&b, it->text);
    if (!st) st = tl_buf_puts(&b, LETTER_MID);
    if (!st) st = tl_buf_puts(&b, it->text);
  } else {
    st = tl_buf_puts(&b, it->text);
    if (!st) st = tl_buf_puts(&b, lm ? " " : "\n");
    if (!st) st = tl_buf_puts(&b, REASON_TAIL);
  }
  if (st) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

const char *tl_se_prompt_name(tl_se_prompt_kind k) {
  return k == TL_SE_PROMPT_LETTER ? "letter" : "reason";
}
int tl_se_prompt_from_name(const char *name) {
  if (strcmp(name, "reason") == 0) return TL_SE_PROMPT_REASON;
  if (strcmp(name, "letter") == 0) return TL_SE_PROMPT_LETTER;
  return -1;
}

/* ---- dispatch ---- */
struct tl_se_parser {
  tl_se_mode mode;
  void *impl;
};

tl_se_parser *tl_se_parser_new(tl_se_mode mode, tl_err *err) {
  tl_se_parser *p = calloc(1, sizeof *p);
  if (!p) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  p->mode = mode;
  switch (mode) {
  case TL_SE_STRICT: p->impl = tl_se_strict_new(err); break;
  case TL_SE_PR3: p->impl = tl_se_pr3_new(err); break;
  case TL_SE_LEGACY: p->impl = tl_se_legacy_new(err); break;
  default: tl_err_set(err, TL_EUSAGE, "unknown parser mode %d", (int)mode); break;
  }
  if (!p->impl) {
    free(p);
    return NULL;
  }
  return p;
}

void tl_se_parser_free(tl_se_parser *p) {
  if (!p) return;
  switch (p->mode) {
  case TL_SE_STRICT: tl_se_strict_free(p->impl); break;
  case TL_SE_PR3: tl_se_pr3_free(p->impl); break;
  case TL_SE_LEGACY: tl_se_legacy_free(p->impl); break;
  default: break;
  }
  free(p);
}

tl_se_mode tl_se_parser_mode(const tl_se_parser *p) { return p->mode; }

tl_status tl_se_parse(const tl_se_parser *p, const tl_se_item *item, const char *prompt,
                      const char *response, const char *model, tl_parsed *out) {
  tl_parsed_release(out);
  if (!response) {
    out->status = TL_PS_MISSING;
    return TL_OK;
  }
  switch (p->mode) {
  case TL_SE_STRICT: return tl_se_strict_parse(p->impl, item, response, out);
  case TL_SE_PR3: return tl_se_pr3_parse(p->impl, item, prompt ? prompt : item->text, response, out);
  case TL_SE_LEGACY: return tl_se_legacy_parse(p->impl, item, response, model ? model : "", out);
  default: return TL_EINTERNAL;
  }
}
