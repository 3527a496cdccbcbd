/* se_pr3.c - SpatialEval answer extraction, mode 'pr3': the published generic parser.
 *
 * Reproduces CerebrasResearch/SpatialEval `evals/evaluation_llava.py` (content commit 00557775,
 * the merge of jiayuww/SpatialEval PR #3) bit for bit, its bugs included; see
 * docs/parser-pr3.md and ../shared/spec/spatialeval.md section 3. Steps:
 *   1. options: the first "Available options:" block of the PROMPT (block regex), then every
 *      "X. text" in it (findall); none -> the original's min([]) raises ValueError and the line
 *      is skipped: status no_options.
 *   2. choice texts normalised with re.sub(r'[^\w\s]|[\s]+$', '', t).lower().
 *   3. direct answer: the first token after the first "Answer:", punctuation removed, equal to a
 *      normalised choice text -> that choice's letter (rule direct_choice_text).
 *   4. else, when some "Answer:" line lacks the prompt's placeholder, the first letter in
 *      [min-max] right after an "Answer:" (answer_tag_letter);
 *   5. else the no-tag pattern, which in effect takes the first a..max character anywhere
 *      (no_tag_first_letter).
 *   correct = oracle_option.lower() == letter.lower() (exact).
 *
 * Python `re` is the reference semantics. PCRE2 10.42 with UTF+UCP agrees with Python 3.11 on
 * \w, \b, '.', '$' and case folding of every letter used here except two points, which the
 * patterns below spell out so that they match exactly what Python matches:
 *   - Python's \s is str.isspace(): it includes U+001C..U+001F and excludes U+180E; PCRE2's \s
 *     is the reverse. PY_S / PY_NOT_S below are the Python classes.
 *   - Python's IGNORECASE makes 'i' match U+0130 and U+0131 (and [A-Z] ranges containing I);
 *     PCRE2 does not. PY_I spells the four-letter class; ranges get the two code points added.
 * The published regex is quoted above each translated one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/rx.h"
#include "tally/spatialeval.h"
#include "tally/str.h"

/* Python's \s, \s inside a negated class (with its U+180E correction), and caseless 'i'. */
#define PY_S "(?:(?!\\x{180e})[\\s\\x{1c}-\\x{1f}])"
#define PY_I "[iI\\x{130}\\x{131}]"

/* r"Available options:\n((?:\s*[A-Z]\s*\.\s*.*\n?\s*)+)" */
static const char P_BLOCK[] =
    "Available options:\\n((?:" PY_S "*[A-Z]" PY_S "*\\." PY_S "*.*\\n?" PY_S "*)+)";
/* r'([A-Z])\s*\.\s*(.*)\s*' (findall over the block) */
static const char P_CHOICE[] = "([A-Z])" PY_S "*\\." PY_S "*(.*)" PY_S "*";
/* r"\**Answer\**\s*:\**\s*(?!<A single letter option)([^.\s$]+)", re.I */
static const char P_DIRECT[] = "\\**Answer\\**" PY_S "*:\\**" PY_S "*(?!<A s" PY_I "ngle letter opt" PY_I
                               "on)((?:[^.\\s$\\x{1c}-\\x{1f}]|\\x{180e})+)";
/* r"\**Answer\**\s*:\**\s*(?!.*<A single letter option that best answers the question>).*", re.I */
static const char P_TAG[] = "\\**Answer\\**" PY_S "*:\\**" PY_S "*(?!.*<A s" PY_I "ngle letter opt" PY_I
                            "on that best answers the quest" PY_I "on>).*";
/* r'[^\w\s]|[\s]+$' (re.sub, used to normalise choices and the direct token) */
static const char P_NORM[] = "(?:[^\\w\\s\\x{1c}-\\x{1f}]|\\x{180e})|" PY_S "+$";
/* Letter patterns, built per [min-max] range (%s = the class):
 * fr'\**Answer\**\s*:\**\s*([{min}-{max}])\**\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?', I|S */
static const char F_TAG_LETTER[] = "\\**Answer\\**" PY_S "*:\\**" PY_S "*(%s)\\**" PY_S "*\\.?" PY_S
                                   "*(.*?)(?=\\**Reason\\**\\b|\\n|\\.|$)\\.?";
/* fr'(?:\b{phrase}\b)*\s*\**([{min}-{max}])\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?', I|S
 * with phrase = "the correct answer is" */
static const char F_NO_TAG[] = "(?:\\bthe correct answer " PY_I "s\\b)*" PY_S "*\\**(%s)" PY_S "*\\.?" PY_S
                               "*(.*?)(?=\\**Reason\\**\\b|\\n|\\.|$)\\.?";

#define NL 26 /* option letters are [A-Z] (the block and choice patterns are case-sensitive) */

