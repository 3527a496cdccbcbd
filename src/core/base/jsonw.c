/* jsonw.c - JSON text as cJSON_PrintUnformatted writes it (see jsonw.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonw.h"

/* The bytes of s[0..n) before the first one JSON escapes (a '"', a '\\' or a byte under 0x20),
 * 8 at a time. Per byte b of a word with its top bit set (b | 0x80), b - 0x20 keeps the top bit
 * iff b >= 0x20, and b - 1 iff b != 0, with no borrow into the next byte; so with v the word's
 * low 7 bits, the bytes under 0x80 that are under 0x20, equal to '"' (v ^ 0x22 == 0) or to
 * '\\' (v ^ 0x5c == 0) are exactly the top bits that `keep` clears. The byte itself is then
 * found one at a time, within that word. */
static size_t plain_prefix(const char *s, size_t n) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  size_t i = 0;
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

tl_status tl_json_str(tl_buf *b, const char *s, size_t n) {
  tl_status st = tl_buf_append(b, "\"", 1);
  size_t i = 0;
  while (i < n) {
    size_t k = plain_prefix(s + i, n - i);
    st |= tl_buf_append(b, s + i, k);
    i += k;
    if (i == n) break;
    const unsigned char ch = (unsigned char)s[i++];
    char esc[8] = {'\\', 0};
    switch (ch) { /* cJSON's print_string_ptr: these five by letter, the rest as \u00XX */
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default: snprintf(esc, sizeof esc, "\\u%04x", ch);
    }
    st |= tl_buf_append(b, esc, esc[1] == 'u' ? 6 : 2);
  }
  return st | tl_buf_append(b, "\"", 1);
}

tl_status tl_json_cstr(tl_buf *b, const char *s) { return s ? tl_json_str(b, s, strlen(s)) : tl_buf_append(b, "null", 4); }

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
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    n = 0;
    do t[sizeof t - 1 - n++] = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) t[sizeof t - 1 - n++] = '-';
    return tl_buf_append(b, t + sizeof t - n, (size_t)n);
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
  u /= 1000;
  do t[sizeof t - 1 - n++] = (char)('0' + u % 10); while (u /= 10);
  if (k < 0) t[sizeof t - 1 - n++] = '-';
  return tl_buf_append(b, t + sizeof t - n, (size_t)n);
}

tl_status tl_json_key(tl_buf *b, const char *key, int first) {
  tl_status st = first ? TL_OK : tl_buf_append(b, ",", 1);
  st |= tl_json_str(b, key, strlen(key));
  return st | tl_buf_append(b, ":", 1);
}
