/* gen_parse.c - the generative exact-match module's items and scoring modes (gen.h; every rule,
 * with its source, is in docs/GEN.md).
 *
 * exact reproduces lm-evaluation-harness's exact_match (lm_eval/api/metrics.py,
 * exact_match_hf_evaluate, itself Hugging Face evaluate's exact_match): the options are applied
 * to the prediction and to every reference in the order regexes_to_ignore (each re.sub(s, "", x)
 * in turn), ignore_case (str.lower), ignore_punctuation (string.punctuation removed),
 * ignore_numbers (string.digits removed); then prediction == reference. With several references
 * (a list target) lm-eval scores 1 when any matches. The facts are from lm-eval's code; the code
 * here is written from them. strict is tally's own (docs/GEN.md, "strict"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "tally/jsonl.h"
#include "tally/str.h"

static const char *const MODE_NAMES[TL_GEN__NMODES] = {"strict", "exact"};

const char *tl_gen_mode_name(tl_gen_mode m) { return (unsigned)m < TL_GEN__NMODES ? MODE_NAMES[m] : "?"; }

int tl_gen_mode_from_name(const char *name) {
  for (int m = 0; m < TL_GEN__NMODES; m++)
    if (strcmp(MODE_NAMES[m], name) == 0) return m;
  return -1;
}

/* ---- items ---- */

void tl_gen_item_release(tl_gen_item *it) {
  free(it->id);
  free(it->question);
  free(it->task);
  for (int i = 0; i < it->n_gold; i++) free(it->gold[i]);
  free(it->gold);
  free(it->gold_text);
  memset(it, 0, sizeof *it);
}

/* The text of one accepted answer: a string as is, a number as cJSON prints it (an integer
 * without a fraction: 3 -> "3", as Python's str(3) that lm-eval compares). NULL: not one. */
static char *gold_text(const cJSON *a) {
  if (cJSON_IsString(a)) return tl_strdup(a->valuestring);
  if (!cJSON_IsNumber(a)) return NULL;
  char *t = cJSON_PrintUnformatted(a), *d = t ? tl_strdup(t) : NULL;
  cJSON_free(t);
  return d;
}

tl_status tl_gen_item_from_json(const cJSON *o, tl_gen_item *it, char *msg, size_t msz) {
  memset(it, 0, sizeof *it);
#define BAD(...) return (snprintf(msg, msz, __VA_ARGS__), tl_gen_item_release(it), TL_EINPUT)
  if (!cJSON_IsObject(o)) BAD("is not a JSON object");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "question");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "answer");
  const cJSON *task = cJSON_GetObjectItemCaseSensitive(o, "task");
  if (!id) BAD("missing field 'id'");
  if (!a) BAD("missing field 'answer'");
  char idb[32];
  if (tl_json_is_int(id, -9007199254740992.0, 9007199254740992.0)) {
    snprintf(idb, sizeof idb, "%lld", (long long)id->valuedouble);
    if (!(it->id = tl_strdup(idb))) goto oom;
  } else if (cJSON_IsString(id) && id->valuestring[0]) {
    if (!(it->id = tl_strdup(id->valuestring))) goto oom;
  } else {
    BAD("field 'id' is not a non-empty string or an integer");
  }
  if (q && !cJSON_IsNull(q) && !cJSON_IsString(q)) BAD("item '%s': field 'question' is not a string", it->id);
  if (!(it->question = tl_strdup(cJSON_IsString(q) ? q->valuestring : ""))) goto oom;
  if (task && !cJSON_IsNull(task) && (!cJSON_IsString(task) || !task->valuestring[0]))
    BAD("item '%s': field 'task' is not a non-empty string", it->id);
  if (!(it->task = tl_strdup(cJSON_IsString(task) ? task->valuestring : "default"))) goto oom;
  const int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 1;
  if (cJSON_IsArray(a) && n == 0) BAD("item '%s': field 'answer' is an empty list (want at least one text)", it->id);
  if (!(it->gold = calloc((size_t)n, sizeof *it->gold))) goto oom;
  tl_buf j;
  tl_buf_init(&j);
  for (int i = 0; i < n; i++) {
    const cJSON *x = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, i) : a;
    if (!cJSON_IsString(x) && !cJSON_IsNumber(x)) {
      tl_buf_release(&j);
      if (cJSON_IsArray(a)) BAD("item '%s': answer %d is not a string", it->id, i);
      BAD("item '%s': field 'answer' is not a string, a number or a list of strings", it->id);
    }
    if (!(it->gold[i] = gold_text(x)) || tl_buf_printf(&j, "%s%s", i ? " || " : "", it->gold[i])) {
      tl_buf_release(&j);
      goto oom;
    }
    it->n_gold = i + 1;
  }
  if (!(it->gold_text = j.data ? tl_buf_detach(&j) : tl_strdup(""))) goto oom;
  return TL_OK;
