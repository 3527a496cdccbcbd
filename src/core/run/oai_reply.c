/* oai_reply.c - a completion reply's fields, from cJSON's tree or from one pass over the text
 * (see oai_reply.h).
 *
 * What the scan takes is a subset of what cJSON 1.7 parses, chosen so that cJSON reads it the
 * same way; everything else is declined, and the caller's cJSON parse decides:
 *  - strict JSON (RFC 8259) with a top-level object and only the four JSON whitespace bytes
 *    around tokens (cJSON also skips every other byte under 0x21, a UTF-8 byte-order mark, and
 *    whatever follows the first value: declined);
 *  - strings without bytes under 0x20 (cJSON keeps them raw, and a NUL ends its C string), with
 *    the escapes \" \\ \/ \b \f \n \r \t and \uXXXX (four hex digits; surrogates in pairs, as
 *    cJSON requires; none giving U+0000, where cJSON's string would end); every other byte kept
 *    as it is, as cJSON keeps it (invalid UTF-8 too);
 *  - keys without escapes (cJSON compares decoded keys, and "\u0000" would cut one short);
 *  - numbers of at most 63 bytes (cJSON 1.7.15 as released copies no more before strtod; Debian's
 *    patched build reads longer ones); the token counts must be integers of at most 15 digits,
 *    which strtod reads exactly;
 *  - nesting at most 64 deep (cJSON allows 1000);
 *  - each member the fields come from once in its object (cJSON's lookup takes the first);
 *  - a completion: choices an array whose first element is an object holding a message object
 *    (chat) with content a string, null or absent, or a text string (completions); that
 *    element's logprobs null or absent (the logprobs are kept as a cJSON value).
 * A field whose member has another type (a model that is a number, usage that is not an object)
 * is absent, as tl_oai_reply_json has it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tally/jsonw.h"
#include "tally/oai_reply.h"

int tl_oai_reply_json(const cJSON *j, size_t n, int completions, tl_oai_reply *v, char *why, size_t whysz) {
  memset(v, 0, sizeof *v);
  v->prompt_tokens = v->completion_tokens = NAN;
  const cJSON *ch = j ? cJSON_GetObjectItemCaseSensitive(j, "choices") : NULL;
  const cJSON *c0 = cJSON_IsArray(ch) ? cJSON_GetArrayItem(ch, 0) : NULL;
  const cJSON *msg = c0 ? cJSON_GetObjectItemCaseSensitive(c0, completions ? "text" : "message") : NULL;
  const cJSON *content = completions ? msg : msg ? cJSON_GetObjectItemCaseSensitive(msg, "content") : NULL;
  if (!c0 || !msg || (completions ? !cJSON_IsString(msg) : !cJSON_IsObject(msg)) ||
      (content && !cJSON_IsString(content) && !cJSON_IsNull(content))) {
    if (j) snprintf(why, whysz, "the reply is not a completion (no choices[0] with a %s)", completions ? "text" : "message");
    else snprintf(why, whysz, "the reply is not JSON (%zu bytes)", n);
    return -1;
  }
  v->content = cJSON_IsString(content) ? content->valuestring : NULL;
  const cJSON *rs = !completions ? cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content") : NULL;
  if (!cJSON_IsString(rs) && !completions) rs = cJSON_GetObjectItemCaseSensitive(msg, "reasoning");
  v->reasoning = cJSON_IsString(rs) ? rs->valuestring : NULL;
  const cJSON *fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
  v->finish_reason = cJSON_IsString(fr) ? fr->valuestring : NULL;
  const cJSON *us = cJSON_GetObjectItemCaseSensitive(j, "usage");
  const cJSON *pt = cJSON_IsObject(us) ? cJSON_GetObjectItemCaseSensitive(us, "prompt_tokens") : NULL;
  const cJSON *ct = cJSON_IsObject(us) ? cJSON_GetObjectItemCaseSensitive(us, "completion_tokens") : NULL;
  if (cJSON_IsNumber(pt)) v->prompt_tokens = pt->valuedouble;
  if (cJSON_IsNumber(ct)) v->completion_tokens = ct->valuedouble;
  const cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "model");
  v->model = cJSON_IsString(md) ? md->valuestring : NULL;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
  v->id = cJSON_IsString(id) ? id->valuestring : NULL;
  v->n_choices = cJSON_GetArraySize(ch);
  /* the token log-probabilities when asked for ("logprobs": true): choices[0].logprobs.content
   * (chat) is kept whole, for scorers that read a rating's distribution (LAVE) */
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(c0, "logprobs");
  const cJSON *lpc = cJSON_IsObject(lp) ? cJSON_GetObjectItemCaseSensitive(lp, "content") : NULL;
  v->logprobs = cJSON_IsArray(lpc) ? lpc : NULL;
  return 0;
}

