/* think.c - reasoning blocks: the tag scanner and the two stripping policies (tally/think.h). */
#include "tally/think.h"

#include <stdint.h>
#include <string.h>

/* ---- the tag scanner -------------------------------------------------------------------------
 * A matcher returns the byte length of the tag starting at s[0] (s[0] == '<'; n bytes
 * available), 0 when there is none. find_tag() returns the offset of the first tag at or after
 * `from` (and its length), or n when there is none. */
typedef size_t (*tag_fn)(const char *s, size_t n);

static size_t find_tag(const char *s, size_t n, size_t from, tag_fn m, size_t *len) {
  for (size_t i = from; i < n;) {
    const char *lt = memchr(s + i, '<', n - i);
    if (!lt) break;
    i = (size_t)(lt - s);
    size_t k = m(s + i, n - i);
    if (k) {
      *len = k;
      return i;
    }
    i++;
  }
  *len = 0;
  return n;
}

/* find_tag() through a cache, for searches whose `from` never decreases: the hit found from an
 * earlier `from` (or its absence) stays the answer while it is not behind `from`, so each byte
 * is scanned once per tag. (Searching afresh at every tag was quadratic: 1 MB of "</think>"
 * re-read the rest of the text for "<think>" after each one.) */
typedef struct {
  int on;
  size_t at, len; /* at == n: none */
} tag_cache;

static size_t find_tag_c(tag_cache *tc, const char *s, size_t n, size_t from, tag_fn m,
                         size_t *len) {
  if (!tc->on || (tc->at < n && tc->at < from)) {
    tc->at = find_tag(s, n, from, m, &tc->len);
    tc->on = 1;
  }
  *len = tc->len;
  return tc->at;
}

/* ---- ours ------------------------------------------------------------------------------------ */

/* Byte-wise ASCII case-insensitive prefix (w lower case): each byte OR 0x20 against w. */
static int ci_prefix(const char *s, size_t n, const char *w, size_t k) {
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++)
    if ((s[i] | 32) != w[i]) return 0;
  return 1;
}

static size_t open_ours(const char *s, size_t n) { return ci_prefix(s, n, "<think>", 7) ? 7 : 0; }
static size_t close_ours(const char *s, size_t n) {
  return ci_prefix(s, n, "</think>", 8) ? 8 : 0;
}

int tl_think_strip(const char *r, size_t n, tl_buf *buf, const char **visible, size_t *vlen) {
  size_t pos = 0, ol, cl_len;
  size_t seg_s[2] = {0, 0}, seg_e[2] = {0, 0};
  int nseg = 0, in_buf = 0;
  tag_cache open_c = {0, 0, 0}, close_c = {0, 0, 0};
  tl_buf_reset(buf);
  for (;;) {
    size_t o = find_tag_c(&open_c, r, n, pos, open_ours, &ol);
    size_t cl = find_tag_c(&close_c, r, n, pos, close_ours, &cl_len);
    if (cl < n && cl < o) { /* orphan close (R1-style templates): drop all before it */
      nseg = 0;
      in_buf = 0;
      tl_buf_reset(buf);
      pos = cl + cl_len;
      continue;
    }
    size_t stop = o;
    if (stop > pos) {
      if (nseg < 2 && !in_buf) {
        seg_s[nseg] = pos;
        seg_e[nseg] = stop;
        nseg++;
      }
      if (nseg == 2 && !in_buf) { /* two slices: fall back to concatenation */
        tl_buf_reset(buf);
        if (tl_buf_append(buf, r + seg_s[0], seg_e[0] - seg_s[0]) != TL_OK ||
            tl_buf_append(buf, r + seg_s[1], seg_e[1] - seg_s[1]) != TL_OK)
          return TL_THINK_NOMEM;
        in_buf = 1;
      } else if (in_buf && tl_buf_append(buf, r + pos, stop - pos) != TL_OK) {
        return TL_THINK_NOMEM;
      }
    }
    if (o == n) break;
    size_t c2 = find_tag_c(&close_c, r, n, o + ol, close_ours, &cl_len);
    if (c2 == n) return TL_THINK_UNTERMINATED;
    pos = c2 + cl_len;
  }
  if (in_buf) {
    *visible = buf->data;
    *vlen = buf->len;
  } else if (nseg == 1) {
    *visible = r + seg_s[0];
    *vlen = seg_e[0] - seg_s[0];
  } else {
    *visible = r + n;
    *vlen = 0;
  }
  return TL_THINK_OK;
}

