/* letter.c - strict option-letter extraction (tally/letter.h): SpatialEval's 'strict' parser
 * (spatialeval/se_strict.c calls it with an item's options) and the generic multiple-choice
 * module's 'strict' mode (bench/mcq) share this one implementation.
 *
 * Contract (docs/parser-strict.md has every rule with examples and the reasons behind the
 * choices the issue left open):
 *   - The chosen option LETTER is compared with the gold letter; option texts are only a way
 *     to name a letter and are matched as whole normalized words, never as substrings.
 *   - Reasoning blocks are dropped first: every <think>...</think>; everything before an orphan
 *     </think>; an unterminated <think> means no answer (TL_PS_UNTERMINATED).
 *   - An explicit answer ("Answer: X", "**Answer:** X", "Final answer: X", "### Answer\nX",
 *     "Answer - X", "the (final|correct) answer is X", "\boxed{X}") beats every other mention;
 *     the LAST explicit answer that names something wins, whatever its status.
 *   - Otherwise a bare letter opening the response decides, else exactly one option text in the
 *     first sentence, else no_answer.
 *   - A span names a letter (option letter at its head) and/or option texts (normalized,
 *     word-bounded, longest match wins). Letter + other option text -> conflict; two option texts
 *     -> ambiguous; a letter the item does not have -> out_of_range; a letter hedged with another
 *     ("C or D", "C, D", "(C) or (D)") -> ambiguous.
 *   - A negated option is never credited: "not"/"never"/"n't"/"but"/"except"/"other than"/
 *     "wrong"/... before it in its clause, or "is not"/"is wrong"/... right after it. An explicit
 *     answer that only negates ("the answer is not C") retracts an earlier answer for that
 *     option and, when no explicit answer is left, ends the extraction with no answer (the
 *     opening-letter and first-sentence rules do not run).
 *   - A response opening with an echo of the option list ("A. ...\nB. ...") decides nothing by
 *     its opening.
 *
 *   - A regex resource limit (rx.h) ends the parse with status parse_limit (rule "parse_limit"),
 *     never an error.
 *
 * Cost: for a fixed item, time and memory are linear in the response. The think-tag searches
 * and clause ends only move forward (cached), negation is read once per span, and a clause
 * that many markers share is indexed once (span_names()); the marker pattern reads each
 * blank run once. Runaway answers of 1 MB take at most a few hundred ms
 * (tests/unit/test_parse_limits.c).
 *
 * Reentrant: the parser object is immutable after tl_letter_new (one compiled pattern and a
 * C.UTF-8 locale object; without that locale tl_letter_new fails); all per-call state lives
 * on the stack, with a heap fallback for spans longer than the inline buffers and for the
 * clause index. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "tally/rx.h"
#include "tally/letter.h"
#include "tally/str.h"
#include "tally/think.h"

/* The explicit-answer markers, one alternation so that one left-to-right pass sees them in text
 * order (IGNORECASE, MULTILINE). Groups:
 *   1 \boxed{...}, 2 its content (an optional \text{ / \textbf{ / \mathrm{ / \mathbf{ wrapper
 *     skipped);
 *   3 "Answer:" with optional markdown bold/underline, "final"/"correct" and "the"/"my"/"our",
 *     ASCII or full-width colon (a bare "Answer:" must also stand where a label can:
 *     label_position());
 *   4 "the [final|correct] answer is", optional ":"; also the "is" of "isn't" / "isn’t" /
 *     "isnt", so that the span starts with the negation "n't" (resolve() reads it as one);
 *   5 a line holding only "Answer" (markdown heading "### Answer", "**Answer**", "Answer:"):
 *     the answer is on the next non-blank line (a CR before the LF is allowed: CRLF text);
 *   6 a line starting "Answer - X" (hyphen, en or em dash).
 * Everything is preceded by "not a word character" so "MyAnswer:" is no marker. Groups 5 and 6
 * must start their line; that is checked in C (line_start()) rather than with "^", so that
 * every alternative starts with a known character and PCRE2 can skip ahead quickly.
 *
 * Linear cost: a blank run is read once per occurrence of the word before it. Every blank run
 * is followed by a character it cannot contain (PCRE2 then never gives blanks back), except in
 * two places, written so that it does not matter:
 *   - group 5 is "answer", then optional "blanks + ':'", "blanks + '**'", "blanks + ':'", then
 *     blanks or CRs to the end of the line. It was four optional blank runs in a row,
 *     "[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t\r]*$", which tried every way of splitting a
 *     blank run in four: "Answer" and 3,000 blanks exceeded PCRE2's match limit and aborted the
 *     whole run. Same language, same match;
 *   - the content of \boxed{} (group 2) starts with a non-blank or is empty, as the blanks
 *     before it are taken first: then giving blanks back cannot start it again further left
 *     ("\boxed{" + blanks + "{" re-read the blanks once per blank).
 * Both were checked against the old pattern on every string of up to 7 characters over
 * " \t:*_\r\nx-" (after "answer") and " {}\\xt\n" (after "\boxed"): same matches and groups.
 * Possessive quantifiers would do the same but make the JIT'd search 20% slower. */
static const char MARKER_RX[] =
    "(?<!\\w)(?:"
    "(\\\\boxed\\s*\\{\\s*(?:\\\\(?:text|textbf|mathrm|mathbf)\\s*\\{\\s*)?((?:[^{}\\s][^{}]*)?)\\})"
    "|((?:\\*\\*|__)?(?:(?:the|my|our)\\s+)?(?:(?:final|correct)\\s+)?answer(?:\\*\\*|__)?[ \\t]*"
    "[:\xef\xbc\x9a])"
    "|(the\\s+(?:(?:final|correct)\\s+)?answer\\s+is(?:\\b|(?=n(?:'|`|\xe2\x80\x99)?t\\b))[ \\t]*:?)"
    "|((?:\\#{1,6}[ \\t]*)?(?:\\*\\*|__)?(?:final[ \\t]+)?answer(?:[ \\t]*:)?(?:[ \\t]*(?:\\*\\*|__))?"
    "(?:[ \\t]*:)?[ \\t\\r]*$)"
    "|((?:\\#{1,6}[ \\t]*)?(?:\\*\\*|__)?(?:final[ \\t]+)?answer(?:\\*\\*|__)?[ \\t]*"
    "(?:-|\xe2\x80\x93|\xe2\x80\x94)[ \\t]*)"
    ")";

enum { G_BOXED = 1, G_BOXED_IN = 2, G_COLON = 3, G_IS = 4, G_HEAD = 5, G_DASH = 6 };

struct tl_letter {
  tl_rx *marker;
  locale_t loc; /* C.UTF-8, for Unicode case folding and \w classification (never (locale_t)0) */
};

tl_letter *tl_letter_new(tl_err *err) {
  tl_letter *s = calloc(1, sizeof *s);
  if (!s) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  /* Without C.UTF-8 every non-ASCII letter would be a separator: "Crème" would normalize to
   * "cr me". That changes results, so it is an error, never a silent fallback. */
  errno = 0;
  s->loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  if (s->loc == (locale_t)0) {
    int e = errno;
    free(s);
    tl_err_set(err, TL_EINTERNAL, "the C.UTF-8 locale is not available: %s",
               e ? strerror(e) : "newlocale failed");
    return NULL;
  }
  s->marker = tl_rx_compile(MARKER_RX, TL_RX_I | TL_RX_M, err);
  if (!s->marker) {
    freelocale(s->loc);
    free(s);
    return NULL;
  }
  return s;
}