struct tl_se_pr3 {
  tl_rx *block, *choice, *direct, *tag, *norm;
  /* [min][max] for min <= max: the two letter patterns for that letter range. */
  tl_rx *tag_letter[NL][NL];
  tl_rx *no_tag[NL][NL];
};

void tl_se_pr3_free(tl_se_pr3 *s) {
  if (!s) return;
  tl_rx_free(s->block);
  tl_rx_free(s->choice);
  tl_rx_free(s->direct);
  tl_rx_free(s->tag);
  tl_rx_free(s->norm);
  for (int a = 0; a < NL; a++)
    for (int b = 0; b < NL; b++) {
      tl_rx_free(s->tag_letter[a][b]);
      tl_rx_free(s->no_tag[a][b]);
    }
  free(s);
}

/* The Python class [{min}-{max}] under IGNORECASE: PCRE2 matches the same letters plus their
 * case variants (incl. U+017F for S, U+212A for K) except U+0130/U+0131, added when I is in range. */
static void range_class(char *buf, size_t n, int a, int b) {
  snprintf(buf, n, "[%c-%c%s]", 'A' + a, 'A' + b,
           ('I' - 'A' >= a && 'I' - 'A' <= b) ? "\\x{130}\\x{131}" : "");
}

tl_se_pr3 *tl_se_pr3_new(tl_err *err) {
  tl_se_pr3 *s = calloc(1, sizeof *s);
  if (!s) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  if (!(s->block = tl_rx_compile(P_BLOCK, 0, err)) ||
      !(s->choice = tl_rx_compile(P_CHOICE, 0, err)) ||
      !(s->direct = tl_rx_compile(P_DIRECT, TL_RX_I, err)) ||
      !(s->tag = tl_rx_compile(P_TAG, TL_RX_I, err)) ||
      !(s->norm = tl_rx_compile(P_NORM, 0, err)))
    goto fail;
  /* Every range the options can give (351 pairs), compiled once here so parse stays
   * read-only. */
  for (int a = 0; a < NL; a++)
    for (int b = a; b < NL; b++) {
      char cls[32], pat[sizeof F_TAG_LETTER + sizeof F_NO_TAG + 64];
      range_class(cls, sizeof cls, a, b);
      snprintf(pat, sizeof pat, F_TAG_LETTER, cls);
      if (!(s->tag_letter[a][b] = tl_rx_compile(pat, TL_RX_I | TL_RX_S, err))) goto fail;
      snprintf(pat, sizeof pat, F_NO_TAG, cls);
      if (!(s->no_tag[a][b] = tl_rx_compile(pat, TL_RX_I | TL_RX_S, err))) goto fail;
    }
  return s;
fail:
  tl_se_pr3_free(s);
  return NULL;
}

/* re.sub(r'[^\w\s]|[\s]+$', '', s[0..n)).lower() into a malloc'd string; *st set on failure. */
static char *normalise(const tl_se_pr3 *s, const char *str, size_t n, tl_status *st) {
  tl_buf b;
  tl_buf_init(&b);
  size_t pos = 0;
  tl_rx_match m;
  int r;
  *st = TL_OK;
  while (pos <= n && (r = tl_rx_search(s->norm, str, n, pos, &m)) == 1) {
    if ((*st = tl_buf_append(&b, str + pos, m.start[0] - pos))) goto out;
    pos = m.end[0]; /* the pattern never matches empty */
  }
  if (r < 0) {
    *st = TL_EREGEX;
    goto out;
  }
  if (pos < n && (*st = tl_buf_append(&b, str + pos, n - pos))) goto out;
  {
    char *low = tl_utf8_lower(b.data, b.len);
    tl_buf_release(&b);
    if (!low) *st = TL_ENOMEM;
    return low;
  }
out:
  tl_buf_release(&b);
  return NULL;
}

typedef struct {
  int n, cap;
  char *letter; /* 'A'..'Z' */
  char **norm;  /* normalised, lower-cased choice texts */
} choices;

static void choices_release(choices *c) {
  for (int i = 0; i < c->n; i++) free(c->norm[i]);
  free(c->letter);
  free(c->norm);
  memset(c, 0, sizeof *c);
}

