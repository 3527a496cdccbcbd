/* mcq_parse.c - the generic multiple-choice module's items and scoring modes (mcq.h; the rules,
 * with their sources, are in docs/MCQ.md).
 *
 * The compatibility modes reproduce what each harness does with a reply, including what it gets
 * wrong, so that its published numbers are reproduced and the difference from strict measured.
 * The harnesses' rules are facts read from their code at the commits ../shared/spec/
 * harness-formats.md names; the code here is written from those facts. Every mode records the
 * rule that fired (tl_parsed.rule, a static string). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcq.h"
#include "tally/jsonl.h"
#include "tally/str.h"

static const char *const MODE_NAMES[TL_MCQ__NMODES] = {"strict", "lmeval-regex", "inspect-choice", "helm-mapping",
                                                        "vlmeval-heuristic", "acc_norm", "acc_bytes"};

const char *tl_mcq_mode_name(tl_mcq_mode m) { return (unsigned)m < TL_MCQ__NMODES ? MODE_NAMES[m] : "?"; }

int tl_mcq_mode_from_name(const char *name) {
  for (int m = 0; m < TL_MCQ__NMODES; m++)
    if (strcmp(MODE_NAMES[m], name) == 0) return m;
  return -1;
}

/* ---- items ---- */

void tl_mcq_item_release(tl_mcq_item *it) {
  free(it->id);
  free(it->question);
  free(it->task);
  for (int i = 0; i < it->n; i++) free(it->choice[i]);
  memset(it, 0, sizeof *it);
}

tl_status tl_mcq_item_from_json(const cJSON *o, tl_mcq_item *it, char *msg, size_t msz) {
  memset(it, 0, sizeof *it);
#define BAD(...) return (snprintf(msg, msz, __VA_ARGS__), tl_mcq_item_release(it), TL_EINPUT)
#define DUP(dst, s)                           \
  do {                                        \
    if (!((dst) = tl_strdup(s))) goto oom;    \
  } while (0)
  if (!cJSON_IsObject(o)) BAD("is not a JSON object");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "question");
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(o, "choices");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "answer");
  const cJSON *task = cJSON_GetObjectItemCaseSensitive(o, "task");
  if (!id) BAD("missing field 'id'");
  if (!q) BAD("missing field 'question'");
  if (!ch) BAD("missing field 'choices'");
  if (!a) BAD("missing field 'answer'");
  char idb[32];
  if (tl_json_is_int(id, -9007199254740992.0, 9007199254740992.0)) {
    snprintf(idb, sizeof idb, "%lld", (long long)id->valuedouble);
    DUP(it->id, idb);
  } else if (cJSON_IsString(id) && id->valuestring[0]) {
    DUP(it->id, id->valuestring);
  } else {
    BAD("field 'id' is not a non-empty string or an integer");
  }
  if (!cJSON_IsString(q)) BAD("item '%s': field 'question' is not a string", it->id);
  DUP(it->question, q->valuestring);
  if (task && !cJSON_IsNull(task) && (!cJSON_IsString(task) || !task->valuestring[0]))
    BAD("item '%s': field 'task' is not a non-empty string", it->id);
  DUP(it->task, task && cJSON_IsString(task) ? task->valuestring : "default");
  if (!cJSON_IsArray(ch)) BAD("item '%s': field 'choices' is not a list of strings", it->id);
  int n = cJSON_GetArraySize(ch);
  if (n < 2 || n > TL_MCQ_MAX_CHOICES)
    BAD("item '%s': field 'choices' has %d choice%s (want 2 to %d: the strict parser's option letters A-%c)", it->id,
        n, n == 1 ? "" : "s", TL_MCQ_MAX_CHOICES, 'A' + TL_MCQ_MAX_CHOICES - 1);
  const cJSON *x;
  cJSON_ArrayForEach(x, ch) {
    if (!cJSON_IsString(x)) BAD("item '%s': choice %d is not a string", it->id, it->n);
    DUP(it->choice[it->n], x->valuestring);
    it->n++;
  }
  /* the gold: a letter, a 0-based index, or a choice's text (a one-letter string in range is a
   * letter even when a choice's text is that letter too) */
  it->gold = -1;
  if (tl_json_is_int(a, -1e9, 1e9)) {
    long long g = (long long)a->valuedouble;
    if (g < 0 || g >= it->n)
      BAD("item '%s': field 'answer' is index %lld, outside 0..%d (a 0-based index of 'choices')", it->id, g, it->n - 1);
    it->gold = (int)g;
  } else if (cJSON_IsString(a)) {
    const char *s = a->valuestring;
    if (s[0] >= 'A' && s[0] < 'A' + it->n && s[1] == 0) {
      it->gold = s[0] - 'A';
    } else {
      int hits = 0;
      for (int i = 0; i < it->n; i++)
        if (strcmp(it->choice[i], s) == 0) {
          if (!hits) it->gold = i;
          hits++;
        }
      if (hits > 1) BAD("item '%s': field 'answer' \"%.60s\" is the text of %d choices", it->id, s, hits);
      if (!hits)
        BAD("item '%s': field 'answer' \"%.60s\" is neither a letter A-%c nor a choice's text", it->id, s,
            'A' + it->n - 1);
    }
  } else {
    BAD("item '%s': field 'answer' is not a letter, a 0-based index or a choice's text", it->id);
  }
  it->gold_letter[0] = (char)('A' + it->gold);
  it->gold_letter[1] = 0;
  return TL_OK;