void tl_letter_free(tl_letter *s) {
  if (!s) return;
  tl_rx_free(s->marker);
  freelocale(s->loc);
  free(s);
}

/* ---- a byte buffer with inline storage (no heap traffic for the usual short spans) ---------- */

typedef struct {
  char *p;
  size_t len, cap;
  char inl[512];
} nbuf;

static void nb_init(nbuf *b) {
  b->p = b->inl;
  b->len = 0;
  b->cap = sizeof b->inl;
  b->p[0] = 0;
}

static void nb_free(nbuf *b) {
  if (b->p != b->inl) free(b->p);
  nb_init(b);
}

/* Makes room for `extra` more bytes plus the NUL. 0 = ok, -1 = out of memory. */
static int nb_reserve(nbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t nc = b->cap * 2;
  while (nc < b->len + extra + 1) nc *= 2;
  char *np;
  if (b->p == b->inl) {
    np = malloc(nc);
    if (np) memcpy(np, b->inl, b->len + 1);
  } else {
    np = realloc(b->p, nc);
  }
  if (!np) return -1;
  b->p = np;
  b->cap = nc;
  return 0;
}

static int nb_append(nbuf *b, const char *s, size_t n) {
  if (nb_reserve(b, n)) return -1;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
  return 0;
}

/* ---- normalization ---------------------------------------------------------------------------
 * norm(x): case-folded (simple lower-casing, C.UTF-8); apostrophe-like characters ' ’ ‘ ` ʼ ´ ′
 * deleted (so "Narwhal’s" == "Narwhal's" == "Narwhals"); every other non-alphanumeric run
 * (punctuation, markdown, quotes, whitespace) becomes one space; no leading/trailing space. The
 * result is alphanumeric words separated by single spaces, so "word boundary" is simply "start,
 * end or a space". */

static int is_apostrophe(uint32_t cp) {
  return cp == 0x27 || cp == 0x60 || cp == 0xB4 || cp == 0x2BC || cp == 0x2018 || cp == 0x2019 ||
         cp == 0x2032;
}

/* Scripts with case (Latin, Greek, Cyrillic, Armenian, Georgian, extended Latin/Greek, Glagolitic,
 * Cyrillic/Latin extensions, full-width Latin, Deseret...): only those need towlower. */
static int may_have_case(uint32_t cp) {
  return cp < 0x590 || (cp >= 0x10A0 && cp <= 0x10FF) || (cp >= 0x1E00 && cp <= 0x1FFF) ||
         (cp >= 0x2C00 && cp <= 0x2C7F) || (cp >= 0xA640 && cp <= 0xA7FF) ||
         (cp >= 0xFF21 && cp <= 0xFF3A) || (cp >= 0x10400 && cp <= 0x1044F);
}

/* One normalizer for spans and for clause indexes. It runs over raw text from a state (a
 * pending separator, and how many bytes it has written), so that it can continue where it
 * stopped: normalizing [x, E) from x in one go or in pieces gives the same bytes. `o` NULL only
 * counts. Each input byte yields at most one output byte plus a separator, except a 2-byte
 * character whose lower case takes 3 bytes: 2n bytes of room always suffice. */
typedef struct {
  int pending;  /* a separator was read since the last alphanumeric */
  size_t out;   /* bytes written so far (a pending separator not counted) */
} nstate;

static void norm_run(const tl_letter *S, const char *s, size_t n, nstate *st, char *o) {
  /* Writing or only counting without a branch per byte: when counting, every byte goes to the
   * same scratch byte (adv = 0). */
  char scratch[4];
  size_t adv = o ? 1 : 0;
  char *w = o ? o + st->out : scratch;
  size_t out = st->out;
  int pending_space = st->pending;
  size_t i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    uint32_t cp;
    int alnum;
    if (c < 0x80) { /* ASCII fast path */
      i++;
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) alnum = 1;
      else if (c >= 'A' && c <= 'Z') { c = (unsigned char)(c + 32); alnum = 1; }
      else if (c == '\'' || c == '`') continue; /* apostrophes vanish */
      else alnum = 0;
      if (!alnum) {
        pending_space = 1;
        continue;
      }
      if (pending_space && out > 0) {
        *w = ' ';
        w += adv;
        out++;
      }
      pending_space = 0;
      *w = (char)c;
      w += adv;
      out++;
      continue;
    }
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k) k = 1; /* malformed byte: a separator */
    i += k;
    if (is_apostrophe(cp)) continue;
    if (cp != 0xFFFD) {
      alnum = iswalnum_l((wint_t)cp, S->loc) != 0;
      if (alnum && may_have_case(cp)) cp = (uint32_t)towlower_l((wint_t)cp, S->loc);
    } else {
      alnum = 0;
    }
    if (!alnum) {
      pending_space = 1;
      continue;
    }
    if (pending_space && out > 0) {
      *w = ' ';
      w += adv;
      out++;
    }
    pending_space = 0;
    char u[4];
    size_t ul;
    if (cp < 0x80) { u[0] = (char)cp; ul = 1; }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F)); ul = 2; }
    else if (cp < 0x10000) {
      u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
      u[2] = (char)(0x80 | (cp & 0x3F)); ul = 3;
    } else {
      u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
      u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); ul = 4;
    }
    memcpy(w, u, ul);
    w += adv * ul;
    out += ul;
  }
  st->out = out;
  st->pending = pending_space;
}

/* Appends norm(s[0..n)) to b (a fresh normalization: no separator before its first word). */
static int norm_append(const tl_letter *S, nbuf *b, const char *s, size_t n) {
  if (nb_reserve(b, 2 * n + 4)) return -1;
  nstate st = {0, 0};
  norm_run(S, s, n, &st, b->p + b->len);
  b->len += st.out;
  b->p[b->len] = 0;
  return 0;
}

/* ---- per-call context ---------------------------------------------------------------------- */

/* Index of one clause, for answering many "options named in s[x..E)" queries with the same
 * clause end E (a runaway "the answer is the answer is ..." puts thousands of markers in one
 * clause, whose spans all run to E). See "the clause index" below. */
typedef struct {
  int on;
  const char *raw;      /* the text the clause belongs to */
  size_t E;             /* raw clause end */
  nbuf z;               /* Z = norm(raw[x0..E)), x0 = the first query's start */
  size_t cur;           /* raw position the cursor stands at (>= x0) */
  nstate cst;           /* normalizer state after raw[x0..cur): cst.out = N(cur) */
  size_t lu[TL_LETTER_MAX]; /* 1 + start of the last uncovered occurrence of option i in Z */
  size_t lb[TL_LETTER_MAX]; /* 1 + start of the last one with a negated copula after it */
  size_t *ev;           /* valid negation events in Z: start, end pairs, by start */
  size_t nev, evcap;
} cidx;

typedef struct {
  const tl_letter *S;
  int n;                            /* option count */
  size_t off[TL_LETTER_MAX];    /* normalized option i = opts.p + off[i] (NUL-terminated) */
  size_t olen[TL_LETTER_MAX];
  size_t lmax;                      /* the longest normalized option text */
  nbuf opts;                        /* normalized option texts */
  nbuf span;                        /* scratch: the normalized span being resolved */
  const char *sp;                   /* the normalized span of the last names query ... */
  size_t spl;                       /* ... and its length (in span or in idx.z) */
  /* the last names query (a second identical query is answered from here) */
  int q_on;
  const char *q_raw;
  size_t q_x, q_E;
  unsigned q_mask, q_neg;
  cidx idx;
  /* the last clause_end() result: clause_end(ce_s, ce_n, ce_from) == ce_end */
  int ce_on;
  const char *ce_s;
  size_t ce_n, ce_from, ce_end;
} ctx;

