/* lave.h - LAVE (LLM-Assisted VQA Evaluation; Mañas, Krojer, Agrawal, AAAI 2024): the judge
 * prompt, the judge-rating parser, the expected rating from log-probabilities, the human score
 * from annotator votes, and Krippendorff's alpha. docs/LAVE.md has the full contract; the
 * reference is mair-lab/lave @ 253640b (lave.py, lave_ft5.py), read for
 * ../shared/spec/vqa-lave-statistics.md section 3. Core tier: C11, cJSON, no I/O beyond reading
 * a demonstrations file.
 *
 * Strings: every input string is NUL-terminated valid UTF-8 (inputs are validated on load);
 * byte order of valid UTF-8 is code-point order, so sorting with strcmp is Python's sorted() on
 * str, and byte equality is str equality. Nothing here keeps a pointer to the caller's strings
 * beyond the call, except tl_lave_filter_refs, whose output points into its input. */
#ifndef TALLY_LAVE_H
#define TALLY_LAVE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "tally/bench_vt.h"
#include "tally/err.h"
#include "tally/parsed.h"
#include "tally/str.h"

/* ---- demonstrations -------------------------------------------------------------------------- */

/* One in-context demonstration (an element of lave_demos.json / lave_demos_binary.json). Every
 * string is owned by the set. */
typedef struct {
  char *question;
  char **refs;       /* [nrefs], in file order (sorted only when rendered) */
  size_t nrefs;      /* >= 1 */
  char *prediction;
  char *output;      /* the rating as the file writes it ("1", "2", "3"): rendered verbatim */
  char *explanation;
  char *caption;     /* NULL when the element has no "caption" */
  long line;         /* 1-based line of the file where the element starts */
} tl_lave_demo;

/* A demonstrations file, loaded. Owns everything; free with tl_lave_demos_free. */
typedef struct {
  tl_lave_demo *v; /* [n], in file order */
  size_t n;        /* >= 1 */
  char *name;      /* the file's path (or the name given to tl_lave_demos_parse), for messages */
} tl_lave_demos;

/* Reads the demonstrations file at `path`: a JSON array (at most 64 MiB) of objects
 * {"question": str, "references": [str, ...] (non-empty), "prediction": str, "output": str,
 *  "explanation": str, "caption": str (optional)}; other keys are ignored. The text must be
 * valid UTF-8 without NUL bytes, \u0000 escapes or a key given twice in one object. On success
 * *out is a new set (caller frees). On failure *out is NULL and err names the file, and for a
 * bad element its index and line ("demos.json: element 3 (line 40): 'references' must be a
 * non-empty array of strings"). TL_EIO (cannot read), TL_EINPUT (bad contents), TL_ENOMEM. */
tl_status tl_lave_demos_load(const char *path, tl_lave_demos **out, tl_err *err);

/* The same from text[0..len) in memory; `name` is used in messages (and kept as ->name). */
tl_status tl_lave_demos_parse(const char *text, size_t len, const char *name,
                              tl_lave_demos **out, tl_err *err);

void tl_lave_demos_free(tl_lave_demos *d); /* NULL ok */

/* ---- prompt ------------------------------------------------------------------------------------ */

/* The options of LaveBase (defaults in brackets). */
typedef struct {
  int use_caption; /* [0] image descriptions in the task text and in every example */
  int rationalize; /* [1] demos output "<explanation> So rating=<output>", and the task text
                      asks for the rationale; 0: demos output "<output>" alone */
  int filter_refs; /* [1] drop the test example's rare references (tl_lave_filter_refs) */
  int num_shots;   /* [8] demos[:num_shots] of the chosen set (all when it has fewer); >= 0 */
} tl_lave_opts;

#define TL_LAVE_OPTS_DEFAULT {0, 1, 1, 8}

/* Appends LaveBase.task_definition for these options to out. TL_OK or TL_ENOMEM. */
tl_status tl_lave_task_definition(const tl_lave_opts *opts, tl_buf *out);

/* LaveBase.filter_references: keeps the references whose count c satisfies c / max > 0.25,
 * where max is the largest count (compared exactly as 4c > max); order and duplicates kept.
 * kept[] (room for n) receives pointers into refs; *nkept their number (>= 1 when n >= 1).
 * TL_OK, TL_ENOMEM. */
tl_status tl_lave_filter_refs(const char *const *refs, size_t n, const char **kept,
                              size_t *nkept);