oom:
  tl_gen_item_release(it);
  snprintf(msg, msz, "out of memory");
  return TL_ENOMEM;
#undef BAD
}

/* ---- exact: lm-eval's exact_match ---- */

/* "(?:PAT)(?!\G)": PAT, but only a non-empty match where it is tried anchored (\G is the
 * attempt's start). Python's re.sub (3.7+), after an empty match at p, retries at p for a
 * non-empty one; PCRE2's PCRE2_NOTEMPTY_ATSTART does that, which tl_rx does not expose. */
static const char NOTEMPTY_FMT[] = "(?:%s)(?!\\G)";

tl_status tl_gen_parsers_init(tl_gen_parsers *p, const char *const *patterns, int n, bool ignore_case,
                              bool ignore_punctuation, bool ignore_numbers, tl_err *err) {
  memset(p, 0, sizeof *p);
  p->ignore_case = ignore_case;
  p->ignore_punctuation = ignore_punctuation;
  p->ignore_numbers = ignore_numbers;
  if (n > TL_GEN_MAX_REGEXES) return tl_err_set(err, TL_EINPUT, "at most %d regexes_to_ignore", TL_GEN_MAX_REGEXES);
  for (int i = 0; i < n; i++) {
    if (!(p->ignore[i] = tl_rx_compile(patterns[i], 0, err))) goto fail;
    p->n_ignore = i + 1;
    tl_buf b;
    tl_buf_init(&b);
    if (tl_buf_printf(&b, NOTEMPTY_FMT, patterns[i])) {
      tl_buf_release(&b);
      tl_gen_parsers_release(p);
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    }
    p->ignore_ne[i] = tl_rx_compile(b.data, 0, err);
    tl_buf_release(&b);
    if (!p->ignore_ne[i]) goto fail;
  }
  return TL_OK;
fail:
  tl_gen_parsers_release(p);
  return TL_EREGEX;
}

void tl_gen_parsers_release(tl_gen_parsers *p) {
  for (int i = 0; i < p->n_ignore; i++) {
    tl_rx_free(p->ignore[i]);
    tl_rx_free(p->ignore_ne[i]);
  }
  memset(p, 0, sizeof *p);
}

/* Bytes of the UTF-8 character at s[i] (1 for a malformed byte). */
static size_t char_len(const char *s, size_t n, size_t i) {
  uint32_t cp;
  size_t l = tl_utf8_decode(s + i, n - i, &cp);
  return l ? l : 1;
}

/* re.sub(rx, "", s): every match removed, left to right; an empty match removes nothing and
 * the scan moves on (after it, a non-empty match at the same place is still taken, as Python
 * 3.7+ does). *out: malloc'd. 1 = done, TL_RX_LIMIT, TL_RX_ERROR. */
static int rx_remove(const tl_rx *rx, const tl_rx *ne, const char *s, char **out) {
  const size_t n = strlen(s);
  tl_buf b;
  tl_buf_init(&b);
  size_t pos = 0;
  int rc = 1;
  while (pos <= n) {
    tl_rx_match m;
    rc = tl_rx_search(rx, s, n, pos, &m);
    if (rc < 0) break;
    if (rc == 0) {
      rc = 1;
      break;
    }
    size_t a = m.start[0], e = m.end[0];
    if (e == a) { /* empty at a: a non-empty match at a, else step one character */
      int r2 = tl_rx_match_at(ne, s, n, a, &m);
      if (r2 < 0) {
        rc = r2;
        break;
      }
      if (r2 == 1) e = m.end[0];
    }
    if (tl_buf_append(&b, s + pos, a - pos)) goto oom;
    if (e > a) {
      pos = e;
    } else {
      if (a == n) {
        pos = n + 1;
        break;
      }
      size_t l = char_len(s, n, a);
      if (tl_buf_append(&b, s + a, l)) goto oom;
      pos = a + l;
    }
  }
  if (rc == 1 && pos < n && tl_buf_append(&b, s + pos, n - pos)) goto oom;
  if (rc == 1 && tl_buf_append(&b, "", 1)) goto oom;
  if (rc != 1) {
    tl_buf_release(&b);
    return rc;
  }
  *out = tl_buf_detach(&b);
  return 1;
oom:
  tl_buf_release(&b);
  return TL_RX_ERROR;
}