/* ---- the scan ---- */
enum { MAX_DEPTH = 64 };

typedef struct {
  const char *p, *end; /* the text not yet read */
  tl_buf *out;         /* the decoded strings, one after another, each with its NUL; reserved for
                          the whole text first, so appending never moves them */
} scan;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static void ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

static int hex4(const char *p, uint32_t *u) {
  uint32_t h = 0;
  for (int i = 0; i < 4; i++) {
    const char c = p[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    h = h << 4 | (uint32_t)d;
  }
  *u = h;
  return 1;
}

/* The string at s->p (a '"'). dst: decoded into s->out, NUL-terminated, *dst its start; NULL:
 * only read. 1, or 0 to decline. The decoded bytes and the NUL never outnumber the string's
 * bytes with its quotes, so the reserved buffer has room. */
static int str(scan *s, const char **dst) {
  const char *p = s->p + 1, *e = s->end;
  const size_t start = s->out->len;
  for (;;) {
    const size_t k = tl_json_plain_len(p, (size_t)(e - p));
    if (dst) tl_buf_append(s->out, p, k);
    p += k;
    if (p == e || (unsigned char)*p < 0x20) return 0;
    if (*p == '"') break;
    if (e - p < 2) return 0; /* a backslash */
    char c;
    switch (p[1]) {
      case '"': c = '"'; break;
      case '\\': c = '\\'; break;
      case '/': c = '/'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': {
        uint32_t u, lo;
        size_t used = 6;
        if (e - p < 6 || !hex4(p + 2, &u) || (u >= 0xDC00 && u <= 0xDFFF)) return 0;
        if (u >= 0xD800 && u <= 0xDBFF) {
          if (e - p < 12 || p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF) return 0;
          u = 0x10000 + (((u & 0x3FF) << 10) | (lo & 0x3FF));
          used = 12;
        }
        if (u == 0) return 0;
        if (dst) tl_utf8_append(s->out, u);
        p += used;
        continue;
      }
      default: return 0;
    }
    if (dst) tl_buf_append(s->out, &c, 1);
    p += 2;
  }
  if (dst) {
    tl_buf_append(s->out, "", 1); /* its NUL, kept: the next string starts after it */
    *dst = s->out->data + start;
  }
  s->p = p + 1;
  return 1;
}

/* The number at s->p. val: it must be an integer of at most 15 digits, and *val is set to it.
 * 1, or 0 to decline. */
static int num(scan *s, double *val) {
  const char *p = s->p, *e = s->end;
  int neg = 0, integer = 1;
  if (p < e && *p == '-') p++, neg = 1;
  const char *d0 = p;
  if (p == e || !is_digit(*p)) return 0;
  if (*p == '0') p++;
  else
    while (p < e && is_digit(*p)) p++;
  const size_t nd = (size_t)(p - d0);
  if (p < e && *p == '.') {
    integer = 0;
    if (++p == e || !is_digit(*p)) return 0;
    while (p < e && is_digit(*p)) p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    integer = 0;
    if (++p < e && (*p == '+' || *p == '-')) p++;
    if (p == e || !is_digit(*p)) return 0;
    while (p < e && is_digit(*p)) p++;
  }
  if (p - s->p > 63) return 0;
  if (val) {
    if (!integer || nd > 15) return 0;
    double x = 0; /* exact: below 2^53 */
    for (size_t i = 0; i < nd; i++) x = x * 10 + (d0[i] - '0');
    *val = neg ? -x : x;
  }
  s->p = p;
  return 1;
}

