/* se_legacy.c - SpatialEval answer extraction, mode 'legacy': the original evaluator,
 * bit-compatible, bugs included.
 *
 * Source reproduced: jiayuww/SpatialEval evals/evaluation.py (functions
 * extract_answer_from_text_{spatialmap,mazenav,spatialgrid} and the scoring loop of
 * evaluate_model_accuracy), as also carried unchanged by the BinSpa/SpatialEval_SPSV fork (whose
 * added spatialreal extractor is NOT reproduced). Rules and their names: docs/parser-legacy.md.
 *
 * Contract (tl_se_legacy_parse):
 *   answer  = str(extracted).lower()   - "none" when the extractor returned None
 *   correct = str(oracle_answer).lower() in answer   (substring, inflation included)
 *   status  = ok (a value), no_answer (None: answer "none", correct may still be 1 through
 *             "no" in "none"), skipped (the original raises ValueError and `continue`s, or has no
 *             branch: answer NULL, correct 0; the line stays in the denominator there too).
 *             parse_limit when a regex resource limit (rx.h) stopped it: answer NULL, correct 0.
 * Every regex below is the original's pattern string, with the original's flags (IGNORECASE
 * only where the original sets it), run through rx.h (PCRE2 in UTF+UCP mode, Python-`re`-like),
 * except six "linear-time forms" (below) that match the same text with the same groups.
 * Cost: for a fixed item and model, linear in the response (docs/parser-legacy.md, "Cost").
 * Python's int() is reproduced on captured digit runs (any Unicode decimal digit, leading zeros
 * dropped, ValueError above 4300 digits as in CPython >= 3.11). */
#include <stdlib.h>
#include <string.h>

#include "tally/rx.h"
#include "spatialeval.h"
#include "tally/str.h"

/* ---- the original's pattern strings ------------------------------------------------------ */

#define DIRS "(southeast|northeast|northwest|southwest)"
#define DIR_PAT "\\b" DIRS "\\b"     /* dir_pattern = rf"\b({'|'.join(dirs)})\b" */
#define NAMECH "[\\w\\s\\'\u2019]"   /* [\w\s\'’] */
#define LOC_ALT "(?:located\\s+|in\\s+the\\s+|located\\s+to\\s+the\\s+)"
#define LOC_ALT_IN "(?:located\\s+|in\\s+the\\s+|in\\s+|located\\s+to\\s+the\\s+)"

/* ---- linear-time forms -------------------------------------------------------------------
 * A few of the original patterns cost time quadratic in a blank run (Python's `re` runs them
 * the same way), and on MB-long answers that exceeded the match limit (status parse_limit where
 * Python gives an answer). They are rewritten into forms with the same match and the same
 * groups that the code reads (the proof is with each form); the quoted original stands next to
 * every use.
 *
 * LAZY_NAME replaces "(NAME+?)" in front of a tail that starts with \s+ ("\s+is\s+..."). The
 * lazy group tries to end at k = 1, 2, ... characters; the tail can only match at k when s[k]
 * is a blank, and then it reads the blank run from k to its end: every k inside one run gives
 * the same tail match, so trying each of them read the run once per k. The form tries k = 1
 * and then only the k whose last character is no blank (the first k of each run): the skipped
 * k give the same tail as k - 1, which was tried before and failed. */
#define LAZY_NAME "(" NAMECH "(?:" NAMECH "+?(?<!\\s))?" "?)" /* "?" "?": no trigraph */
/* "PREFIX\s+(NAME+?)TAIL" (TAIL starting with \s+): when the greedy blank run before the name
 * (run [p, g)) leaves no match, giving blanks back lets the name start inside the run. One
 * blank less (name from g - 1) changes nothing; two or more put the name's end at k = its
 * start + 1, still in the run, where TAIL reads from that blank on: TAIL at g - 1. The first of
 * those (the name = the one blank at g - 2, with at least one blank before it) is the match
 * Python finds. LAZY_AFTER_BLANKS(TAIL) is that: the greedy case with the blanks possessive,
 * else the one-blank name, in a branch-reset group so that both give group 1. */
#define LAZY_AFTER_BLANKS(TAIL) \
  "(?|\\s++" LAZY_NAME TAIL "|\\s+(\\s)(?=\\s(?!\\s))" TAIL ")"

