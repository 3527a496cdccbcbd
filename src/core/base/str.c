/* str.c - tl_buf and UTF-8 helpers. Case mapping and classification use glibc's C.UTF-8 locale
 * explicitly (never the user's locale), so results do not depend on the environment. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wctype.h>

#include "tally/str.h"

void tl_buf_init(tl_buf *b) {
  static char empty[1] = {0};
  b->data = empty;
  b->len = 0;
  b->cap = 0;
}

void tl_buf_release(tl_buf *b) {
  if (b->cap) free(b->data);
  tl_buf_init(b);
}

void tl_buf_reset(tl_buf *b) {
  b->len = 0;
  if (b->cap) b->data[0] = 0;
}

static tl_status grow(tl_buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return TL_OK;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = b->cap ? realloc(b->data, cap) : malloc(cap);
  if (!p) return TL_ENOMEM;
  if (!b->cap) p[0] = 0;
  b->data = p;
  b->cap = cap;
  return TL_OK;
}

tl_status tl_buf_append(tl_buf *b, const char *s, size_t n) {
  if (grow(b, n) != TL_OK) return TL_ENOMEM;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
  return TL_OK;
}

tl_status tl_buf_reserve(tl_buf *b, size_t n) { return grow(b, n); }

tl_status tl_buf_extend(tl_buf *b, size_t n) {
  if (grow(b, n) != TL_OK) return TL_ENOMEM;
  b->len += n;
  b->data[b->len] = 0;
  return TL_OK;
}

tl_status tl_buf_puts(tl_buf *b, const char *s) { return tl_buf_append(b, s, strlen(s)); }

tl_status tl_buf_printf(tl_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || grow(b, (size_t)n) != TL_OK) {
    va_end(ap2);
    return TL_ENOMEM;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
  return TL_OK;
}

char *tl_buf_detach(tl_buf *b) {
  char *p = b->cap ? b->data : tl_strdup("");
  tl_buf_init(b);
  return p;
}

tl_status tl_file_read(const char *path, size_t max, tl_buf *b, tl_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  /* Straight into b: a regular file's size is reserved first (one allocation, one copy out of
   * the page cache, and a short read at its end); a pipe or a device grows by chunks. */
  size_t start = b->len, want = 65536;
  tl_status st = TL_OK;
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
    if (max && (uint64_t)sb.st_size > max)
      st = tl_err_set(err, TL_EINPUT, "'%s' is larger than %zu bytes", path, max);
    else if ((uint64_t)sb.st_size < SIZE_MAX / 2)
      want = (size_t)sb.st_size + 1;
  }
  while (st == TL_OK) {
    if (tl_buf_reserve(b, want) != TL_OK) {
      st = tl_err_set(err, TL_ENOMEM, "out of memory reading '%s'", path);
      break;
    }
    size_t k = fread(b->data + b->len, 1, want, f);
    b->len += k;
    b->data[b->len] = 0;
    if (max && b->len - start > max) {
      st = tl_err_set(err, TL_EINPUT, "'%s' is larger than %zu bytes", path, max);
      b->len = start;
      b->data[b->len] = 0;
    }
    if (k < want) break; /* the end, or an error (ferror below) */
    want = 65536 > (b->len - start) ? 65536 : b->len - start; /* a pipe: double what is read */
  }
  if (st == TL_OK && ferror(f)) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", path, strerror(errno));
  fclose(f);
  return st;
}

uint64_t tl_hash64(const void *s, size_t n) {
  const unsigned char *p = s;
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h ^= w * 0xff51afd7ed558ccdULL;
    h = ((h << 31) | (h >> 33)) * 0x9e3779b97f4a7c15ULL;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, p, n);
  h ^= w * 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33; /* MurmurHash3's fmix64: every bit affects every bit */
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

char *tl_strdup(const char *s) { return tl_strndup(s, strlen(s)); }

char *tl_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