static int at_boundary(const char *s, size_t sl, size_t pos, size_t len) {
  return (pos == 0 || s[pos - 1] == ' ') && (pos + len == sl || s[pos + len] == ' ');
}

/* Is the occurrence [a, a+la) of option i inside a word-bounded occurrence of a LONGER option
 * text? (Longest match wins: "Ice Queen Ice Cream" does not also name "Ice Cream".) Only the
 * positions that could hold such an occurrence are tried: constant work per occurrence. */
static int covered(const ctx *c, const char *s, size_t sl, int i, size_t a) {
  size_t b = a + c->olen[i];
  for (int j = 0; j < c->n; j++) {
    size_t lj = c->olen[j];
    if (j == i || lj <= c->olen[i] || lj > sl) continue;
    const char *oj = c->opts.p + c->off[j];
    size_t from = b >= lj ? b - lj : 0;
    for (size_t p = from; p <= a && p + lj <= sl; p++)
      if (at_boundary(s, sl, p, lj) && memcmp(s + p, oj, lj) == 0) return 1;
  }
  return 0;
}

/* ---- negation --------------------------------------------------------------------------------
 * An option named in a clause is NEGATED when (a) a negation word or phrase stands anywhere
 * before it in the clause ("It is not Southeast", "anything but Southeast", "The answer isnt
 * Southeast", "X is not northeast but southeast"), or (b) it is the subject of a negated copula
 * right after it ("Southeast is wrong", "Southeast is not correct", "Southeast would be the wrong
 * answer", "Southeast isn't it"). Words inside an option's own name never count ("Not Just
 * Noodles"). Word lists work on normalized text, where apostrophes are deleted ("isn't" is
 * "isnt"). "no" is no negation word: "No" is a Yes/No option text.
 *
 * (a) is read once per span, not once per occurrence: a negation event is a NEG_PRE word or a
 * NEG_PRE2 phrase at a word start; it is valid when it lies inside no word-bounded occurrence
 * of an option text. An occurrence at a is negated by (a) exactly when some valid event ends at
 * or before a, i.e. when the first valid event of the span ends at or before a (events do not
 * overlap, so the first one ends first). Reading every word before every occurrence was
 * quadratic: "A. " + "Yucca Yoga " * 4000 took 4 s. */

static const char *const NEG_PRE[] = {
    "not",   "never",  "cannot", "neither", "nor",    "but",    "except", "excluding",
    "wrong", "incorrect", "isnt", "arent",  "wasnt",  "werent", "dont",   "doesnt",
    "didnt", "cant",   "couldnt", "wouldnt", "shouldnt", "wont", "aint",  "hasnt",
    "havent", "hadnt", "mustnt", "neednt", NULL};
static const char *const NEG_PRE2[] = {"other than", "rather than", "instead of", NULL};
/* right after the option: a negated copula on its own ("Southeast isnt ...") */
static const char *const NEG_COPULA[] = {"isnt", "wasnt", "arent", "werent", "aint", "cannot",
                                         "cant", "wont", "wouldnt", "shouldnt", "couldnt", NULL};
/* right after the option: a copula or modal, then within 3 words one of NEG_AFTER */
static const char *const COPULA[] = {"is", "was", "are", "were", "seems", "appears", "looks",
                                     "would", "will", "must", "can", "could", "should", "may",
                                     "might", NULL};
static const char *const NEG_AFTER[] = {"not", "never", "wrong", "incorrect", NULL};

/* Length of the normalized word at s[p] (up to the next space or sl). */
static size_t word_len(const char *s, size_t sl, size_t p) {
  const char *q = memchr(s + p, ' ', sl - p);
  return q ? (size_t)(q - s) - p : sl - p;
}

/* Is the word s[p..p+wl) one of `list`? */
static int word_in(const char *s, size_t p, size_t wl, const char *const *list) {
  if (wl == 0) return 0;
  for (int k = 0; list[k]; k++)
    if (list[k][0] == s[p] && strlen(list[k]) == wl && memcmp(s + p, list[k], wl) == 0) return 1;
  return 0;
}

/* Does s[p..p+wl) lie inside a word-bounded occurrence of some option text? Such an occurrence
 * starts in [p + wl - lj, p]: only those positions are tried. */
static int inside_option(const ctx *c, const char *s, size_t sl, size_t p, size_t wl) {
  for (int j = 0; j < c->n; j++) {
    size_t lj = c->olen[j];
    if (lj == 0 || lj > sl || lj < wl) continue;
    const char *oj = c->opts.p + c->off[j];
    for (size_t a = p + wl >= lj ? p + wl - lj : 0; a <= p; a++)
      if (a + lj <= sl && at_boundary(s, sl, a, lj) && memcmp(s + a, oj, lj) == 0) return 1;
  }
  return 0;
}

/* The negation event at word start p of s[0..sl): its length (a NEG_PRE word or a NEG_PRE2
 * phrase ending at a word boundary), 0 when there is none. *wl gets the word's length. */
static size_t neg_event(const char *s, size_t sl, size_t p, size_t *wl) {
  *wl = word_len(s, sl, p);
  if (word_in(s, p, *wl, NEG_PRE)) return *wl;
  for (int k = 0; NEG_PRE2[k]; k++) {
    if (p >= sl || NEG_PRE2[k][0] != s[p]) continue;
    size_t kl = strlen(NEG_PRE2[k]);
    if (p + kl <= sl && memcmp(s + p, NEG_PRE2[k], kl) == 0 && (p + kl == sl || s[p + kl] == ' '))
      return kl;
  }
  return 0;
}

#define NO_NEG ((size_t)-1)

/* End of the first valid negation event of s[0..sl) that starts before p_hi, or NO_NEG. */
static size_t first_neg_end(const ctx *c, const char *s, size_t sl, size_t p_hi) {
  for (size_t p = 0; p < sl && p < p_hi;) {
    size_t wl, hl = neg_event(s, sl, p, &wl);
    if (hl && !inside_option(c, s, sl, p, hl)) return p + hl;
    p += wl + 1;
  }
  return NO_NEG;
}

/* (b): is the option occurrence ending at b followed by a negated copula? */
static int copula_negated(const char *s, size_t sl, size_t b) {
  if (b >= sl) return 0;
  size_t p = b + 1, wl = word_len(s, sl, p);
  if (word_in(s, p, wl, NEG_COPULA)) return 1;
  if (!word_in(s, p, wl, COPULA)) return 0;
  p += wl + 1;
  for (int k = 0; k < 3 && p < sl; k++) {
    wl = word_len(s, sl, p);
    if (word_in(s, p, wl, NEG_AFTER) || word_in(s, p, wl, NEG_COPULA)) return 1;
    p += wl + 1;
  }
  return 0;
}

/* Occurrences of option i in s[0..sl) that start in [lo, hi), word-bounded and not covered by a
 * longer option: bit i of *mask; bit i of *neg when one of them is negated (fne: the span's
 * first valid negation end, computed on demand through *fne_known). Linear in hi - lo + li. */