enum {
  P_MAP_Q0_LETTER, P_DIR,
  P_MAP_Q1_LEAD, P_MAP_Q1_LETTER_REST, P_MAP_Q1_LETTER_TOKEN, P_MAP_Q1_THEREFORE,
  P_MAP_Q1_CLAUDE, P_MAP_Q1_GEM0, P_MAP_Q1_GEM1, P_MAP_Q1_GEM2, P_MAP_Q1_GEM3, P_MAP_Q1_GEM4,
  P_MAP_Q1_GPT4O, P_MAP_Q1_IS,
  P_MAP_Q2_LETTER,
  P_NUMW0, /* 11 number words, dict order */
  P_DIGITS = P_NUMW0 + 11, P_LEAD_MARK,
  P_YES0, P_NO0 = P_YES0 + 5,
  P_MAZE_Q0 = P_NO0 + 5, P_MAZE_Q1 = P_MAZE_Q0 + 7,
  P_ANIMAL = P_MAZE_Q1 + 11, P_GRID_CLAUDE,
  P__N
};

#define FI TL_RX_I
static const struct {
  const char *pat;
  unsigned flags;
} PATS[P__N] = {
    /* extract_answer_from_text_spatialmap, question_id == 0 */
    [P_MAP_Q0_LETTER] = {"\\b[A-D]\\.\\s*" DIRS "\\b", FI},
    [P_DIR] = {DIR_PAT, FI},
    /* question_id == 1, in the original's order */
    /* ^(NAME+?)\s+is\s+(?:located\s+|in\s+the\s+|located\s+to\s+the\s+)(DIR) */
    [P_MAP_Q1_LEAD] = {"^" LAZY_NAME "\\s+is\\s+" LOC_ALT "(" DIR_PAT ")", FI},
    [P_MAP_Q1_LETTER_REST] = {"\\b[A-D]\\.\\s*(.*)", 0},
    /* \b([ABCD][.,]|[(][abcdABCD][)])\s*(.*?)(?=\sis\b|\.|,|<|$) - only group 1 is read. With
     * the whole blank run [p, g) taken, (.*?) either reaches a stop or fails at a "\n"; with
     * blanks given back it only gains the stop "\sis\b" at g - 1 (a "$" inside the run would
     * have been reached from g too). So: the blanks possessive, else "is\b" right after them.
     * Retrying every shorter run re-read the line once per blank. */
    [P_MAP_Q1_LETTER_TOKEN] = {"\\b([ABCD][.,]|[(][abcdABCD][)])"
                               "(?:\\s*+(.*?)(?=\\sis\\b|\\.|,|<|$)|\\s*(?=\\sis\\b))", 0},
    [P_MAP_Q1_THEREFORE] = {"Therefore, the object in the " DIR_PAT " of " NAMECH "+ is (" NAMECH
                            "+)", FI},
    /* ^(NAME+?)\s+is\s+(to\s+the\s+)(DIR) */
    [P_MAP_Q1_CLAUDE] = {"^" LAZY_NAME "\\s+is\\s+(to\\s+the\\s+)(" DIR_PAT ")", FI},
    /* \*\*Concise Answer:\*\*\n(NAME+?)\s+is\s+(?:located\s+|in\s+the\s+|in\s+|...)(DIR) */
    [P_MAP_Q1_GEM0] = {"\\*\\*Concise Answer:\\*\\*\\n" LAZY_NAME "\\s+is\\s+" LOC_ALT_IN
                       "(" DIR_PAT ")", FI},
    /* \*\*Answer:\*\*\s+(NAME+?)\s+is\s+in\s+the\s+(DIR)\s+of\s+(NAME+) */
    [P_MAP_Q1_GEM1] = {"\\*\\*Answer:\\*\\*" LAZY_AFTER_BLANKS("\\s+is\\s+in\\s+the\\s+(" DIR_PAT
                       ")\\s+of\\s+(" NAMECH "+)"), FI},
    [P_MAP_Q1_GEM2] = {"\\*\\*Answer:\\*\\*\\n(" NAMECH "+)", FI},
    [P_MAP_Q1_GEM3] = {"\\*\\*Answer\\*\\*:\\s+(" NAMECH "+)", FI},
    [P_MAP_Q1_GEM4] = {"\\*\\*Answer:\\*\\*\\s+(" NAMECH "+)", FI},
    /* Concise Answer:\s+(NAME+?)\s+is\s+(?:located\s+|in\s+the\s+|in\s+|...)(DIR) */
    [P_MAP_Q1_GPT4O] = {"Concise Answer:" LAZY_AFTER_BLANKS("\\s+is\\s+" LOC_ALT_IN "(" DIR_PAT ")"),
                        FI},
    /* \bis\b\s+(.*?)(?=\.|,|<|$): giving blanks back never helps ((.*?) would cross the same
     * blanks to the same place, and a "$" inside the run is reached from its end too), so they
     * are possessive; each shorter run re-read the line. */
    [P_MAP_Q1_IS] = {"\\bis\\b\\s++(.*?)(?=\\.|,|<|$)", 0},
    /* question_id == 2 */
    [P_MAP_Q2_LETTER] = {"\\b[A-D]\\.\\s*(\\d+)", 0},
    /* number_mapping (same dict in all three extractors), iteration order kept */
    [P_NUMW0 + 0] = {"\\bzero\\b", FI},  [P_NUMW0 + 1] = {"\\bno\\b", FI},
    [P_NUMW0 + 2] = {"\\bone\\b", FI},   [P_NUMW0 + 3] = {"\\btwo\\b", FI},
    [P_NUMW0 + 4] = {"\\bthree\\b", FI}, [P_NUMW0 + 5] = {"\\bfour\\b", FI},
    [P_NUMW0 + 6] = {"\\bfive\\b", FI},  [P_NUMW0 + 7] = {"\\bsix\\b", FI},
    [P_NUMW0 + 8] = {"\\bseven\\b", FI}, [P_NUMW0 + 9] = {"\\beight\\b", FI},
    [P_NUMW0 + 10] = {"\\bnine\\b", FI},
    [P_DIGITS] = {"\\d+", 0},
    [P_LEAD_MARK] = {"^\\n\\n\\d+\\.\\s", 0},
    /* extract_answer_from_text_mazenav, question_id == 2 */
    [P_YES0 + 0] = {"\\byes\\b", FI}, [P_YES0 + 1] = {"the answer is yes", FI},
    [P_YES0 + 2] = {"\\\"yes\\\"", FI}, [P_YES0 + 3] = {"\\'yes\\'", FI},
    [P_YES0 + 4] = {"is the shortest path", FI},
    [P_NO0 + 0] = {"\\bno\\b", FI}, [P_NO0 + 1] = {"the answer is no", FI},
    [P_NO0 + 2] = {"\\\"no\\\"", FI}, [P_NO0 + 3] = {"\\'no\\'", FI},
    [P_NO0 + 4] = {"\\bnot\\b", FI},
    /* mazenav patterns[0] (right turns) */
    [P_MAZE_Q0 + 0] = {"\\bThere are\\s*(\\d+)\\s*right turns\\b", FI},
    [P_MAZE_Q0 + 1] = {"\\bThere is\\s*(\\d+)\\s*right turn\\b", FI},
    [P_MAZE_Q0 + 2] = {"\\b(\\d+)\\s+right turn(s)?", FI},
    [P_MAZE_Q0 + 3] = {"answer is\\s+(\\d+)", FI},
    /* answer is:\s*\n*\s*(\d+): three overlapping blank runs tried every split of a run
     * (cubic); the digits can only start after the whole run, so \s*+ matches the same. */
    [P_MAZE_Q0 + 4] = {"answer is:\\s*+(\\d+)", FI},
    [P_MAZE_Q0 + 5] = {"from S to E is\\s+(\\d+)", FI},
    [P_MAZE_Q0 + 6] = {"Answer:\\*\\*\\s*(\\d+)\\b", FI},
    /* mazenav patterns[1] (total turns) */
    [P_MAZE_Q1 + 0] = {"\\bThere are\\s*(\\d+)\\s*total turns\\b", FI},
    [P_MAZE_Q1 + 1] = {"\\bThere are\\s*(\\d+)\\s*turns\\b", FI},
    [P_MAZE_Q1 + 2] = {"There is\\s*(\\d+)\\s*turn\\b", FI},
    [P_MAZE_Q1 + 3] = {"There is\\s*(\\d+)\\s*total turn\\b", FI},
    [P_MAZE_Q1 + 4] = {"answer is\\s+(\\d+)", FI},
    [P_MAZE_Q1 + 5] = {"answer is:\\s*+(\\d+)", FI}, /* answer is:\s*\n*\s*(\d+), as above */
    [P_MAZE_Q1 + 6] = {"from S to E is\\s+(\\d+)", FI},
    [P_MAZE_Q1 + 7] = {"\\btotal of\\s+(\\d+)\\s+turn(s)?", FI},
    [P_MAZE_Q1 + 8] = {"Answer:\\*\\*\\s*(\\d+)\\b", FI},
    [P_MAZE_Q1 + 9] = {"(\\d+)\\s+total turn(s)?", FI},
    [P_MAZE_Q1 + 10] = {"\\b(\\d+)\\s+turn(s)?", FI},
    /* extract_answer_from_text_spatialgrid */
    [P_ANIMAL] = {"\\b(giraffe|cat|dog|elephant|rabbit)\\b", FI},
    /* q0 claude: of the three specific_phrases only the last one decides (the original tests
     * `match` after the loop, so the first two are evaluated and overwritten). */
    [P_GRID_CLAUDE] = {"\\bcontains\\s*(\\d+)\\s*blocks\\b", FI},
};
#undef FI