/* LaveBase.format_references without the filter: "'a', 'a', 'b'" from refs sorted by code point,
 * duplicates kept, quotes not escaped; "" for n == 0. Appended to out. TL_OK, TL_ENOMEM. */
tl_status tl_lave_format_refs(const char *const *refs, size_t n, tl_buf *out);

/* LaveBase.is_binary_question: the most common reference (ties: the one that occurs first),
 * lower-cased and stripped of trailing '.', is "yes" or "no". ASCII case folding is exact here
 * (docs/LAVE.md: no non-ASCII character lower-cases to any of y, e, s, n, o). 0 when n == 0.
 * Returns 1, 0, or -1 when out of memory. */
int tl_lave_is_binary(const char *const *refs, size_t n);

/* Renders the LAVE judge prompt for one test example byte for byte as LaveBase.build_prompt:
 * task definition, "\n\n", for each of demos[:num_shots] of `binary` (when the question is
 * binary by its UNFILTERED references) or of `general` the example with its references sorted
 * (never filtered) and "\n\n", then the test example with its references filtered (when
 * filter_refs) and sorted and an empty output; the final strip() leaves the prompt ending in
 * "Output:". The prompt is appended to out; *is_binary (if non-NULL) is set to the binary
 * decision (also when num_shots is 0, where no demos are chosen).
 * caption: the test example's image description, used (after Python's strip()) only with
 * use_caption, where it must be non-NULL and every chosen demo must have one.
 * Errors (out unchanged, err says why): TL_EUSAGE for num_shots < 0 or a NULL general/binary set
 * that would be chosen (NULL is fine with num_shots 0); TL_EINPUT for nrefs == 0 where the
 * reference raises (filter_refs or num_shots > 0), a NULL caption with use_caption, or a chosen
 * demo without a caption with use_caption (naming the file, element and line); TL_ENOMEM. */
tl_status tl_lave_prompt(const tl_lave_opts *opts, const tl_lave_demos *general,
                         const tl_lave_demos *binary, const char *question,
                         const char *const *refs, size_t nrefs, const char *prediction,
                         const char *caption, tl_buf *out, int *is_binary, tl_err *err);

/* ---- judge rating ------------------------------------------------------------------------------ */

/* The rating of one judge reply. */
typedef struct {
  int rating;         /* 1..3 when status is TL_PS_OK, else 0 */
  double score;       /* (rating - 1) / 2: 0, 0.5 or 1 when ok, else NaN */
  tl_pstatus status;  /* TL_PS_OK, TL_PS_NO_ANSWER, TL_PS_OUT_OF_RANGE, TL_PS_UNTERMINATED or
                         TL_PS_MISSING (text NULL: no reply) */
  const char *rule;   /* static, never NULL: "rating_eq", "last_char", "compat_fallback_2",
                         "no_rating", "out_of_range", "unterminated_think"; "" for missing */
  const char *answer; /* static "1", "2" or "3": the rating as read from the text (rules
                         rating_eq, last_char); NULL otherwise (the fallback reads nothing) */
} tl_lave_rating;

/* Rates one judge reply (NUL-terminated valid UTF-8, or NULL for no reply). Never allocates
 * what the caller must free.
 *   1. Reasoning blocks go as in tally/think.h tl_think_strip (ours): an unterminated <think>
 *      -> TL_PS_UNTERMINATED, "unterminated_think".
 *   2. The LAST occurrence of  rating \s* = \s* NUMBER  in the visible text ("rating" in ASCII
 *      letters of any case, not preceded by a word character; \s = Python's str.isspace();
 *      NUMBER = [0-9]+ with an optional .[0-9]+) decides: NUMBER "1", "2" or "3" -> OK,
 *      "rating_eq"; any other NUMBER ("4", "0", "10", "03", "2.5") -> TL_PS_OUT_OF_RANGE,
 *      "out_of_range" (no fallback to an earlier or later rating).
 *   3. Else the last non-whitespace character, when it is '1', '2' or '3' and the character
 *      before it (if any) is no word character, '.' or ',' -> OK, "last_char".
 *   4. Else TL_PS_NO_ANSWER, "no_rating".
 * compat_fallback (LaveFT5's policy): every result that is not OK and not missing becomes rating
 * 2 (score 0.5), TL_PS_OK, rule "compat_fallback_2", answer NULL, so it is counted.
 * Linear time. TL_OK, or TL_ENOMEM (the think stripper could not grow its buffer; *out is then
 * {0, NaN, TL_PS_NO_ANSWER, "no_rating", NULL}). */
