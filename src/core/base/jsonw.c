/* jsonw.c - JSON text as cJSON_PrintUnformatted writes it (see jsonw.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonw.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The bytes of s[0..n) before the first one JSON escapes (a '"', a '\\' or a byte under 0x20).
 *
 * With SSE2 (every x86-64), 16 at a time: a byte is under 0x20 iff max(b, 0x1f) == 0x1f
 * (unsigned), and the first flagged byte is the lowest set bit of the compare mask. Then, and
 * without SSE2, 8 at a time: per byte b of a word with its top bit set (b | 0x80), b - 0x20
 * keeps the top bit iff b >= 0x20, and b - 1 iff b != 0, with no borrow into the next byte; so
 * with v the word's low 7 bits, the bytes under 0x80 that are under 0x20, equal to '"'
 * (v ^ 0x22 == 0) or to '\\' (v ^ 0x5c == 0) are exactly the top bits that `keep` clears. The
 * byte itself is then found one at a time, within that word. */
size_t tl_json_plain_len(const char *s, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    const __m128i m = _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl),
                                   _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)));
    const unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask) return i + (size_t)__builtin_ctz(mask);
  }
#endif
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, s + i, 8);
    const uint64_t v = x & ~high;
    const uint64_t keep = (((v | high) - 0x20 * ones) & (((v ^ 0x22 * ones) | high) - ones) &
                           (((v ^ 0x5c * ones) | high) - ones));
    if (~keep & ~x & high) break;
  }
  while (i < n) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || ch == '"' || ch == '\\') break;
    i++;
  }
  return i;
}

/* The escape of byte ch (one JSON escapes) into e; returns its length (2 or 6). cJSON's
 * print_string_ptr: these seven by letter, the rest as \u00XX. */
static size_t escape(unsigned char ch, char e[6]) {
  static const char HEX[] = "0123456789abcdef";
  e[0] = '\\';
  switch (ch) {
  case '"': e[1] = '"'; return 2;
  case '\\': e[1] = '\\'; return 2;
  case '\b': e[1] = 'b'; return 2;
  case '\f': e[1] = 'f'; return 2;
  case '\n': e[1] = 'n'; return 2;
  case '\r': e[1] = 'r'; return 2;
  case '\t': e[1] = 't'; return 2;
  default:
    memcpy(e + 1, "u00", 3);
    e[4] = HEX[ch >> 4];
    e[5] = HEX[ch & 15];
    return 6;
  }
}

/* Per byte: how many bytes its escape adds (0: written as it is). */
static const unsigned char EXTRA[256] = {
    5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    0, 0, 1, ['\\'] = 1};

/* Two passes: the exact length first, then the text written in place: one allocation at most,
 * and none of a string's size times 6. Short strings go byte by byte (the table); long ones by
 * the runs tl_json_plain_len finds 16 or 8 bytes at a time. */
tl_status tl_json_str(tl_buf *b, const char *s, size_t n) {
  size_t extra = 0;
  if (n < 32) {
    for (size_t i = 0; i < n; i++) extra += EXTRA[(unsigned char)s[i]];
  } else {
    for (size_t i = tl_json_plain_len(s, n); i < n; i += 1 + tl_json_plain_len(s + i + 1, n - i - 1))
      extra += EXTRA[(unsigned char)s[i]];
  }
  const size_t at = b->len;
  if (tl_buf_extend(b, n + extra + 2) != TL_OK) return TL_ENOMEM;
  char *o = b->data + at;
  *o++ = '"';
  if (!extra) {
    if (n) memcpy(o, s, n);
    o += n;
  } else {
    size_t i = 0;
    while (i < n) {
      size_t k = n < 32 ? 0 : tl_json_plain_len(s + i, n - i);
      if (n < 32)
        while (i + k < n && !EXTRA[(unsigned char)s[i + k]]) k++;
      memcpy(o, s + i, k);
      o += k;
      i += k;
      if (i == n) break;
      o += escape((unsigned char)s[i++], o);
    }
  }
  *o = '"';
  return TL_OK;
}

tl_status tl_json_cstr(tl_buf *b, const char *s) { return s ? tl_json_str(b, s, strlen(s)) : tl_buf_append(b, "null", 4); }

/* Writes the decimal digits of u, with a '-' when neg, ending at end (exclusive); returns
 * where they start. */
static char *digits(char *end, unsigned long long u, int neg) {
  do *--end = (char)('0' + u % 10); while (u /= 10);
  if (neg) *--end = '-';
  return end;
}

/* cJSON's compare_double: equal within the larger magnitude times DBL_EPSILON. */
static int same_double(double a, double b) {
  const double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return fabs(a - b) <= m * 2.220446049250313e-16;
}

tl_status tl_json_num(tl_buf *b, double d) {
  if (isnan(d) || isinf(d)) return tl_buf_append(b, "null", 4);
  char t[32];
  int n;
  /* an integer under 1e15 in magnitude: %1.15g writes its digits, so they are written here
   * without printf (-0 keeps its sign, as %g does) */
  if (fabs(d) < 1e15 && d == (double)(long long)d && !(d == 0 && signbit(d))) {
    const long long v = (long long)d;
    const char *p = digits(t + sizeof t, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, v < 0);
    return tl_buf_append(b, p, (size_t)(t + sizeof t - p));
  }
  n = snprintf(t, sizeof t, "%1.15g", d);
  if (!same_double(strtod(t, NULL), d)) n = snprintf(t, sizeof t, "%1.17g", d);
  return tl_buf_append(b, t, (size_t)n);
}

tl_status tl_json_milli(tl_buf *b, long long k) {
  /* %1.15g of k / 1000 for |k| < 1e15: the integer part, then the 3 decimals less their
   * trailing zeros (15 significant digits hold k exactly; the quotient's nearest double reads
   * back to it); the other values (and -0) go through tl_json_num */
  if (k == 0 || k <= -1000000000000000LL || k >= 1000000000000000LL) return tl_json_num(b, (double)k / 1e3);
  unsigned long long u = k < 0 ? 0ULL - (unsigned long long)k : (unsigned long long)k;
  char t[32];
  int n = 0, frac = (int)(u % 1000), dig = 3;
  while (frac && frac % 10 == 0) {
    frac /= 10;
    dig--;
  }
  if (frac) {
    for (int i = 0; i < dig; i++, frac /= 10) t[sizeof t - 1 - n++] = (char)('0' + frac % 10);
    t[sizeof t - 1 - n++] = '.';
  }
  const char *p = digits(t + sizeof t - n, u / 1000, k < 0);
  return tl_buf_append(b, p, (size_t)(t + sizeof t - p));
}

tl_status tl_json_key(tl_buf *b, const char *key, int first) {
  const size_t n = strlen(key);
  size_t i = 0;
  while (i < n && !EXTRA[(unsigned char)key[i]]) i++;
  if (i < n) { /* a key that needs escapes */
    tl_status st = first ? TL_OK : tl_buf_append(b, ",", 1);
    st |= tl_json_str(b, key, n);
    return st | tl_buf_append(b, ":", 1);
  }
  const size_t at = b->len, c = first ? 0 : 1;
  if (tl_buf_extend(b, n + 3 + c) != TL_OK) return TL_ENOMEM;
  char *o = b->data + at;
  if (c) *o++ = ',';
  *o++ = '"';
  memcpy(o, key, n);
  o[n] = '"';
  o[n + 1] = ':';
  return TL_OK;
}