static int lit(scan *s, const char *w, size_t n) {
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n)) return 0;
  s->p += n;
  return 1;
}

/* The next item of the object or array being read (close: its '}' or ']'): first = 1 with s->p
 * at its opening bracket, else after the previous item's value. 1: s->p is at the item; 2: the
 * container ended (s->p past close); 0: declined. */
static int next_item(scan *s, int first, char close) {
  if (first) s->p++;
  ws(s);
  if (s->p == s->end) return 0;
  if (*s->p == close) return s->p++, 2;
  if (!first) {
    if (*s->p != ',') return 0;
    s->p++;
    ws(s);
  }
  return s->p < s->end;
}

/* The next member of the object being read, as next_item; with 1, *k (*kn bytes, no escapes) is
 * its key and s->p is at its value. */
static int member(scan *s, int first, const char **k, size_t *kn) {
  const int r = next_item(s, first, '}');
  if (r != 1) return r;
  if (*s->p != '"') return 0;
  const char *b = s->p + 1;
  const size_t len = tl_json_plain_len(b, (size_t)(s->end - b));
  if (b + len == s->end || b[len] != '"') return 0;
  *k = b;
  *kn = len;
  s->p = b + len + 1;
  ws(s);
  if (s->p == s->end || *s->p != ':') return 0;
  s->p++;
  ws(s);
  return s->p < s->end;
}

/* The next element of the array being read, as next_item. */
static int element(scan *s, int first) { return next_item(s, first, ']'); }

#define KEY(lit_) (kn == sizeof lit_ - 1 && !memcmp(k, lit_, kn))

/* Reads over the value at s->p (inside depth containers). 1, or 0 to decline. */
static int skip(scan *s, int depth) {
  if (s->p == s->end) return 0;
  const char *k;
  size_t kn;
  int r, first;
  switch (*s->p) {
    case '"': return str(s, NULL);
    case '{':
      if (depth >= MAX_DEPTH) return 0;
      for (first = 1; (r = member(s, first, &k, &kn)) != 2; first = 0)
        if (!r || !skip(s, depth + 1)) return 0;
      return 1;
    case '[':
      if (depth >= MAX_DEPTH) return 0;
      for (first = 1; (r = element(s, first)) != 2; first = 0)
        if (!r || !skip(s, depth + 1)) return 0;
      return 1;
    case 't': return lit(s, "true", 4);
    case 'f': return lit(s, "false", 5);
    case 'n': return lit(s, "null", 4);
    default: return num(s, NULL);
  }
}

/* A string member's value into *dst when it is a string; any other value is read over (the
 * field is then absent). */
static int opt_str(scan *s, const char **dst, int depth) { return *s->p == '"' ? str(s, dst) : skip(s, depth); }

/* Sets bit in *seen; 0 when it was set already (a repeated member: declined). */
static int once(unsigned *seen, unsigned bit) {
  if (*seen & bit) return 0;
  *seen |= bit;
  return 1;
}

/* choices[0].message (s->p at its '{'), at depth 4. */
static int message(scan *s, tl_oai_reply *v) {
  const char *k, *rc = NULL, *rs = NULL;
  size_t kn;
  unsigned seen = 0;
  int r, ok;
  for (int first = 1; (r = member(s, first, &k, &kn)) != 2; first = 0) {
    if (!r) return 0;
    if (KEY("content")) ok = once(&seen, 1) && (*s->p == '"' ? str(s, &v->content) : lit(s, "null", 4));
    else if (KEY("reasoning_content")) ok = once(&seen, 2) && opt_str(s, &rc, 4);
    else if (KEY("reasoning")) ok = once(&seen, 4) && opt_str(s, &rs, 4);
    else ok = skip(s, 4);
    if (!ok) return 0;
  }
  v->reasoning = rc ? rc : rs;
  return 1;
}