oom:
  tl_mcq_item_release(it);
  snprintf(msg, msz, "out of memory");
  return TL_ENOMEM;
#undef BAD
#undef DUP
}

/* ---- compiled modes ---- */

/* inspect_ai (solver/_multiple_choice.py, parse_answers): first an answer line "ANSWER: <letters,
 * blanks and commas>" followed by blanks to its end (case-insensitive, multiline), else the same
 * label anywhere, its letters followed by a non-word character or the end. tl_rx behaves like
 * Python's re on str patterns (UTF+UCP), as inspect runs it. */
static const char INSPECT_LINE_RX[] = "^answer\\s*:\\s*([a-z ,]+)\\s*(?:$|\\n)";
static const char INSPECT_ANY_RX[] = "answer\\s*:\\s*([a-z ,]+)(?:\\W|$)";

tl_status tl_mcq_parsers_init(tl_mcq_parsers *p, const char *lmeval_pattern, tl_err *err) {
  memset(p, 0, sizeof *p);
  tl_status st = TL_EINTERNAL;
  if (!(p->strict = tl_letter_new(err))) goto fail;
  st = TL_EREGEX;
  if (!(p->lmeval = tl_rx_compile(lmeval_pattern ? lmeval_pattern : TL_MCQ_LMEVAL_DEFAULT, 0, err))) goto fail;
  if (!(p->inspect_line = tl_rx_compile(INSPECT_LINE_RX, TL_RX_I | TL_RX_M, err))) goto fail;
  if (!(p->inspect_any = tl_rx_compile(INSPECT_ANY_RX, TL_RX_I, err))) goto fail;
  return TL_OK;
fail:
  tl_mcq_parsers_release(p);
  return st;
}

void tl_mcq_parsers_release(tl_mcq_parsers *p) {
  tl_letter_free(p->strict);
  tl_rx_free(p->lmeval);
  tl_rx_free(p->inspect_line);
  tl_rx_free(p->inspect_any);
  memset(p, 0, sizeof *p);
}

/* ---- log-likelihood replies ---- */