static void scan_option(const ctx *c, const char *s, size_t sl, int i, size_t lo, size_t hi,
                        size_t *fne, int *fne_known, unsigned *mask, unsigned *neg) {
  size_t li = c->olen[i];
  if (li == 0 || li > sl || lo > sl - li || hi <= lo) return;
  const char *oi = c->opts.p + c->off[i];
  size_t end = hi - 1 + li < sl ? hi - 1 + li : sl; /* occurrences must start before hi */
  for (size_t a = lo; a + li <= end;) {
    const char *h = memmem(s + a, end - a, oi, li);
    if (!h) break;
    a = (size_t)(h - s);
    if (at_boundary(s, sl, a, li) && !covered(c, s, sl, i, a)) {
      *mask |= 1u << i;
      if (copula_negated(s, sl, a + li)) {
        *neg |= 1u << i;
        return;
      }
      if (!*fne_known) {
        *fne = first_neg_end(c, s, sl, sl);
        *fne_known = 1;
      }
      if (*fne <= a) {
        *neg |= 1u << i;
        return;
      }
    }
    a++;
  }
}

/* Bit i set when the normalized span s names option i (a word-bounded occurrence of its
 * normalized text that no longer option text covers). *neg gets bit i when an occurrence of
 * option i is negated. Linear in sl for a fixed item. */
static unsigned names(const ctx *c, const char *s, size_t sl, unsigned *neg) {
  unsigned mask = 0, ng = 0;
  size_t fne = NO_NEG;
  int known = 0;
  for (int i = 0; i < c->n; i++) scan_option(c, s, sl, i, 0, sl, &fne, &known, &mask, &ng);
  *neg = ng;
  return mask;
}

/* ---- the clause index -------------------------------------------------------------------------
 * names() of a span costs its length, and the spans of markers in one clause all run to the
 * clause end E: thousands of markers in one long clause made the parse quadratic. From the
 * second query on a clause, the clause is normalized once from the query's start x0 into Z,
 * and each query s[x..E) (x >= the previous query's x) is answered in time independent of E - x:
 *   - norm(s[x..E)) is exactly Z from N(x) on (N(x): bytes the normalizer wrote before x), with
 *     a leading space dropped; the cursor advances N() as x grows, each byte once;
 *   - whether an occurrence in the span is word-bounded and uncovered, and whether a negation
 *     event is valid, depends only on the span around it. Beyond the first D = lmax + 2 bytes of
 *     the span it is the same as in Z, which the build recorded: per option the last uncovered
 *     occurrence, the last one with a negated copula after it, and the valid events. The first
 *     D bytes are read again for each query (constant work).
 * The result equals names(norm(s[x..E))) bit for bit. */

static void cidx_free(cidx *x) {
  nb_free(&x->z);
  free(x->ev);
  x->ev = NULL;
  x->nev = x->evcap = 0;
  x->on = 0;
}

/* Builds the index of raw[x..E). -1 = out of memory. */
static int cidx_build(ctx *c, const char *raw, size_t x, size_t E) {
  cidx *ix = &c->idx;
  ix->on = 0;
  ix->z.len = 0;
  ix->nev = 0;
  if (nb_reserve(&ix->z, 2 * (E - x) + 4)) return -1;
  nstate st = {0, 0};
  norm_run(c->S, raw + x, E - x, &st, ix->z.p);
  ix->z.len = st.out;
  ix->z.p[st.out] = 0;
  const char *z = ix->z.p;
  size_t zl = ix->z.len;
  for (int i = 0; i < c->n; i++) {
    ix->lu[i] = ix->lb[i] = 0;
    size_t li = c->olen[i];
    if (li == 0 || li > zl) continue;
    const char *oi = c->opts.p + c->off[i];
    for (size_t a = 0; a + li <= zl;) {
      const char *h = memmem(z + a, zl - a, oi, li);
      if (!h) break;
      a = (size_t)(h - z);
      if (at_boundary(z, zl, a, li) && !covered(c, z, zl, i, a)) {
        ix->lu[i] = a + 1;
        if (copula_negated(z, zl, a + li)) ix->lb[i] = a + 1;
      }
      a++;
    }
  }
  for (size_t p = 0; p < zl;) {
    size_t wl, hl = neg_event(z, zl, p, &wl);
    if (hl && !inside_option(c, z, zl, p, hl)) {
      if (ix->nev == ix->evcap) {
        size_t nc = ix->evcap ? 2 * ix->evcap : 64;
        size_t *ne = realloc(ix->ev, 2 * nc * sizeof *ne);
        if (!ne) return -1;
        ix->ev = ne;
        ix->evcap = nc;
      }
      ix->ev[2 * ix->nev] = p;
      ix->ev[2 * ix->nev + 1] = p + hl;
      ix->nev++;
    }
    p += wl + 1;
  }
  ix->raw = raw;
  ix->E = E;
  ix->cur = x;
  ix->cst.pending = 0;
  ix->cst.out = 0;
  ix->on = 1;
  return 0;
}

/* names() of norm(raw[x..E)) from the index (x >= ix->cur); sets c->sp / c->spl. */
static unsigned cidx_query(ctx *c, size_t x, unsigned *neg) {
  cidx *ix = &c->idx;
  norm_run(c->S, ix->raw + ix->cur, x - ix->cur, &ix->cst, NULL);
  ix->cur = x;
  size_t zl = ix->z.len, s0 = ix->cst.out;
  if (s0 < zl && ix->z.p[s0] == ' ') s0++;
  const char *s = ix->z.p + s0;
  size_t sl = zl - s0, d = c->lmax + 2;
  c->sp = s;
  c->spl = sl;
  /* the span's first valid negation: among its first d bytes, read directly; beyond, from Z */
  size_t fne = first_neg_end(c, s, sl, d);
  if (fne == NO_NEG) {
    size_t lo = 0, hi = ix->nev; /* first event starting at or after s0 + d */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ix->ev[2 * mid] < s0 + d) lo = mid + 1;
      else hi = mid;
    }
    if (lo < ix->nev) fne = ix->ev[2 * lo + 1] - s0;
  }
  unsigned mask = 0, ng = 0;
  int known = 1;
  size_t far = s0 + d; /* occurrences starting here or later: as in Z */
  for (int i = 0; i < c->n; i++) {
    scan_option(c, s, sl, i, 0, d, &fne, &known, &mask, &ng);
    if (ix->lu[i] && ix->lu[i] - 1 >= far) {
      mask |= 1u << i;
      if ((ix->lb[i] && ix->lb[i] - 1 >= far) ||
          (fne != NO_NEG && ix->lu[i] - 1 >= s0 + fne))
        ng |= 1u << i;
    }
  }
  *neg = ng;
  return mask;
}

/* The options named in the span s[x..E) after normalization (*neg: those negated), with
 * c->sp / c->spl set to the normalized span; -1 on out of memory. A repeated query is answered
 * from the last result; queries that move forward through one long clause use the index. */
