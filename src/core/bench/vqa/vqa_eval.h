/* vqa_eval.h - VQA accuracy: the official normalization, per-question scoring (exact integers
 * and Python's doubles), exact match, tally's soft VQA accuracy, and Python-compatible rounding
 * and number printing for the drop-in `tally score vqa`. Contract: docs/VQA.md.
 *
 * Core tier: pure C11 (plus tally/str.h's Unicode helpers, which need glibc's C.UTF-8 locale:
 * tl_utf8_locale_check). No regex engine is used: Python's \d (Unicode category Nd) is a
 * built-in table of the Unicode 14.0 decimal digits (vqa_eval.c), checked against PCRE2's \d by
 * the unit test.
 *
 * Strings: every text argument is a NUL-terminated (or ptr, length) valid UTF-8 string without
 * NUL bytes that the caller owns; the loaders (vqa_data.h) validate inputs. Invalid bytes are never produced from
 * valid input; given invalid input they are copied through unchanged (never a crash). Output
 * buffers (tl_buf) are reset and then filled: they must not alias an input. */
#ifndef TALLY_VQA_EVAL_H
#define TALLY_VQA_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"
#include "tally/str.h"

/* Which evaluator is reproduced (docs/VQA.md "Versions"). Values are never renumbered. */
typedef enum {
  TL_VQA_OFFICIAL = 0,   /* GT-Vision-Lab/VQA vqaEval.py @ a013f00 (2021), the default: step 1 on
                          * prediction and references; both fully normalized only when the
                          * prepared references are not all identical */
  TL_VQA_2017 = 1,       /* the same file before a013f00 (@ c4e6a0e, the Python 3 code of 2017):
                          * the prediction always prepared and fully normalized; the references
                          * raw, given processPunctuation only when the raw references differ */
  TL_VQA_NORMALIZED = 2, /* lmms-eval after PR #794: prediction and references always prepared
                          * and fully normalized */
  TL_VQA__COUNT
} tl_vqa_version;

/* "official", "2017", "normalized"; "?" for a value out of range. */
const char *tl_vqa_version_name(tl_vqa_version v);
/* The version named exactly `name`, or -1 (callers report an unknown name as an error). */
int tl_vqa_version_from_name(const char *name);
/* "official, 2017, normalized": the valid names, for messages. */
const char *tl_vqa_version_names(void);

/* ---- normalization (vqaEval.py's steps, Python 3 semantics) ------------------------------- */

/* Step 1: every '\n' and '\t' becomes ' ', then str.strip() (Unicode whitespace, as Python's
 * str.isspace: tl_uni_isspace). TL_OK or TL_ENOMEM. */
tl_status tl_vqa_prepare(const char *s, size_t n, tl_buf *out);

/* processPunctuation. For each of the 21 marks ; / [ ] " { } ( ) = + \ _ - > < @ ` , ? ! :
 * when the ORIGINAL text holds "p " or " p", or anywhere a digit ',' digit (commaStrip; \d is
 * Unicode Nd), every p is deleted, else every p becomes ' '. Then periodStrip: each '.' not
 * immediately followed (in that result) by a Unicode digit is deleted, left to right, at most
 * TL_VQA_PERIOD_COUNT of them (Python's re.sub got re.UNICODE = 32 as its count). Nothing else
 * changes. TL_OK or TL_ENOMEM. */
#define TL_VQA_PERIOD_COUNT 32
tl_status tl_vqa_punctuation(const char *s, size_t n, tl_buf *out);

/* processDigitArticle: str.lower() (tl_utf8_lower: Unicode simple lower-casing plus U+0130;
 * docs/VQA.md says where it differs from Python), split on runs of Unicode whitespace, each
 * word mapped through manualMap (none/zero..ten -> 0..10), the articles a/an/the dropped, then
 * each remaining word found among the 120 contraction keys replaced by its value (the table
 * verbatim, so the keys with capitals never match), joined by single spaces. TL_OK/TL_ENOMEM. */
