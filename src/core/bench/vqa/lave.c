/* lave.c - LAVE: demonstrations, prompt, judge rating, expected rating, human votes,
 * Krippendorff's alpha (lave.h has the contracts; docs/LAVE.md the decisions and sources).
 *
 * Python semantics mirrored (the reference is mair-lab/lave lave.py / lave_ft5.py, read for the
 * spec; none of its code is used here):
 *   - sorted() on str: strcmp on valid UTF-8 (byte order = code-point order);
 *   - Counter equality: byte equality; most_common(1): the first-inserted of the maximal counts;
 *   - str.strip() / \s: tl_uni_isspace (Python's str.isspace());
 *   - \w (for \b): tl_uni_isalnum or '_'. */
#include "lave.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"
#include "tally/stats.h"
#include "tally/think.h"

#define DEMOS_MAX_BYTES (64u * 1024u * 1024u)

/* ---- small UTF-8 helpers ----------------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

/* s[0..n) equals the lower-case ASCII literal lit[0..n) up to ASCII case. */
static int ascii_ieq(const char *s, const char *lit, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ascii_lower(s[i]) != lit[i]) return 0;
  return 1;
}

/* The code point that ends at s[i] (i > 0): returns its start and sets *cp; a malformed
 * sequence counts as the single byte s[i-1] with *cp = U+FFFD (neither space nor word). */
static size_t prev_cp(const char *s, size_t i, uint32_t *cp) {
  size_t j = i - 1;
  while (j > 0 && i - j < 4 && ((unsigned char)s[j] & 0xC0) == 0x80) j--;
  if (tl_utf8_decode(s + j, i - j, cp) == i - j) return j;
  *cp = 0xFFFD;
  return i - 1;
}


/* The end of s[0..n) with trailing whitespace dropped. */
static size_t rstrip_end(const char *s, size_t n) {
  while (n > 0) {
    uint32_t cp;
    size_t j = prev_cp(s, n, &cp);
    if (!tl_uni_isspace(cp)) break;
    n = j;
  }
  return n;
}

static int is_word(uint32_t cp) { return cp == '_' || tl_uni_isalnum(cp); }

/* ---- demonstrations ----------------------------------------------------------------------------- */

/* 1-based line of byte offset `off` of s. */
static long line_at(const char *s, size_t off) {
  long line = 1;
  for (size_t i = 0; i < off; i++) line += s[i] == '\n';
  return line;
}

/* lines[k] = the line where element k of the top-level array in s starts, for k < n. s is JSON
 * text that cJSON parsed into an array, so one string-aware pass over it finds the elements. */
static void element_lines(const char *s, long *lines, size_t n) {
  long line = 1;
  int depth = 0, in_str = 0, want = 0;
  size_t k = 0;
  for (const char *p = s; *p && k < n; p++) {
    char c = *p;
    if (in_str) {
      if (c == '\\' && p[1]) p++;
      else if (c == '"') in_str = 0;
      continue;
    }
    if (c == '\n') line++;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (depth == 1 && want && c != ']') {
      lines[k++] = line;
      want = 0;
    }
    if (c == '"') in_str = 1;
    else if (c == '[' || c == '{') want = ++depth == 1;
    else if (c == ']' || c == '}') depth--;
    else if (c == ',' && depth == 1) want = 1;
  }
}

static void demo_release(tl_lave_demo *d) {
  free(d->question);
  for (size_t i = 0; i < d->nrefs; i++) free(d->refs[i]);
  free(d->refs);
  free(d->prediction);
  free(d->output);
  free(d->explanation);
  free(d->caption);
}

void tl_lave_demos_free(tl_lave_demos *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n; i++) demo_release(&d->v[i]);
  free(d->v);
  free(d->name);
  free(d);
}

/* The string field `key` of element o, copied into *dst. 0 ok, 1 missing or not a string,
 * -1 out of memory. */
static int take_str(const cJSON *o, const char *key, char **dst) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(v)) return 1;
  return (*dst = tl_strdup(v->valuestring)) ? 0 : -1;
}