#ifndef STRICT_INDEX_MIN
#define STRICT_INDEX_MIN 256 /* shorter spans are normalized directly */
#endif
#ifndef STRICT_INDEX_ALWAYS
#define STRICT_INDEX_ALWAYS 0 /* 1: index from the first query on (to test the index) */
#endif
static long span_names(ctx *c, const char *raw, size_t x, size_t E, unsigned *neg) {
  if (c->q_on && c->q_raw == raw && c->q_x == x && c->q_E == E) {
    *neg = c->q_neg;
    return (long)c->q_mask;
  }
  unsigned m;
  if (c->idx.on && c->idx.raw == raw && c->idx.E == E && x >= c->idx.cur) {
    m = cidx_query(c, x, neg);
  } else if (c->lmax > 0 && E - x >= STRICT_INDEX_MIN &&
             ((c->q_on && c->q_raw == raw && c->q_E == E && x > c->q_x) || STRICT_INDEX_ALWAYS)) {
    if (cidx_build(c, raw, x, E)) return -1;
    m = cidx_query(c, x, neg);
  } else {
    c->span.len = 0;
    c->span.p[0] = 0;
    if (norm_append(c->S, &c->span, raw + x, E - x)) return -1;
    c->sp = c->span.p;
    c->spl = c->span.len;
    m = names(c, c->span.p, c->span.len, neg);
  }
  c->q_on = 1;
  c->q_raw = raw;
  c->q_x = x;
  c->q_E = E;
  c->q_mask = m;
  c->q_neg = *neg;
  return (long)m;
}

/* Does the normalized span of the last names query start with an option's text ("Not Just
 * Noodles")? */
static int span_starts_with_option(const ctx *c) {
  for (int i = 0; i < c->n; i++) {
    size_t li = c->olen[i];
    if (li && li <= c->spl && memcmp(c->sp, c->opts.p + c->off[i], li) == 0 &&
        at_boundary(c->sp, c->spl, 0, li))
      return 1;
  }
  return 0;
}

static int popcount8(unsigned m) {
  int k = 0;
  for (; m; m &= m - 1) k++;
  return k;
}

static int lowest_bit(unsigned m) {
  int i = 0;
  while (!(m & 1u)) {
    m >>= 1;
    i++;
  }
  return i;
}

/* ---- scanning helpers ---------------------------------------------------------------------- */

static int is_hspace(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }
static int is_space(char ch) { return is_hspace(ch) || ch == '\n' || ch == '\f' || ch == '\v'; }
static int is_ascii_alnum(char ch) {
  return (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}
static int ci_prefix(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++)
    if ((s[i] | 32) != w[i]) return 0;
  return 1;
}

/* Closing characters allowed between a sentence end and the whitespace after it: quotes,
 * brackets, markdown. Returns their byte length at s (0 when none). */
static size_t closer_len(const char *s, size_t n) {
  if (n >= 1 && (s[0] == '"' || s[0] == '\'' || s[0] == ')' || s[0] == ']' || s[0] == '*' ||
                 s[0] == '_' || s[0] == '`'))
    return 1;
  if (n >= 3 && (unsigned char)s[0] == 0xE2 && (unsigned char)s[1] == 0x80 &&
      ((unsigned char)s[2] == 0x9D || (unsigned char)s[2] == 0x99)) /* ” ’ */
    return 3;
  if (n >= 2 && (unsigned char)s[0] == 0xC2 && (unsigned char)s[1] == 0xBB) return 2; /* » */
  return 0;
}

/* End of the clause that starts at p: the first newline; a '.', '!', '?' or ';' followed
 * (after optional closing quotes/brackets/markdown) by whitespace or the end; or a "Reason:" /
 * "Reasoning:" label (the LETTER prompt's second field). */
/* A "Reason:" / "Reasoning:" label (blanks and markdown before the colon) starts at s[q]; the
 * character before q is not looked at. */
static int reason_label(const char *s, size_t n, size_t q) {
  if ((s[q] | 32) != 'r' || !ci_prefix(s + q, n - q, "reason")) return 0;
  size_t r = q + 6;
  if (ci_prefix(s + r, n - r, "ing")) r += 3;
  while (r < n && (is_hspace(s[r]) || s[r] == '*' || s[r] == '_')) r++;
  return r < n && s[r] == ':';
}

static size_t clause_end(const char *s, size_t n, size_t p) {
  for (size_t q = p; q < n; q++) {
    char ch = s[q];
    if (ch == '\n') return q;
    if (ch == '.' || ch == '!' || ch == '?' || ch == ';') {
      size_t r = q + 1, k;
      while (r < n && (k = closer_len(s + r, n - r)) > 0) r += k;
      if (r == n || is_space(s[r])) return q;
    } else if ((ch | 32) == 'r' && (q == p || !is_ascii_alnum(s[q - 1])) && reason_label(s, n, q)) {
      return q;
    }
  }
  return n;
}

/* clause_end() through a one-entry cache. Every start p in (from, end) of a clause scanned from
 * `from` has the same end, except when a "Reason:" label starts at p itself (a label counts at
 * the start of a span even right after a letter). Markers in one long clause ask from
 * successive starts: each byte is scanned once instead of once per marker. */
static size_t clause_end_c(ctx *c, const char *s, size_t n, size_t p) {
  if (c->ce_on && c->ce_s == s && c->ce_n == n && p >= c->ce_from && p <= c->ce_end) {
    if (p > c->ce_from && p < c->ce_end && reason_label(s, n, p)) return p;
    return c->ce_end;
  }
  c->ce_on = 1;
  c->ce_s = s;
  c->ce_n = n;
  c->ce_from = p;
  c->ce_end = clause_end(s, n, p);
  return c->ce_end;
}

/* Letter head at s[p..]: "B", "(B)", "[B]", "(b)", optionally followed by '.', ')' or ':' and
 * markdown '*' / '_'. Capital letters only unless bracketed ("a" is an English word).
 *   opening = 1 (the bare-letter rule): the letter must be followed by '.', ')', ':', '*', the
 *             end, or only horizontal space up to a newline - "A map shows ..." is no letter.
 *   opening = 0 (after an explicit marker): also whitespace or ',' may follow.
 * A '.' must not be followed by an alphanumeric ("U.S." is no letter). Returns 1 and sets
 * *letter, *after (first byte after the head) and *weak (1 when only whitespace, ',' or '/' follows
 * the bare letter: "Answer: E is below S" - see resolve()) when there is one. */
static int letter_head(const char *s, size_t n, size_t p, int opening, char *letter,
                       size_t *after, int *weak) {
  size_t q = p;
  char open = 0;
  *weak = 0;
  if (q < n && (s[q] == '(' || s[q] == '[')) open = s[q++];
  if (q >= n) return 0;
  char L = s[q];
  int upper = L >= 'A' && L <= 'Z', lower = L >= 'a' && L <= 'z';
  if (!(upper || (open && lower))) return 0;
  q++;
  if (open) {
    if (q >= n || s[q] != (open == '(' ? ')' : ']')) return 0;
    q++;
    if (q < n && is_ascii_alnum(s[q])) return 0;
    if (q < n && (s[q] == '.' || s[q] == ':') && !(q + 1 < n && is_ascii_alnum(s[q + 1]))) q++;
  } else if (q < n) {
    char ch = s[q];
    if (ch == '.' || ch == ')' || ch == ':') {
      if (ch == '.' && q + 1 < n && is_ascii_alnum(s[q + 1])) return 0;
      q++;
    } else if (ch == '*' || ch == '_') {
      /* markdown close: fine */
    } else if (!opening && (is_space(ch) || ch == ',' || ch == '/')) {
      /* "Answer: B because ..." / "Answer: B, Southeast" / "Answer: B/C" (hedged: resolve()) */
      *weak = ch != '\n' && ch != '\r';
    } else if (opening && is_hspace(ch)) {
      size_t r = q;
      while (r < n && is_hspace(s[r])) r++;
      if (r < n && s[r] != '\n') return 0;
    } else if (opening && ch == '\n') {
      /* "B\n..." */
    } else {
      return 0;
    }
  }
  while (q < n && (s[q] == '*' || s[q] == '_')) q++;
  *letter = (char)(upper ? L : L - 32);
  *after = q;
  return 1;
}