static const int NUMW_VALUE[11] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

struct tl_se_legacy {
  tl_rx *rx[P__N];
};

/* Python's \s on str patterns (str.isspace(), Unicode 14), written out: PCRE2's UCP \s lacks
 * U+001C..U+001F and adds U+180E, so it is not used. */
#define PY_SPACE_SET                                                                    \
  "\\t\\n\\x0b\\f\\r\\x1c-\\x1f \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}" \
  "\\x{202f}\\x{205f}\\x{3000}"
/* Python's IGNORECASE also folds U+0130 and U+0131 onto i/I; PCRE2's caseless matching does
 * not. (Verified over all code points: \w, \d and the other ASCII letters agree.) */
#define PY_I_SET "i\\x{130}\\x{131}"

/* Rewrites one of the original's pattern strings so that PCRE2 matches what Python's `re`
 * matches: every \s becomes the explicit Python whitespace set, and under IGNORECASE every
 * literal i/I also accepts U+0130/U+0131. Nothing else changes (the patterns use no other
 * construct whose meaning differs). Returns a malloc'd pattern, NULL on allocation failure. */
static char *py_pattern(const char *pat, unsigned flags) {
  tl_buf b;
  tl_buf_init(&b);
  int in_class = 0, bad = 0;
  for (const char *c = pat; *c && !bad; c++) {
    if (*c == '\\' && c[1]) {
      if (c[1] == 's')
        bad = in_class ? tl_buf_puts(&b, PY_SPACE_SET) : tl_buf_puts(&b, "[" PY_SPACE_SET "]");
      else
        bad = tl_buf_append(&b, c, 2);
      c++;
      continue;
    }
    if (!in_class && *c == '[') {
      in_class = 1;
      bad = tl_buf_append(&b, c, 1);
      if (c[1] == '^') bad = bad || tl_buf_append(&b, ++c, 1);
      if (c[1] == ']') bad = bad || tl_buf_append(&b, ++c, 1); /* a leading ']' is literal */
      continue;
    }
    if (in_class && *c == ']') in_class = 0;
    if ((flags & TL_RX_I) && (*c == 'i' || *c == 'I'))
      bad = in_class ? tl_buf_puts(&b, PY_I_SET) : tl_buf_puts(&b, "[" PY_I_SET "]");
    else
      bad = tl_buf_append(&b, c, 1);
  }
  if (bad) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

tl_se_legacy *tl_se_legacy_new(tl_err *err) {
  if (tl_utf8_locale_check(err)) return NULL; /* str.lower() needs it */
  tl_se_legacy *s = calloc(1, sizeof *s);
  if (!s) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  for (int i = 0; i < P__N; i++) {
    char *pat = py_pattern(PATS[i].pat, PATS[i].flags);
    if (!pat) {
      tl_err_set(err, TL_ENOMEM, "out of memory");
      tl_se_legacy_free(s);
      return NULL;
    }
    s->rx[i] = tl_rx_compile(pat, PATS[i].flags, err);
    free(pat);
    if (!s->rx[i]) {
      tl_se_legacy_free(s);
      return NULL;
    }
  }
  return s;
}

void tl_se_legacy_free(tl_se_legacy *s) {
  if (!s) return;
  for (int i = 0; i < P__N; i++) tl_rx_free(s->rx[i]);
  free(s);
}

/* ---- Python helpers ---------------------------------------------------------------------- */

/* Outcome of one extractor call. X_LIMIT: a regex resource limit (rx.h) stopped it. */
typedef enum { X_VALUE, X_NONE, X_SKIP, X_LIMIT, X_ERR } xres;

typedef struct {
  const tl_se_legacy *s;
  const char *t; /* the response (the original's `text`) */
  size_t n;
  tl_buf *val;      /* str(extracted), before .lower() */
  const char *rule; /* the branch that fired */
  tl_status err;    /* set with X_ERR */
} xctx;

/* re.search(pattern, text[from:]) with the pattern compiled in new(). -1 = internal failure. */
static int srch(const xctx *x, int p, tl_rx_match *m) {
  return tl_rx_search(x->s->rx[p], x->t, x->n, 0, m);
}

static xres fail(xctx *x, tl_status st) {
  x->err = st;
  return X_ERR;
}

/* A negative tl_rx result: a resource limit is an outcome (status parse_limit), anything else
 * an internal error. */
static xres rx_fail(xctx *x, int r) {
  if (r == TL_RX_LIMIT) return X_LIMIT;
  return fail(x, TL_EREGEX);
}

static xres put(xctx *x, const char *s, size_t n, const char *rule) {
  tl_buf_reset(x->val);
  if (tl_buf_append(x->val, s, n)) return fail(x, TL_ENOMEM);
  x->rule = rule;
  return X_VALUE;
}

static xres put_group(xctx *x, const tl_rx_match *m, int g, const char *rule) {
  return put(x, x->t + m->start[g], m->end[g] - m->start[g], rule);
}

/* First code point of each run of ten Unicode decimal digits (category Nd), digit value 0 at
 * the start of the run; generated from Python 3.11's unicodedata (Unicode 14.0), the version
 * PCRE2 10.42's \d uses too. int() maps every Nd character to its value. */
static const uint32_t ND_ZERO[] = {
    0x30,    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,
    0xC66,   0xCE6,   0xD66,   0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,
    0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,
    0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066,
    0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};

static int nd_value(uint32_t cp) {
  for (size_t i = 0; i < sizeof ND_ZERO / sizeof ND_ZERO[0]; i++)
    if (cp >= ND_ZERO[i] && cp < ND_ZERO[i] + 10) return (int)(cp - ND_ZERO[i]);
  return -1;
}

/* CPython >= 3.11: int(str) raises ValueError beyond sys.int_info.default_max_str_digits. */
#define PY_INT_MAX_STR_DIGITS 4300

/* str(int(s[0..n))) for a run that \d+ matched, into out. Returns 0, 1 when int() would raise
 * ValueError (too many digits), -1 on allocation failure. */
static int py_int_str(const char *s, size_t n, tl_buf *out) {
  size_t i = 0, ndig = 0;
  int leading = 1;
  tl_buf_reset(out);
  while (i < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    int v = k ? nd_value(cp) : -1;
    if (v < 0) v = 0; /* cannot happen for a \d+ match; keep going rather than fail */
    if (!k) k = 1;
    i += k;
    ndig++;
    if (leading && v == 0) continue;
    leading = 0;
    char c = (char)('0' + v);
    if (tl_buf_append(out, &c, 1)) return -1;
  }
  if (ndig > PY_INT_MAX_STR_DIGITS) return 1;
  if (out->len == 0 && tl_buf_append(out, "0", 1)) return -1;
  return 0;
}

/* Puts str(int(group g)); skip (rule int_digit_limit) when int() raises. */
static xres put_int_group(xctx *x, const tl_rx_match *m, int g, const char *rule) {
  int r = py_int_str(x->t + m->start[g], m->end[g] - m->start[g], x->val);
  if (r < 0) return fail(x, TL_ENOMEM);
  if (r > 0) {
    x->rule = "int_digit_limit";
    return X_SKIP;
  }
  x->rule = rule;
  return X_VALUE;
}

/* str.isspace() for one code point (the set PY_SPACE_SET spells out). */
static int py_isspace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Span of s[0..n) without the leading/trailing characters Python's str.strip() removes. */
static void py_strip(const char *s, size_t n, size_t *b, size_t *e) {
  size_t i = 0, first = n, last_end = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k) k = 1;
    if (!py_isspace(cp)) {
      if (first == n) first = i;
      last_end = i + k;
    }
    i += k;
  }
  if (first == n) first = last_end = 0;
  *b = first;
  *e = last_end;
}

