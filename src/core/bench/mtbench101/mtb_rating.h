/* mtb_rating.h - MT-Bench-101 judge-rating parsers: the 1-10 rating in a judge's output.
 *
 * Contract (every mode):
 *   - tl_mtb_rate(p, text, out) reads one judge output `text` (valid UTF-8, NUL-terminated; NULL
 *     = no judgment was obtained) and fills `out` (tally/parsed.h), which holds either a fresh
 *     tl_parsed_init() or an earlier result (its answer is freed first):
 *       answer  the matched number as written (malloc'd; "07", "8.5", "[[ 7 ]]" gives "7"), or
 *               NULL. answer != NULL exactly when status is OK, OUT_OF_RANGE or SKIPPED;
 *       value   the rating in thousandths (TL_MTB_RATING_SCALE: 7 -> 7000, 8.5 -> 8500) when
 *               status is OK, else 0;
 *       correct always 0; status and rule (static, never NULL) as listed per mode below;
 *       text NULL -> TL_PS_MISSING, rule "".
 *     A regex resource limit (tally/rx.h) gives TL_PS_PARSE_LIMIT, rule "parse_limit" (the
 *     patterns below are written so that it cannot happen in practice). Only out of memory
 *     (TL_ENOMEM) or an internal PCRE2 failure (TL_EREGEX) is a non-OK return; `out` is then
 *     reset (answer NULL).
 *   - Time and memory are linear in the text: every "last match" is found by one forward scan
 *     (each search restarts after the previous match's end, as finditer does), every quantifier
 *     that a later one could share characters with is possessive, and the think scans only move
 *     forward (tally/think.h). A 10 MB text of "[[" or of digits takes one pass.
 *   - \d and \s are PCRE2's Unicode classes (UCP), as in Python 3's str patterns: \d is any
 *     Unicode decimal digit (Nd), whose value is taken as Python's int() does ("[[\u0663]]",
 *     ARABIC-INDIC DIGIT THREE, is 3). OpenCompass's [0-9] is ASCII only. (Python's \s also
 *     takes U+001C..U+001F; only our mode uses \s.)
 *   - The rater is immutable after tl_mtb_rater_new and may be shared by threads.
 *
 * Modes (names as in jobs and `tally parse --parser`):
 *
 * TL_MTB_RATE_STRICT "mtbench101" (ours, the default; ../shared/spec/mtbench101.md section 4,
 *   "Recommendation for the C spec"):
 *   1. Reasoning blocks are dropped with tl_think_strip (every <think>...</think>, everything
 *      before an orphan </think>); an unterminated <think> -> TL_PS_UNTERMINATED,
 *      "unterminated_think".
 *   2. The LAST labelled rating, \brating[*_ \t]*:[\s*_]*\[\[\s*(\d+)\s*\]\] (case-insensitive;
 *      markdown emphasis allowed around the colon: "**Rating:** [[7]]", "**Rating**: [[7]]")
 *      -> rule "rating_label"; else the LAST bare \[\[\s*(\d+)\s*\]\] -> "double_bracket".
 *      Last, not first: a judge that quotes the template ("for example 'Rating: [[6]]'") before
 *      its verdict is read by its verdict; a label beats a later bare "[[4]]" in a note.
 *   3. Integers 1..10 only; inner blanks and leading zeros are fine ("[[ 7 ]]", "[[07]]" = 7).
 *      Another integer (0, 11, "0000", 30 digits) -> TL_PS_OUT_OF_RANGE, rule "out_of_range",
 *      answer the digits as written. The chosen match is validated, never skipped: an
 *      out-of-range last rating does not fall back to an earlier one.
 *   4. Nothing matches -> TL_PS_NO_ANSWER, "no_rating". A decimal ("[[8.5]]") or a non-number
 *      ("[[score]]") is no integer rating and never matches: with no other [[n]] the result is
 *      no_rating (the judge template asks for an integer; a failed parse is counted, never 0).
 *      Single brackets never count ("Rating: [6]" is no_rating).
 *
 * TL_MTB_RATE_OPENCOMPASS "mtbench101-opencompass" (OpenCompass post_process_mtbench101, the
 *   official implementation): re.search(r'\[([0-9]+)\]', judgement) - the FIRST single-bracket
 *   ASCII integer in the raw text (no think stripping; it matches inside "[[6]]" and a stray
 *   citation "[3]" wins), int(), no range check: OK for any value, rule "single_bracket"
 *   ("[0]" is an OK rating of 0, "[11]" of 11). No match -> TL_PS_NO_ANSWER, "no_rating"
 *   (OpenCompass returns None and drops the turn). Divergences: Python's int is unbounded; a
 *   value above INT64_MAX / 1000 -> TL_PS_OUT_OF_RANGE, "too_large". More than 4300 digits
 *   (leading zeros count) -> TL_PS_SKIPPED, "int_digit_limit": int() raises ValueError there on
 *   Python >= 3.11 (and 3.7-3.10 since their 2022 security releases), ending OpenCompass's run.
 *
 * TL_MTB_RATE_FASTCHAT "fastchat" (FastChat single-answer grading, "[[rating]]" format): the
 *   FIRST \[\[(\d+\.?\d*)\]\] -> rule "double_bracket", else the FIRST \[(\d+\.?\d*)\] ->
 *   "single_bracket"; the capture goes through ast.literal_eval. Values are not range-checked
 *   (OK for 0, 11, 8.5, 7.). literal_eval raises SyntaxError (FastChat's judging thread dies on
 *   it) for an integer with a leading zero ("07", "007"; "0" and "00" are 0), an integer literal
 *   of more than 4300 digits, or a non-ASCII digit: TL_PS_SKIPPED, "literal_eval_error". No
 *   match -> TL_PS_NO_ANSWER, "no_rating" (FastChat stores -1 and filters it later). A float
 *   ("8.5", "7.", "007.50") is kept in thousandths, rounded half to even on its decimal digits
 *   (FastChat keeps the binary double: "8.1235" is 8124 here, 8.12349999... there). A value
 *   above INT64_MAX thousandths (Python: a huge int, or inf for a long float) ->
 *   TL_PS_OUT_OF_RANGE, "too_large".
 *
 * TL_MTB_RATE_JUDGEARENA "judgearena" (OpenEuroLLM/JudgeArena PR #120, MTBench101ScoreParser):
 *   the judge output goes through JudgeArena's strip_thinking_tags (tl_think_strip_judgearena:
 *   complete blocks only, else the text after an orphan </think>; an unterminated <think> is
 *   left in place and read), then the LAST \[\[(\d+)\]\] whose int() is 1..10 (reversed
 *   finditer, first valid) -> OK, rule "double_bracket"; none -> TL_PS_NO_ANSWER, "no_rating".
 *   int() of more than 4300 digits raises ValueError: when such a match comes after the last
 *   valid one (reversed order meets it first) -> TL_PS_SKIPPED, "int_digit_limit".
 *   Divergence to note: the JudgeArena evaluate.py we read parses the RAW judge completion and
 *   strips think blocks only from the evaluated model's answer (strip_thinking_before_judging);
 *   this mode strips the judge output too, as the spec's JudgeArena column does. The two agree
 *   unless a complete think block follows the last valid rating or an orphan </think> does.
 */
