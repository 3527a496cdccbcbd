/* mtb_rating.c - MT-Bench-101 judge-rating parsers (mtb_rating.h has the contract and, per mode,
 * its source and divergences).
 *
 * The patterns are the references' patterns with possessive quantifiers where a greedy one could
 * give characters back to a later one. Each rewrite matches the same strings with the same
 * groups, because what follows each possessive run cannot start with a character of that run:
 *   \s*+ before \d or \] or \[ ; \d++ before \s, \], \. ; [*_ \t]*+ before ':' ; [\s*_]*+ before
 *   \[ ; FastChat's (\d+\.?\d*) becomes (\d++(?:\.\d*+)?): the same language (digits, then
 *   optionally '.' and digits), and as the group must be followed by ']' there is one way to
 *   split it. The greedy form was quadratic at one start ("[" + 10^5 digits and no ']').
 * With that, one search costs O(bytes it passes over): a run of blanks or digits is read only by
 * the start right before it. */
#include "mtb_rating.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally/rx.h"
#include "tally/str.h"
#include "tally/think.h"

/* group 1: the label (present: "rating_label"), group 2: the digits */
static const char RX_STRICT[] =
    "(\\brating[*_ \\t]*+:[\\s*_]*+)?\\[\\[\\s*+(\\d++)\\s*+\\]\\]";
static const char RX_OPENCOMPASS[] = "\\[([0-9]++)\\]";
static const char RX_FASTCHAT_DOUBLE[] = "\\[\\[(\\d++(?:\\.\\d*+)?)\\]\\]";
static const char RX_FASTCHAT_SINGLE[] = "\\[(\\d++(?:\\.\\d*+)?)\\]";
static const char RX_JUDGEARENA[] = "\\[\\[(\\d++)\\]\\]";

/* Python's int(str) refuses more digits than this (sys.get_int_max_str_digits() default). */
#define PY_INT_MAX_STR_DIGITS 4300
/* The largest integer whose thousandths fit in int64. */
#define MAX_WHOLE ((uint64_t)(INT64_MAX / TL_MTB_RATING_SCALE))

static const char *const MODE_NAMES[TL_MTB_RATE__COUNT] = {"mtbench101", "mtbench101-opencompass",
                                                           "fastchat", "judgearena"};

struct tl_mtb_rater {
  tl_mtb_rate_mode mode;
  tl_rx *rx[2]; /* FastChat: double, then single bracket; the others: rx[0] */
};

const char *tl_mtb_rate_mode_name(tl_mtb_rate_mode m) {
  return ((int)m >= 0 && m < TL_MTB_RATE__COUNT) ? MODE_NAMES[m] : "unknown";
}

int tl_mtb_rate_mode_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TL_MTB_RATE__COUNT; i++)
    if (strcmp(MODE_NAMES[i], name) == 0) return i;
  return -1;
}

tl_mtb_rater *tl_mtb_rater_new(tl_mtb_rate_mode m, tl_err *err) {
  if ((int)m < 0 || m >= TL_MTB_RATE__COUNT) {
    tl_err_set(err, TL_EUSAGE, "unknown MT-Bench-101 rating mode %d", (int)m);
    return NULL;
  }
  tl_mtb_rater *p = calloc(1, sizeof *p);
  if (!p) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  p->mode = m;
  const char *pat[2] = {NULL, NULL};
  uint32_t flags = 0;
  switch (m) {
  case TL_MTB_RATE_STRICT: pat[0] = RX_STRICT; flags = TL_RX_I; break;
  case TL_MTB_RATE_OPENCOMPASS: pat[0] = RX_OPENCOMPASS; break;
  case TL_MTB_RATE_FASTCHAT: pat[0] = RX_FASTCHAT_DOUBLE; pat[1] = RX_FASTCHAT_SINGLE; break;
  default: pat[0] = RX_JUDGEARENA; break;
  }
  for (int i = 0; i < 2 && pat[i]; i++) {
    if (!(p->rx[i] = tl_rx_compile(pat[i], flags, err))) {
      tl_mtb_rater_free(p);
      return NULL;
    }
  }
  return p;
}

void tl_mtb_rater_free(tl_mtb_rater *p) {
  if (!p) return;
  tl_rx_free(p->rx[0]);
  tl_rx_free(p->rx[1]);
  free(p);
}