/* answer.strip() then re.sub(r'[\.,\?!<]+$', '', answer). The captures this is applied to
 * never contain "\n" ('.' and the token classes exclude it), so '$' is the end of the string
 * and the substitution is "drop the trailing run of . , ? ! <". */
static xres put_trimmed(xctx *x, const tl_rx_match *m, int g, const char *rule) {
  const char *s = x->t + m->start[g];
  size_t b, e;
  py_strip(s, m->end[g] - m->start[g], &b, &e);
  while (e > b && s[e - 1] && strchr(".,?!<", s[e - 1])) e--;
  return put(x, s + b, e - b, rule);
}

/* Counts code points in s[0..n) (positions in Python are character indices). */
static size_t nchars(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
  return c;
}

/* The shared "earliest number" fallback (spatialmap q2, spatialgrid q0): every number word
 * (IGNORECASE, dict order) at its position in the original text, then every \d+ run at its
 * position in the text after re.sub(r'^\n\n\d+\.\s', '', text) - the two position scales differ
 * by the removed prefix, as in the original. Stable sort by position = first minimum in this
 * insertion order. int() runs on every digit run, so any run too long for int() raises. */
static xres earliest_number(xctx *x, const char *rule_found, const char *rule_none) {
  const tl_se_legacy *s = x->s;
  tl_rx_match m;
  int have = 0;
  size_t best_pos = 0;
  int best_word = -1;                /* value of a number word, or -1 for a digit run */
  size_t best_ds = 0, best_dn = 0;   /* the winning digit run (byte span in x->t) */
  for (int w = 0; w < 11; w++) { /* a word's first match only: its later ones are never earlier */
    int r = tl_rx_search(s->rx[P_NUMW0 + w], x->t, x->n, 0, &m);
    if (r < 0) return rx_fail(x, r);
    if (r == 0) continue;
    const size_t cc = nchars(x->t, m.start[0]);
    if (!have || cc < best_pos) {
      have = 1;
      best_pos = cc;
      best_word = NUMW_VALUE[w];
    }
  }
  size_t off = 0;
  int r = tl_rx_match_at(s->rx[P_LEAD_MARK], x->t, x->n, 0, &m);
  if (r < 0) return rx_fail(x, r);
  if (r == 1) off = m.end[0];
  const char *u = x->t + off;
  size_t un = x->n - off, from = 0, cb = 0, cc = 0;
  for (;;) {
    r = tl_rx_search(s->rx[P_DIGITS], u, un, from, &m);
    if (r < 0) return rx_fail(x, r);
    if (r == 0) break;
    size_t nd = nchars(u + m.start[0], m.end[0] - m.start[0]);
    if (nd > PY_INT_MAX_STR_DIGITS) { /* int(match.group(0)) raises ValueError */
      x->rule = "int_digit_limit";
      return X_SKIP;
    }
    cc += nchars(u + cb, m.start[0] - cb);
    cb = m.start[0];
    if (!have || cc < best_pos) {
      have = 1;
      best_pos = cc;
      best_word = -1;
      best_ds = off + m.start[0];
      best_dn = m.end[0] - m.start[0];
    }
    from = m.end[0];
  }
  if (!have) {
    x->rule = rule_none;
    return X_NONE;
  }
  if (best_word >= 0) {
    char c = (char)('0' + best_word);
    return put(x, &c, 1, rule_found);
  }
  tl_rx_match dm;
  dm.ngroups = 1;
  dm.start[0] = best_ds;
  dm.end[0] = best_ds + best_dn;
  return put_int_group(x, &dm, 0, rule_found);
}

