/* vqa_scan.c - the validating scanner, the in-place reading of plain elements, and the string
 * arena (vqa_scan.h). Hand-written because cJSON, the one JSON library core uses, parses only
 * whole documents into trees (vqa_scan.h says why that is too slow for the official files). */
#include "vqa_scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"

/* ---- the validating scanner ------------------------------------------------------------- */

/* ---- the JSON scanner ------------------------------------------------------------------------ */

#define SCAN_MAX_DEPTH 1000

void vqa_sc_fail(vqa_jscan *c, const char *what) {
  if (!c->what[0]) snprintf(c->what, sizeof c->what, "%s", what);
}

/* Skips blanks (inlined: minified text has none, so the first test usually ends it). */
static inline void ws(vqa_jscan *c) {
  if (c->i < c->n && (unsigned char)c->s[c->i] > ' ') return;
  while (c->i < c->n) {
    char ch = c->s[c->i];
    if (ch == '\n') c->line++;
    else if (ch != ' ' && ch != '\t' && ch != '\r') break;
    c->i++;
  }
}

void vqa_sc_ws(vqa_jscan *c) { ws(c); }

/* Nonzero when one of the 8 bytes of x is '"', '\\' or below 0x20: the bytes a string scan
 * must stop at. The any-byte tests "haszero" and "hasless" of Hacker's Delight (2nd ed.,
 * section 6-1): (v - 0x01..01) & ~v & 0x80..80 is nonzero iff some byte of v is zero, and its
 * lowest set bit is the high bit of the first such byte (a borrow only runs upward, so bytes
 * above a true one may be flagged falsely, never those below). */
static inline uint64_t swar_stop(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = x ^ (ones * (uint64_t)'"'), b = x ^ (ones * (uint64_t)'\\');
  return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20u) & ~x)) & high;
}