/* Fills d from element o; on a problem returns TL_EINPUT/TL_ENOMEM with err naming it. */
static tl_status demo_from_json(const cJSON *o, tl_lave_demo *d, const char *name, size_t idx,
                                tl_err *err) {
#define BAD(...) tl_err_set(err, TL_EINPUT, "%s: element %zu (line %ld): " __VA_ARGS__)
  if (!cJSON_IsObject(o)) return BAD("must be an object", name, idx, d->line);
  static const char *const KEYS[] = {"question", "prediction", "output", "explanation"};
  char **dst[] = {&d->question, &d->prediction, &d->output, &d->explanation};
  for (int k = 0; k < 4; k++) {
    int r = take_str(o, KEYS[k], dst[k]);
    if (r < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
    if (r) return BAD("'%s' must be a string", name, idx, d->line, KEYS[k]);
  }
  const cJSON *cap = cJSON_GetObjectItemCaseSensitive(o, "caption");
  if (cap) {
    int r = take_str(o, "caption", &d->caption);
    if (r < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
    if (r) return BAD("'caption' must be a string when given", name, idx, d->line);
  }
  const cJSON *refs = cJSON_GetObjectItemCaseSensitive(o, "references");
  int nr = cJSON_IsArray(refs) ? cJSON_GetArraySize(refs) : 0;
  if (nr <= 0) return BAD("'references' must be a non-empty array of strings", name, idx, d->line);
  if (!(d->refs = calloc((size_t)nr, sizeof *d->refs)))
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  const cJSON *r;
  cJSON_ArrayForEach(r, refs) {
    if (!cJSON_IsString(r))
      return BAD("references[%zu] must be a string", name, idx, d->line, d->nrefs);
    if (!(d->refs[d->nrefs] = tl_strdup(r->valuestring)))
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    d->nrefs++;
  }
  return TL_OK;
#undef BAD
}

/* tl_json_check callback: keeps the first issue as the error and stops. */
typedef struct {
  const char *name;
  tl_err *err;
  int hit;
} json_issue_ctx;

static int json_issue(void *ctx, const tl_json_issue *is) {
  json_issue_ctx *c = ctx;
  if (is->kind == TL_JSON_DUP_KEY)
    tl_err_set(c->err, TL_EINPUT, "%s: duplicate key '%s' at line %ld", c->name, is->key, is->line);
  else
    tl_err_set(c->err, TL_EINPUT, "%s: \\u0000 escape (a NUL character) at line %ld", c->name,
               is->line);
  c->hit = 1;
  return 1;
}

/* The text checks before the elements: UTF-8, JSON, what cJSON reads wrong, the shape. s is
 * NUL-terminated at s[len] with no NUL before. On success *root is the array (caller deletes). */
static tl_status parse_root(const char *s, size_t len, const char *name, cJSON **root,
                            tl_err *err) {
  size_t bad;
  if (!tl_utf8_valid(s, len, &bad))
    return tl_err_set(err, TL_EINPUT, "%s: invalid UTF-8 at line %ld", name, line_at(s, bad));
  const char *end = NULL;
  *root = cJSON_ParseWithOpts(s, &end, 1);
  if (!*root) {
    size_t off = end ? (size_t)(end - s) : 0;
    long line = line_at(s, off), col = 1;
    while (off > 0 && s[off - 1] != '\n') off--, col++;
    return tl_err_set(err, TL_EINPUT, "%s: malformed JSON at line %ld, column %ld", name, line, col);
  }
  json_issue_ctx ic = {name, err, 0};
  tl_json_check(s, *root, json_issue, &ic);
  const char *why = ic.hit ? NULL
                    : !cJSON_IsArray(*root) ? "must be a JSON array of demonstrations"
                    : cJSON_GetArraySize(*root) == 0 ? "has no demonstrations" : NULL;
  if (why) tl_err_set(err, TL_EINPUT, "%s: %s", name, why);
  if (ic.hit || why) {
    cJSON_Delete(*root);
    *root = NULL;
    return TL_EINPUT;
  }
  return TL_OK;
}

/* The elements of root (a non-empty array parsed from s) into a new set *out. */
static tl_status demos_build(const char *s, const cJSON *root, const char *name,
                             tl_lave_demos **out, tl_err *err) {
  size_t n = (size_t)cJSON_GetArraySize(root);
  tl_lave_demos *d = calloc(1, sizeof *d);
  long *lines = calloc(n, sizeof *lines);
  tl_status st = TL_OK;
  if (!d || !lines || !(d->v = calloc(n, sizeof *d->v)) || !(d->name = tl_strdup(name))) {
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
  } else {
    element_lines(s, lines, n);
    const cJSON *o;
    cJSON_ArrayForEach(o, root) {
      tl_lave_demo *dm = &d->v[d->n++]; /* counted at once: a half-filled one is freed too */
      dm->line = lines[d->n - 1];
      if ((st = demo_from_json(o, dm, name, d->n - 1, err)) != TL_OK) break;
    }
  }
  free(lines);
  if (st != TL_OK) tl_lave_demos_free(d);
  else *out = d;
  return st;
}

tl_status tl_lave_demos_parse(const char *text, size_t len, const char *name,
                              tl_lave_demos **out, tl_err *err) {
  *out = NULL;
  if (!name) name = "demonstrations";
  const char *nul = memchr(text, 0, len);
  if (nul) /* cJSON would stop there */
    return tl_err_set(err, TL_EINPUT, "%s: NUL byte at line %ld", name, line_at(text, (size_t)(nul - text)));
  char *s = tl_strndup(text, len); /* NUL-terminated: cJSON and tl_json_check need it */
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  cJSON *root = NULL;
  tl_status st = parse_root(s, len, name, &root, err);
  if (st == TL_OK) st = demos_build(s, root, name, out, err);
  cJSON_Delete(root);
  free(s);
  return st;
}

tl_status tl_lave_demos_load(const char *path, tl_lave_demos **out, tl_err *err) {
  *out = NULL;
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, DEMOS_MAX_BYTES, &b, err);
  if (st == TL_EINPUT) tl_err_set(err, TL_EINPUT, "%s: larger than 64 MiB: not a demonstrations file", path);
  if (st == TL_OK) st = tl_lave_demos_parse(b.data, b.len, path, out, err);
  tl_buf_release(&b);
  return st;
}

/* ---- references -------------------------------------------------------------------------------- */

typedef struct {
  const char *s;
  size_t i;
} ref_at;

static int cmp_ref_at(const void *a, const void *b) {
  const ref_at *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* cnt[i] = how many references equal refs[i] (Counter(refs)[refs[i]]); returns the largest
 * count (0 for n == 0), or (size_t)-1 when out of memory. O(n log n) string comparisons. */
static size_t count_refs(const char *const *refs, size_t n, size_t *cnt) {
  if (n == 0) return 0;
  ref_at *v = malloc(n * sizeof *v);
  if (!v) return (size_t)-1;
  for (size_t i = 0; i < n; i++) v[i] = (ref_at){refs[i], i};
  qsort(v, n, sizeof *v, cmp_ref_at);
  size_t max = 0;
  for (size_t a = 0, b; a < n; a = b) {
    for (b = a + 1; b < n && strcmp(v[a].s, v[b].s) == 0;) b++;
    for (size_t k = a; k < b; k++) cnt[v[k].i] = b - a;
    if (b - a > max) max = b - a;
  }
  free(v);
  return max;
}

tl_status tl_lave_filter_refs(const char *const *refs, size_t n, const char **kept,
                              size_t *nkept) {
  *nkept = 0;
  if (n == 0) return TL_OK;
  size_t *cnt = malloc(n * sizeof *cnt);
  size_t max = cnt ? count_refs(refs, n, cnt) : (size_t)-1;
  if (max == (size_t)-1) {
    free(cnt);
    return TL_ENOMEM;
  }
  /* c / max <= 0.25 drops: with integers that is 4c <= max (the quotient of two counts below
   * 2^50 rounds to a double on the same side of 0.25) */
  for (size_t i = 0; i < n; i++)
    if (4 * cnt[i] > max) kept[(*nkept)++] = refs[i];
  free(cnt);
  return TL_OK;
}

tl_status tl_lave_format_refs(const char *const *refs, size_t n, tl_buf *out) {
  if (n == 0) return TL_OK;
  const char **v = malloc(n * sizeof *v);
  if (!v) return TL_ENOMEM;
  memcpy(v, refs, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_str); /* equal strings are identical: stability cannot show */
  size_t start = out->len;
  tl_status st = TL_OK;
  for (size_t i = 0; i < n && st == TL_OK; i++) {
    if (i) st = tl_buf_append(out, ", ", 2);
    if (st == TL_OK) st = tl_buf_append(out, "'", 1);
    if (st == TL_OK) st = tl_buf_puts(out, v[i]);
    if (st == TL_OK) st = tl_buf_append(out, "'", 1);
  }
  if (st != TL_OK) {
    out->len = start;
    out->data[start] = 0;
  }
  free(v);
  return st;
}

/* s.lower().rstrip('.') in ['yes', 'no']. Only ASCII can spell yes/no after lower(): the only
 * non-ASCII characters whose lower case is ASCII are U+212A KELVIN SIGN ('k') and U+0130 ('i'
 * plus U+0307), and none of y, e, s, n, o has such a source; so ASCII folding is exact. */
static int yes_or_no(const char *s) {
  size_t n = strlen(s);
  while (n > 0 && s[n - 1] == '.') n--;
  return (n == 3 && ascii_ieq(s, "yes", 3)) || (n == 2 && ascii_ieq(s, "no", 2));
}

int tl_lave_is_binary(const char *const *refs, size_t n) {
  if (n == 0) return 0;
  size_t *cnt = malloc(n * sizeof *cnt);
  if (!cnt || count_refs(refs, n, cnt) == (size_t)-1) {
    free(cnt);
    return -1;
  }
  size_t best = 0; /* the first reference of the largest count */
  for (size_t i = 1; i < n; i++)
    if (cnt[i] > cnt[best]) best = i;
  free(cnt);
  return yes_or_no(refs[best]);
}

/* ---- prompt ------------------------------------------------------------------------------------ */

tl_status tl_lave_task_definition(const tl_lave_opts *opts, tl_buf *out) {
  static const char PLAIN[] =
      "You are given a question, a set of gold-standard reference answers written by experts, "
      "and a candidate answer. Please rate the accuracy of the candidate answer for the question "
      "considering the reference answers.";
  static const char CAPTION[] =
      "You are given an image description, a question about the image, a set of gold-standard "
      "reference answers written by experts, and a candidate answer. Please rate the accuracy of "
      "the candidate answer for the question considering the reference answers and the image "
      "description. In case of discrepancy, prioritize the reference answers.";
  static const char SCALE[] =
      " Use a scale of 1-3, with 1 indicating an incorrect or irrelevant answer, 2 indicating an "
      "ambiguous or incomplete answer, and 3 indicating a correct answer.";
  static const char RATIONALE[] = " Give the rationale before rating.";
  static const char BINARY[] =
      "\n\nTHIS IS VERY IMPORTANT: A binary question should only be answered with 'yes' or 'no', "
      "otherwise the candidate answer is incorrect (rating=1).";
  size_t start = out->len;
  tl_status st = tl_buf_puts(out, opts->use_caption ? CAPTION : PLAIN);
  if (st == TL_OK) st = tl_buf_puts(out, SCALE);
  if (st == TL_OK && opts->rationalize) st = tl_buf_puts(out, RATIONALE);
  if (st == TL_OK) st = tl_buf_puts(out, BINARY);
  if (st != TL_OK) {
    out->len = start;
    out->data[start] = 0;
  }
  return st;
}

/* One example of the prompt, as example_template.format(...): the caption (cap[0..caplen),
 * when cap != NULL), question, formatted references, prediction, and "Output:" followed, for a
 * demo (output != NULL), by " <output>\n\n". The test example ends at "Output:": the reference
 * writes "Output: " and its final strip() removes exactly that space (the prompt starts with
 * "You", so the strip changes nothing else). */
static tl_status put_example(tl_buf *b, const char *cap, size_t caplen, const char *question,
                             const char *const *refs, size_t nrefs, const char *prediction,
                             const char *explanation, const char *output) {
  tl_status st = TL_OK;
  if (cap) {
    st = tl_buf_puts(b, "Image description: '");
    if (st == TL_OK) st = tl_buf_append(b, cap, caplen);
    if (st == TL_OK) st = tl_buf_puts(b, "'\n");
  }
  if (st == TL_OK) st = tl_buf_printf(b, "Question: '%s'\nReference answers: ", question);
  if (st == TL_OK) st = tl_lave_format_refs(refs, nrefs, b);
  if (st == TL_OK) st = tl_buf_printf(b, "\nCandidate answer: '%s'\nOutput:", prediction);
  if (st == TL_OK && output) {
    if (explanation) st = tl_buf_printf(b, " %s So rating=%s\n\n", explanation, output);
    else st = tl_buf_printf(b, " %s\n\n", output);
  }
  return st;
}

/* The checks of tl_lave_prompt that do not depend on the chosen set (lave.h has what each
 * error means). */
static tl_status check_args(const tl_lave_opts *o, const char *question, const char *const *refs,
                            size_t nrefs, const char *prediction, const char *caption,
                            tl_err *err) {
  if (o->num_shots < 0) return tl_err_set(err, TL_EUSAGE, "LAVE: num_shots must be >= 0, not %d", o->num_shots);
  if (!question || !prediction || (nrefs && !refs))
    return tl_err_set(err, TL_EUSAGE, "LAVE: the question, references and prediction are required");
  for (size_t i = 0; i < nrefs; i++)
    if (!refs[i]) return tl_err_set(err, TL_EUSAGE, "LAVE: reference %zu is NULL", i);
  if (nrefs == 0 && (o->filter_refs || o->num_shots > 0))
    return tl_err_set(err, TL_EINPUT, "LAVE: the test example has no reference answers");
  if (o->use_caption && !caption)
    return tl_err_set(err, TL_EINPUT, "LAVE: use_caption needs the test example's image description");
  return TL_OK;
}

/* The checks on the chosen set: it exists when demos are wanted, and with use_caption each of
 * its first nshots demos has a caption. */
static tl_status check_set(const tl_lave_opts *o, const tl_lave_demos *set, int bin,
                           size_t nshots, tl_err *err) {
  if (o->num_shots > 0 && !set)
    return tl_err_set(err, TL_EUSAGE, "LAVE: no %s demonstrations were given", bin ? "binary" : "general");
  for (size_t i = 0; o->use_caption && i < nshots; i++)
    if (!set->v[i].caption)
      return tl_err_set(err, TL_EINPUT, "%s: element %zu (line %ld) has no 'caption' (use_caption)",
                        set->name, i, set->v[i].line);
  return TL_OK;
}

/* The prompt body after the checks: appended to b. */
static tl_status prompt_render(const tl_lave_opts *o, const tl_lave_demos *set, size_t nshots,
                               const char *question, const char *const *refs, size_t nrefs,
                               const char *prediction, const char *caption, tl_buf *b) {
  tl_status st = tl_lave_task_definition(o, b);
  if (st == TL_OK) st = tl_buf_puts(b, "\n\n");
  for (size_t i = 0; i < nshots && st == TL_OK; i++) {
    const tl_lave_demo *d = &set->v[i];
    const char *cap = o->use_caption ? d->caption : NULL;
    st = put_example(b, cap, cap ? strlen(cap) : 0, d->question, (const char *const *)d->refs,
                     d->nrefs, d->prediction, o->rationalize ? d->explanation : NULL, d->output);
  }
  if (st != TL_OK) return st;
  const char **kept = NULL;
  size_t nkept = nrefs;
  if (o->filter_refs && nrefs) {
    if (!(kept = malloc(nrefs * sizeof *kept))) return TL_ENOMEM;
    st = tl_lave_filter_refs(refs, nrefs, kept, &nkept);
  }
  const char *cap = NULL;
  size_t caplen = 0;
  if (o->use_caption) { /* caption.strip() */
    size_t n = strlen(caption), a = tl_utf8_skip_space(caption, n, 0);
    cap = caption + a;
    caplen = a < n ? rstrip_end(caption, n) - a : 0;
  }
  if (st == TL_OK)
    st = put_example(b, cap, caplen, question, kept ? kept : refs, nkept, prediction, NULL, NULL);
  free(kept);
  return st;
}

tl_status tl_lave_prompt(const tl_lave_opts *opts, const tl_lave_demos *general,
                         const tl_lave_demos *binary, const char *question,
                         const char *const *refs, size_t nrefs, const char *prediction,
                         const char *caption, tl_buf *out, int *is_binary, tl_err *err) {
  static const tl_lave_opts DEF = TL_LAVE_OPTS_DEFAULT;
  const tl_lave_opts *o = opts ? opts : &DEF;
  tl_status st = tl_utf8_locale_check(err); /* str.strip() needs Unicode whitespace */
  if (st == TL_OK) st = check_args(o, question, refs, nrefs, prediction, caption, err);
  if (st != TL_OK) return st;
  int bin = tl_lave_is_binary(refs, nrefs); /* on the unfiltered references, as select_demos */
  if (bin < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const tl_lave_demos *set = bin ? binary : general;
  size_t nshots = (size_t)o->num_shots;
  if (!set || nshots > set->n) nshots = set ? set->n : 0;
  if ((st = check_set(o, set, bin, nshots, err)) != TL_OK) return st;
  size_t start = out->len;
  st = prompt_render(o, set, nshots, question, refs, nrefs, prediction, caption, out);
  if (st != TL_OK) {
    out->len = start;
    out->data[start] = 0;
    return tl_err_set(err, st, "out of memory");
  }
  if (is_binary) *is_binary = bin;
  return TL_OK;
}

/* ---- judge rating ------------------------------------------------------------------------------ */

/* The last  rating \s* = \s* [0-9]+(\.[0-9]+)?  in v[0..n) with "rating" (ASCII, any case) not
 * preceded by a word character: 1 with the number at v[*a..*b), else 0. One forward pass: a
 * candidate only reads the blanks and digits after its own "rating". */
static int last_rating_eq(const char *v, size_t n, size_t *a, size_t *b) {
  int found = 0;
  for (size_t i = 0; i + 6 <= n; i++) {
    if (ascii_lower(v[i]) != 'r' || !ascii_ieq(v + i, "rating", 6)) continue;
    uint32_t cp;
    if (i > 0 && (prev_cp(v, i, &cp), is_word(cp))) continue;
    size_t j = tl_utf8_skip_space(v, n, i + 6);
    if (j >= n || v[j] != '=') continue;
    j = tl_utf8_skip_space(v, n, j + 1);
    if (j >= n || !is_digit(v[j])) continue;
    size_t s = j;
    while (j < n && is_digit(v[j])) j++;
    if (j + 1 < n && v[j] == '.' && is_digit(v[j + 1]))
      for (j++; j < n && is_digit(v[j]);) j++;
    *a = s;
    *b = j;
    found = 1;
    i = j - 1;
  }
  return found;
}

/* The last non-whitespace character of v[0..n) when it is '1', '2' or '3' standing alone (the
 * character before it is no word character, '.' or ','): its digit, else 0. */
static int last_char_rating(const char *v, size_t n) {
  size_t e = rstrip_end(v, n);
  if (e == 0 || v[e - 1] < '1' || v[e - 1] > '3') return 0;
  if (e >= 2) {
    uint32_t cp;
    prev_cp(v, e - 1, &cp);
    if (is_word(cp) || cp == '.' || cp == ',') return 0;
  }
  return v[e - 1] - '0';
}

static void rating_set(tl_lave_rating *out, tl_pstatus st, const char *rule, int r) {
  static const char *const DIGIT[4] = {NULL, "1", "2", "3"};
  out->status = st;
  out->rule = rule;
  out->rating = st == TL_PS_OK ? r : 0;
  out->score = st == TL_PS_OK ? (r - 1) / 2.0 : NAN;
  out->answer = st == TL_PS_OK && r >= 1 && r <= 3 ? DIGIT[r] : NULL;
}

/* Rules 2-4 of tl_lave_rate on the visible text. */
static void rate_visible(const char *v, size_t n, tl_lave_rating *out) {
  size_t a, b;
  int r;
  if (last_rating_eq(v, n, &a, &b)) {
    if (b - a == 1 && v[a] >= '1' && v[a] <= '3') rating_set(out, TL_PS_OK, "rating_eq", v[a] - '0');
    else rating_set(out, TL_PS_OUT_OF_RANGE, "out_of_range", 0);
  } else if ((r = last_char_rating(v, n)) != 0) {
    rating_set(out, TL_PS_OK, "last_char", r);
  } else {
    rating_set(out, TL_PS_NO_ANSWER, "no_rating", 0);
  }
}

tl_status tl_lave_rate(const char *text, int compat_fallback, tl_lave_rating *out) {
  rating_set(out, TL_PS_NO_ANSWER, "no_rating", 0);
  if (!text) {
    rating_set(out, TL_PS_MISSING, "", 0);
    return TL_OK;
  }
  if (tl_utf8_locale_check(NULL) != TL_OK) return TL_EINTERNAL; /* \s, \w need it */
  tl_buf vis;
  tl_buf_init(&vis);
  const char *v;
  size_t vl;
  int th = tl_think_strip(text, strlen(text), &vis, &v, &vl);
  if (th == TL_THINK_NOMEM) {
    tl_buf_release(&vis);
    return TL_ENOMEM;
  }
  if (th == TL_THINK_UNTERMINATED) rating_set(out, TL_PS_UNTERMINATED, "unterminated_think", 0);
  else rate_visible(v, vl, out);
  tl_buf_release(&vis);
  if (compat_fallback && out->status != TL_PS_OK) {
    rating_set(out, TL_PS_OK, "compat_fallback_2", 2);
    out->answer = NULL; /* nothing was read */
  }
  return TL_OK;
}

/* ---- expected rating ----------------------------------------------------------------------------- */

/* The rating 1..3 that token t spells once stripped of whitespace, else 0. */
static int token_rating(const char *t) {
  size_t n = strlen(t), a = tl_utf8_skip_space(t, n, 0);
  if (a >= n) return 0;
  size_t e = rstrip_end(t, n);
  return e - a == 1 && t[a] >= '1' && t[a] <= '3' ? t[a] - '0' : 0;
}

static void expected_none(tl_lave_expected *out, const char *rule) {
  out->expected = out->score = NAN;
  out->mass = 0;
  out->status = TL_PS_NO_ANSWER;
  out->rule = rule;
}

tl_status tl_lave_expected_rating(const tl_lave_logprob *top, size_t n, tl_lave_expected *out) {
  expected_none(out, "no_rating");
  if (n && !top) return TL_EINPUT;
  if (tl_utf8_locale_check(NULL) != TL_OK) return TL_EINTERNAL;
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!top[i].token || isnan(top[i].logprob) || top[i].logprob == INFINITY) return TL_EINPUT;
    if (token_rating(top[i].token) && top[i].logprob > mx) mx = top[i].logprob;
  }
  if (mx == -INFINITY) return TL_OK; /* no rating token, or all of probability 0 */
  double w = 0, wr = 0, mass = 0;
  for (size_t i = 0; i < n; i++) {
    int r = token_rating(top[i].token);
    if (!r) continue;
    double p = exp(top[i].logprob - mx); /* in (0, 1], 1 for the largest */
    w += p;
    wr += p * r;
    mass += exp(top[i].logprob);
  }
  out->expected = wr / w;
  if (out->expected < 1) out->expected = 1; /* rounding can never leave [1, 3]; kept exact */
  if (out->expected > 3) out->expected = 3;
  out->score = (out->expected - 1) / 2;
  out->mass = mass;
  out->status = TL_PS_OK;
  out->rule = "logprob_expectation";
  return TL_OK;
}

/* text[0..end) ends with  rating \s* = \s*  where "rating" is not preceded by a word char. */
static int ends_with_rating_eq(const char *text, size_t end) {
  size_t i = rstrip_end(text, end);
  if (i == 0 || text[i - 1] != '=') return 0;
  i = rstrip_end(text, i - 1);
  if (i < 6 || !ascii_ieq(text + i - 6, "rating", 6)) return 0;
  i -= 6;
  uint32_t cp;
  return i == 0 || (prev_cp(text, i, &cp), !is_word(cp));
}

tl_status tl_lave_logprob_position(const cJSON *content, long *index, const char **rule) {
  *index = -1;
  *rule = "no_rating_token";
  if (!cJSON_IsArray(content)) return TL_EINPUT;
  if (tl_utf8_locale_check(NULL) != TL_OK) return TL_EINTERNAL;
  tl_buf text; /* the tokens so far, concatenated */
  tl_buf_init(&text);
  long i = 0, last = -1, after = -1;
  tl_status st = TL_OK;
  const cJSON *e;
  cJSON_ArrayForEach(e, content) {
    const cJSON *t = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "token") : NULL;
    if (!cJSON_IsString(t)) {
      st = TL_EINPUT;
      break;
    }
    if (token_rating(t->valuestring)) {
      last = i;
      if (ends_with_rating_eq(text.data, text.len)) after = i;
    }
    if ((st = tl_buf_puts(&text, t->valuestring)) != TL_OK) break;
    i++;
  }
  tl_buf_release(&text);
  if (st != TL_OK) return st;
  if (after >= 0) *index = after, *rule = "after_rating_eq";
  else if (last >= 0) *index = last, *rule = "last_rating_token";
  return TL_OK;
}