#ifndef TALLY_MTB_RATING_H
#define TALLY_MTB_RATING_H

#include "tally/bench_vt.h"
#include "tally/err.h"
#include "tally/parsed.h"

#define TL_MTB_RATING_SCALE 1000 /* tl_parsed.value of a rating: thousandths */

typedef enum {
  TL_MTB_RATE_STRICT = 0,     /* "mtbench101" (ours, the default) */
  TL_MTB_RATE_OPENCOMPASS = 1,/* "mtbench101-opencompass" */
  TL_MTB_RATE_FASTCHAT = 2,   /* "fastchat" */
  TL_MTB_RATE_JUDGEARENA = 3, /* "judgearena" */
  TL_MTB_RATE__COUNT = 4
} tl_mtb_rate_mode;

typedef struct tl_mtb_rater tl_mtb_rater;

/* NULL with err filled on failure (an unknown mode: TL_EUSAGE; out of memory; a pattern that
 * does not compile, a bug: TL_EREGEX). */
tl_mtb_rater *tl_mtb_rater_new(tl_mtb_rate_mode m, tl_err *err);
void tl_mtb_rater_free(tl_mtb_rater *p); /* NULL ok */
tl_mtb_rate_mode tl_mtb_rater_mode(const tl_mtb_rater *p);

/* See the contract above. TL_OK, TL_ENOMEM or TL_EREGEX. */
tl_status tl_mtb_rate(const tl_mtb_rater *p, const char *text, tl_parsed *out);

/* "mtbench101", "mtbench101-opencompass", "fastchat", "judgearena"; "unknown" otherwise. */
const char *tl_mtb_rate_mode_name(tl_mtb_rate_mode m);
/* Inverse of tl_mtb_rate_mode_name; -1 when unknown (NULL too). */
int tl_mtb_rate_mode_from_name(const char *name);

/* The module's hooks around the run (mtb_hooks.c; tally/bench_vt.h): the four rating modes as
 * `tally parse` parsers, and `tally compare`'s defaults (dialogue scores). */
extern const tl_parser_set tl_mtb_parser_set;
extern const tl_compare_defaults tl_mtb_compare;

#endif