/* What a span resolved to. */
enum {
  K_NONE = 0,   /* names nothing: not an answer */
  K_LETTER = 1, /* a letter head */
  K_TEXT = 2,   /* option text only */
  K_NEG = 3     /* a negation: names only options it says are NOT the answer ("not C") */
};
typedef struct {
  int kind;
  tl_pstatus status;
  char letter;
  unsigned negm;  /* K_NEG: the options negated */
  int by_letter;  /* K_NEG: through a letter ("not C"), for the rule name */
} res;

static int word_at(const char *s, size_t n, size_t p, const char *w) {
  size_t k = strlen(w);
  return ci_prefix(s + p, n - p, w) && (p + k == n || !is_ascii_alnum(s[p + k]));
}

/* A negation at the head of a marker's span: "not", "never", "n't" / "n’t" / "nt" (the rest of
 * "isn't" after "the answer is"), "anything but", "anything other than", "everything but", "other than",
 * "rather than", "instead of", "except", "excluding". Returns its byte length (0: none). */
static size_t neg_prefix(const char *s, size_t n, size_t p) {
  static const char *const ONE[] = {"not", "never", "except", "excluding", NULL};
  static const char *const TWO[][3] = {{"anything", "but", NULL},   {"anything", "other", "than"},
                                       {"everything", "but", NULL}, {"other", "than", NULL},
                                       {"rather", "than", NULL},    {"instead", "of", NULL}};
  if (p < n && (s[p] | 32) == 'n') { /* "n't", "n`t", "n’t", "nt" */
    size_t q = p + 1;
    if (q < n && (s[q] == '\'' || s[q] == '`')) q++;
    else if (q + 3 <= n && (unsigned char)s[q] == 0xE2 && (unsigned char)s[q + 1] == 0x80 &&
             (unsigned char)s[q + 2] == 0x99)
      q += 3;
    if (word_at(s, n, q, "t")) return q + 1 - p;
  }
  for (int k = 0; ONE[k]; k++)
    if (word_at(s, n, p, ONE[k])) return strlen(ONE[k]);
  for (size_t k = 0; k < sizeof TWO / sizeof TWO[0]; k++) {
    size_t q = p;
    int w = 0;
    for (; w < 3 && TWO[k][w]; w++) {
      if (w > 0) {
        size_t q0 = q;
        while (q < n && is_hspace(s[q])) q++;
        if (q == q0) break;
      }
      if (!word_at(s, n, q, TWO[k][w])) break;
      q += strlen(TWO[k][w]);
    }
    if (w == 3 || !TWO[k][w]) return q - p;
  }
  return 0;
}

/* Hedged letter: after a letter head ending at q, another option letter of the item, different
 * from L, joined by "or", "and", ',' or '/' within the clause (which ends at e): "C or D",
 * "C, D", "(C) or (D)", "**C** or **D**", "C/D", "C, or maybe D", "C (or possibly D)". Blanks,
 * markdown, an opening bracket and "maybe"/"possibly"/"perhaps" may stand around the joiner. */
static int hedged(const ctx *c, const char *s, size_t e, size_t q, char L) {
  int joined = 0;
  for (;;) {
    while (q < e && (is_hspace(s[q]) || s[q] == '*' || s[q] == '_')) q++;
    if (q >= e) return 0;
    if (s[q] == ',' || s[q] == '/') {
      joined = 1;
      q++;
    } else if ((s[q] == '(' || s[q] == '[') &&
               (word_at(s, e, q + 1, "or") || word_at(s, e, q + 1, "and"))) {
      q++; /* "C (or possibly D)" */
    } else if (word_at(s, e, q, "maybe") || word_at(s, e, q, "possibly") ||
               word_at(s, e, q, "perhaps")) {
      while (q < e && is_ascii_alnum(s[q])) q++;
    } else if (word_at(s, e, q, "or")) {
      joined = 1;
      q += 2;
    } else if (word_at(s, e, q, "and")) {
      joined = 1;
      q += 3;
    } else {
      break;
    }
  }
  char L2;
  size_t a2;
  int w2;
  return joined && letter_head(s, e, q, 0, &L2, &a2, &w2) && L2 != L && L2 - 'A' < c->n;
}

/* Resolves the span that starts at s[p] (the text is s[0..lim)): a letter head (explicit
 * markers, or the bare-letter rule when `opening`) is checked against the option texts in the
 * rest of its clause; without a head (explicit markers only) the clause is resolved by the
 * option texts it names. The clause ends at clause_end() measured AFTER the head, so in
 * "B. Southeast" the "." of the head does not end it. After an explicit marker, a negation at
 * the head of the span ("not C", "never Southeast") or option texts that are all negated in the
 * clause give K_NEG. -1 = out of memory. */
static int resolve(ctx *c, const char *s, size_t lim, size_t p, int opening, res *r) {
  r->kind = K_NONE;
  r->status = TL_PS_NO_ANSWER;
  r->letter = 0;
  r->negm = 0;
  r->by_letter = 0;
  char L;
  size_t after;
  int weak;
  unsigned nm;
  size_t q = p, ng = opening ? 0 : neg_prefix(s, lim, p);
  if (ng) {
    /* "not"/"never" that begins an option's own name ("Not Just Noodles") is no negation */
    if (span_names(c, s, p, clause_end_c(c, s, lim, p), &nm) < 0) return -1;
    if (span_starts_with_option(c)) {
      ng = 0;
    } else {
      q = p + ng;
      while (q < lim && (is_hspace(s[q]) || s[q] == '*' || s[q] == '_' || s[q] == ':')) q++;
    }
  }
  /* A weak head naming a letter the item does not have is read as text, not as out_of_range:
   * "Answer: E is directly below S" (Maze-Nav's S and E) is a sentence, "Answer: E" a letter. */
  if (letter_head(s, lim, q, opening, &L, &after, &weak) && !(weak && L - 'A' >= c->n)) {
    int idx = L - 'A';
    if (ng) { /* "Answer: not C" */
      r->kind = K_NEG;
      r->by_letter = 1;
      if (idx < c->n) r->negm = 1u << idx;
      return 0;
    }
    size_t e = clause_end_c(c, s, lim, after);
    long m = span_names(c, s, after, e, &nm);
    if (m < 0) return -1;
    r->kind = K_LETTER;
    if (idx >= c->n) {
      r->status = TL_PS_OUT_OF_RANGE;
    } else if (hedged(c, s, e, after, L)) {
      r->status = TL_PS_AMBIGUOUS; /* "C or D" */
    } else if (m != 0 && (unsigned long)m != (1ul << idx)) {
      r->status = TL_PS_CONFLICT; /* "D. Southeast" where Southeast is C */
    } else if (nm != 0) {
      r->status = TL_PS_CONFLICT; /* "C. Southeast is wrong" */
    } else {
      r->status = TL_PS_OK;
      r->letter = L;
    }
    return 0;
  }
  if (opening) return 0;
  long m = span_names(c, s, p, clause_end_c(c, s, lim, p), &nm);
  if (m < 0) return -1;
  if (m == 0) return 0;
  if (ng) nm = (unsigned)m; /* "the answer is" + "'t Southeast": the prefix negates the clause */
  if (nm != 0 && nm == (unsigned)m) {
    r->kind = K_NEG;
    r->negm = nm;
    r->status = popcount8(nm) > 1 ? TL_PS_AMBIGUOUS : TL_PS_NO_ANSWER;
    return 0;
  }
  r->kind = K_TEXT;
  if (popcount8((unsigned)m) > 1) {
    r->status = TL_PS_AMBIGUOUS; /* also "Southeast, not Northeast": one named, one negated */
  } else {
    r->status = TL_PS_OK;
    r->letter = (char)('A' + lowest_bit((unsigned)m));
  }
  return 0;
}