tl_mtb_rate_mode tl_mtb_rater_mode(const tl_mtb_rater *p) { return p->mode; }

/* ---- digits ----------------------------------------------------------------------------------
 * The code points of Unicode's decimal digits zero (category Nd comes in runs of ten, 0..9, a
 * stability guarantee): Python 3.11's unicodedata (Unicode 14.0, as PCRE2 10.42), plus Unicode
 * 15.0's Kawi (U+11F50) and Nag Mundari (U+1E4F0). Python's int() takes each Nd character for
 * its value. A \d that PCRE2 knows and this table does not (a PCRE2 on a newer Unicode) has no
 * value here: its match is passed over. */
static const uint32_t ND_ZERO[] = {
    0x30,    0x660,   0x6f0,   0x7c0,   0x966,   0x9e6,   0xa66,   0xae6,   0xb66,   0xbe6,
    0xc66,   0xce6,   0xd66,   0xde6,   0xe50,   0xed0,   0xf20,   0x1040,  0x1090,  0x17e0,
    0x1810,  0x1946,  0x19d0,  0x1a80,  0x1a90,  0x1b50,  0x1bb0,  0x1c40,  0x1c50,  0xa620,
    0xa8d0,  0xa900,  0xa9d0,  0xa9f0,  0xaa50,  0xabf0,  0xff10,  0x104a0, 0x10d30, 0x11066,
    0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0,
    0x11950, 0x11c50, 0x11d50, 0x11da0, 0x11f50, 0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8,
    0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e4f0, 0x1e950, 0x1fbf0};

