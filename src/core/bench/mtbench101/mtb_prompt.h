/* mtb_prompt.h - MT-Bench-101 judge prompts, composed by concatenation only.
 *
 * Composition (../shared/spec/mtbench101.md section 3), never through a format engine: 30 turns
 * of the benchmark hold '{' or '}', and a prediction may hold anything.
 *
 * System prompt: the judge preamble, the task's rubric and the score format.
 *  - TL_MTB_TEXT_VERBATIM: OpenCompass's strings, typos and spacing included, concatenated with
 *    no separator (byte-exact with OpenCompass's judge prompts).
 *  - TL_MTB_TEXT_CLEAN: our cleaned rewrite (typos fixed, odd spacing normalised, the pieces
 *    joined with a blank line); mtb_strings.c's header lists every change. It still asks for
 *    'Rating: [[score]]'.
 * Both are generated into mtb_strings.c by tools/gen_mtb_strings.py from
 * ../shared/data/mtbench101/opencompass_prompt_strings.json (OpenCompass da7b1c3, Apache-2.0)
 * and composed at generation time: static constant data, no initialisation, thread safe, and
 * nothing is read from ../shared/data at run time.
 *
 * User prompt for judged turn t (0-based), VERBATIM:
 *   "The dialogue need to be judged is: \n *** \n " + H + " " + PREDICTION + " \n ***"
 * where H is, for every earlier turn i (a context-only turn 0 included),
 *   "\n\n Human: " + user_i + "\n\nAssistant: " + bot_i
 * followed by "\n\n Human: " + user_t + "\n\nAssistant: " (so the prediction follows "Assistant:"
 * after two spaces, as upstream). MR and GR then get a reference block:
 *  - TL_MTB_REF_GOLDEN (the default): the current turn's golden answer, in JudgeArena PR #120's
 *    layout, "\n\nThe reference solution is: \n ### \n " + bot_t + " \n ###\n\n" (JudgeArena
 *    puts only the current golden bot there and drops OpenCompass's 20 spaces; checked against
 *    its judgearena/benchmarks/mt_bench_101 code);
 *  - TL_MTB_REF_OPENCOMPASS: bit-compatible with OpenCompass, "\n\n" + 20 spaces + "The
 *    reference solution is: \n ### \n " + REPR + " \n ###\n\n", REPR being Python's repr() of
 *    the role/content list of turns 0..t, the current golden bot included (an upstream bug:
 *    the loader passes the dialogue so far where a reference answer was meant). As in
 *    OpenCompass's add_format, a turn whose bot is "" contributes no assistant entry (the
 *    benchmark file has no such turn).
 * CLEAN (both reference modes), with the template's typos fixed ("need to be judged") and the
 * spacing regular:
 *   "The dialogue to be judged is:\n***\n" + "Human: " + user_0 + "\n\nAssistant: " + bot_0 +
 *   "\n\n" ... + "Human: " + user_t + "\n\nAssistant: " + PREDICTION + "\n***"
 *   MR/GR: + "\n\nThe reference solution is:\n###\n" + REF + "\n###"
 * (the same '***' and '###' delimiters the clean system prompt announces). */
#ifndef TALLY_MTB_PROMPT_H
#define TALLY_MTB_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtb_data.h"
#include "tally/err.h"
#include "tally/str.h"

typedef enum {
  TL_MTB_REF_GOLDEN = 0,     /* the current turn's golden bot answer (default) */
  TL_MTB_REF_OPENCOMPASS = 1 /* Python repr of the dialogue so far (bit-compatible) */
} tl_mtb_ref;

typedef enum {
  TL_MTB_TEXT_VERBATIM = 0, /* the upstream strings (default) */
  TL_MTB_TEXT_CLEAN = 1,    /* our cleaned rewrite */
  TL_MTB__NTEXTS = 2
} tl_mtb_text;