char *tl_mcq_loglik_text(const cJSON *arr, char *msg, size_t msz) {
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
    snprintf(msg, msz, "field 'loglik' is not a non-empty list of numbers");
    return NULL;
  }
  tl_buf b;
  tl_buf_init(&b);
  int bad = tl_buf_puts(&b, TL_MCQ_LOGLIK_PREFIX "[") != TL_OK, i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) {
    double v;
    char *end = NULL;
    if (cJSON_IsNumber(x)) v = x->valuedouble;
    else if (cJSON_IsString(x) && x->valuestring[0] && (v = strtod(x->valuestring, &end), *end == 0) && isfinite(v))
      ; /* lm-eval saves its leaves as strings ("-3.21") */
    else {
      snprintf(msg, msz, "field 'loglik': element %d is not a number", i);
      tl_buf_release(&b);
      return NULL;
    }
    bad |= tl_buf_printf(&b, "%s%.17g", i ? "," : "", v) != TL_OK;
    i++;
  }
  bad |= tl_buf_puts(&b, "]") != TL_OK;
  if (bad) {
    snprintf(msg, msz, "out of memory");
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

int tl_mcq_loglik_parse(const char *text, double *v, int max) {
  const size_t pl = sizeof TL_MCQ_LOGLIK_PREFIX - 1;
  if (!text || strncmp(text, TL_MCQ_LOGLIK_PREFIX, pl) != 0) return 0;
  const char *p = text + pl;
  if (*p++ != '[') return -1;
  int n = 0;
  for (;;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || n >= max) return -1;
    v[n++] = x;
    p = end;
    if (*p == ']') return p[1] == 0 ? n : -1;
    if (*p++ != ',') return -1;
  }
}

/* The first index of the largest value; a NaN wins at its first place, as numpy's argmax. */
static int argmax(const double *v, int n) {
  int best = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(v[i])) return i;
    if (v[i] > v[best]) best = i;
  }
  return best;
}