/* `needle in model_name.lower()` */
static int model_has(const char *model_lower, const char *needle) {
  return model_lower && strstr(model_lower, needle) != NULL;
}

/* ---- extract_answer_from_text_spatialmap ------------------------------------------------- */

static xres spatialmap(xctx *x, int qid, const char *model_lower) {
  tl_rx_match m;
  int r;
#define TRY(p)                                    \
  do {                                            \
    if ((r = srch(x, (p), &m)) < 0) return rx_fail(x, r); \
  } while (0)
  if (qid == 0) {
    TRY(P_MAP_Q0_LETTER); /* "X. <direction>" (group(1).lower()) */
    if (r) return put_group(x, &m, 1, "map_q0_letter_dir");
    TRY(P_DIR); /* first direction word anywhere */
    if (r) return put_group(x, &m, 1, "map_q0_first_dir");
    x->rule = "map_q0_none";
    return X_NONE;
  }
  if (qid == 1) {
    TRY(P_MAP_Q1_LEAD); /* "<name> is located/in the <dir>" at the very start */
    if (r) return put_group(x, &m, 1, "map_q1_lead_is_dir");
    TRY(P_MAP_Q1_LETTER_REST); /* "X. <rest of line>": drop "**" then every ".", cut at " is" */
    if (r) {
      const char *g = x->t + m.start[1];
      size_t gn = m.end[1] - m.start[1];
      tl_buf a;
      tl_buf_init(&a);
      if (tl_buf_extend(&a, gn)) { /* room for the group; its bytes are copied next */
        tl_buf_release(&a);
        return fail(x, TL_ENOMEM);
      }
      size_t k = 0;
      for (size_t i = 0; i < gn; i++) { /* .replace('**', '') */
        if (g[i] == '*' && i + 1 < gn && g[i + 1] == '*') {
          i++;
          continue;
        }
        a.data[k++] = g[i];
      }
      a.len = k;
      a.data[k] = 0;
      k = 0; /* .replace('.', '') in place */
      for (size_t i = 0; i < a.len; i++)
        if (a.data[i] != '.') a.data[k++] = a.data[i];
      a.len = k;
      a.data[k] = 0;
      const char *is = strstr(a.data, " is"); /* .split(' is', 1)[0] */
      size_t cut = is ? (size_t)(is - a.data) : a.len;
      size_t b, e;
      py_strip(a.data, cut, &b, &e);
      xres res = put(x, a.data + b, e - b, "map_q1_letter_rest");
      tl_buf_release(&a);
      return res;
    }
    TRY(P_MAP_Q1_LETTER_TOKEN); /* returns the letter token itself ("A," -> "A", "(b)") */
    if (r) return put_trimmed(x, &m, 1, "map_q1_letter_token");
    TRY(P_MAP_Q1_THEREFORE);
    if (r) return put_group(x, &m, 2, "map_q1_therefore");
    if (model_has(model_lower, "claude")) {
      TRY(P_MAP_Q1_CLAUDE);
      if (r) return put_group(x, &m, 1, "map_q1_claude");
    }
    if (model_has(model_lower, "geminiv")) {
      for (int p = P_MAP_Q1_GEM0; p <= P_MAP_Q1_GEM4; p++) {
        TRY(p);
        if (r) return put_group(x, &m, 1, "map_q1_geminiv");
      }
    }
    if (model_has(model_lower, "gpt4o")) {
      TRY(P_MAP_Q1_GPT4O);
      if (r) return put_group(x, &m, 1, "map_q1_gpt4o");
    }
    TRY(P_MAP_Q1_IS); /* "is <phrase>" up to . , < or end of line */
    if (r) return put_trimmed(x, &m, 1, "map_q1_is_phrase");
    x->rule = "map_q1_none";
    return X_NONE;
  }
  if (qid == 2) {
    TRY(P_MAP_Q2_LETTER);
    if (r) {
      /* convert_str_to_int: int(), or the string unchanged when int() raises ValueError */
      int k = py_int_str(x->t + m.start[1], m.end[1] - m.start[1], x->val);
      if (k < 0) return fail(x, TL_ENOMEM);
      if (k > 0) return put_group(x, &m, 1, "map_q2_letter_number");
      x->rule = "map_q2_letter_number";
      return X_VALUE;
    }
    return earliest_number(x, "map_q2_first_number", "map_q2_none");
  }
#undef TRY
  x->rule = "map_bad_qid"; /* raise ValueError("Question ID ... is not supported.") */
  return X_SKIP;
}