/* Setting names: "golden" | "opencompass"; "verbatim" | "clean". NULL / -1 when unknown. */
const char *tl_mtb_ref_name(tl_mtb_ref ref);
int tl_mtb_ref_from_name(const char *name);
const char *tl_mtb_text_name(tl_mtb_text text);
int tl_mtb_text_from_name(const char *name);

/* The judge's system prompt for a task: static storage, never freed. NULL for an out-of-range
 * task or text. VERBATIM lengths in characters (the spec's): CM 4025, SI 2976, AR 2872,
 * TS 4014, CC 2500, CR/FR 2433, SC 2627, SA 2827, MR 3768, GR 3641, IC 3946, PI 3959; in bytes
 * GR is 4 more (two U+2018) and IC 2 more (one U+2019), the others are ASCII. */
const char *tl_mtb_judge_system(int task, tl_mtb_text text);
size_t tl_mtb_judge_system_len(int task, tl_mtb_text text); /* bytes; 0 when out of range */

/* Appends to out the user prompt judging turn `turn` (0-based index into d->turns) with
 * `prediction` (the evaluated model's answer, any text) in the assistant's place; layout in the
 * header comment. TL_EINTERNAL (a caller bug) when an argument is NULL or out of range or `turn`
 * is not a judged turn (turn < tl_mtb_first_judged(d->task) or turn >= d->nturns); TL_EINPUT
 * when REF_OPENCOMPASS meets a string that is not valid UTF-8; TL_ENOMEM. On failure out is
 * left as it was. */
tl_status tl_mtb_judge_user(const tl_mtb_dialogue *d, uint32_t turn, const char *prediction,
                            tl_mtb_ref ref, tl_mtb_text text, tl_buf *out);

/* ---- Python repr -------------------------------------------------------------------- */

/* Appends Python 3's repr() of the str s (UTF-8, NUL-terminated): single quotes unless s holds
 * ' and no ", then double quotes; \\ and the chosen quote escaped; \n \r \t; other characters
 * below U+0020 and U+007F as \xNN; non-ASCII characters kept raw when printable, else \xNN
 * (<= U+00FF), \uNNNN (<= U+FFFF) or \UNNNNNNNN, lower-case hex as Python writes it.
 * TL_EINPUT (out unchanged) when s is not valid UTF-8; TL_ENOMEM. */
tl_status tl_mtb_py_repr_str(const char *s, tl_buf *out);

/* Appends repr() of OpenCompass's list for turn `turn`: "[{'role': 'user', 'content': U0},
 * {'role': 'assistant', 'content': B0}, ...]" over turns 0..turn (an assistant entry only when
 * its bot is not ""). TL_EINTERNAL when turn >= d->nturns; otherwise as tl_mtb_py_repr_str. */
tl_status tl_mtb_py_repr_dialogue(const tl_mtb_dialogue *d, uint32_t turn, tl_buf *out);

/* Python's str.isprintable() for one code point, as repr() uses it: false for the categories
 * Cc, Cf, Cs, Co, Zl, Zp and Zs (U+0020 excepted), taken from Unicode 15.0 (which Python 3.12
 * uses; the ranges are the same in Python 3.11's Unicode 14.0, where the few code points that
 * 15.0 added to Cf were unassigned and so non-printable as well), plus the noncharacters
 * (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), which are permanently unassigned. Other unassigned code
 * points (Cn), which Python also treats as non-printable, are treated as printable here: a
 * table of every unassigned range would tie tally to one Unicode version. This is exact for
 * every character of the benchmark file (the only non-printables there are '\n' and U+200D),
 * and it agrees with Python 3.11 on every assigned code point (checked over all 0..U+10FFFF). */
bool tl_mtb_py_isprintable(uint32_t cp);

/* ---- generated data (mtb_strings.c); use the functions above ------------------------ */

extern const char *const tl_mtb_system_prompts[TL_MTB__NTEXTS][TL_MTB__NTASKS];
extern const size_t tl_mtb_system_prompt_lens[TL_MTB__NTEXTS][TL_MTB__NTASKS];
/* the source JSON's sha256 and its provenance line, for run metadata */
extern const char tl_mtb_strings_source[];

#endif