/* Code points of a UTF-8 string (Python's len). */
static size_t u8_len(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

/* ---- result helpers ---- */

static tl_status put(tl_parsed *out, tl_pstatus st, const char *rule, const char *answer, size_t alen, int correct) {
  out->status = st;
  out->rule = rule;
  out->correct = st == TL_PS_OK && correct;
  if (answer && !(out->answer = tl_strndup(answer, alen))) return TL_ENOMEM;
  return TL_OK;
}

static tl_status put_letter(tl_parsed *out, const tl_mcq_item *it, const char *rule, int k) {
  char a[2] = {(char)('A' + k), 0};
  return put(out, TL_PS_OK, rule, a, 1, k == it->gold);
}

/* ---- the modes ---- */

static tl_status loglik_score(tl_mcq_mode m, const tl_mcq_item *it, const char *text, tl_parsed *out) {
  double v[64];
  int n = tl_mcq_loglik_parse(text, v, 64);
  if (n != it->n) return put(out, TL_PS_SKIPPED, n < 0 ? "loglik_malformed" : "loglik_count_mismatch", NULL, 0, 0);
  if (m == TL_MCQ_ACC_NORM || m == TL_MCQ_ACC_BYTES)
    for (int i = 0; i < n; i++) v[i] /= (double)(m == TL_MCQ_ACC_NORM ? u8_len(it->choice[i]) : strlen(it->choice[i]));
  const char *rule = m == TL_MCQ_ACC_NORM ? "loglik_acc_norm" : m == TL_MCQ_ACC_BYTES ? "loglik_acc_bytes" : "loglik_acc";
  return put_letter(out, it, rule, argmax(v, n));
}

/* lm-eval: RegexFilter (re.findall, group_select 0: the first match; of a match with several
 * groups the first non-empty one; no group: the whole match; strip()), then take_first; no
 * match is its fallback "[invalid]". exact_match against the gold letter. */
static tl_status lmeval_score(const tl_mcq_parsers *p, const tl_mcq_item *it, const char *r, tl_parsed *out) {
  tl_rx_match m;
  const size_t n = strlen(r);
  int rc = tl_rx_search(p->lmeval, r, n, 0, &m);
  if (rc == TL_RX_LIMIT) return put(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0);
  if (rc < 0) return TL_EREGEX;
  if (rc == 0) return put(out, TL_PS_NO_ANSWER, "no_match", NULL, 0, 0);
  size_t a = m.start[0], b = m.end[0];
  if (m.ngroups == 2) { /* findall gives the group's text, "" when it is empty or took no part */
    a = b = tl_rx_has(&m, 1) ? m.start[1] : 0;
    if (tl_rx_has(&m, 1)) b = m.end[1];
  } else if (m.ngroups > 2) { /* a tuple: its first non-empty member, else the fallback */
    int g = 1;
    while (g < m.ngroups && !(tl_rx_has(&m, g) && m.end[g] > m.start[g])) g++;
    if (g == m.ngroups) return put(out, TL_PS_NO_ANSWER, "no_match", NULL, 0, 0);
    a = m.start[g];
    b = m.end[g];
  }
  /* Python's str.strip(): Unicode whitespace at both ends */
  a = tl_utf8_skip_space(r, b, a);
  while (b > a) {
    size_t s = b - 1;
    while (s > a && ((unsigned char)r[s] & 0xC0) == 0x80) s--;
    uint32_t cp;
    if (!tl_utf8_decode(r + s, b - s, &cp) || !tl_uni_isspace(cp)) break;
    b = s;
  }
  int correct = b - a == 1 && r[a] == it->gold_letter[0];
  return put(out, TL_PS_OK, "regex_first_match", r + a, b - a, correct);
}

/* inspect_ai: the answer line (else the label anywhere); each character of the group names the
 * choice at ord(upper(c)) - ord('A') when that is one of the item's; the choice() scorer counts
 * the reply correct when the chosen set is exactly the gold. */
static tl_status inspect_score(const tl_mcq_parsers *p, const tl_mcq_item *it, const char *r, tl_parsed *out) {
  tl_rx_match m;
  const size_t n = strlen(r);
  const char *rule = "answer_line";
  int rc = tl_rx_search(p->inspect_line, r, n, 0, &m);
  if (rc == 0) {
    rule = "answer_anywhere";
    rc = tl_rx_search(p->inspect_any, r, n, 0, &m);
  }
  if (rc == TL_RX_LIMIT) return put(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0);
  if (rc < 0) return TL_EREGEX;
  if (rc == 0) return put(out, TL_PS_NO_ANSWER, "none", NULL, 0, 0);
  unsigned sel = 0;
  for (size_t i = m.start[1]; i < m.end[1]; i++) {
    int c = r[i] >= 'a' && r[i] <= 'z' ? r[i] - 'a' + 'A' : (unsigned char)r[i];
    int k = c - 'A';
    if (k >= 0 && k < it->n) sel |= 1u << k;
  }
  if (!sel) return put(out, TL_PS_NO_ANSWER, rule, NULL, 0, 0);
  char a[3 * TL_MCQ_MAX_CHOICES];
  size_t al = 0;
  int count = 0, k1 = -1;
  for (int k = 0; k < it->n; k++)
    if (sel >> k & 1u) {
      if (al) a[al++] = ',', a[al++] = ' ';
      a[al++] = (char)('A' + k);
      count++;
      if (k1 < 0) k1 = k;
    }
  if (count > 1) return put(out, TL_PS_AMBIGUOUS, rule, a, al, 0); /* several chosen: never the one gold */
  return put_letter(out, it, rule, k1);
}

/* HELM joint multiple choice: the completion, stripped, must be a key of output_mapping (the
 * letters of the item's choices); exact_match with the correct reference's key. */
static tl_status helm_score(const tl_mcq_item *it, const char *r, tl_parsed *out) {
  size_t n = strlen(r), a = tl_utf8_skip_space(r, n, 0), b = n;
  while (b > a) {
    size_t s = b - 1;
    while (s > a && ((unsigned char)r[s] & 0xC0) == 0x80) s--;
    uint32_t cp;
    if (!tl_utf8_decode(r + s, b - s, &cp) || !tl_uni_isspace(cp)) break;
    b = s;
  }
  if (b - a == 1 && r[a] >= 'A' && r[a] < 'A' + it->n) return put_letter(out, it, "mapped_key", r[a] - 'A');
  return put(out, TL_PS_NO_ANSWER, b == a ? "empty" : "not_a_key", NULL, 0, 0);
}

/* VLMEvalKit (vlmeval/dataset/utils/multiple_choice.py): can_infer = can_infer_option, else
 * can_infer_text. Its judge-model fallback and final random option are not reproduced: where
 * can_infer gives nothing the reply is unparsed (rule judge_needed). The "A might be a
 * quantifier" guard runs only with VERBOSE set in VLMEvalKit; not reproduced (its default). */
static const char *const VLM_REJECT[] = {"Sorry, I can't help with images of people yet.", "I can't process this file.",
                                         "I'm sorry, but without the image provided", "Cannot determine the answer",
                                         NULL};

/* Bytes of the separator at s[i] (one of ".()[],:;!*#{}", which VLMEvalKit blanks, or a
 * character str.split() splits at), 0 when none. */
static size_t vlm_sep(const char *s, size_t n, size_t i) {
  if (strchr(".()[],:;!*#{}", s[i])) return 1;
  uint32_t cp;
  size_t l = tl_utf8_decode(s + i, n - i, &cp);
  return l && tl_uni_isspace(cp) ? l : 0;
}

static tl_status vlmeval_score(const tl_mcq_item *it, const char *r, tl_parsed *out) {
  const size_t n = strlen(r);
  if (!strstr(r, "Failed to obtain answer via API")) {
    for (int i = 0; VLM_REJECT[i]; i++)
      if (strstr(r, VLM_REJECT[i])) return put(out, TL_PS_NO_ANSWER, "reject_z", "Z", 1, 0);
    /* the option step: the tokens of the reply split at the separators */
    unsigned seen = 0;
    int zs = 0;
    for (size_t i = 0; i < n;) {
      size_t l = vlm_sep(r, n, i);
      if (l) {
        i += l;
        continue;
      }
      size_t j = i + 1;
      while (j < n && !vlm_sep(r, n, j)) j++;
      if (j - i == 1 && r[i] >= 'A' && r[i] < 'A' + it->n) seen |= 1u << (r[i] - 'A');
      if (j - i == 1 && r[i] == 'Z') zs = 1;
      i = j;
    }
    int count = 0, k1 = -1;
    for (int k = 0; k < it->n; k++)
      if (seen >> k & 1u) count++, k1 = k1 < 0 ? k : k1;
    if (count == 1) return put_letter(out, it, "option_letter", k1);
    if (count == 0 && zs) return put(out, TL_PS_NO_ANSWER, "option_z", "Z", 1, 0);
  }
  /* the text step: exactly one choice whose lower-cased text is in the lower-cased reply */
  char *low = tl_utf8_lower(r, n);
  if (!low) return TL_ENOMEM;
  int hits = 0, k1 = -1;
  for (int k = 0; k < it->n; k++) {
    char *c = tl_utf8_lower(it->choice[k], strlen(it->choice[k]));
    if (!c) {
      free(low);
      return TL_ENOMEM;
    }
    if (strstr(low, c)) hits++, k1 = k1 < 0 ? k : k1;
    free(c);
  }
  free(low);
  if (hits == 1) return put_letter(out, it, "choice_text", k1);
  return put(out, hits > 1 ? TL_PS_AMBIGUOUS : TL_PS_NO_ANSWER, "judge_needed", NULL, 0, 0);
}

tl_status tl_mcq_score(const tl_mcq_parsers *p, tl_mcq_mode m, const tl_mcq_item *it, const char *response,
                       tl_parsed *out) {
  tl_parsed_release(out);
  if (!response) {
    out->status = TL_PS_MISSING;
    out->rule = "missing";
    return TL_OK;
  }
  tl_status st;
  if (strncmp(response, TL_MCQ_LOGLIK_PREFIX, sizeof TL_MCQ_LOGLIK_PREFIX - 1) == 0)
    st = loglik_score(m, it, response, out);
  else
    switch (m) {
    case TL_MCQ_LMEVAL: st = lmeval_score(p, it, response, out); break;
    case TL_MCQ_INSPECT: st = inspect_score(p, it, response, out); break;
    case TL_MCQ_HELM: st = helm_score(it, response, out); break;
    case TL_MCQ_VLMEVAL: st = vlmeval_score(it, response, out); break;
    default: /* strict; acc_norm and acc_bytes read a text reply as strict does */
      st = tl_letter_parse(p->strict, it->n, (const char *const *)it->choice, it->gold_letter, response, out);
      break;
    }
  if (st != TL_OK) tl_parsed_release(out);
  return st;
}
