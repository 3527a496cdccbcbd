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
 *     is the reverse. PY_SET / PY_S below spell out the Python class.
 *   - Python's IGNORECASE makes 'i' match U+0130 and U+0131 (and [A-Z] ranges containing I);
 *     PCRE2 does not. PY_I spells the four-letter class; ranges get the two code points added.
 * The published regex is quoted above each translated one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/rx.h"
#include "spatialeval.h"
#include "tally/str.h"

/* Python's \s (str.isspace(), Unicode 14) as ONE character class: the members of PCRE2's UCP
 * \s plus U+001C..U+001F, minus U+180E. Checked over every code point against the form
 * (?:(?!\x{180e})[\s\x{1c}-\x{1f}]) used before; a class repeat is a single-character repeat,
 * which needs no backtracking frame per character (a group repeat needed one per character: on
 * a 5 MB answer the JIT stack overflowed and the interpreter retry took GBs of heap). PY_I is
 * caseless 'i'. */
#define PY_SET                                                                          \
  "\\t\\n\\x0b\\f\\r\\x1c-\\x1f \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}" \
  "\\x{202f}\\x{205f}\\x{3000}"
#define PY_S "[" PY_SET "]"
#define PY_I "[iI\\x{130}\\x{131}]"

/* Cost contract: for a fixed prompt, parsing is linear in the response length. Every pattern
 * that runs on the response either starts with a literal ("Answer") whose runs of '*' and
 * blanks belong to one occurrence each, or carries a start guard (F_NO_TAG) that skips start
 * positions whose outcome equals the previous one's; possessive quantifiers (*+) stand where
 * giving characters back can never lead to a match, so no step is repeated. Each rewrite below
 * is proven equal to the published pattern in its comment, and the oracle tests
 * (tests/unit/test_se_pr3.c) compare the results with Python's on thousands of inputs. */

/* r"Available options:\n((?:\s*[A-Z]\s*\.\s*.*\n?\s*)+)" */
static const char P_BLOCK[] =
    "Available options:\\n((?:" PY_S "*[A-Z]" PY_S "*\\." PY_S "*.*\\n?" PY_S "*)+)";
/* r'([A-Z])\s*\.\s*(.*)\s*' (findall over the block) */
static const char P_CHOICE[] = "([A-Z])" PY_S "*\\." PY_S "*(.*)" PY_S "*";
/* r"\**Answer\**\s*:\**\s*(?!<A single letter option)([^.\s$]+)", re.I - only group 1 is used.
 * The leading \** is dropped: a match that starts on stars has the same group 1 as the one
 * starting at the "A" after them, and occurrences keep their order. Before the colon giving
 * back a '*' or a blank can only put a '*' or a blank where ':' must be, and after the colon
 * giving back a blank puts one where the token must start: both are possessive. [^.\s$] is the
 * single class [^.$ + Python's \s]. */
static const char P_DIRECT[] = "Answer\\**+" PY_S "*+:\\**" PY_S "*+(?!<A s" PY_I "ngle letter opt" PY_I
                               "on)([^.$" PY_SET "]+)";
/* r"\**Answer\**\s*:\**\s*(?!.*<A single letter option that best answers the question>).*", re.I
 * is only tested for a match (has_tag() decides it in linear time, from the two patterns
 * below, instead of re-reading the rest of the line at every "Answer:"). */
static const char P_TAG_PREFIX[] = "Answer\\**+" PY_S "*+:()\\**+" PY_S "*+";
static const char P_PLACEHOLDER[] = "<A s" PY_I "ngle letter opt" PY_I
                                    "on that best answers the quest" PY_I "on>";
/* r'[^\w\s]|[\s]+$' (re.sub, used to normalise choices and the direct token). A start inside a
 * blank run cannot match "[\s]+$" unless the start of the run does, which is tried first: the
 * guard (?<!\s) skips those starts (the run would be re-read from each of them). */