/* An echoed option list: the opening letter head at s[p] (letter L) is followed, on the next
 * non-blank line, by the next option letter ("A. Dune Donuts\nB. Willow Woodworks\n..."). */
static int echoed_list(const ctx *c, const char *s, size_t n, size_t p, char L) {
  const char *nl = memchr(s + p, '\n', n - p);
  if (!nl) return 0;
  size_t q = (size_t)(nl - s);
  while (q < n && (is_space(s[q]) || s[q] == '*' || s[q] == '_' || s[q] == '#' || s[q] == '-' ||
                   s[q] == '>'))
    q++;
  char L2;
  size_t a;
  int w;
  return letter_head(s, n, q, 1, &L2, &a, &w) && L2 == L + 1 && L2 - 'A' < c->n;
}

/* Where the span after an explicit marker that ended at p starts: skip blanks and markdown;
 * when the rest of the marker's line is empty, the span is the next non-blank line; a leading
 * "option " / "choice " is skipped. Returns 0 when there is no span: end of text or a template
 * placeholder "<...>" (the LETTER prompt's "Answer: <A single letter option ...>"). Negations
 * ("the answer is not C") are spans: resolve() reads them as K_NEG. */
static int marker_span(const char *s, size_t n, size_t p, size_t *sp) {
  while (p < n && (is_hspace(s[p]) || s[p] == '*' || s[p] == '_')) p++;
  if (p < n && s[p] == '\n')
    while (p < n && (is_space(s[p]) || s[p] == '*' || s[p] == '_')) p++;
  if (p >= n) return 0;
  if (s[p] == '<') return 0;
  if ((ci_prefix(s + p, n - p, "option") || ci_prefix(s + p, n - p, "choice")) && p + 6 < n &&
      is_hspace(s[p + 6])) {
    p += 6;
    while (p < n && is_hspace(s[p])) p++;
  }
  *sp = p;
  return 1;
}

/* A bare "Answer:" (no "the"/"final"/"correct", no markdown bold) counts only where a label
 * can stand: at the start of a line (after blanks, list bullets, '>' quotes, '#' and markdown
 * emphasis) or after a sentence end. So "To answer: first locate X" is prose, not a marker.
 * m0 is where the colon-form match starts. */
static int label_position(const char *s, size_t m0) {
  if (s[m0] == '*' || s[m0] == '_') return 1; /* **Answer:** / __Answer:__ */
  if ((s[m0] | 32) != 'a') return 1; /* "the ..." / "final ..." / "correct ..." qualifier */
  size_t q = m0;
  while (q > 0) {
    char ch = s[q - 1];
    if (ch == '\n') return 1;
    if (is_hspace(ch) || ch == '*' || ch == '_' || ch == '#' || ch == '>' || ch == '-' ||
        ch == '"' || ch == '\'' || ch == '(' || ch == '[')
      q--;
    else
      return ch == '.' || ch == '!' || ch == '?' || ch == ';' || ch == ')' || ch == ']';
  }
  return 1;
}

/* Only blanks between the start of the line and s[m0]. */
static int line_start(const char *s, size_t m0) {
  while (m0 > 0 && is_hspace(s[m0 - 1])) m0--;
  return m0 == 0 || s[m0 - 1] == '\n';
}

/* 1 when s[0..n) is all ASCII (8 bytes a step). */
static int all_ascii(const char *s, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    acc |= w;
  }
  for (; i < n; i++) acc |= (unsigned char)s[i];
  return (acc & 0x8080808080808080ULL) == 0;
}

/* The start of the first "answer" or "boxed" (any case) at or after `from` in s[0..n), n + 1
 * when there is none: found through each word's rarest letter ('w' of answer, 'x' of boxed,
 * in either case) with memchr, which scans many bytes a step, and checked around each hit;
 * the same as testing every position. */
static size_t next_marker_word(const char *s, size_t n, size_t from) {
  static const struct {
    char key;
    size_t at;
    const char *w;
  } K[4] = {{'w', 3, "answer"}, {'W', 3, "answer"}, {'x', 2, "boxed"}, {'X', 2, "boxed"}};
  size_t best = n + 1;
  for (int k = 0; k < 4; k++) {
    const char *end = s + (best <= n ? best + K[k].at : n); /* only hits before the best so far */
    if (end > s + n) end = s + n;
    if (from + K[k].at >= n) continue;
    const char *p = s + from + K[k].at;
    while (p < end && (p = memchr(p, K[k].key, (size_t)(end - p)))) {
      size_t i = (size_t)(p - s) - K[k].at;
      if (ci_prefix(s + i, n - i, K[k].w)) {
        best = i;
        break;
      }
      p++;
    }
  }
  return best;
}

/* Every marker contains "answer" or "boxed" (any case): without either, the marker pattern
 * cannot match and the search is skipped (most short answers). */
static int may_have_marker(const char *s, size_t n) { return next_marker_word(s, n, 0) <= n; }

/* A character that may stand in a marker before its "answer" or "boxed": blanks, the letters
 * of the|my|our|final|correct, '*', '_', '#' and the backslash of \boxed (MARKER_RX). */
static int marker_prefix_char(char ch) {
  switch (ch | 32) {
  case 't': case 'h': case 'e': case 'm': case 'y': case 'o': case 'u': case 'r': case 'f':
  case 'i': case 'n': case 'a': case 'l': case 'c':
    return is_ascii_alnum(ch);
  default:
    return is_space(ch) || ch == '*' || ch == '_' || ch == '#' || ch == '\\';
  }
}

/* Where the marker search of an ASCII text may start instead of `from`, with the same first
 * match; n + 1 when no match is possible. Every match contains "answer" or "boxed" after its
 * start, with only marker_prefix_char characters between its start and the first such word
 * (whose 's', 'w', 'b', 'x', 'd' are not among them, so a match through a later word starts
 * after this one): the leftmost match at or after `from` starts at or after the run of those
 * characters that ends at the first word. In an ASCII text (no Unicode case folding, no
 * Unicode blanks) that holds for the UTF + UCP caseless pattern as for ASCII. Skipping the
 * text before the run is most of the search in a long answer. */
static size_t marker_from(const char *s, size_t n, size_t from) {
  size_t q = next_marker_word(s, n, from);
  if (q > n) return n + 1;
  while (q > from && marker_prefix_char(s[q - 1])) q--;
  return q;
}

static int g_full_search; /* tl_letter_test_full_search */
void tl_letter_test_full_search(int on) { g_full_search = on; }

/* ---- the parser ------------------------------------------------------------------------------ */

