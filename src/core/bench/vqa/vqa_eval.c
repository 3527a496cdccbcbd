/* vqa_eval.c - VQA normalization and per-question scoring (vqa_eval.h, docs/VQA.md). */
#include "vqa_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- versions ------------------------------------------------------------------------------ */

static const char *const VERSION_NAMES[TL_VQA__COUNT] = {"official", "2017", "normalized"};

const char *tl_vqa_version_name(tl_vqa_version v) {
  return (v >= 0 && v < TL_VQA__COUNT) ? VERSION_NAMES[v] : "?";
}

int tl_vqa_version_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TL_VQA__COUNT; i++)
    if (strcmp(name, VERSION_NAMES[i]) == 0) return i;
  return -1;
}

const char *tl_vqa_version_names(void) { return "official, 2017, normalized"; }

/* ---- the official tables (vqaEval.py @ a013f00, verbatim) --------------------------------- */

/* punct, in the script's order (the order does not change the result: each mark is one ASCII
 * byte and is replaced by '' or ' ', never by another mark). */
#define PUNCT ";/[]\"{}()=+\\_-><@`,?!" /* a literal: only its size is used, beside PUNCT_AT */

typedef struct {
  const char *key, *val;
  size_t klen, vlen; /* strlen of each, from the literal */
} pair;
#define P(k, v) {k, v, sizeof k - 1, sizeof v - 1}

static const pair MANUAL_MAP[] = {
    P("none", "0"), P("zero", "0"), P("one", "1"), P("two", "2"),   P("three", "3"), P("four", "4"),
    P("five", "5"), P("six", "6"),  P("seven", "7"), P("eight", "8"), P("nine", "9"), P("ten", "10")};

static const char *const ARTICLES[] = {"a", "an", "the"};

/* contractions: 120 entries, in the script's order. The keys "Id've", "I'dve", "Im", "Ive" hold
 * capitals and never match a lower-cased word; "somebody'd" -> "somebodyd" runs backwards. Both
 * are kept as the script has them. */
static const pair CONTRACTIONS[] = {
    P("aint", "ain't"), P("arent", "aren't"), P("cant", "can't"), P("couldve", "could've"),
    P("couldnt", "couldn't"), P("couldn'tve", "couldn't've"), P("couldnt've", "couldn't've"),
    P("didnt", "didn't"), P("doesnt", "doesn't"), P("dont", "don't"), P("hadnt", "hadn't"),
    P("hadnt've", "hadn't've"), P("hadn'tve", "hadn't've"), P("hasnt", "hasn't"),
    P("havent", "haven't"), P("hed", "he'd"), P("hed've", "he'd've"), P("he'dve", "he'd've"),
    P("hes", "he's"), P("howd", "how'd"), P("howll", "how'll"), P("hows", "how's"),
    P("Id've", "I'd've"), P("I'dve", "I'd've"), P("Im", "I'm"), P("Ive", "I've"), P("isnt", "isn't"),
    P("itd", "it'd"), P("itd've", "it'd've"), P("it'dve", "it'd've"), P("itll", "it'll"),
    P("let's", "let's"), P("maam", "ma'am"), P("mightnt", "mightn't"), P("mightnt've", "mightn't've"),
    P("mightn'tve", "mightn't've"), P("mightve", "might've"), P("mustnt", "mustn't"),
    P("mustve", "must've"), P("neednt", "needn't"), P("notve", "not've"), P("oclock", "o'clock"),
    P("oughtnt", "oughtn't"), P("ow's'at", "'ow's'at"), P("'ows'at", "'ow's'at"),
    P("'ow'sat", "'ow's'at"), P("shant", "shan't"), P("shed've", "she'd've"),
    P("she'dve", "she'd've"), P("she's", "she's"), P("shouldve", "should've"),
    P("shouldnt", "shouldn't"), P("shouldnt've", "shouldn't've"), P("shouldn'tve", "shouldn't've"),
    P("somebody'd", "somebodyd"), P("somebodyd've", "somebody'd've"),
    P("somebody'dve", "somebody'd've"), P("somebodyll", "somebody'll"), P("somebodys", "somebody's"),
    P("someoned", "someone'd"), P("someoned've", "someone'd've"), P("someone'dve", "someone'd've"),
    P("someonell", "someone'll"), P("someones", "someone's"), P("somethingd", "something'd"),
    P("somethingd've", "something'd've"), P("something'dve", "something'd've"),
    P("somethingll", "something'll"), P("thats", "that's"), P("thered", "there'd"),
    P("thered've", "there'd've"), P("there'dve", "there'd've"), P("therere", "there're"),
    P("theres", "there's"), P("theyd", "they'd"), P("theyd've", "they'd've"),
    P("they'dve", "they'd've"), P("theyll", "they'll"), P("theyre", "they're"),
    P("theyve", "they've"), P("twas", "'twas"), P("wasnt", "wasn't"), P("wed've", "we'd've"),
    P("we'dve", "we'd've"), P("weve", "we've"), P("werent", "weren't"), P("whatll", "what'll"),
    P("whatre", "what're"), P("whats", "what's"), P("whatve", "what've"), P("whens", "when's"),
    P("whered", "where'd"), P("wheres", "where's"), P("whereve", "where've"), P("whod", "who'd"),
    P("whod've", "who'd've"), P("who'dve", "who'd've"), P("wholl", "who'll"), P("whos", "who's"),
    P("whove", "who've"), P("whyll", "why'll"), P("whyre", "why're"), P("whys", "why's"),
    P("wont", "won't"), P("wouldve", "would've"), P("wouldnt", "wouldn't"),
    P("wouldnt've", "wouldn't've"), P("wouldn'tve", "wouldn't've"), P("yall", "y'all"),
    P("yall'll", "y'all'll"), P("y'allll", "y'all'll"), P("yall'd've", "y'all'd've"),
    P("y'alld've", "y'all'd've"), P("y'all'dve", "y'all'd've"), P("youd", "you'd"),
    P("youd've", "you'd've"), P("you'dve", "you'd've"), P("youll", "you'll"), P("youre", "you're"),
    P("youve", "you've"),
};
_Static_assert(sizeof CONTRACTIONS / sizeof CONTRACTIONS[0] == 120, "120 contractions");
#define N_CONTRACTIONS (sizeof CONTRACTIONS / sizeof CONTRACTIONS[0])