/* extract_available_options + the choice normalisation. c->n == 0 when there is no block. */
static tl_status read_choices(const tl_se_pr3 *s, const char *prompt, choices *c) {
  memset(c, 0, sizeof *c);
  tl_rx_match m;
  int r = tl_rx_search(s->block, prompt, strlen(prompt), 0, &m);
  if (r < 0) return TL_EREGEX;
  if (r == 0) return TL_OK;
  /* findall over the block text group(1): successive non-overlapping searches. */
  const char *blk = prompt + m.start[1];
  size_t blen = m.end[1] - m.start[1], pos = 0;
  while (pos < blen) {
    tl_rx_match cm;
    r = tl_rx_search(s->choice, blk, blen, pos, &cm);
    if (r < 0) return TL_EREGEX;
    if (r == 0) break;
    if (c->n == c->cap) {
      int cap = c->cap ? 2 * c->cap : 8;
      char *nl = realloc(c->letter, (size_t)cap);
      if (!nl) return TL_ENOMEM;
      c->letter = nl;
      char **nn = realloc(c->norm, (size_t)cap * sizeof *nn);
      if (!nn) return TL_ENOMEM;
      c->norm = nn;
      c->cap = cap;
    }
    tl_status st;
    char *t = normalise(s, blk + cm.start[2], cm.end[2] - cm.start[2], &st);
    if (!t) return st;
    c->letter[c->n] = blk[cm.start[1]];
    c->norm[c->n] = t;
    c->n++;
    pos = cm.end[0]; /* never empty: a letter and a '.' at least */
  }
  return TL_OK;
}

static char *ascii_upper_dup(const char *s, size_t n) {
  char *d = tl_strndup(s, n);
  if (d)
    for (char *p = d; *p; p++)
      if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
  return d;
}

tl_status tl_se_pr3_parse(const tl_se_pr3 *s, const tl_se_item *item, const char *prompt,
                          const char *response, tl_parsed *out) {
  tl_parsed_release(out);
  if (!prompt) prompt = item->text;
  if (!response) { /* data["answer"] not a str: the original's TypeError -> skipped */
    out->status = TL_PS_SKIPPED;
    out->rule = "no_response";
    return TL_OK;
  }
  choices c;
  tl_status st = read_choices(s, prompt, &c);
  if (st) goto done;
  if (c.n == 0) { /* min([]) -> ValueError -> line skipped (counted wrong) */
    out->status = TL_PS_NO_OPTIONS;
    out->rule = "no_options";
    goto done;
  }
  int lo = 25, hi = 0; /* min(letters), max(letters) as strings */
  for (int i = 0; i < c.n; i++) {
    int k = c.letter[i] - 'A';
    if (k < lo) lo = k;
    if (k > hi) hi = k;
  }
  size_t rlen = strlen(response);
  tl_rx_match m;
  const char *lp = NULL; /* the extracted letter (bytes [lp, lp+ll)) */
  size_t ll = 0;

  /* Step 3: direct answer - first token after the first "Answer:" equal to a choice text. */
  int r = tl_rx_search(s->direct, response, rlen, 0, &m);
  if (r < 0) { st = TL_EREGEX; goto done; }
  if (r == 1) {
    char *tok = normalise(s, response + m.start[1], m.end[1] - m.start[1], &st);
    if (!tok) goto done;
    for (int i = 0; i < c.n; i++)
      if (strcmp(tok, c.norm[i]) == 0) { /* list.index: the first equal choice */
        lp = &c.letter[i];
        ll = 1;
        out->rule = "direct_choice_text";
        break;
      }
    free(tok);
  }
  if (!lp) {
    /* Step 4/5: is there an "Answer:" line without the prompt's placeholder? */
    r = tl_rx_search(s->tag, response, rlen, 0, &m);
    if (r < 0) { st = TL_EREGEX; goto done; }
    int tagged = r == 1;
    const tl_rx *lrx = tagged ? s->tag_letter[lo][hi] : s->no_tag[lo][hi];
    r = tl_rx_search(lrx, response, rlen, 0, &m);
    if (r < 0) { st = TL_EREGEX; goto done; }
    if (r == 1) {
      lp = response + m.start[1];
      ll = m.end[1] - m.start[1];
      out->rule = tagged ? "answer_tag_letter" : "no_tag_first_letter";
    } else {
      out->status = TL_PS_NO_ANSWER;
      out->rule = tagged ? "answer_tag_no_letter" : "no_tag_no_letter";
      goto done;
    }
  }
  /* eval_result = int(str(oracle_option).lower() == answer_letter.lower()) */
  {
    char *ans = ascii_upper_dup(lp, ll);
    char *ml = tl_utf8_lower(lp, ll);
    char *rl = tl_utf8_lower(item->oracle_option, strlen(item->oracle_option));
    if (!ans || !ml || !rl) {
      free(ans);
      free(ml);
      free(rl);
      st = TL_ENOMEM;
      goto done;
    }
    out->answer = ans;
    out->correct = strcmp(ml, rl) == 0;
    out->status = TL_PS_OK;
    free(ml);
    free(rl);
  }
done:
  choices_release(&c);
  if (st) {
    tl_parsed_release(out);
    out->rule = "internal_error";
  }
  return st;
}