static inline uint64_t swar_quote(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = x ^ (ones * (uint64_t)'"');
  return (q - ones) & ~q & high;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define SWAR_FIRST(mask) ((size_t)__builtin_ctzll(mask) / 8) /* the first flagged byte */
#else
#define SWAR_FIRST(mask) ((size_t)0) /* no byte order known: look from the first byte */
#endif

/* Moves *i (< n) to the first byte of s[*i..n) that is '"', '\\' or below 0x20 (n when none). */
static inline void to_string_stop(const char *s, size_t n, size_t *i) {
  while (*i + 8 <= n) {
    uint64_t x;
    memcpy(&x, s + *i, 8);
    uint64_t m = swar_stop(x);
    if (m) {
      *i += SWAR_FIRST(m);
      break;
    }
    *i += 8;
  }
  while (*i < n && (unsigned char)s[*i] >= 0x20 && s[*i] != '"' && s[*i] != '\\') ++*i;
}

static int is_hex(char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* A JSON string at c->i (which holds '"'); 0 with c->what set when malformed. */
int vqa_sc_string(vqa_jscan *c) {
  c->i++;
  while (c->i < c->n) {
    to_string_stop(c->s, c->n, &c->i);
    if (c->i >= c->n) break;
    unsigned char ch = (unsigned char)c->s[c->i];
    if (ch == '"') {
      c->i++;
      return 1;
    }
    if (ch < 0x20) {
      vqa_sc_fail(c, ch == 0 ? "NUL byte in a string" : "control character in a string");
      return 0;
    }
    if (ch == '\\') {
      if (c->i + 1 >= c->n) break;
      char e = c->s[c->i + 1];
      if (e == 'u') {
        for (int k = 2; k < 6; k++)
          if (c->i + (size_t)k >= c->n || !is_hex(c->s[c->i + (size_t)k])) {
            vqa_sc_fail(c, "bad \\u escape in a string");
            return 0;
          }
        c->i += 6;
        continue;
      }
      if (!strchr("\"\\/bfnrt", e) || e == 0) {
        vqa_sc_fail(c, "bad escape in a string");
        return 0;
      }
      c->i += 2;
      continue;
    }
    c->i++;
  }
  vqa_sc_fail(c, "unterminated string");
  return 0;
}

static int vqa_sc_digits(vqa_jscan *c) {
  size_t b = c->i;
  while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
  return c->i > b;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int vqa_sc_number(vqa_jscan *c) {
  if (c->s[c->i] == '-') c->i++;
  if (c->i < c->n && c->s[c->i] == '0') c->i++;
  else if (!vqa_sc_digits(c)) goto bad;
  if (c->i < c->n && c->s[c->i] == '.') {
    c->i++;
    if (!vqa_sc_digits(c)) goto bad;
  }
  if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
    c->i++;
    if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
    if (!vqa_sc_digits(c)) goto bad;
  }
  return 1;
bad:
  vqa_sc_fail(c, "malformed number");
  return 0;
}

static int vqa_sc_literal(vqa_jscan *c) {
  static const char *const LIT[] = {"true", "false", "null"};
  for (int k = 0; k < 3; k++) {
    size_t L = strlen(LIT[k]);
    if (c->n - c->i >= L && memcmp(c->s + c->i, LIT[k], L) == 0) {
      c->i += L;
      return 1;
    }
  }
  vqa_sc_fail(c, "unexpected character");
  return 0;
}

/* A key and its ':' inside an object (c->i at the key's quote, after blanks). */
static int vqa_sc_key(vqa_jscan *c) {
  if (c->i >= c->n) {
    vqa_sc_fail(c, "unexpected end of the text");
    return 0;
  }
  if (c->s[c->i] != '"') {
    vqa_sc_fail(c, "expected a key (a string)");
    return 0;
  }
  if (!vqa_sc_string(c)) return 0;
  ws(c);
  if (c->i >= c->n || c->s[c->i] != ':') {
    vqa_sc_fail(c, "expected ':' after a key");
    return 0;
  }
  c->i++;
  return 1;
}

/* Skips one JSON value of any depth (iterative, SCAN_MAX_DEPTH levels), validating it. */
int vqa_sc_value(vqa_jscan *c) {
  char stack[SCAN_MAX_DEPTH];
  int depth = 0;
  for (;;) {
    ws(c);
    if (c->i >= c->n) {
      vqa_sc_fail(c, "unexpected end of the text");
      return 0;
    }
    char ch = c->s[c->i];
    int scalar = 1;
    if (ch == '{' || ch == '[') {
      if (depth == SCAN_MAX_DEPTH) {
        vqa_sc_fail(c, "nested too deeply");
        return 0;
      }
      stack[depth++] = ch;
      c->i++;
      ws(c);
      char close = ch == '{' ? '}' : ']';
      if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        depth--;
      } else if (ch == '{') {
        if (!vqa_sc_key(c)) return 0;
        continue;
      } else {
        continue;
      }
      scalar = 0;
    }
    if (scalar) {
      int ok = ch == '"' ? vqa_sc_string(c) : (ch == '-' || (ch >= '0' && ch <= '9')) ? vqa_sc_number(c) : vqa_sc_literal(c);
      if (!ok) return 0;
    }
    /* after a value: close containers, or take ',' and go on */
    for (;;) {
      if (depth == 0) return 1;
      ws(c);
      char top = stack[depth - 1], close = top == '{' ? '}' : ']';
      if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        depth--;
        continue;
      }
      if (c->i < c->n && c->s[c->i] == ',') {
        c->i++;
        if (top == '{') {
          ws(c);
          if (!vqa_sc_key(c)) return 0;
        }
        break;
      }
      vqa_sc_fail(c, top == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
      return 0;
    }
  }
}


/* The elements of the array at c->i (which holds '['). TL_OK, or the status fn returned;
 * a malformed text sets c->what and returns TL_OK (the caller reports it). */
static tl_status vqa_sc_array(vqa_jscan *c, vqa_elem_fn fn, void *ctx) {
  c->i++;
  ws(c);
  if (c->i < c->n && c->s[c->i] == ']') {
    c->i++;
    return TL_OK;
  }
  for (;;) {
    ws(c);
    size_t b = c->i;
    long line = c->line;
    if (!vqa_sc_value(c)) return TL_OK;
    tl_status st = fn(ctx, c, b, c->i, line);
    if (st != TL_OK) return st;
    ws(c);
    if (c->i < c->n && c->s[c->i] == ',') {
      c->i++;
      continue;
    }
    if (c->i < c->n && c->s[c->i] == ']') {
      c->i++;
      return TL_OK;
    }
    vqa_sc_fail(c, "expected ',' or ']'");
    return TL_OK;
  }
}

/* Walks the whole text: key == NULL: the top level must be an array, whose elements go to fn;
 * else the top level must be an object, and the elements of its first member `key` (an array)
 * go to fn. *found: 0 no such member, 1 found as an array, 2 found but not an array. */
tl_status vqa_sc_document(vqa_jscan *c, const char *key, vqa_elem_fn fn, void *ctx, int *found) {
  *found = 0;
  ws(c);
  if (c->i + 3 <= c->n && !memcmp(c->s + c->i, "\xef\xbb\xbf", 3)) c->i += 3; /* a BOM */
  ws(c);
  tl_status st = TL_OK;
  if (!key) {
    if (c->i >= c->n || c->s[c->i] != '[') {
      vqa_sc_fail(c, "the text is not a JSON array");
      return TL_OK;
    }
    *found = 1;
    st = vqa_sc_array(c, fn, ctx);
  } else {
    if (c->i >= c->n || c->s[c->i] != '{') {
      vqa_sc_fail(c, "the text is not a JSON object");
      return TL_OK;
    }
    c->i++;
    ws(c);
    if (c->i < c->n && c->s[c->i] == '}') {
      c->i++;
    } else {
      for (;;) {
        ws(c);
        size_t kb = c->i; /* the key's opening quote */
        if (c->i >= c->n || c->s[c->i] != '"') {
          vqa_sc_fail(c, "expected a key (a string)");
          return TL_OK;
        }
        if (!vqa_sc_string(c)) return TL_OK;
        size_t klen = strlen(key), ke = c->i; /* one past the closing quote */
        int match = !*found && ke - kb - 2 == klen && !memcmp(c->s + kb + 1, key, klen);
        ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') {
          vqa_sc_fail(c, "expected ':' after a key");
          return TL_OK;
        }
        c->i++;
        ws(c);
        if (match && c->i < c->n && c->s[c->i] == '[') {
          *found = 1;
          st = vqa_sc_array(c, fn, ctx);
          if (st != TL_OK || c->what[0]) return st;
        } else {
          if (match) *found = 2;
          if (!vqa_sc_value(c)) return TL_OK;
        }
        ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
          c->i++;
          continue;
        }
        if (c->i < c->n && c->s[c->i] == '}') {
          c->i++;
          break;
        }
        vqa_sc_fail(c, "expected ',' or '}'");
        return TL_OK;
      }
    }
  }
  if (st == TL_OK && !c->what[0]) {
    ws(c);
    if (c->i < c->n) vqa_sc_fail(c, "text after the JSON value");
  }
  return st;
}
/* ---- in-place reading ------------------------------------------------------------------- */