/* The contractions in (key length, key bytes) order, as indices into CONTRACTIONS: the binary
 * search of contraction_get (7 comparisons instead of a scan of 120). Written once from the
 * table above (a script sorted it); test_vqa_eval checks that it is a permutation in that
 * order and that the search finds exactly what the script's scan finds, on every key. */
static const unsigned char CONTRACTION_ORDER[] = {
    24, 25, 15, 18, 27, 0, 2, 9, 19, 21, 26, 30, 32, 80, 84, 94, 98, 102, 103, 108, 114, 23, 22,
    1, 7, 10, 13, 20, 31, 40, 46, 49, 68, 74, 81, 88, 90, 97, 99, 100, 101, 117, 118, 119, 8,
    14, 17, 16, 29, 28, 37, 38, 39, 41, 69, 73, 77, 78, 79, 83, 82, 85, 86, 87, 89, 91, 92, 45,
    44, 4, 3, 33, 36, 42, 43, 48, 47, 72, 93, 96, 95, 105, 104, 110, 109, 116, 115, 12, 11, 51,
    50, 59, 63, 76, 75, 58, 62, 71, 70, 113, 112, 111, 5, 6, 35, 34, 54, 57, 64, 107, 106, 53,
    52, 61, 60, 67, 56, 55, 66, 65};
_Static_assert(sizeof CONTRACTION_ORDER == N_CONTRACTIONS, "one index per contraction");

/* Unicode 14.0 category Nd (Python 3.11's unicodedata, the same set as PCRE2 10.42's \d with
 * UCP; test_vqa_eval checks every code point against PCRE2). Sorted, disjoint. */
static const uint32_t ND[][2] = {
    {0x30, 0x39},       {0x660, 0x669},     {0x6F0, 0x6F9},     {0x7C0, 0x7C9},
    {0x966, 0x96F},     {0x9E6, 0x9EF},     {0xA66, 0xA6F},     {0xAE6, 0xAEF},
    {0xB66, 0xB6F},     {0xBE6, 0xBEF},     {0xC66, 0xC6F},     {0xCE6, 0xCEF},
    {0xD66, 0xD6F},     {0xDE6, 0xDEF},     {0xE50, 0xE59},     {0xED0, 0xED9},
    {0xF20, 0xF29},     {0x1040, 0x1049},   {0x1090, 0x1099},   {0x17E0, 0x17E9},
    {0x1810, 0x1819},   {0x1946, 0x194F},   {0x19D0, 0x19D9},   {0x1A80, 0x1A89},
    {0x1A90, 0x1A99},   {0x1B50, 0x1B59},   {0x1BB0, 0x1BB9},   {0x1C40, 0x1C49},
    {0x1C50, 0x1C59},   {0xA620, 0xA629},   {0xA8D0, 0xA8D9},   {0xA900, 0xA909},
    {0xA9D0, 0xA9D9},   {0xA9F0, 0xA9F9},   {0xAA50, 0xAA59},   {0xABF0, 0xABF9},
    {0xFF10, 0xFF19},   {0x104A0, 0x104A9}, {0x10D30, 0x10D39}, {0x11066, 0x1106F},
    {0x110F0, 0x110F9}, {0x11136, 0x1113F}, {0x111D0, 0x111D9}, {0x112F0, 0x112F9},
    {0x11450, 0x11459}, {0x114D0, 0x114D9}, {0x11650, 0x11659}, {0x116C0, 0x116C9},
    {0x11730, 0x11739}, {0x118E0, 0x118E9}, {0x11950, 0x11959}, {0x11C50, 0x11C59},
    {0x11D50, 0x11D59}, {0x11DA0, 0x11DA9}, {0x16A60, 0x16A69}, {0x16AC0, 0x16AC9},
    {0x16B50, 0x16B59}, {0x1D7CE, 0x1D7FF}, {0x1E140, 0x1E149}, {0x1E2F0, 0x1E2F9},
    {0x1E950, 0x1E959}, {0x1FBF0, 0x1FBF9}};