/* ---- JudgeArena ------------------------------------------------------------------------------ */

/* One tag letter at s (n bytes): its byte length, 0 when it is not `c` (lower-case ASCII) under
 * the given folding. `python_i`: Python's re.IGNORECASE, where 'i' also matches U+0130 (C4 B0)
 * and U+0131 (C4 B1); 'k' matches U+212A (E2 84 AA) both under re.IGNORECASE and str.lower(). */
static size_t tag_letter(const char *s, size_t n, char c, int python_i) {
  unsigned char b = (unsigned char)s[0];
  if (b == (unsigned char)c || b == (unsigned char)(c - 32)) return 1;
  if (c == 'i' && python_i && n >= 2 && b == 0xC4 &&
      ((unsigned char)s[1] == 0xB0 || (unsigned char)s[1] == 0xB1))
    return 2;
  if (c == 'k' && n >= 3 && b == 0xE2 && (unsigned char)s[1] == 0x84 &&
      (unsigned char)s[2] == 0xAA)
    return 3;
  return 0;
}

static size_t ja_tag(const char *s, size_t n, int close, int python_i) {
  size_t q = 1;
  if (close) {
    if (n < 2 || s[1] != '/') return 0;
    q = 2;
  }
  for (const char *w = "think"; *w; w++) {
    if (q >= n) return 0;
    size_t k = tag_letter(s + q, n - q, *w, python_i);
    if (!k) return 0;
    q += k;
  }
  return q < n && s[q] == '>' ? q + 1 : 0;
}

static size_t open_re(const char *s, size_t n) { return ja_tag(s, n, 0, 1); }
static size_t close_re(const char *s, size_t n) { return ja_tag(s, n, 1, 1); }
static size_t close_lower(const char *s, size_t n) { return ja_tag(s, n, 1, 0); }

/* Python's str.lstrip(): leading code points for which str.isspace() holds. */
static size_t py_lstrip(const char *s, size_t n) { return tl_utf8_skip_space(s, n, 0); }

int tl_think_strip_judgearena(const char *r, size_t n, tl_buf *buf, const char **visible,
                              size_t *vlen) {
  tl_buf_reset(buf);
  /* Step 1: re.sub(r"<think>.*?</think>", "", ...) - every complete block, left to right. */
  size_t pos = 0, ol, cl_len;
  int removed = 0;
  tag_cache open_c = {0, 0, 0}, close_c = {0, 0, 0};
  for (;;) {
    size_t o = find_tag_c(&open_c, r, n, pos, open_re, &ol);
    if (o == n) break;
    size_t c = find_tag_c(&close_c, r, n, o + ol, close_re, &cl_len);
    if (c == n) break; /* no later <think> can be closed either */
    if (tl_buf_append(buf, r + pos, o - pos) != TL_OK) return TL_THINK_NOMEM;
    removed = 1;
    pos = c + cl_len;
  }
  if (removed) {
    if (tl_buf_append(buf, r + pos, n - pos) != TL_OK) return TL_THINK_NOMEM;
    size_t k = py_lstrip(buf->data, buf->len);
    *visible = buf->data + k;
    *vlen = buf->len - k;
    return TL_THINK_OK;
  }
  /* Step 2: the first "</think>" of text.lower(), sliced at the lowered index. */
  size_t c = find_tag(r, n, 0, close_lower, &cl_len);
  if (c == n) { /* step 3 cannot fire (see think.h): the text as it is */
    *visible = r;
    *vlen = n;
    return TL_THINK_OK;
  }
  size_t shift = 0; /* U+0130 (C4 B0) before the tag: one code point more each in lower() */
  for (size_t i = 0; i + 1 < c; i++)
    if ((unsigned char)r[i] == 0xC4 && (unsigned char)r[i + 1] == 0xB0) shift++;
  size_t at = c + cl_len;
  while (shift > 0 && at < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(r + at, n - at, &cp);
    at += k ? k : 1;
    shift--;
  }
  size_t k = py_lstrip(r + at, n - at);
  *visible = r + at + k;
  *vlen = n - at - k;
  return TL_THINK_OK;
}