/* The (token, logprob) of a logprobs entry o; 0 ok, -1 malformed. */
static int read_logprob(const cJSON *o, tl_lave_logprob *lp) {
  const cJSON *t = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "token") : NULL;
  const cJSON *l = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "logprob") : NULL;
  if (!cJSON_IsString(t) || !cJSON_IsNumber(l)) return -1;
  lp->token = t->valuestring;
  lp->logprob = l->valuedouble;
  return 0;
}

tl_status tl_lave_expected_from_content(const cJSON *content, tl_lave_expected *out, long *index,
                                        tl_err *err) {
  expected_none(out, "no_rating_token");
  long at;
  const char *rule;
  tl_status st = tl_lave_logprob_position(content, &at, &rule);
  if (index) *index = at;
  if (st == TL_EINPUT)
    return tl_err_set(err, st, "logprobs.content must be an array of objects with a string 'token'");
  if (st != TL_OK) return tl_err_set(err, st, "%s", tl_strerror(st));
  if (at < 0) return TL_OK;
  const cJSON *e = cJSON_GetArrayItem(content, (int)at);
  const cJSON *top = cJSON_GetObjectItemCaseSensitive(e, "top_logprobs");
  if (top && !cJSON_IsArray(top) && !cJSON_IsNull(top))
    return tl_err_set(err, TL_EINPUT, "logprobs.content[%ld].top_logprobs must be an array", at);
  int n = cJSON_IsArray(top) ? cJSON_GetArraySize(top) : 0;
  tl_lave_logprob *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v) return tl_err_set(err, TL_ENOMEM, "out of memory");
  size_t k = 0;
  if (n == 0) { /* no alternatives: the token itself */
    if (read_logprob(e, &v[k++])) {
      free(v);
      return tl_err_set(err, TL_EINPUT, "logprobs.content[%ld] has no number 'logprob'", at);
    }
  } else {
    const cJSON *o;
    cJSON_ArrayForEach(o, top) {
      if (read_logprob(o, &v[k])) {
        free(v);
        return tl_err_set(err, TL_EINPUT,
                          "logprobs.content[%ld].top_logprobs[%zu] must be {\"token\": str, "
                          "\"logprob\": number}", at, k);
      }
      k++;
    }
  }
  st = tl_lave_expected_rating(v, k, out);
  free(v);
  if (st == TL_EINPUT) st = tl_err_set(err, st, "logprobs.content[%ld]: an infinite logprob", at);
  else if (st != TL_OK) st = tl_err_set(err, st, "%s", tl_strerror(st));
  return st;
}

/* ---- human votes, Krippendorff's alpha ------------------------------------------------------------ */

double tl_lave_human_from_votes(const int *votes, int n) {
  if (!votes || n != 5) return NAN;
  int yes = 0;
  for (int i = 0; i < n; i++) {
    if (votes[i] != 0 && votes[i] != 1) return NAN;
    yes += votes[i];
  }
  return yes >= 4 ? 1.0 : yes >= 2 ? 0.5 : 0.0;
}

double tl_kripp_alpha_nominal(const int *votes, size_t n_items, size_t n_coders) {
  return tl_kripp_alpha_votes(votes, n_items, n_coders, TL_KRIPP_NOMINAL); /* tally/stats.h */
}