tl_status tl_vqa_digit_article(const char *s, size_t n, tl_buf *out);

/* prepare + punctuation + digit_article: the full normalization of the official script.
 * TL_OK or TL_ENOMEM. */
tl_status tl_vqa_normalize(const char *s, size_t n, tl_buf *out);

/* 1 when processDigitArticle changes or drops the lower-case word w[0..n) on its own: a
 * manualMap key, an article, or a contraction key that can match; else 0. (For tests and the
 * fuzz target: a text made of single-spaced lower-case words for which this is 0, holding no
 * punctuation mark and no '.', is left unchanged by tl_vqa_normalize.) */
int tl_vqa_word_changes(const char *w, size_t n);

/* 1 when the code point is a Unicode decimal digit (category Nd, Unicode 14.0): Python's \d. */
int tl_vqa_is_digit(uint32_t cp);

/* ---- per-question accuracy ------------------------------------------------------------- */

/* The exact unit: an accuracy is an int64 count of 1/TL_VQA_ACC_SCALE. SCALE = 3*lcm(1..20),
 * so every accuracy with N <= 20 references (a multiple of 1/(3N)) is exact. */
#define TL_VQA_ACC_SCALE INT64_C(698377680)
#define TL_VQA_EXACT_REFS 20
/* Most references one question may have (more is TL_EINPUT): keeps every intermediate of the
 * integer form and the O(N^2) soft accuracy bounded. */
#define TL_VQA_MAX_REFS 10000

/* The leave-one-out accuracy of a prediction that equals k of n references, in units:
 *   acc = [k*min(1,(k-1)/3) + (n-k)*min(1,k/3)] / n   (n = 10: min(1, 0.3k); n = 1: 0).
 * Exact for n <= TL_VQA_EXACT_REFS; above, rounded half to even to the nearest unit and
 * *rounded (if non-NULL) set to 1 (else 0). Needs 1 <= n <= TL_VQA_MAX_REFS and k <= n (else
 * returns -1). */
int64_t tl_vqa_acc_units(size_t n, size_t k, int *rounded);

/* The same accuracy as vqaEval.py computes it in doubles: for i = 0..n-1 in order,
 * acc_i = min(1, float(#{j != i : eq[j]}) / 3), summed left to right from 0, divided by n.
 * eq[n]: 1 when reference j equals the prediction. n >= 1 (n = 0 returns 0). */
double tl_vqa_acc_python(const unsigned char *eq, size_t n);

/* A reusable scratch area for per-question scoring (normalized strings, code-point arrays,
 * the Levenshtein row): after warm-up a call allocates only for lower-casing. Not shared
 * between threads; one per thread. */
typedef struct tl_vqa_ws tl_vqa_ws;
tl_vqa_ws *tl_vqa_ws_new(void); /* NULL on allocation failure */
void tl_vqa_ws_free(tl_vqa_ws *ws); /* NULL ok */
/* Has ws keep the normalized form of every text it normalizes (up to 8 MiB of text, 131,072
 * texts; then it stops keeping) and look texts up there first: for a workspace that scores
 * many questions, whose answers repeat. Same results with or without it. */
void tl_vqa_ws_memo(tl_vqa_ws *ws);

/* The score of one question. */
typedef struct {
  int64_t acc;       /* accuracy in units of 1/TL_VQA_ACC_SCALE, in [0, SCALE] */
  double acc_py;     /* the accuracy as vqaEval.py computes it (tl_vqa_acc_python) */
  size_t n_refs;     /* N */
  size_t k;          /* references equal to the prediction under the version's rules */
  int exact;         /* exact match: k >= 1 (docs/VQA.md "Exact match") */
  int normalized;    /* 1 when the version normalized the references of this question
                      * (official: they differ after step 1; 2017: processPunctuation only,
                      * when the raw references differ; normalized: always) */
  int rounded;       /* acc was rounded (N > TL_VQA_EXACT_REFS) */
  double soft;       /* soft VQA accuracy, when TL_VQA_WANT_SOFT was given (else 0) */
  int soft_cut;      /* soft: a string was cut to TL_VQA_LEV_MAX_CP code points */
} tl_vqa_result;