size_t tl_utf8_decode(const char *s, size_t n, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  *cp = 0xFFFD;
  if (n == 0) return 0;
  if (u[0] < 0x80) {
    *cp = u[0];
    return 1;
  }
  size_t len;
  uint32_t c, min;
  if ((u[0] & 0xE0) == 0xC0) { len = 2; c = u[0] & 0x1F; min = 0x80; }
  else if ((u[0] & 0xF0) == 0xE0) { len = 3; c = u[0] & 0x0F; min = 0x800; }
  else if ((u[0] & 0xF8) == 0xF0) { len = 4; c = u[0] & 0x07; min = 0x10000; }
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((u[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (u[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

size_t tl_utf8_floor(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = n, cont = 0;
  while (i > 0 && cont < 4 && (u[i - 1] & 0xC0) == 0x80) { /* continuation bytes at the end */
    i--;
    cont++;
  }
  if (i == 0) return n; /* only continuation bytes: not UTF-8, nothing sensible to cut */
  unsigned char lead = u[i - 1];
  size_t need = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3
                : (lead & 0xF8) == 0xF0 ? 4 : 1;
  return cont + 1 < need ? i - 1 : n; /* incomplete: cut before its lead byte */
}

bool tl_utf8_valid(const char *s, size_t n, size_t *bad_offset) {
  size_t i = 0;
  while (i < n) {
    uint64_t w; /* ASCII 8 bytes at a time: most of any text */
    while (i + 8 <= n && (memcpy(&w, s + i, 8), !(w & 0x8080808080808080ULL))) i += 8;
    if (i >= n) break;
    if ((unsigned char)s[i] < 0x80) { i++; continue; }
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += k;
  }
  return true;
}

tl_status tl_utf8_append(tl_buf *b, uint32_t cp) {
  char o[4];
  size_t k;
  if (cp < 0x80) { o[0] = (char)cp; k = 1; }
  else if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); k = 2; }
  else if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F)); k = 3;
  } else {
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); k = 4;
  }
  return tl_buf_append(b, o, k);
}

/* The C.UTF-8 locale object, created once (pthread_once: parsers may run on many threads).
 * glibc >= 2.35 has it built in. It lives for the whole process. When it cannot be loaded,
 * tl_utf8_locale_check fails, and so do the parsers' constructors: the ASCII-only fallbacks
 * below are never reached by a parse. */
static locale_t g_utf8_loc = (locale_t)0;
static int g_utf8_errno;
static pthread_once_t g_utf8_once = PTHREAD_ONCE_INIT;
static void utf8_locale_init(void) {
  errno = 0;
  g_utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  g_utf8_errno = errno;
}
static locale_t utf8_locale(void) {
  pthread_once(&g_utf8_once, utf8_locale_init);
  return g_utf8_loc;
}

tl_status tl_utf8_locale_check(tl_err *err) {
  if (utf8_locale() != (locale_t)0) return TL_OK;
  return tl_err_set(err, TL_EINTERNAL, "the C.UTF-8 locale is not available: %s",
                    g_utf8_errno ? strerror(g_utf8_errno) : "newlocale failed");
}

static uint32_t uni_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  locale_t loc = utf8_locale();
  if (loc == (locale_t)0) return cp;
  return (uint32_t)towlower_l((wint_t)cp, loc);
}

bool tl_uni_isalnum(uint32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || ((cp | 32) >= 'a' && (cp | 32) <= 'z');
  locale_t loc = utf8_locale();
  return loc != (locale_t)0 && iswalnum_l((wint_t)cp, loc);
}

bool tl_uni_isspace(uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  /* Python counts the no-break spaces (Zs) that glibc leaves out; U+180E is not a space. */
  if (cp == 0x85 || cp == 0xA0 || cp == 0x2007 || cp == 0x202F) return true;
  if (cp == 0x180E) return false;
  locale_t loc = utf8_locale();
  return loc != (locale_t)0 && iswspace_l((wint_t)cp, loc);
}

char *tl_utf8_lower(const char *s, size_t n) {
  tl_buf b;
  tl_buf_init(&b);
  size_t i = 0;
  while (i < n) {
    /* a run of ASCII: lowered in place of the buffer, in one extension */
    size_t a = i;
    while (a < n && (unsigned char)s[a] < 0x80) a++;
    if (a > i) {
      size_t at = b.len;
      if (tl_buf_extend(&b, a - i) != TL_OK) { tl_buf_release(&b); return NULL; }
      for (size_t j = i; j < a; j++) {
        char c = s[j];
        b.data[at++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
      }
      i = a;
      if (i >= n) break;
    }
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    tl_status st;
    if (!k) { st = tl_buf_append(&b, s + i, 1); k = 1; }
    else if (cp == 0x130) st = tl_buf_append(&b, "i\xcc\x87", 3); /* Python: 'İ'.lower() */
    else st = tl_utf8_append(&b, uni_lower(cp));
    if (st != TL_OK) { tl_buf_release(&b); return NULL; }
    i += k;
  }
  return tl_buf_detach(&b);
}

size_t tl_utf8_skip_space(const char *s, size_t n, size_t i) {
  while (i < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k || !tl_uni_isspace(cp)) break;
    i += k;
  }
  return i;
}