static const char P_NORM[] = "[^\\w" PY_SET "]|(?<!" PY_S ")" PY_S "+$";
/* Letter patterns, built per [min-max] range (%s = the class):
 * fr'\**Answer\**\s*:\**\s*([{min}-{max}])\**\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?', I|S
 * Only the match and group 1 (the letter) are used. Everything after the group matches at any
 * position (with DOTALL the lazy (.*?) can always reach the end, where $ holds), so it never
 * makes a match fail or change group 1, and it is dropped: it cost two steps per character up
 * to the next '.', newline or "Reason", which on a 5 MB answer exceeded PCRE2's match limit.
 * The leading \** is dropped as in P_DIRECT; the rest is possessive (a '*' or a blank can never
 * be the colon or the letter). */
static const char F_TAG_LETTER[] = "Answer\\**+" PY_S "*+:\\**+" PY_S "*+(%s)";
/* fr'(?:\b{phrase}\b)*\s*\**([{min}-{max}])\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?', I|S
 * with phrase = "the correct answer is"; the tail after the group is dropped as above. A start
 * on a blank or '*' cannot begin the phrase, so the match from there is "blanks, then stars,
 * then the letter"; when the previous character is a blank and this one a blank or '*', or both
 * are '*', that is the same run as from the previous start, which was tried first and failed.
 * The guard skips such starts: without it a run of k blanks or stars cost k*k/2 steps (a 1 MB
 * blank answer took minutes). Giving back a blank or '*' puts it where the letter must be:
 * possessive. */
static const char F_NO_TAG[] = "(?!(?<=" PY_S ")[*" PY_SET "])(?!(?<=\\*)\\*)"
                               "(?:\\bthe correct answer " PY_I "s\\b)*" PY_S "*+\\**+(%s)";

#define NL 26 /* option letters are [A-Z] (the block and choice patterns are case-sensitive) */

typedef struct {
  int n, cap;
  char *letter; /* 'A'..'Z' */
  char **norm;  /* normalised, lower-cased choice texts */
} choices;

/* The options read from prompts, by prompt: a unit's prompt is its item's text in one of a few
 * variants, so a run sees the same few thousand prompts again and again, and reading the options
 * (two regex searches per option and a normalisation) cost more than the rest of the parse. Keyed
 * by the prompt's bytes (hashed, then compared in full). Open addressing at a load of at most
 * 1/2; when PR3_CACHE_MAX prompts are held the cache is emptied and fills again. Prompts over
 * PR3_CACHE_PROMPT bytes are not kept. It is the parser's only mutable state: one parser serves
 * one thread. */
#define PR3_CACHE_MAX 4096
#define PR3_CACHE_PROMPT 65536
typedef struct {
  char *prompt; /* NULL = empty slot */
  size_t len;
  uint64_t h;
  choices c;
} pr3_cached;
typedef struct {
  pr3_cached *slot; /* [2 * PR3_CACHE_MAX] */
  size_t n, max;    /* held, and held at most (PR3_CACHE_MAX but in tests) */
} pr3_cache;

struct tl_se_pr3 {
  tl_rx *block, *choice, *direct, *tag_prefix, *placeholder, *norm;
  /* [min][max] for min <= max: the two letter patterns for that letter range. */
  tl_rx *tag_letter[NL][NL];
  tl_rx *no_tag[NL][NL];
  pr3_cache *cache; /* owned; NULL when it could not be allocated (no caching) */
};

static void choices_release(choices *c) {
  for (int i = 0; i < c->n; i++) free(c->norm[i]);
  free(c->letter);
  free(c->norm);
  memset(c, 0, sizeof *c);
}

static void cache_empty(pr3_cache *k) {
  for (size_t i = 0; i < 2 * PR3_CACHE_MAX; i++)
    if (k->slot[i].prompt) {
      free(k->slot[i].prompt);
      choices_release(&k->slot[i].c);
      k->slot[i].prompt = NULL;
    }
  k->n = 0;
}