/* Python's string.punctuation (ASCII) and string.digits. */
static const char PUNCT[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

static void drop_chars(char *s, bool punct, bool digits) {
  size_t w = 0;
  for (size_t r = 0; s[r]; r++) {
    const char c = s[r];
    if (punct && c && strchr(PUNCT, c)) continue;
    if (digits && c >= '0' && c <= '9') continue;
    s[w++] = c;
  }
  s[w] = 0;
}

/* lm-eval's transforms of one string into *out (malloc'd). 1, TL_RX_LIMIT or TL_RX_ERROR. */
static int em_transform(const tl_gen_parsers *p, const char *s, char **out) {
  char *cur = tl_strdup(s);
  if (!cur) return TL_RX_ERROR;
  for (int i = 0; i < p->n_ignore; i++) {
    char *next = NULL;
    int rc = rx_remove(p->ignore[i], p->ignore_ne[i], cur, &next);
    free(cur);
    if (rc != 1) return rc;
    cur = next;
  }
  if (p->ignore_case) {
    char *low = tl_utf8_lower(cur, strlen(cur));
    free(cur);
    if (!low) return TL_RX_ERROR;
    cur = low;
  }
  drop_chars(cur, p->ignore_punctuation, p->ignore_numbers);
  *out = cur;
  return 1;
}

static tl_status put(tl_parsed *out, tl_pstatus st, const char *rule, char *answer, int correct) {
  out->status = st;
  out->rule = rule;
  out->correct = st == TL_PS_OK && correct;
  out->answer = answer; /* owned */
  return TL_OK;
}

static tl_status exact_score(const tl_gen_parsers *p, const tl_gen_item *it, const char *r, tl_parsed *out) {
  char *pred = NULL;
  int rc = em_transform(p, r, &pred);
  if (rc == TL_RX_LIMIT) return put(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0);
  if (rc != 1) return TL_ENOMEM;
  int hit = 0;
  for (int i = 0; i < it->n_gold && !hit; i++) {
    char *ref = NULL;
    rc = em_transform(p, it->gold[i], &ref);
    if (rc != 1) {
      free(pred);
      if (rc == TL_RX_LIMIT) return put(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0);
      return TL_ENOMEM;
    }
    hit = strcmp(pred, ref) == 0;
    free(ref);
  }
  const int plain = !p->n_ignore && !p->ignore_case && !p->ignore_punctuation && !p->ignore_numbers;
  return put(out, TL_PS_OK, plain ? "string_equal" : "string_equal_after_options", pred, hit);
}

/* ---- strict: the final answer ---- */

/* The end (one past '}') of the brace group whose '{' is at s[i], or 0 when it is not closed.
 * A backslash escapes the next character (\{ and \} are literal braces in LaTeX). */
static size_t group_end(const char *s, size_t n, size_t i) {
  int depth = 0;
  for (size_t k = i; k < n; k++) {
    if (s[k] == '\\') {
      k++;
      continue;
    }
    if (s[k] == '{') depth++;
    else if (s[k] == '}' && --depth == 0) return k + 1;
  }
  return 0;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* The last "answer is" / "answer:" (case-insensitive; "answer" not inside a word): the rule, and
 * [*a, *b) the rest of its line with the blanks around it (and a ':' after "is") left out. */
static const char *answer_line(const char *r, size_t n, size_t *a, size_t *b) {
  const char *rule = NULL;
  for (size_t i = 0; i + 6 <= n; i++) {
    static const char W[] = "answer";
    size_t k = 0;
    while (k < 6 && lower(r[i + k]) == W[k]) k++;
    if (k < 6 || (i > 0 && is_alpha(r[i - 1]))) continue;
    size_t j = i + 6;
    while (j < n && (r[j] == ' ' || r[j] == '\t')) j++;
    const char *this_rule = NULL;
    if (j < n && r[j] == ':') {
      this_rule = "answer_colon";
      j++;
    } else if (j + 1 < n && lower(r[j]) == 'i' && lower(r[j + 1]) == 's' && (j + 2 == n || !is_alpha(r[j + 2]))) {
      this_rule = "answer_is";
      j += 2;
      while (j < n && (r[j] == ' ' || r[j] == '\t')) j++;
      if (j < n && r[j] == ':') j++;
    }
    if (!this_rule) continue;
    while (j < n && (r[j] == ' ' || r[j] == '\t')) j++;
    size_t e = j;
    while (e < n && r[e] != '\n' && r[e] != '\r') e++;
    while (e > j && (r[e - 1] == ' ' || r[e - 1] == '\t')) e--;
    rule = this_rule;
    *a = j;
    *b = e;
  }
  return rule;
}

const char *tl_gen_extract(const char *r, size_t *a, size_t *b) {
  static const char BOX[] = "\\boxed{";
  const size_t n = strlen(r), bl = sizeof BOX - 1;
  const char *rule = NULL;
  for (const char *p = strstr(r, BOX); p; p = strstr(p + 1, BOX)) {
    const size_t i = (size_t)(p - r) + bl - 1, e = group_end(r, n, i);
    if (!e) continue; /* cut off: an earlier balanced one may still count */
    rule = "boxed";
    *a = i + 1;
    *b = e - 1;
  }
  if (rule) return rule;
  return answer_line(r, n, a, b);
}

/* ---- strict: the normalisation (docs/GEN.md lists the steps in this order) ---- */

/* Copies s without every occurrence of the command `cmd` (e.g. "\\left") that is not followed by
 * a letter (so "\\leftarrow" stays), putting `with` in its place. */
static tl_status replace_cmd(tl_buf *o, const char *s, const char *cmd, const char *with) {
  const size_t cl = strlen(cmd);
  tl_buf_reset(o);
  for (size_t i = 0; s[i];) {
    if (strncmp(s + i, cmd, cl) == 0 && !is_alpha(s[i + cl])) {
      if (tl_buf_puts(o, with)) return TL_ENOMEM;
      i += cl;
    } else {
      if (tl_buf_append(o, s + i, 1)) return TL_ENOMEM;
      i++;
    }
  }
  return tl_buf_append(o, "", 1) ? TL_ENOMEM : TL_OK;
}

/* \text{...} and \mbox{...}: keep = 0 drops each group (a unit: "5\text{cm}" -> "5"), and a
 * "^<digit>" right after it ("\text{cm}^2"); keep = 1 keeps the group's text ("\text{Monday}"). */
static tl_status text_groups(tl_buf *o, const char *s, int keep) {
  static const char *const CMDS[] = {"\\text{", "\\mbox{"};
  const size_t n = strlen(s);
  tl_buf_reset(o);
  for (size_t i = 0; i < n;) {
    size_t e = 0, cl = 0;
    for (int c = 0; c < 2 && !e; c++)
      if (strncmp(s + i, CMDS[c], (cl = strlen(CMDS[c]))) == 0) e = group_end(s, n, i + cl - 1);
    if (!e) {
      if (tl_buf_append(o, s + i, 1)) return TL_ENOMEM;
      i++;
      continue;
    }
    if (keep && tl_buf_append(o, s + i + cl, e - 1 - (i + cl))) return TL_ENOMEM;
    i = e;
    if (!keep && s[i] == '^' && s[i + 1] >= '0' && s[i + 1] <= '9') i += 2;
  }
  return tl_buf_append(o, "", 1) ? TL_ENOMEM : TL_OK;
}

char *tl_gen_normalise(const char *s0, size_t n0) {
  tl_buf a, b;
  tl_buf_init(&a);
  tl_buf_init(&b);
  /* 1: "\$" and "$" out; 2: blanks and LaTeX's spacing commands (\! \, \; \: "\ ") out */
  for (size_t i = 0; i < n0; i++) {
    const char c = s0[i];
    if (c == '\\' && i + 1 < n0 && strchr("$!,;: ", s0[i + 1])) {
      i++;
      continue;
    }
    if (c == '$' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') continue;
    if (tl_buf_append(&a, &c, 1)) goto oom;
  }
  if (tl_buf_append(&a, "", 1)) goto oom;
  /* 3: \left, \right out; 4: \dfrac, \tfrac -> \frac */
  if (replace_cmd(&b, a.data, "\\left", "") || replace_cmd(&a, b.data, "\\right", "") ||
      replace_cmd(&b, a.data, "\\dfrac", "\\frac") || replace_cmd(&a, b.data, "\\tfrac", "\\frac"))
    goto oom;
  /* 5: units dropped; an answer that is only text keeps it */
  if (text_groups(&b, a.data, 0)) goto oom;
  if (!b.data[0] && text_groups(&b, a.data, 1)) goto oom;
  /* 6: one trailing period */
  size_t l = strlen(b.data);
  if (l && b.data[l - 1] == '.') b.data[l - 1] = 0;
  tl_buf_release(&a);
  return tl_buf_detach(&b);
oom:
  tl_buf_release(&a);
  tl_buf_release(&b);
  return NULL;
}

/* The canonical text of a decimal number s ([+-]?(digits[.digits?] | .digits)) into c (at
 * least strlen(s) + 2 bytes): no '+', no leading zeros, no trailing fraction zeros, no '.'
 * without a fraction, "-" only before a value other than zero. false: s is not one. */
static bool canon_number(const char *s, char *c) {
  const char *p = s;
  bool neg = false;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  const char *ip = p;
  while (*p >= '0' && *p <= '9') p++;
  const char *ie = p, *fp = p, *fe = p;
  if (*p == '.') {
    fp = ++p;
    while (*p >= '0' && *p <= '9') p++;
    fe = p;
  }
  if (*p || (ie == ip && fe == fp)) return false;
  while (ip < ie && *ip == '0') ip++;
  while (fe > fp && fe[-1] == '0') fe--;
  size_t w = 0;
  if (neg && (ie > ip || fe > fp)) c[w++] = '-';
  if (ie == ip) c[w++] = '0';
  memcpy(c + w, ip, (size_t)(ie - ip));
  w += (size_t)(ie - ip);
  if (fe > fp) {
    c[w++] = '.';
    memcpy(c + w, fp, (size_t)(fe - fp));
    w += (size_t)(fe - fp);
  }
  c[w] = 0;
  return true;
}

bool tl_gen_equal(const char *x, const char *y) {
  const size_t lx = strlen(x), ly = strlen(y);
  char *cx = malloc(lx + 2), *cy = malloc(ly + 2);
  bool eq;
  if (cx && cy && canon_number(x, cx) && canon_number(y, cy)) eq = strcmp(cx, cy) == 0;
  else eq = strcmp(x, y) == 0;
  free(cx);
  free(cy);
  return eq;
}

static tl_status strict_score(const tl_gen_item *it, const char *r, tl_parsed *out) {
  size_t a = 0, b = 0;
  const char *rule = tl_gen_extract(r, &a, &b);
  if (!rule) return put(out, TL_PS_NO_ANSWER, "none", NULL, 0);
  char *raw = tl_strndup(r + a, b - a), *norm = tl_gen_normalise(r + a, b - a);
  if (!raw || !norm) {
    free(raw);
    free(norm);
    return TL_ENOMEM;
  }
  if (!norm[0]) { /* "\boxed{}", "The answer is" and nothing after it */
    free(norm);
    return put(out, TL_PS_NO_ANSWER, rule, raw, 0);
  }
  int hit = 0;
  for (int i = 0; i < it->n_gold && !hit; i++) {
    char *g = tl_gen_normalise(it->gold[i], strlen(it->gold[i]));
    if (!g) {
      free(raw);
      free(norm);
      return TL_ENOMEM;
    }
    hit = tl_gen_equal(norm, g);
    free(g);
  }
  free(norm);
  return put(out, TL_PS_OK, rule, raw, hit);
}

tl_status tl_gen_score(const tl_gen_parsers *p, tl_gen_mode m, const tl_gen_item *it, const char *response,
                       tl_parsed *out) {
  tl_parsed_release(out);
  if (!response) {
    out->status = TL_PS_MISSING;
    out->rule = "missing";
    return TL_OK;
  }
  tl_status st = m == TL_GEN_EXACT ? exact_score(p, it, response, out) : strict_score(it, response, out);
  if (st != TL_OK) tl_parsed_release(out);
  return st;
}