/* The decimal value of code point cp, -1 when it is no digit the table knows. */
static int digit_value(uint32_t cp) {
  size_t lo = 0, hi = sizeof ND_ZERO / sizeof ND_ZERO[0];
  while (lo < hi) { /* the last zero <= cp */
    size_t mid = lo + (hi - lo) / 2;
    if (ND_ZERO[mid] <= cp) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  uint32_t d = cp - ND_ZERO[lo - 1];
  return d <= 9 ? (int)d : -1;
}

typedef struct {
  size_t ndig;  /* digits (code points), leading zeros included */
  uint64_t val; /* the value, when !big */
  int big;      /* the value exceeds MAX_WHOLE */
  int ascii;    /* every digit is ASCII */
} num;

/* Reads the digit run s[0..n) (PCRE2's \d+ or [0-9]+). 0, or -1 when a digit has no known
 * value. */
static int read_digits(const char *s, size_t n, num *x) {
  x->ndig = 0;
  x->val = 0;
  x->big = 0;
  x->ascii = 1;
  for (size_t i = 0; i < n;) {
    int d;
    unsigned char c = (unsigned char)s[i];
    if (c >= '0' && c <= '9') {
      d = c - '0';
      i++;
    } else {
      uint32_t cp;
      size_t k = tl_utf8_decode(s + i, n - i, &cp);
      if (!k || (d = digit_value(cp)) < 0) return -1;
      i += k;
      x->ascii = 0;
    }
    x->ndig++;
    if (!x->big) {
      if (x->val > (MAX_WHOLE - (uint64_t)d) / 10) x->big = 1;
      else x->val = x->val * 10 + (uint64_t)d;
    }
  }
  return 0;
}

/* ---- results ---------------------------------------------------------------------------------- */

/* Sets the result; the answer is s[a..b) when s is non-NULL. -1 when out of memory. */
static int set(tl_parsed *out, tl_pstatus st, const char *rule, const char *s, size_t a, size_t b,
               int64_t value) {
  out->status = st;
  out->rule = rule;
  out->value = st == TL_PS_OK ? value : 0;
  if (s && !(out->answer = tl_strndup(s + a, b - a))) return -1;
  return 0;
}

/* ---- the modes -------------------------------------------------------------------------------
 * Each returns 0, -1 out of memory, -2 a PCRE2 failure. */

static int rate_strict(const tl_mtb_rater *p, const char *t, size_t n, tl_parsed *out) {
  tl_buf vis;
  tl_buf_init(&vis);
  const char *v;
  size_t vl;
  int th = tl_think_strip(t, n, &vis, &v, &vl);
  int ret = 0;
  if (th == TL_THINK_NOMEM) {
    ret = -1;
  } else if (th == TL_THINK_UNTERMINATED) {
    set(out, TL_PS_UNTERMINATED, "unterminated_think", NULL, 0, 0, 0);
  } else {
    /* the last labelled match and the last match of either kind */
    size_t la = 0, lb = 0, ba = 0, bb = 0, from = 0;
    int have_l = 0, have_b = 0, limit = 0;
    tl_rx_match m;
    while (from <= vl) {
      int rc = tl_rx_search(p->rx[0], v, vl, from, &m);
      if (rc == TL_RX_LIMIT) {
        limit = 1;
        break;
      }
      if (rc < 0) {
        ret = -2;
        break;
      }
      if (rc == 0) break;
      num x;
      if (read_digits(v + m.start[2], m.end[2] - m.start[2], &x) == 0) {
        if (tl_rx_has(&m, 1)) {
          la = m.start[2];
          lb = m.end[2];
          have_l = 1;
        }
        ba = m.start[2];
        bb = m.end[2];
        have_b = 1;
      }
      from = m.end[0];
    }
    if (ret == 0) {
      if (limit) {
        set(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0, 0);
      } else if (!have_b) {
        set(out, TL_PS_NO_ANSWER, "no_rating", NULL, 0, 0, 0);
      } else {
        const char *rule = have_l ? "rating_label" : "double_bracket";
        size_t a = have_l ? la : ba, b = have_l ? lb : bb;
        num x;
        read_digits(v + a, b - a, &x);
        if (!x.big && x.val >= 1 && x.val <= 10)
          ret = set(out, TL_PS_OK, rule, v, a, b, (int64_t)x.val * TL_MTB_RATING_SCALE);
        else
          ret = set(out, TL_PS_OUT_OF_RANGE, "out_of_range", v, a, b, 0);
      }
    }
  }
  tl_buf_release(&vis);
  return ret;
}

static int rate_opencompass(const tl_mtb_rater *p, const char *t, size_t n, tl_parsed *out) {
  tl_rx_match m;
  int rc = tl_rx_search(p->rx[0], t, n, 0, &m);
  if (rc == TL_RX_LIMIT) return set(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0, 0);
  if (rc < 0) return -2;
  if (rc == 0) return set(out, TL_PS_NO_ANSWER, "no_rating", NULL, 0, 0, 0);
  size_t a = m.start[1], b = m.end[1];
  num x;
  read_digits(t + a, b - a, &x); /* [0-9]: always known */
  if (x.ndig > PY_INT_MAX_STR_DIGITS)
    return set(out, TL_PS_SKIPPED, "int_digit_limit", t, a, b, 0);
  if (x.big) return set(out, TL_PS_OUT_OF_RANGE, "too_large", t, a, b, 0);
  return set(out, TL_PS_OK, "single_bracket", t, a, b, (int64_t)x.val * TL_MTB_RATING_SCALE);
}

/* ast.literal_eval of FastChat's capture s[0..n) (digits, then optionally '.' and digits).
 * 0 with *value (thousandths), 1 SyntaxError, 2 too large for int64 thousandths. */
static int fastchat_eval(const char *s, size_t n, int64_t *value) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] >= 0x80) return 1; /* "invalid character" (a non-ASCII digit) */
  const char *dot = memchr(s, '.', n);
  size_t il = dot ? (size_t)(dot - s) : n;
  uint64_t w = 0;
  int big = 0, nonzero = 0;
  for (size_t i = 0; i < il; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (d) nonzero = 1;
    if (!big && w > (MAX_WHOLE - d) / 10) big = 1;
    else if (!big) w = w * 10 + d;
  }
  if (!dot) {
    /* Python 3 integer literals: "0", "00", ... are 0; another leading zero is a SyntaxError,
     * and so is a literal of more than 4300 digits (its conversion fails in the parser). */
    if (!nonzero) {
      *value = 0;
      return 0;
    }
    if (s[0] == '0' || n > PY_INT_MAX_STR_DIGITS) return 1;
    if (big) return 2;
    *value = (int64_t)w * TL_MTB_RATING_SCALE;
    return 0;
  }
  if (big) return 2;
  /* a float: thousandths, rounded half to even on the decimal digits */
  const char *f = dot + 1;
  size_t fl = n - il - 1;
  uint64_t t = w * TL_MTB_RATING_SCALE;
  uint64_t frac = 0;
  for (size_t i = 0; i < 3; i++) frac = frac * 10 + (i < fl ? (uint64_t)(f[i] - '0') : 0);
  t += frac;
  if (fl > 3) {
    int first = f[3] - '0', rest = 0;
    for (size_t i = 4; i < fl && !rest; i++) rest = f[i] != '0';
    if (first > 5 || (first == 5 && (rest || (t & 1)))) t++;
  }
  if (t > (uint64_t)INT64_MAX) return 2;
  *value = (int64_t)t;
  return 0;
}