int vqa_plain_off;

int vqa_plain_elem(const char *s, size_t b, size_t e) {
  size_t bad;
  return !vqa_plain_off && memchr(s + b, '\\', e - b) == NULL && tl_utf8_valid(s + b, e - b, &bad);
}

/* Skips the value at c->i of validated plain text (no backslash, so a string ends at the next
 * quote): strings to their closing quote (memchr), containers by their depth, scalars to the
 * first byte that cannot be in one. Lines are not counted (nothing is reported from here). */
static void skip_plain(vqa_jscan *c) {
  const char *s = c->s;
  size_t i = c->i;
  int depth = 0;
  do {
    char ch = s[i];
    if (ch == '"') { /* the next quote ends it (8 bytes at a time) */
      i++;
      for (;;) {
        if (i + 8 <= c->n) {
          uint64_t x;
          memcpy(&x, s + i, 8);
          uint64_t m = swar_quote(x);
          if (!m) {
            i += 8;
            continue;
          }
          i += SWAR_FIRST(m);
        }
        while (i < c->n && s[i] != '"') i++;
        break;
      }
      if (i < c->n) i++; /* the text was validated: always */
    } else if (ch == '{' || ch == '[') {
      depth++;
      i++;
    } else if (ch == '}' || ch == ']') {
      depth--;
      i++;
    } else if (depth == 0) {
      while (i < c->n && s[i] != ',' && s[i] != '}' && s[i] != ']' && (unsigned char)s[i] > ' ') i++;
    } else {
      i++;
    }
  } while (depth > 0 && i < c->n);
  c->i = i;
}

int vqa_obj_members(vqa_jscan *c, vqa_member *m, int cap, const char *inner, vqa_inner_fn fn, void *ctx) {
  size_t ilen = inner ? strlen(inner) : 0;
  int k = 0;
  c->i++; /* '{' */
  ws(c);
  if (c->s[c->i] == '}') {
    c->i++;
    return 0;
  }
  for (;;) {
    if (k == cap) return -1;
    size_t kb = c->i;
    skip_plain(c);
    m[k].key = c->s + kb + 1;
    m[k].klen = c->i - kb - 2;
    ws(c);
    c->i++; /* ':' */
    ws(c);
    m[k].vb = c->i;
    if (inner && m[k].klen == ilen && memcmp(m[k].key, inner, ilen) == 0) {
      if (!fn(ctx, c)) return -1;
    } else {
      skip_plain(c);
    }
    m[k].ve = c->i;
    for (int j = 0; j < k; j++) /* keys hold no escape: equal bytes are equal keys */
      if (m[j].klen == m[k].klen && memcmp(m[j].key, m[k].key, m[k].klen) == 0) return -1;
    k++;
    ws(c);
    if (c->s[c->i] == '}') {
      c->i++;
      return k;
    }
    c->i++; /* ',' */
    ws(c);
  }
}