int tl_vqa_is_digit(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  size_t lo = 0, hi = sizeof ND / sizeof ND[0];
  while (lo < hi) { /* the first range whose end is >= cp */
    size_t mid = lo + (hi - lo) / 2;
    if (ND[mid][1] < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < sizeof ND / sizeof ND[0] && cp >= ND[lo][0];
}

/* ---- UTF-8 helpers ---------------------------------------------------------------------- */

/* The code point starting at s[i] (n bytes in all); *len its byte length (1 for a bad byte,
 * which gives U+FFFD: never a digit nor a space). */
static uint32_t cp_at(const char *s, size_t n, size_t i, size_t *len) {
  uint32_t cp;
  size_t k = tl_utf8_decode(s + i, n - i, &cp);
  *len = k ? k : 1;
  return k ? cp : 0xFFFD;
}

/* The code point that ends just before s[i] (i > 0). */
static uint32_t cp_before(const char *s, size_t n, size_t i) {
  size_t j = i - 1, back = 0;
  while (j > 0 && back < 3 && ((unsigned char)s[j] & 0xC0) == 0x80) {
    j--;
    back++;
  }
  size_t len;
  uint32_t cp = cp_at(s, n, j, &len);
  return j + len == i ? cp : 0xFFFD;
}

static int is_space_at(const char *s, size_t n, size_t i, size_t *len) {
  return tl_uni_isspace(cp_at(s, n, i, len));
}

/* ---- step 1 ------------------------------------------------------------------------------ */

tl_status tl_vqa_prepare(const char *s, size_t n, tl_buf *out) {
  tl_buf_reset(out);
  size_t b = 0, e = 0, len;
  /* '\n' and '\t' are whitespace themselves, so replacing them first changes only the inside.
   * An ASCII byte is its own code point: no decoding for it. */
  while (b < n) {
    unsigned char c = (unsigned char)s[b];
    if (c < 0x80 ? !tl_uni_isspace(c) : !is_space_at(s, n, b, &len)) break;
    b += c < 0x80 ? 1 : len;
  }
  if (b < n && (unsigned char)s[n - 1] < 0x80 && !tl_uni_isspace((unsigned char)s[n - 1]))
    e = n; /* the usual case: no whitespace at the end */
  else
    for (size_t i = b; i < n; i += len)
      if (!is_space_at(s, n, i, &len)) e = i + len;
  if (e <= b) return TL_OK; /* nothing but whitespace: e stays 0 while b moved past it */
  if (tl_buf_reserve(out, e - b) != TL_OK) return TL_ENOMEM;
  for (size_t i = b; i < e; i++) out->data[out->len++] = (s[i] == '\n' || s[i] == '\t') ? ' ' : s[i];
  out->data[out->len] = 0; /* reserved: out->cap > 0, the buffer's own */
  return TL_OK;
}

/* ---- processPunctuation ---------------------------------------------------------------- */

/* PUNCT_AT[c] = 1 + the index of c in PUNCT, 0 when c is no mark (the 21 ASCII marks). */
static const unsigned char PUNCT_AT[128] = {
    [';'] = 1,  ['/'] = 2,  ['['] = 3,  [']'] = 4,  ['"'] = 5,  ['{'] = 6,  ['}'] = 7,
    ['('] = 8,  [')'] = 9,  ['='] = 10, ['+'] = 11, ['\\'] = 12, ['_'] = 13, ['-'] = 14,
    ['>'] = 15, ['<'] = 16, ['@'] = 17, ['`'] = 18, [','] = 19, ['?'] = 20, ['!'] = 21};
_Static_assert(sizeof PUNCT - 1 == 21, "21 marks");

static int punct_index(unsigned char c) { return c < 0x80 ? (int)PUNCT_AT[c] - 1 : -1; }

/* commaStrip's re.search: a Unicode digit, ',', a Unicode digit, anywhere in s. */
static int has_digit_comma_digit(const char *s, size_t n) {
  for (size_t i = 1; i + 1 < n; i++) {
    if (s[i] != ',') continue;
    size_t len;
    if (tl_vqa_is_digit(cp_before(s, n, i)) && tl_vqa_is_digit(cp_at(s, n, i + 1, &len))) return 1;
  }
  return 0;
}

tl_status tl_vqa_punctuation(const char *s, size_t n, tl_buf *out) {
  enum { NP = sizeof PUNCT - 1 };
  int del[NP];
  int all = has_digit_comma_digit(s, n);
  for (int p = 0; p < NP; p++) del[p] = all;
  /* "p " or " p" in the ORIGINAL text */
  for (size_t i = 0; i + 1 < n; i++) {
    int p = punct_index((unsigned char)s[i]);
    if (p >= 0 && s[i + 1] == ' ') del[p] = 1;
    if (s[i] == ' ' && (p = punct_index((unsigned char)s[i + 1])) >= 0) del[p] = 1;
  }
  tl_buf mid;
  tl_buf_init(&mid);
  tl_status st = tl_buf_reserve(&mid, n + 1);
  for (size_t i = 0; i < n && st == TL_OK; i++) { /* each byte gives at most one: no growth */
    int p = punct_index((unsigned char)s[i]);
    if (p < 0) mid.data[mid.len++] = s[i];
    else if (!del[p]) mid.data[mid.len++] = ' ';
  }
  /* periodStrip on that result: '.' not followed by a digit, at most 32, left to right; the
   * lookahead reads the text being substituted (re.sub scans its subject unchanged) */
  tl_buf_reset(out);
  if (st == TL_OK) st = tl_buf_reserve(out, mid.len + 1);
  int removed = 0;
  for (size_t i = 0; i < mid.len && st == TL_OK; i++) {
    if (mid.data[i] == '.' && removed < TL_VQA_PERIOD_COUNT) {
      size_t len;
      if (i + 1 >= mid.len || !tl_vqa_is_digit(cp_at(mid.data, mid.len, i + 1, &len))) {
        removed++;
        continue;
      }
    }
    out->data[out->len++] = mid.data[i];
  }
  if (st == TL_OK) out->data[out->len] = 0;
  tl_buf_release(&mid);
  return st;
}

/* ---- processDigitArticle --------------------------------------------------------------- */

/* The entry of t[count] whose key is w[0..n), or NULL: the script's dict lookup as a scan
 * (manualMap's 12 words; for the contractions, the reference the search is tested against). */
static const pair *table_scan(const pair *t, size_t count, const char *w, size_t n) {
  for (size_t i = 0; i < count; i++)
    if (t[i].klen == n && memcmp(w, t[i].key, n) == 0) return &t[i];
  return NULL;
}

/* w[0..n) against p's key in (length, bytes) order. */
static int key_cmp(const char *w, size_t n, const pair *p) {
  if (n != p->klen) return n < p->klen ? -1 : 1;
  return memcmp(w, p->key, n);
}

/* The contraction whose key is w[0..n), or NULL: binary search over CONTRACTION_ORDER. */
static const pair *contraction_get(const char *w, size_t n) {
  if (n < 2 || n > 13) return NULL; /* the keys are 2 to 13 bytes long */
  size_t lo = 0, hi = N_CONTRACTIONS;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const pair *p = &CONTRACTIONS[CONTRACTION_ORDER[mid]];
    int c = key_cmp(w, n, p);
    if (c == 0) return p;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

size_t tl_vqa_contraction_count(void) { return N_CONTRACTIONS; }

const char *tl_vqa_contraction_key(size_t i) { return i < N_CONTRACTIONS ? CONTRACTIONS[i].key : NULL; }

const char *tl_vqa_contraction(const char *w, size_t n) {
  const pair *p = contraction_get(w, n);
  return p ? p->val : NULL;
}

const char *tl_vqa_contraction_scan(const char *w, size_t n) {
  const pair *p = table_scan(CONTRACTIONS, N_CONTRACTIONS, w, n);
  return p ? p->val : NULL;
}

static int is_article(const char *w, size_t n) {
  if (n > 3) return 0;
  for (size_t i = 0; i < sizeof ARTICLES / sizeof ARTICLES[0]; i++)
    if (strlen(ARTICLES[i]) == n && memcmp(w, ARTICLES[i], n) == 0) return 1;
  return 0;
}

/* One word through manualMap, the articles and the contractions: the text to emit (NULL when
 * the word is dropped); *len its length. */
static const char *word_map(const char *w, size_t n, size_t *len) {
  const pair *m = n <= 5 ? table_scan(MANUAL_MAP, sizeof MANUAL_MAP / sizeof MANUAL_MAP[0], w, n) : NULL;
  if (m) { /* manualMap's values are digits: neither articles nor contraction keys */
    *len = m->vlen;
    return m->val;
  }
  if (is_article(w, n)) return NULL;
  const pair *c = contraction_get(w, n);
  if (c) {
    *len = c->vlen;
    return c->val;
  }
  *len = n;
  return w;
}

int tl_vqa_word_changes(const char *w, size_t n) {
  size_t len;
  const char *m = word_map(w, n, &len);
  return !m || len != n || memcmp(m, w, n) != 0;
}

tl_status tl_vqa_digit_article(const char *s, size_t n, tl_buf *out) {
  tl_buf_reset(out);
  char *low = tl_utf8_lower(s, n);
  if (!low) return TL_ENOMEM;
  size_t ln = strlen(low); /* tl_utf8_lower stops nothing: s holds no NUL byte by contract */
  tl_status st = TL_OK;
  size_t i = 0, len;
  int first = 1;
  while (i < ln && st == TL_OK) {
    while (i < ln && is_space_at(low, ln, i, &len)) i += len;
    if (i >= ln) break;
    size_t b = i;
    while (i < ln && !is_space_at(low, ln, i, &len)) i += len;
    size_t wl;
    const char *w = word_map(low + b, i - b, &wl);
    if (!w) continue;
    if (!first) st = tl_buf_append(out, " ", 1);
    if (st == TL_OK) st = tl_buf_append(out, w, wl);
    first = 0;
  }
  free(low);
  return st;
}

/* punctuation then digit_article, on an already prepared text; tmp is scratch. */
static tl_status norm_core(const char *s, size_t n, tl_buf *out, tl_buf *tmp) {
  tl_status st = tl_vqa_punctuation(s, n, tmp);
  return st == TL_OK ? tl_vqa_digit_article(tmp->data, tmp->len, out) : st;
}

tl_status tl_vqa_normalize(const char *s, size_t n, tl_buf *out) {
  tl_buf a, b;
  tl_buf_init(&a);
  tl_buf_init(&b);
  tl_status st = tl_vqa_prepare(s, n, &a);
  if (st == TL_OK) st = norm_core(a.data, a.len, out, &b);
  tl_buf_release(&a);
  tl_buf_release(&b);
  return st;
}

/* ---- the workspace ---------------------------------------------------------------------- */

/* A memo of norm_core (processPunctuation then processDigitArticle of a prepared text), a pure
 * function of the text's bytes. VQA answers repeat: the synthetic val-sized set of
 * bench/vqa_synth.py asks for 2.36 M normalizations of a few thousand distinct texts, and
 * computing each (a lowered copy, 21 punctuation rules, a search per word) was a quarter of
 * `tally score vqa`. Open addressing on tl_hash64, linear probing; keys and values live in one
 * arena, referred to by offset. Bounded: past MEMO_MAX_BYTES of text or MEMO_MAX_SLOTS / 2
 * entries, a new text is normalized and not kept. Lookups compare the whole key, so a hash
 * collision costs a probe, never a wrong text. */
#define MEMO_MAX_BYTES ((size_t)8 << 20)
#define MEMO_MAX_SLOTS ((size_t)1 << 18)
typedef struct {
  uint64_t h;
  size_t off;       /* arena offset of the key, its value right after it */
  uint32_t klen, vlen;
  int used;
} memo_slot;

typedef struct {
  int on;          /* tl_vqa_ws_memo was called: look up and keep */
  memo_slot *slot; /* [cap], cap a power of two (0 before the first insert) */
  size_t cap, n;
  tl_buf arena;
} memo_t;

static const memo_slot *memo_find(const memo_t *m, const char *k, size_t n, uint64_t h) {
  if (!m->cap) return NULL;
  for (size_t i = (size_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    const memo_slot *e = &m->slot[i];
    if (!e->used) return NULL;
    if (e->h == h && e->klen == n && memcmp(m->arena.data + e->off, k, n) == 0) return e;
  }
}

static void memo_place(memo_slot *t, size_t cap, const memo_slot *e) {
  size_t i = (size_t)e->h & (cap - 1);
  while (t[i].used) i = (i + 1) & (cap - 1);
  t[i] = *e;
}

/* Keeps key k[0..n) -> v[0..vn) when the bounds allow; a failure to grow keeps nothing (the
 * memo is an optimization: the caller has the value either way). */
static void memo_put(memo_t *m, const char *k, size_t n, uint64_t h, const char *v, size_t vn) {
  if (!m->on || n > UINT32_MAX || vn > UINT32_MAX || m->arena.len + n + vn > MEMO_MAX_BYTES) return;
  if (2 * (m->n + 1) > m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 1024;
    if (cap > MEMO_MAX_SLOTS) return;
    memo_slot *t = calloc(cap, sizeof *t);
    if (!t) return;
    for (size_t i = 0; i < m->cap; i++)
      if (m->slot[i].used) memo_place(t, cap, &m->slot[i]);
    free(m->slot);
    m->slot = t;
    m->cap = cap;
  }
  memo_slot e = {.h = h, .off = m->arena.len, .klen = (uint32_t)n, .vlen = (uint32_t)vn, .used = 1};
  if (tl_buf_append(&m->arena, k, n) != TL_OK || tl_buf_append(&m->arena, v, vn) != TL_OK) {
    m->arena.len = e.off;
    return;
  }
  memo_place(m->slot, m->cap, &e);
  m->n++;
}

struct tl_vqa_ws {
  memo_t memo;       /* norm_core's results by text (norm_in_place) */
  tl_buf pred;       /* the prediction after the version's rules */
  tl_buf *refs;      /* [refs_cap]: the references after the version's rules */
  size_t refs_cap;
  tl_buf tmp, tmp2;  /* scratch */
  unsigned char *eq; /* [eq_cap]: reference j equals the prediction */
  size_t eq_cap;
  double *sim;       /* [sim_cap]: soft similarities s_j */
  size_t sim_cap;
  uint32_t *cpa, *cpb; /* code points of the two strings of a Levenshtein call */
  size_t *row;         /* [TL_VQA_LEV_MAX_CP + 1] */
};

tl_vqa_ws *tl_vqa_ws_new(void) {
  tl_vqa_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return NULL;
  tl_buf_init(&ws->memo.arena);
  tl_buf_init(&ws->pred);
  tl_buf_init(&ws->tmp);
  tl_buf_init(&ws->tmp2);
  ws->cpa = malloc(TL_VQA_LEV_MAX_CP * sizeof *ws->cpa);
  ws->cpb = malloc(TL_VQA_LEV_MAX_CP * sizeof *ws->cpb);
  ws->row = malloc((TL_VQA_LEV_MAX_CP + 1) * sizeof *ws->row);
  if (!ws->cpa || !ws->cpb || !ws->row) {
    tl_vqa_ws_free(ws);
    return NULL;
  }
  return ws;
}

void tl_vqa_ws_free(tl_vqa_ws *ws) {
  if (!ws) return;
  free(ws->memo.slot);
  tl_buf_release(&ws->memo.arena);
  tl_buf_release(&ws->pred);
  for (size_t i = 0; i < ws->refs_cap; i++) tl_buf_release(&ws->refs[i]);
  free(ws->refs);
  tl_buf_release(&ws->tmp);
  tl_buf_release(&ws->tmp2);
  free(ws->eq);
  free(ws->sim);
  free(ws->cpa);
  free(ws->cpb);
  free(ws->row);
  free(ws);
}

void tl_vqa_ws_memo(tl_vqa_ws *ws) { ws->memo.on = 1; }

/* Room for n references in ws (refs, eq, sim). */
static tl_status ws_reserve(tl_vqa_ws *ws, size_t n) {
  if (n <= ws->refs_cap) return TL_OK;
  size_t cap = ws->refs_cap ? ws->refs_cap : 16;
  while (cap < n) cap *= 2;
  tl_buf *r = realloc(ws->refs, cap * sizeof *r);
  if (!r) return TL_ENOMEM;
  ws->refs = r;
  for (size_t i = ws->refs_cap; i < cap; i++) tl_buf_init(&r[i]);
  ws->refs_cap = cap;
  unsigned char *eq = realloc(ws->eq, cap);
  if (!eq) return TL_ENOMEM;
  ws->eq = eq;
  ws->eq_cap = cap;
  double *sim = realloc(ws->sim, cap * sizeof *sim);
  if (!sim) return TL_ENOMEM;
  ws->sim = sim;
  ws->sim_cap = cap;
  return TL_OK;
}

/* ---- the version's rules ------------------------------------------------------------------- */

static int bufs_all_equal(const tl_buf *b, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (b[i].len != b[0].len || memcmp(b[i].data, b[0].data, b[0].len) != 0) return 0;
  return 1;
}

static int strs_all_equal(const char *const *s, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (strcmp(s[i], s[0]) != 0) return 0;
  return 1;
}

static tl_status copy_to(tl_buf *b, const char *s) {
  tl_buf_reset(b);
  return tl_buf_append(b, s, strlen(s));
}

/* Normalizes in place: b = punctuation + digit_article of b, from ws's memo when it has b. */
static tl_status norm_in_place(tl_vqa_ws *ws, tl_buf *b) {
  const uint64_t h = ws->memo.on ? tl_hash64(b->data, b->len) : 0; /* no memo: no hash */
  const memo_slot *e = ws->memo.on ? memo_find(&ws->memo, b->data, b->len, h) : NULL;
  if (e) {
    tl_buf_reset(b);
    return tl_buf_append(b, ws->memo.arena.data + e->off + e->klen, e->vlen);
  }
  tl_status st = norm_core(b->data, b->len, &ws->tmp2, &ws->tmp);
  if (st != TL_OK) return st;
  memo_put(&ws->memo, b->data, b->len, h, ws->tmp2.data, ws->tmp2.len);
  tl_buf t = *b; /* swap storage: no copy */
  *b = ws->tmp2;
  ws->tmp2 = t;
  return TL_OK;
}

/* Fills ws->pred and ws->refs[0..n) with the strings the version compares; *normalized says
 * whether the references were touched beyond step 1. */
static tl_status apply_version(tl_vqa_ws *ws, tl_vqa_version v, const char *pred,
                               const char *const *refs, size_t n, int *normalized) {
  tl_status st = tl_vqa_prepare(pred, strlen(pred), &ws->pred);
  *normalized = 0;
  if (v == TL_VQA_2017) {
    /* the prediction always normalized; the raw references (no step 1) get processPunctuation
     * only, and only when the raw references differ */
    if (st == TL_OK) st = norm_in_place(ws, &ws->pred);
    int differ = !strs_all_equal(refs, n);
    for (size_t i = 0; i < n && st == TL_OK; i++)
      st = differ ? tl_vqa_punctuation(refs[i], strlen(refs[i]), &ws->refs[i])
                  : copy_to(&ws->refs[i], refs[i]);
    *normalized = differ;
    return st;
  }
  for (size_t i = 0; i < n && st == TL_OK; i++)
    st = tl_vqa_prepare(refs[i], strlen(refs[i]), &ws->refs[i]);
  if (st != TL_OK) return st;
  if (v == TL_VQA_OFFICIAL && bufs_all_equal(ws->refs, n)) return TL_OK; /* the quirk */
  *normalized = 1;
  st = norm_in_place(ws, &ws->pred);
  for (size_t i = 0; i < n && st == TL_OK; i++) st = norm_in_place(ws, &ws->refs[i]);
  return st;
}

/* Argument checks and the version's strings; fills ws->eq and returns k in *k. */
static tl_status prepare_question(tl_vqa_ws *ws, tl_vqa_version v, const char *pred,
                                  const char *const *refs, size_t n, int *normalized, size_t *k,
                                  tl_err *err) {
  if (v < 0 || v >= TL_VQA__COUNT) return tl_err_set(err, TL_EINPUT, "unknown VQA version %d", (int)v);
  if (n == 0) return tl_err_set(err, TL_EINPUT, "no reference answers");
  if (n > TL_VQA_MAX_REFS)
    return tl_err_set(err, TL_EINPUT, "%zu reference answers (at most %d)", n, TL_VQA_MAX_REFS);
  if (!pred || !refs) return tl_err_set(err, TL_EINPUT, "no prediction");
  for (size_t i = 0; i < n; i++)
    if (!refs[i]) return tl_err_set(err, TL_EINPUT, "reference answer %zu is missing", i);
  if (ws_reserve(ws, n) != TL_OK || apply_version(ws, v, pred, refs, n, normalized) != TL_OK)
    return tl_err_set(err, TL_ENOMEM, "out of memory scoring a VQA answer");
  *k = 0;
  for (size_t i = 0; i < n; i++) {
    const tl_buf *r = &ws->refs[i];
    ws->eq[i] = r->len == ws->pred.len && memcmp(r->data, ws->pred.data, r->len) == 0;
    *k += ws->eq[i];
  }
  return TL_OK;
}

/* ---- accuracy ------------------------------------------------------------------------------ */

int64_t tl_vqa_acc_units(size_t n, size_t k, int *rounded) {
  if (rounded) *rounded = 0;
  if (n == 0 || n > TL_VQA_MAX_REFS || k > n) return -1;
  /* 3N * acc = k*min(3, k-1) + (N-k)*min(3, k) =: t, in [0, 3N] */
  uint64_t t = 0;
  if (k > 0) t = (uint64_t)k * (k - 1 < 3 ? k - 1 : 3) + (uint64_t)(n - k) * (k < 3 ? k : 3);
  uint64_t d = 3u * (uint64_t)n, S = (uint64_t)TL_VQA_ACC_SCALE;
  uint64_t q = t / d, r = t % d;          /* acc = q + r/d, q in {0, 1} */
  uint64_t num = r * S;                   /* < 3 * 10^4 * 7e8: no overflow */
  uint64_t u = q * S + num / d, rem = num % d;
  if (rem) {
    if (rounded) *rounded = 1;
    if (2 * rem > d || (2 * rem == d && (u & 1))) u++; /* half to even */
  }
  return (int64_t)u;
}

double tl_vqa_acc_python(const unsigned char *eq, size_t n) {
  if (n == 0) return 0.0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += eq[i] ? 1 : 0;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    size_t c = k - (eq[i] ? 1 : 0);
    double a = (double)c / 3.0;
    sum += a < 1.0 ? a : 1.0; /* min(1, x): x when below 1, else 1 */
  }
  return sum / (double)n;
}

/* ---- soft accuracy ------------------------------------------------------------------------- */

/* Decodes s[0..n) into cps (at most TL_VQA_LEV_MAX_CP); returns the count, *cut when more. */
static size_t decode_cps(const char *s, size_t n, uint32_t *cps, int *cut) {
  size_t m = 0, i = 0, len;
  while (i < n) {
    if (m == TL_VQA_LEV_MAX_CP) {
      *cut = 1;
      break;
    }
    cps[m++] = cp_at(s, n, i, &len);
    i += len;
  }
  return m;
}

/* The edit distance between x[0..lx) and y[0..ly) (code points), one row of ws->row. */
static size_t lev_cps(tl_vqa_ws *ws, const uint32_t *x, size_t lx, const uint32_t *y, size_t ly) {
  if (ly > lx) { /* the row runs over the shorter one */
    const uint32_t *t = x;
    x = y;
    y = t;
    size_t n = lx;
    lx = ly;
    ly = n;
  }
  size_t *row = ws->row;
  for (size_t j = 0; j <= ly; j++) row[j] = j;
  for (size_t i = 1; i <= lx; i++) {
    size_t diag = row[0]; /* D[i-1][j-1] */
    row[0] = i;
    for (size_t j = 1; j <= ly; j++) {
      size_t up = row[j]; /* D[i-1][j] */
      size_t best = diag + (x[i - 1] != y[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[ly];
}

tl_status tl_vqa_levenshtein(tl_vqa_ws *ws, const char *a, size_t na, const char *b, size_t nb,
                             size_t *dist, size_t *cp_b, int *cut) {
  int c = 0;
  size_t la = decode_cps(a, na, ws->cpa, &c), lb = decode_cps(b, nb, ws->cpb, &c);
  if (cut) *cut = c;
  if (cp_b) *cp_b = lb;
  *dist = lev_cps(ws, ws->cpa, la, ws->cpb, lb);
  return TL_OK;
}

/* s = max(0, 1 - Levenshtein(pred, ref) / len(ref)) for the prediction's code points in
 * ws->cpa[0..lp) and the reference r. Shortcuts that give the same value: an empty ref; a
 * prediction at least twice as long (the distance is then >= len(ref): s = 0); equal strings. */
static double similarity(tl_vqa_ws *ws, size_t lp, const tl_buf *r, int *cut) {
  size_t lr = decode_cps(r->data, r->len, ws->cpb, cut);
  if (lr == 0) return lp == 0 ? 1.0 : 0.0;
  if (lp >= 2 * lr) return 0.0;
  if (lp == lr && memcmp(ws->cpa, ws->cpb, lp * sizeof *ws->cpa) == 0) return 1.0;
  double s = 1.0 - (double)lev_cps(ws, ws->cpa, lp, ws->cpb, lr) / (double)lr;
  return s > 0.0 ? s : 0.0;
}

/* THE definition of tally's soft VQA accuracy, on the strings the version compares (ws->pred,
 * ws->refs[0..n)). s_j = max(0, 1 - Levenshtein/len(ref_j)); leave-one-out min(1, sum/3). */
static double soft_core(tl_vqa_ws *ws, size_t n, int *cut) {
  *cut = 0;
  size_t lp = decode_cps(ws->pred.data, ws->pred.len, ws->cpa, cut);
  for (size_t j = 0; j < n; j++) ws->sim[j] = similarity(ws, lp, &ws->refs[j], cut);
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    double t = 0.0;
    for (size_t j = 0; j < n; j++)
      if (j != i) t += ws->sim[j];
    double a = t / 3.0;
    sum += a < 1.0 ? a : 1.0;
  }
  return sum / (double)n;
}

/* ---- per-question entry points -------------------------------------------------------------- */

tl_status tl_vqa_score(tl_vqa_ws *ws, tl_vqa_version v, const char *pred, const char *const *refs,
                       size_t n_refs, unsigned flags, tl_vqa_result *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  size_t k;
  int normalized;
  tl_status st = prepare_question(ws, v, pred, refs, n_refs, &normalized, &k, err);
  if (st != TL_OK) return st;
  out->n_refs = n_refs;
  out->k = k;
  out->exact = k > 0;
  out->normalized = normalized;
  out->acc = tl_vqa_acc_units(n_refs, k, &out->rounded);
  out->acc_py = tl_vqa_acc_python(ws->eq, n_refs);
  if (flags & TL_VQA_WANT_SOFT) out->soft = soft_core(ws, n_refs, &out->soft_cut);
  return TL_OK;
}

tl_status tl_vqa_exact_match(tl_vqa_ws *ws, tl_vqa_version v, const char *pred,
                             const char *const *refs, size_t n_refs, int *match, tl_err *err) {
  size_t k;
  int normalized;
  *match = 0;
  tl_status st = prepare_question(ws, v, pred, refs, n_refs, &normalized, &k, err);
  if (st == TL_OK) *match = k > 0;
  return st;
}

tl_status tl_vqa_soft(tl_vqa_ws *ws, tl_vqa_version v, const char *pred, const char *const *refs,
                      size_t n_refs, double *out, int *cut, tl_err *err) {
  size_t k;
  int normalized, c = 0;
  *out = 0.0;
  tl_status st = prepare_question(ws, v, pred, refs, n_refs, &normalized, &k, err);
  if (st == TL_OK) *out = soft_core(ws, n_refs, &c);
  if (cut) *cut = c;
  return st;
}

/* ---- Python-compatible numbers ---------------------------------------------------------- */

double tl_vqa_py_round2(double x) {
  if (!isfinite(x)) return x;
  char buf[512]; /* %.2f of the largest double: 309 digits + ".00" */
  snprintf(buf, sizeof buf, "%.2f", x);
  return strtod(buf, NULL);
}

int tl_vqa_py_repr(double x, char *buf, size_t cap) {
  if (isnan(x)) return snprintf(buf, cap, "NaN");
  if (isinf(x)) return snprintf(buf, cap, x > 0 ? "Infinity" : "-Infinity");
  /* the shortest %.*e that reads back as x: its digits and decimal exponent */
  char e[64];
  for (int p = 0; p < 17; p++) {
    snprintf(e, sizeof e, "%.*e", p, x);
    if (strtod(e, NULL) == x) break;
  }
  const char *m = e;
  int neg = *m == '-';
  if (neg) m++;
  char digits[32];
  int nd = 0;
  const char *q = m;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') digits[nd++] = *q;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  int exp10 = atoi(q + 1);
  int decpt = exp10 + 1; /* value = 0.DIGITS * 10^decpt */
  tl_buf b;
  tl_buf_init(&b);
  if (neg) tl_buf_puts(&b, "-");
  if (x == 0.0) {
    tl_buf_puts(&b, "0.0");
  } else if (decpt <= -4 || decpt > 16) { /* d.ddde[+-]XX */
    tl_buf_append(&b, digits, 1);
    if (nd > 1) {
      tl_buf_puts(&b, ".");
      tl_buf_append(&b, digits + 1, (size_t)nd - 1);
    }
    tl_buf_printf(&b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  } else if (decpt <= 0) { /* 0.000ddd */
    tl_buf_puts(&b, "0.");
    for (int i = 0; i < -decpt; i++) tl_buf_puts(&b, "0");
    tl_buf_append(&b, digits, (size_t)nd);
  } else if (nd <= decpt) { /* ddd000.0 */
    tl_buf_append(&b, digits, (size_t)nd);
    for (int i = nd; i < decpt; i++) tl_buf_puts(&b, "0");
    tl_buf_puts(&b, ".0");
  } else { /* ddd.ddd */
    tl_buf_append(&b, digits, (size_t)decpt);
    tl_buf_puts(&b, ".");
    tl_buf_append(&b, digits + decpt, (size_t)(nd - decpt));
  }
  int len = snprintf(buf, cap, "%s", b.data);
  tl_buf_release(&b);
  return len;
}