static int rate_fastchat(const tl_mtb_rater *p, const char *t, size_t n, tl_parsed *out) {
  static const char *const RULE[2] = {"double_bracket", "single_bracket"};
  for (int k = 0; k < 2; k++) {
    tl_rx_match m;
    int rc = tl_rx_search(p->rx[k], t, n, 0, &m);
    if (rc == TL_RX_LIMIT) return set(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0, 0);
    if (rc < 0) return -2;
    if (rc == 0) continue;
    size_t a = m.start[1], b = m.end[1];
    int64_t value = 0;
    switch (fastchat_eval(t + a, b - a, &value)) {
    case 0: return set(out, TL_PS_OK, RULE[k], t, a, b, value);
    case 1: return set(out, TL_PS_SKIPPED, "literal_eval_error", t, a, b, 0);
    default: return set(out, TL_PS_OUT_OF_RANGE, "too_large", t, a, b, 0);
    }
  }
  return set(out, TL_PS_NO_ANSWER, "no_rating", NULL, 0, 0, 0);
}

static int rate_judgearena(const tl_mtb_rater *p, const char *t, size_t n, tl_parsed *out) {
  tl_buf vis;
  tl_buf_init(&vis);
  const char *v;
  size_t vl;
  if (tl_think_strip_judgearena(t, n, &vis, &v, &vl) == TL_THINK_NOMEM) {
    tl_buf_release(&vis);
    return -1;
  }
  /* Reversed finditer stops at the first match that is valid (1..10) or whose int() raises
   * (more than 4300 digits): forward, that is the last such match. */
  size_t ca = 0, cb = 0, from = 0;
  int cand = 0, cand_huge = 0, ret = 0, limit = 0;
  uint64_t cval = 0;
  tl_rx_match m;
  while (from <= vl) {
    int rc = tl_rx_search(p->rx[0], v, vl, from, &m);
    if (rc == TL_RX_LIMIT) {
      limit = 1;
      break;
    }
    if (rc < 0) {
      ret = -2;
      break;
    }
    if (rc == 0) break;
    num x;
    if (read_digits(v + m.start[1], m.end[1] - m.start[1], &x) == 0) {
      int huge = x.ndig > PY_INT_MAX_STR_DIGITS;
      if (huge || (!x.big && x.val >= 1 && x.val <= 10)) {
        ca = m.start[1];
        cb = m.end[1];
        cand = 1;
        cand_huge = huge;
        cval = x.val;
      }
    }
    from = m.end[0];
  }
  if (ret == 0) {
    if (limit) ret = set(out, TL_PS_PARSE_LIMIT, "parse_limit", NULL, 0, 0, 0);
    else if (!cand) ret = set(out, TL_PS_NO_ANSWER, "no_rating", NULL, 0, 0, 0);
    else if (cand_huge) ret = set(out, TL_PS_SKIPPED, "int_digit_limit", v, ca, cb, 0);
    else ret = set(out, TL_PS_OK, "double_bracket", v, ca, cb, (int64_t)cval * TL_MTB_RATING_SCALE);
  }
  tl_buf_release(&vis);
  return ret;
}

tl_status tl_mtb_rate(const tl_mtb_rater *p, const char *text, tl_parsed *out) {
  free(out->answer);
  tl_parsed_init(out);
  if (!text) {
    out->status = TL_PS_MISSING;
    out->rule = "";
    return TL_OK;
  }
  size_t n = strlen(text);
  int r;
  switch (p->mode) {
  case TL_MTB_RATE_STRICT: r = rate_strict(p, text, n, out); break;
  case TL_MTB_RATE_OPENCOMPASS: r = rate_opencompass(p, text, n, out); break;
  case TL_MTB_RATE_FASTCHAT: r = rate_fastchat(p, text, n, out); break;
  default: r = rate_judgearena(p, text, n, out); break;
  }
  if (r == 0) return TL_OK;
  free(out->answer);
  tl_parsed_init(out);
  return r == -1 ? TL_ENOMEM : TL_EREGEX;
}