/* ---- extract_answer_from_text_mazenav ---------------------------------------------------- */

static xres mazenav(xctx *x, int qid) {
  tl_rx_match m;
  int r;
  if (qid == 2) {
    for (int p = P_YES0; p < P_YES0 + 5; p++) {
      if ((r = srch(x, p, &m)) < 0) return rx_fail(x, r);
      if (r) return put(x, "Yes", 3, "maze_q2_yes");
    }
    for (int p = P_NO0; p < P_NO0 + 5; p++) {
      if ((r = srch(x, p, &m)) < 0) return rx_fail(x, r);
      if (r) return put(x, "No", 2, "maze_q2_no");
    }
    x->rule = "maze_q2_none";
    return X_NONE;
  }
  /* first number word in dict order that occurs anywhere (not the earliest one) */
  for (int w = 0; w < 11; w++) {
    if ((r = srch(x, P_NUMW0 + w, &m)) < 0) return rx_fail(x, r);
    if (r) {
      char c = (char)('0' + NUMW_VALUE[w]);
      return put(x, &c, 1, "maze_numword");
    }
  }
  int p0, p1;
  const char *rule;
  if (qid == 0) {
    p0 = P_MAZE_Q0, p1 = P_MAZE_Q0 + 7, rule = "maze_q0_pattern";
  } else if (qid == 1) {
    p0 = P_MAZE_Q1, p1 = P_MAZE_Q1 + 11, rule = "maze_q1_pattern";
  } else {
    x->rule = "maze_bad_qid"; /* patterns[question_id]: KeyError in the original */
    return X_SKIP;
  }
  for (int p = p0; p < p1; p++) {
    if ((r = srch(x, p, &m)) < 0) return rx_fail(x, r);
    if (r) return put_int_group(x, &m, 1, rule);
  }
  if ((r = srch(x, P_DIGITS, &m)) < 0) return rx_fail(x, r);
  if (r) return put_int_group(x, &m, 0, "maze_first_digits");
  x->rule = "maze_none";
  return X_NONE;
}