void tl_se_pr3_free(tl_se_pr3 *s) {
  if (!s) return;
  tl_rx_free(s->block);
  tl_rx_free(s->choice);
  tl_rx_free(s->direct);
  tl_rx_free(s->tag_prefix);
  tl_rx_free(s->placeholder);
  tl_rx_free(s->norm);
  for (int a = 0; a < NL; a++)
    for (int b = 0; b < NL; b++) {
      tl_rx_free(s->tag_letter[a][b]);
      tl_rx_free(s->no_tag[a][b]);
    }
  if (s->cache) {
    cache_empty(s->cache);
    free(s->cache->slot);
    free(s->cache);
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
  if (tl_utf8_locale_check(err)) return NULL; /* str.lower() needs it */
  tl_se_pr3 *s = calloc(1, sizeof *s);
  if (!s) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  s->cache = calloc(1, sizeof *s->cache);
  if (s->cache && !(s->cache->slot = calloc(2 * PR3_CACHE_MAX, sizeof *s->cache->slot))) {
    free(s->cache); /* parsing works without it */
    s->cache = NULL;
  }
  if (s->cache) s->cache->max = PR3_CACHE_MAX;
  if (!(s->block = tl_rx_compile(P_BLOCK, 0, err)) ||
      !(s->choice = tl_rx_compile(P_CHOICE, 0, err)) ||
      !(s->direct = tl_rx_compile(P_DIRECT, TL_RX_I, err)) ||
      !(s->tag_prefix = tl_rx_compile(P_TAG_PREFIX, TL_RX_I, err)) ||
      !(s->placeholder = tl_rx_compile(P_PLACEHOLDER, TL_RX_I, err)) ||
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

/* Internally a regex resource limit travels as TL_EREGEX and any other regex failure as
 * TL_EINTERNAL; tl_se_pr3_parse turns TL_EREGEX into the status parse_limit. */
static tl_status rx_fail(int r) { return r == TL_RX_LIMIT ? TL_EREGEX : TL_EINTERNAL; }

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
    *st = rx_fail(r);
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

/* extract_available_options + the choice normalisation. c->n == 0 when there is no block. */
static tl_status read_choices(const tl_se_pr3 *s, const char *prompt, choices *c) {
  memset(c, 0, sizeof *c);
  tl_rx_match m;
  int r = tl_rx_search(s->block, prompt, strlen(prompt), 0, &m);
  if (r < 0) return rx_fail(r);
  if (r == 0) return TL_OK;
  /* findall over the block text group(1): successive non-overlapping searches. */
  const char *blk = prompt + m.start[1];
  size_t blen = m.end[1] - m.start[1], pos = 0;
  while (pos < blen) {
    tl_rx_match cm;
    r = tl_rx_search(s->choice, blk, blen, pos, &cm);
    if (r < 0) return rx_fail(r);
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

void tl_se_pr3_test_cache_max(tl_se_pr3 *s, size_t n) {
  if (s->cache) s->cache->max = n < 1 ? 1 : n > PR3_CACHE_MAX ? PR3_CACHE_MAX : n;
}

/* The options of prompt (n bytes): the cached ones, or read (and cached when there is room).
 * *c points at them; *owned = 1 when the caller must release them (not cached). */
static tl_status cached_choices(const tl_se_pr3 *s, const char *prompt, size_t n, choices *local,
                                const choices **c, int *owned) {
  pr3_cache *k = n <= PR3_CACHE_PROMPT ? s->cache : NULL;
  size_t j = 0;
  uint64_t h = 0;
  if (k) {
    h = tl_hash64(prompt, n);
    for (j = (size_t)h & (2 * PR3_CACHE_MAX - 1); k->slot[j].prompt; j = (j + 1) & (2 * PR3_CACHE_MAX - 1))
      if (k->slot[j].h == h && k->slot[j].len == n && memcmp(k->slot[j].prompt, prompt, n) == 0) {
        *c = &k->slot[j].c;
        *owned = 0;
        return TL_OK;
      }
  }
  *c = local;
  *owned = 1;
  tl_status st = read_choices(s, prompt, local);
  if (st || !k) return st;
  if (k->n >= k->max) { /* full: start again (the probe restarts at the hash's own slot) */
    cache_empty(k);
    j = (size_t)h & (2 * PR3_CACHE_MAX - 1);
  }
  char *copy = tl_strndup(prompt, n);
  if (!copy) return TL_OK; /* not cached: the caller releases them */
  k->slot[j] = (pr3_cached){copy, n, h, *local};
  k->n++;
  memset(local, 0, sizeof *local);
  *c = &k->slot[j].c;
  *owned = 0;
  return TL_OK;
}

static char *ascii_upper_dup(const char *s, size_t n) {
  char *d = tl_strndup(s, n);
  if (d)
    for (char *p = d; *p; p++)
      if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
  return d;
}

/* re.search(TAG, r, re.I) is not None, with TAG =
 *   \**Answer\**\s*:\**\s*(?!.*<A single letter option that best answers the question>).*
 * in time linear in n. The leading \** and the final .* never decide a match, so TAG matches at
 * an occurrence of "Answer\**\s*:" (colon ending at c) iff the negative lookahead holds at some
 * x that "\**\s*" can reach, i.e. any x in [c, e] with e the greedy end. The lookahead fails at
 * x iff a placeholder starts in [x, end of x's line): '.' stops only at "\n", and the
 * placeholder holds no "\n". So it holds at a "\n" in [c, e) (nothing after it on its line) and
 * otherwise, all of [c, e] being one line, best at x = e. The next placeholder and the next
 * newline at or after e are cached, as e only grows: each byte is scanned once. Python re-reads
 * the rest of the line at every "Answer:", which is quadratic on a long line of them.
 * Returns 1, 0, or a negative tl_rx result. */
static int has_tag(const tl_se_pr3 *s, const char *r, size_t n) {
  size_t pos = 0, ph = 0, nl = 0; /* first placeholder / newline at or after an earlier e */
  int have_ph = 0, have_nl = 0;
  for (;;) {
    tl_rx_match m;
    int rc = tl_rx_search(s->tag_prefix, r, n, pos, &m);
    if (rc <= 0) return rc;
    size_t c = m.start[1], e = m.end[0];
    if (memchr(r + c, '\n', e - c)) return 1;
    if (!have_nl || nl < e) { /* else the cached one is still the first at or after e */
      const char *q = memchr(r + e, '\n', n - e);
      nl = q ? (size_t)(q - r) : n;
      have_nl = 1;
    }
    if (!have_ph || ph < e) {
      tl_rx_match pm;
      rc = tl_rx_search(s->placeholder, r, n, e, &pm);
      if (rc < 0) return rc;
      ph = rc ? pm.start[0] : n + 1;
      have_ph = 1;
    }
    if (ph >= nl) return 1; /* no placeholder on the rest of e's line */
    pos = e; /* the next "Answer" starts at or after e */
  }
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
  choices local;
  memset(&local, 0, sizeof local);
  const choices *cp = &local;
  int owned = 1;
  tl_status st = cached_choices(s, prompt, strlen(prompt), &local, &cp, &owned);
  const choices c = *cp; /* read only */
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
  if (r < 0) { st = rx_fail(r); goto done; }
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
    r = has_tag(s, response, rlen);
    if (r < 0) { st = rx_fail(r); goto done; }
    int tagged = r == 1;
    const tl_rx *lrx = tagged ? s->tag_letter[lo][hi] : s->no_tag[lo][hi];
    r = tl_rx_search(lrx, response, rlen, 0, &m);
    if (r < 0) { st = rx_fail(r); goto done; }
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
  if (owned) choices_release(&local);
  if (st == TL_EREGEX) { /* a regex resource limit: a status, never an error */
    tl_parsed_release(out);
    out->status = TL_PS_PARSE_LIMIT;
    out->rule = "parse_limit";
    st = TL_OK;
  } else if (st) {
    tl_parsed_release(out);
    out->rule = "internal_error";
  }
  return st;
}