#define TL_VQA_WANT_SOFT 1u

/* Scores `pred` against refs[n_refs] (each a NUL-terminated valid UTF-8 string, borrowed) under
 * version v: the version's normalization, then k, acc, acc_py and exact; with
 * TL_VQA_WANT_SOFT in flags also the soft accuracy. n_refs == 0 or > TL_VQA_MAX_REFS, a NULL
 * string or an unknown version is TL_EINPUT (err says which); TL_ENOMEM. */
tl_status tl_vqa_score(tl_vqa_ws *ws, tl_vqa_version v, const char *pred, const char *const *refs,
                       size_t n_refs, unsigned flags, tl_vqa_result *out, tl_err *err);

/* Exact match alone: *match = 1 when the prediction equals at least one reference after the
 * version's rules (official: normalized only when the references differ). Same errors. */
tl_status tl_vqa_exact_match(tl_vqa_ws *ws, tl_vqa_version v, const char *pred,
                             const char *const *refs, size_t n_refs, int *match, tl_err *err);

/* The official contractions table (tests): its size, its i-th key in the script's order (NULL
 * past the end), and the value of the word w[0..n) (NULL when w is no key) by the binary
 * search the normalization uses and by a linear scan of the script's table. */
size_t tl_vqa_contraction_count(void);
const char *tl_vqa_contraction_key(size_t i);
const char *tl_vqa_contraction(const char *w, size_t n);
const char *tl_vqa_contraction_scan(const char *w, size_t n);

/* ---- soft VQA accuracy (tally's definition; UNVERIFIED against Agrawal et al. 2023) ------- */

/* Strings longer than this many code points are cut to their first TL_VQA_LEV_MAX_CP code
 * points before the edit distance (the result's soft_cut / *cut says so). */
#define TL_VQA_LEV_MAX_CP 4096

/* Levenshtein distance between a[0..na) and b[0..nb) over Unicode code points (insert, delete,
 * substitute, each 1); each string is cut to TL_VQA_LEV_MAX_CP code points first (*cut = 1 when
 * one was). O(|a|*|b|) time, O(min(|a|,|b|)) memory (in ws). *cp_b gets b's code-point count
 * (after the cut). TL_OK or TL_ENOMEM. */
tl_status tl_vqa_levenshtein(tl_vqa_ws *ws, const char *a, size_t na, const char *b, size_t nb,
                             size_t *dist, size_t *cp_b, int *cut);

/* Soft VQA accuracy of pred against refs[n_refs], strings normalized as version v normalizes
 * them (tl_vqa_score's rules): s_j = max(0, 1 - CER_j) with CER_j = Levenshtein(pred, ref_j) /
 * (code points of ref_j) (an empty ref: s_j = 1 when pred is empty too, else 0); then
 *   soft = mean over i of min(1, (sum over j != i of s_j) / 3)
 * in doubles (j and i in order). In [0, 1]; >= the exact accuracy acc_py; N = 1 gives 0.
 * *out gets it, *cut (if non-NULL) whether a string was cut. Errors as tl_vqa_score. */
tl_status tl_vqa_soft(tl_vqa_ws *ws, tl_vqa_version v, const char *pred, const char *const *refs,
                      size_t n_refs, double *out, int *cut, tl_err *err);

/* ---- Python-compatible numbers for the drop-in output ------------------------------------ */

/* Python 3's round(x, 2): correctly rounded (half to even on the exact binary value). */
double tl_vqa_py_round2(double x);
/* Python's repr(float) (json.dumps): the shortest string that reads back as x, "100.0" for an
 * integral value, exponent form "1e-05" / "1e+16" outside [1e-4, 1e16); "NaN", "Infinity",
 * "-Infinity" as json.dumps writes them. buf[cap] (cap >= 32); returns the length. */
int tl_vqa_py_repr(double x, char *buf, size_t cap);

#endif
