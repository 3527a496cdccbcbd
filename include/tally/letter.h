/* letter.h - strict option-letter extraction from a free-text answer to a multiple-choice
 * question (core tier; twin src/core/base/letter.c). One implementation serves SpatialEval's
 * 'strict' parser and the generic multiple-choice module's 'strict' mode (bench/mcq): the rules
 * are in docs/parser-strict.md.
 *
 * Options are lettered A, B, ... in order (at most TL_LETTER_MAX); their texts only serve as a
 * way of naming a letter (whole normalized words, never substrings). The result (tally/parsed.h)
 * is the chosen letter, whether it equals `gold`, the status and the rule that fired.
 *
 * Reentrant: a tl_letter is immutable after tl_letter_new (one compiled pattern and a C.UTF-8
 * locale; without that locale tl_letter_new fails) and may be shared by threads. */
#ifndef TALLY_LETTER_H
#define TALLY_LETTER_H

#include "tally/err.h"
#include "tally/parsed.h"

#define TL_LETTER_MAX 8 /* options an item may have (the parser's option masks are 8 bits) */

typedef struct tl_letter tl_letter;

tl_letter *tl_letter_new(tl_err *err);
void tl_letter_free(tl_letter *s);

/* Extracts the chosen letter from `response` for the n_options options opt_text[0..n) (a NULL
 * text counts as ""; options past TL_LETTER_MAX are ignored) and scores it against `gold` (a
 * one-letter string; NULL: never correct). n_options <= 0: status no_options. A NULL response
 * is status missing. `out` must be initialised; it is overwritten. TL_OK, or an error only for
 * internal failures (memory, a regex error); a regex resource limit is the status parse_limit. */
tl_status tl_letter_parse(const tl_letter *s, int n_options, const char *const *opt_text, const char *gold,
                          const char *response, tl_parsed *out);

/* Tests only: 1 makes every later parse search its markers from every position, as before the
 * skip over text that cannot hold one (marker_from); 0 restores it. */
void tl_letter_test_full_search(int on);

#endif