/* choices[0] (s->p at its '{'), at depth 3. */
static int choice0(scan *s, int completions, tl_oai_reply *v) {
  const char *k;
  size_t kn;
  unsigned seen = 0;
  int r, ok, have = 0;
  for (int first = 1; (r = member(s, first, &k, &kn)) != 2; first = 0) {
    if (!r) return 0;
    if (KEY("message")) {
      ok = once(&seen, 1) && (completions ? skip(s, 3) : *s->p == '{' && message(s, v));
      have |= !completions;
    } else if (KEY("text")) {
      ok = once(&seen, 2) && (completions ? *s->p == '"' && str(s, &v->content) : skip(s, 3));
      have |= completions;
    } else if (KEY("finish_reason")) {
      ok = once(&seen, 4) && opt_str(s, &v->finish_reason, 3);
    } else if (KEY("logprobs")) {
      ok = once(&seen, 8) && lit(s, "null", 4);
    } else {
      ok = skip(s, 3);
    }
    if (!ok) return 0;
  }
  return have;
}

/* usage (s->p at its '{'), at depth 2. */
static int usage(scan *s, tl_oai_reply *v) {
  const char *k;
  size_t kn;
  unsigned seen = 0;
  int r, ok;
  for (int first = 1; (r = member(s, first, &k, &kn)) != 2; first = 0) {
    if (!r) return 0;
    double *dst = KEY("prompt_tokens") ? &v->prompt_tokens : KEY("completion_tokens") ? &v->completion_tokens : NULL;
    if (dst) ok = once(&seen, dst == &v->prompt_tokens ? 1 : 2) && (*s->p == '-' || is_digit(*s->p) ? num(s, dst) : skip(s, 2));
    else ok = skip(s, 2);
    if (!ok) return 0;
  }
  return 1;
}

/* The reply at s->p. */
static int reply(scan *s, int completions, tl_oai_reply *v) {
  ws(s);
  if (s->p == s->end || *s->p != '{') return 0;
  const char *k;
  size_t kn;
  unsigned seen = 0;
  int r, ok, have_c0 = 0;
  for (int first = 1; (r = member(s, first, &k, &kn)) != 2; first = 0) {
    if (!r) return 0;
    if (KEY("id")) {
      ok = once(&seen, 1) && opt_str(s, &v->id, 1);
    } else if (KEY("model")) {
      ok = once(&seen, 2) && opt_str(s, &v->model, 1);
    } else if (KEY("usage")) {
      ok = once(&seen, 4) && (*s->p == '{' ? usage(s, v) : skip(s, 1));
    } else if (KEY("choices")) {
      ok = once(&seen, 8) && *s->p == '[';
      for (int f2 = 1, i = 0; ok; f2 = 0, i++) {
        const int e = element(s, f2);
        if (e == 2) {
          v->n_choices = i;
          break;
        }
        if (!e) ok = 0;
        else if (i > 0) ok = skip(s, 2);
        else ok = have_c0 = *s->p == '{' && choice0(s, completions, v);
      }
    } else {
      ok = skip(s, 1);
    }
    if (!ok) return 0;
  }
  ws(s);
  return s->p == s->end && have_c0;
}

int tl_oai_reply_scan(const char *text, size_t n, int completions, tl_oai_reply *v, tl_buf *strings) {
  tl_buf_reset(strings);
  if (tl_buf_reserve(strings, n + 1) != TL_OK) return 0;
  memset(v, 0, sizeof *v);
  v->prompt_tokens = v->completion_tokens = NAN;
  scan s = {text, text + n, strings};
  return reply(&s, completions, v);
}