static void finish(const char *gold, tl_pstatus st, const char *rule, char letter,
                   tl_parsed *out) {
  out->status = st;
  out->rule = rule;
  if (st == TL_PS_OK) {
    out->answer = malloc(2);
    if (out->answer) {
      out->answer[0] = letter;
      out->answer[1] = 0;
    }
    const char *o = gold;
    out->correct = (o && o[0] == letter && o[1] == 0) ? 1 : 0;
  }
}

tl_status tl_letter_parse(const tl_letter *S, int n_options, const char *const *opt_text, const char *gold,
                          const char *response, tl_parsed *out) {
  free(out->answer);
  tl_parsed_init(out);
  if (!response) {
    out->status = TL_PS_MISSING;
    return TL_OK;
  }
  if (n_options <= 0) {
    finish(gold, TL_PS_NO_OPTIONS, "no_options", 0, out);
    return TL_OK;
  }

  ctx c;
  c.S = S;
  c.n = n_options > TL_LETTER_MAX ? TL_LETTER_MAX : n_options;
  nb_init(&c.opts);
  nb_init(&c.span);
  c.sp = c.span.p;
  c.spl = 0;
  c.lmax = 0;
  c.q_on = 0;
  c.ce_on = 0;
  c.idx.on = 0; /* the rest of the index is set when it is built */
  c.idx.ev = NULL;
  c.idx.nev = c.idx.evcap = 0;
  nb_init(&c.idx.z);
  tl_buf vis; /* the visible text when reasoning blocks split it (tally/think.h) */
  tl_buf_init(&vis);
  tl_status ret = TL_OK;

  for (int i = 0; i < c.n; i++) {
    c.off[i] = c.opts.len;
    const char *t = opt_text[i] ? opt_text[i] : "";
    if (norm_append(S, &c.opts, t, strlen(t)) || nb_append(&c.opts, "", 1)) goto oom;
    c.olen[i] = c.opts.len - 1 - c.off[i];
    if (c.olen[i] > c.lmax) c.lmax = c.olen[i];
  }

  const char *v;
  size_t vl;
  int th = tl_think_strip(response, strlen(response), &vis, &v, &vl);
  if (th == TL_THINK_NOMEM) goto oom;
  if (th == TL_THINK_UNTERMINATED) {
    finish(gold, TL_PS_UNTERMINATED, "unterminated_think", 0, out);
    goto done;
  }

  /* 1. Explicit answers: the last one that names anything wins. A negated one ("the answer is
   * not C") decides nothing itself, but it retracts an earlier answer naming an option it
   * negates, and when no explicit answer is left it ends the extraction with no answer: the
   * weaker rules below must not pick the option that the response just ruled out. */
  res best = {K_NONE, TL_PS_NO_ANSWER, 0, 0, 0}, neg = best;
  const char *best_rule = NULL, *neg_rule = NULL;
  const int ascii = !g_full_search && all_ascii(v, vl);
  size_t from = ascii || may_have_marker(v, vl) ? 0 : vl + 1; /* no "answer"/"boxed": skip the regex */
  tl_rx_match m;
  while (from <= vl) {
    if (ascii && (from = marker_from(v, vl, from)) > vl) break;
    int rc = tl_rx_search(S->marker, v, vl, from, &m);
    if (rc == TL_RX_LIMIT) { /* a status, never an error: the run goes on */
      finish(gold, TL_PS_PARSE_LIMIT, "parse_limit", 0, out);
      goto done;
    }
    if (rc < 0) {
      ret = TL_EREGEX;
      goto done;
    }
    if (rc == 0) break;
    size_t sp = 0, lim = vl;
    int have;
    const char *rule_l = "explicit_answer_letter", *rule_t = "explicit_answer_text";
    if (tl_rx_has(&m, G_BOXED)) {
      sp = m.start[G_BOXED_IN];
      lim = m.end[G_BOXED_IN];
      while (sp < lim && is_space(v[sp])) sp++;
      have = sp < lim;
      rule_l = rule_t = "boxed";
    } else if (tl_rx_has(&m, G_COLON) && !label_position(v, m.start[G_COLON])) {
      have = 0;
    } else if ((tl_rx_has(&m, G_HEAD) || tl_rx_has(&m, G_DASH)) && !line_start(v, m.start[0])) {
      have = 0;
    } else {
      have = marker_span(v, vl, m.end[0], &sp);
    }
    if (have) {
      res r;
      if (resolve(&c, v, lim, sp, 0, &r)) goto oom;
      if (r.kind == K_NEG) {
        if (best.kind && best.status == TL_PS_OK && ((r.negm >> (best.letter - 'A')) & 1u))
          best.kind = K_NONE; /* "Answer: C ... the answer is not C" */
        neg = r;
        neg_rule = r.by_letter ? rule_l : rule_t;
      } else if (r.kind) {
        best = r;
        best_rule = r.kind == K_LETTER ? rule_l : rule_t;
      }
    }
    from = m.end[0] > m.start[0] ? m.end[0] : m.start[0] + 1;
    if (from > vl) break;
  }
  if (best.kind) {
    finish(gold, best.status, best_rule, best.letter, out);
    goto done;
  }
  if (neg.kind) {
    finish(gold, neg.status, neg_rule, 0, out);
    goto done;
  }

  /* 2. A bare letter opening the response. */
  size_t p = 0;
  while (p < vl && (is_space(v[p]) || v[p] == '*' || v[p] == '_' || v[p] == '#')) p++;
  if (p >= vl) {
    finish(gold, TL_PS_NO_ANSWER, "empty", 0, out);
    goto done;
  }
  {
    /* An echoed option list ("A. Northeast\nB. Northwest\n...") opens with a letter head but
     * chooses nothing; neither this rule nor the first sentence (its first line) decides. */
    char L;
    size_t after;
    int weak;
    if (letter_head(v, vl, p, 1, &L, &after, &weak) && echoed_list(&c, v, vl, p, L)) {
      finish(gold, TL_PS_NO_ANSWER, "none", 0, out);
      goto done;
    }
    res r;
    if (resolve(&c, v, vl, p, 1, &r)) goto oom;
    if (r.kind) {
      finish(gold, r.status, "opening_letter", r.letter, out);
      goto done;
    }
  }

  /* 3. Exactly one option text in the first sentence, not negated there. */
  {
    unsigned nm;
    long mk = span_names(&c, v, p, clause_end_c(&c, v, vl, p), &nm);
    if (mk < 0) goto oom;
    if (mk == 0) finish(gold, TL_PS_NO_ANSWER, "none", 0, out);
    else if (popcount8((unsigned)mk) > 1) finish(gold, TL_PS_AMBIGUOUS, "first_sentence_text", 0, out);
    else if (nm) finish(gold, TL_PS_NO_ANSWER, "first_sentence_text", 0, out); /* "It is not X" */
    else finish(gold, TL_PS_OK, "first_sentence_text", (char)('A' + lowest_bit((unsigned)mk)), out);
  }
  goto done;

oom:
  ret = TL_ENOMEM;
done:
  if (ret == TL_OK && out->status == TL_PS_OK && !out->answer) ret = TL_ENOMEM;
  if (ret != TL_OK) {
    free(out->answer);
    tl_parsed_init(out);
  }
  nb_free(&c.opts);
  nb_free(&c.span);
  cidx_free(&c.idx);
  tl_buf_release(&vis);
  return ret;
}