/* ---- extract_answer_from_text_spatialgrid ------------------------------------------------ */

static xres spatialgrid(xctx *x, int qid, const char *model_lower) {
  tl_rx_match m;
  int r;
  if (qid >= 1) {
    if ((r = srch(x, P_ANIMAL, &m)) < 0) return rx_fail(x, r);
    if (r) return put_group(x, &m, 1, "grid_animal");
    x->rule = "grid_animal_none";
    return X_NONE;
  }
  if (model_has(model_lower, "claude")) {
    if ((r = srch(x, P_GRID_CLAUDE, &m)) < 0) return rx_fail(x, r);
    if (r) return put_int_group(x, &m, 1, "grid_q0_claude_contains");
  }
  return earliest_number(x, "grid_q0_first_number", "grid_q0_none");
}

/* ---- scoring ----------------------------------------------------------------------------- */

tl_status tl_se_legacy_parse(const tl_se_legacy *s, const tl_se_item *item, const char *response,
                             const char *model, tl_parsed *out) {
  tl_parsed_release(out);
  if (item->task == TL_SE_SPATIALREAL) {
    /* The original has no spatialreal branch: model_answer keeps the previous line's value (or
     * the run crashes on a first spatialreal line). Not reproduced: counted wrong, said so. */
    out->status = TL_PS_SKIPPED;
    out->rule = "legacy_no_spatialreal_branch";
    return TL_OK;
  }
  tl_buf val;
  tl_buf_init(&val);
  xctx x = {s, response, strlen(response), &val, "", TL_OK};
  char *model_lower = NULL;
  if (model && (item->task == TL_SE_SPATIALMAP || item->task == TL_SE_SPATIALGRID)) {
    model_lower = tl_utf8_lower(model, strlen(model));
    if (!model_lower) {
      tl_buf_release(&val);
      return TL_ENOMEM;
    }
  }
  xres res;
  switch (item->task) {
  case TL_SE_SPATIALMAP: res = spatialmap(&x, item->qid, model_lower); break;
  case TL_SE_MAZENAV: res = mazenav(&x, item->qid); break;
  default: res = spatialgrid(&x, item->qid, model_lower); break;
  }
  free(model_lower);
  if (res == X_ERR) {
    tl_buf_release(&val);
    return x.err;
  }
  if (res == X_LIMIT) { /* no answer, counted wrong, and the run goes on */
    tl_buf_release(&val);
    out->status = TL_PS_PARSE_LIMIT;
    out->rule = "parse_limit";
    return TL_OK;
  }
  out->rule = x.rule;
  if (res == X_SKIP) { /* `except ValueError: continue` - the line stays in the denominator */
    tl_buf_release(&val);
    out->status = TL_PS_SKIPPED;
    return TL_OK;
  }
  if (res == X_NONE) { /* str(None) */
    tl_buf_reset(&val);
    if (tl_buf_puts(&val, "None")) {
      tl_buf_release(&val);
      return TL_ENOMEM;
    }
  }
  out->answer = tl_utf8_lower(val.data, val.len);
  tl_buf_release(&val);
  char *ref = tl_utf8_lower(item->oracle_answer, strlen(item->oracle_answer));
  if (!out->answer || !ref) {
    free(ref);
    tl_parsed_release(out);
    return TL_ENOMEM;
  }
  out->correct = strstr(out->answer, ref) != NULL; /* ref in m */
  free(ref);
  out->status = res == X_VALUE ? TL_PS_OK : TL_PS_NO_ANSWER;
  return TL_OK;
}