tl_status tl_lave_rate(const char *text, int compat_fallback, tl_lave_rating *out);

/* ---- expected rating from log-probabilities ------------------------------------------------------ */

/* One alternative at the rating position (OpenAI's top_logprobs[i]). The token is borrowed. */
typedef struct {
  const char *token;
  double logprob; /* natural log; -INFINITY allowed */
} tl_lave_logprob;

typedef struct {
  double expected;   /* E[r] = sum p_r r / sum p_r over r in 1..3, in [1, 3]; NaN when none */
  double score;      /* (expected - 1) / 2, in [0, 1]; NaN when none */
  double mass;       /* sum p_r: the probability of the three ratings among the given tokens */
  tl_pstatus status; /* TL_PS_OK, or TL_PS_NO_ANSWER when no token is a rating (or all have
                        probability 0) */
  const char *rule;  /* "logprob_expectation", "no_rating" or (from_content) "no_rating_token" */
} tl_lave_expected;

/* E[r] over top[0..n): a token counts as rating r when its text, stripped of whitespace
 * (str.strip()), is exactly the digit r; several tokens of one rating (" 3", "3") add up.
 * p = exp(logprob), computed relative to the largest counted logprob (no underflow in the
 * ratio). TL_OK, or TL_EINPUT (a NULL token, a NaN or +inf logprob; *out then is no_rating). */
tl_status tl_lave_expected_rating(const tl_lave_logprob *top, size_t n, tl_lave_expected *out);

/* The rating token in an OpenAI chat-completions `choices[i].logprobs.content` array (elements
 * {"token": str, "logprob": num, "top_logprobs": [{"token", "logprob"}, ...]}): among the tokens
 * whose stripped text is "1", "2" or "3", the LAST one that directly follows "rating" \s* "="
 * \s* in the text of the tokens before it (rule "after_rating_eq"), else the last one of them
 * ("last_rating_token"). *index = its position, or -1 (rule "no_rating_token") when there is
 * none. TL_OK, TL_EINPUT (not an array, an element without a string "token"), TL_ENOMEM. */
tl_status tl_lave_logprob_position(const cJSON *content, long *index, const char **rule);

/* tl_lave_logprob_position, then tl_lave_expected_rating over that element's "top_logprobs"
 * (or, when it has none, over the element's own token and logprob). *index as above (may be
 * NULL). No rating token: TL_OK with status TL_PS_NO_ANSWER, rule "no_rating_token". TL_EINPUT
 * for a malformed array or top_logprobs entry (err says which element), TL_ENOMEM. */
tl_status tl_lave_expected_from_content(const cJSON *content, tl_lave_expected *out, long *index,
                                        tl_err *err);

/* ---- human judgments and agreement ---------------------------------------------------------------- */

/* The LAVE human score of one answer from its annotators' binary votes (1 = correct): exactly 5
 * votes, each 0 or 1; 1.0 when at least 4 say correct, 0.5 for 2 or 3, 0.0 for 0 or 1. NaN when
 * votes is NULL, n != 5 or a vote is neither 0 nor 1 (the score is defined for 5 votes only). */
double tl_lave_human_from_votes(const int *votes, int n);

/* Krippendorff's alpha for nominal data (Krippendorff 2011, "Computing Krippendorff's
 * Alpha-Reliability", section C): votes is row-major [n_items][n_coders], a value >= 0 is a
 * category, -1 is a missing vote. Items with fewer than 2 votes are not pairable and are left
 * out. With o_ck the coincidence matrix (each ordered pair of votes within item u adds
 * 1/(m_u - 1)), n_c its margins and n = sum n_c:
 *     alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k
 *           = 1 - (n - 1) * (n - sum_c o_cc) / (n^2 - sum_c n_c^2).
 * NaN when undefined (fewer than 2 pairable votes, or all pairable votes in one category), and
 * also for invalid input (votes NULL with items, a value below -1, a size overflow) or when out
 * of memory. */
double tl_kripp_alpha_nominal(const int *votes, size_t n_items, size_t n_coders);

/* The VQA module's hooks around the run (vqa_hooks.c; tally/bench_vt.h): the LAVE release's
 * rows as an answer format, lave-rating for `tally parse`, and `tally compare`'s defaults. */
extern const tl_answer_format *const tl_vqa_formats[];
extern const tl_parser_set tl_vqa_parser_set;
extern const tl_compare_defaults tl_vqa_compare;

#endif