const vqa_member *vqa_member_get(const vqa_member *m, int n, const char *key) {
  size_t kl = strlen(key);
  for (int i = 0; i < n; i++)
    if (m[i].klen == kl && memcmp(m[i].key, key, kl) == 0) return &m[i];
  return NULL;
}

int vqa_plain_string(const char *s, const vqa_member *v, const char **str, size_t *len) {
  if (s[v->vb] != '"') return 0;
  *str = s + v->vb + 1;
  *len = v->ve - v->vb - 2;
  return 1;
}

int vqa_plain_int(const char *s, const vqa_member *v, int64_t *out) {
  size_t i = v->vb, e = v->ve;
  int neg = s[i] == '-';
  if (neg) i++;
  if (i >= e || e - i > 15) return 0;
  int64_t x = 0;
  for (; i < e; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    x = x * 10 + (s[i] - '0');
  }
  *out = neg ? -x : x;
  return 1;
}

int vqa_plain_scalar(const char *s, const vqa_member *v) {
  char ch = s[v->vb];
  if (ch == '{' || ch == '[') return 0;
  if (ch == '-' || (ch >= '0' && ch <= '9')) return v->ve - v->vb <= 63;
  return 1;
}

char *vqa_i64_text(int64_t v, char buf[24]) {
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  size_t k = 0;
  if (v < 0) buf[k++] = '-';
  while (n) buf[k++] = tmp[--n];
  buf[k] = 0;
  return buf;
}

/* ---- the integer map ------------------------------------------------------------------- */

/* The finalizer of SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): every bit of the key moves every bit of the slot index. */
static size_t imap_hash(int64_t k, size_t cap) {
  uint64_t z = (uint64_t)k;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (size_t)(z ^ (z >> 31)) & (cap - 1);
}

void vqa_imap_init(vqa_imap *m) { memset(m, 0, sizeof *m); }

void vqa_imap_release(vqa_imap *m) {
  free(m->slot);
  memset(m, 0, sizeof *m);
}

static int imap_grow(vqa_imap *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024;
  struct vqa_islot *t = calloc(cap, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slot[i].val1) continue;
    size_t h = imap_hash(m->slot[i].key, cap);
    while (t[h].val1) h = (h + 1) & (cap - 1);
    t[h] = m->slot[i];
  }
  free(m->slot);
  m->slot = t;
  m->cap = cap;
  return 0;
}

int vqa_imap_put(vqa_imap *m, int64_t key, size_t val, size_t *existing) {
  if (2 * (m->n + 1) > m->cap && imap_grow(m)) return -1;
  size_t h = imap_hash(key, m->cap);
  while (m->slot[h].val1) {
    if (m->slot[h].key == key) {
      if (existing) *existing = m->slot[h].val1 - 1;
      return 0;
    }
    h = (h + 1) & (m->cap - 1);
  }
  m->slot[h].key = key;
  m->slot[h].val1 = val + 1;
  m->n++;
  return 1;
}

int vqa_imap_get(const vqa_imap *m, int64_t key, size_t *val) {
  if (!m->cap) return 0;
  size_t h = imap_hash(key, m->cap);
  while (m->slot[h].val1) {
    if (m->slot[h].key == key) {
      *val = m->slot[h].val1 - 1;
      return 1;
    }
    h = (h + 1) & (m->cap - 1);
  }
  return 0;
}

/* ---- the arena -------------------------------------------------------------------------- */

#define ARENA_BLOCK ((size_t)1 << 20) /* 1 MiB: 214,354 questions' strings in ~25 blocks */

struct vqa_arena {
  struct vqa_arena *next; /* the block allocated before this one */
  size_t used, cap;       /* bytes of data[] */
  _Alignas(8) char data[];
};

void *vqa_arena_alloc(vqa_arena **a, size_t n) {
  n = (n + 7) & ~(size_t)7;
  vqa_arena *h = *a;
  if (!h || h->cap - h->used < n) {
    size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK; /* a large piece gets its own block */
    vqa_arena *b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->used = 0;
    b->cap = cap;
    if (h && cap != ARENA_BLOCK) { /* keep filling the current block after a large piece */
      b->next = h->next;
      h->next = b;
      b->used = n;
      return b->data;
    }
    b->next = h;
    *a = h = b;
  }
  void *p = h->data + h->used;
  h->used += n;
  return p;
}

char *vqa_arena_strndup(vqa_arena **a, const char *s, size_t n) {
  char *p = vqa_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void vqa_arena_free(vqa_arena **a) {
  vqa_arena *h = *a;
  while (h) {
    vqa_arena *nx = h->next;
    free(h);
    h = nx;
  }
  *a = NULL;
}
