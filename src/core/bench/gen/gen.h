/* gen.h - the generative exact-match benchmark (docs/GEN.md): items with a gold text (or a list
 * of accepted texts), a free-text answer, and two scoring modes:
 *   - strict (tally's own, the primary): the final answer is extracted (the last balanced
 *     \boxed{...}, else a final "The answer is X" / "answer: X"), else no_answer (a counted
 *     status), and compared with the gold after a small documented normalisation;
 *   - exact (lm-evaluation-harness compatible): lm-eval's exact_match metric on the whole reply
 *     as its "none" filter leaves it (prediction == reference as strings), with its options
 *     regexes_to_ignore, ignore_case, ignore_punctuation, ignore_numbers (all off by default).
 *
 * Items are JSONL {"id", "question"?, "answer": a string or a non-empty list of strings (any
 * one is accepted), "task"?, ...}; other fields are kept in the file and ignored here. */
#ifndef TALLY_GEN_H
#define TALLY_GEN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "tally/err.h"
#include "tally/parsed.h"
#include "tally/rx.h"

typedef struct {
  char *id;
  char *question; /* "" when the item has none */
  char *task;     /* "default" when the item has none */
  char **gold;    /* [n_gold] accepted answers, as the item gives them */
  int n_gold;     /* >= 1 */
  char *gold_text; /* the golds " || "-joined (the item table's column) */
  int task_ix;    /* index into the item set's tasks (module.c) */
} tl_gen_item;

void tl_gen_item_release(tl_gen_item *it);
/* Reads an item; TL_EINPUT with msg naming the field when it is not one, TL_ENOMEM. */
tl_status tl_gen_item_from_json(const cJSON *o, tl_gen_item *it, char *msg, size_t msz);

typedef enum {
  TL_GEN_STRICT = 0, /* tally's final-answer extraction and normalisation */
  TL_GEN_EXACT = 1,  /* lm-eval's exact_match on the raw reply */
  TL_GEN__NMODES = 2
} tl_gen_mode;

const char *tl_gen_mode_name(tl_gen_mode m);
int tl_gen_mode_from_name(const char *name); /* -1 when unknown */

#define TL_GEN_MAX_REGEXES 16

/* lm-eval's exact_match options (lm_eval/api/metrics.py, exact_match_hf_evaluate, a copy of
 * Hugging Face evaluate's exact_match): immutable after tl_gen_parsers_init, shareable. */
typedef struct {
  tl_rx *ignore[TL_GEN_MAX_REGEXES];    /* regexes_to_ignore, in order (re.sub(s, "", x)) */
  tl_rx *ignore_ne[TL_GEN_MAX_REGEXES]; /* each as "(?:s)(?!\\G)": its non-empty matches only */
  int n_ignore;
  bool ignore_case, ignore_punctuation, ignore_numbers;
} tl_gen_parsers;

/* patterns[0..n) (Python re syntax) compiled into p with the three flags. TL_OK, or TL_EREGEX
 * with err naming the bad pattern, TL_EINPUT when n > TL_GEN_MAX_REGEXES. */
tl_status tl_gen_parsers_init(tl_gen_parsers *p, const char *const *patterns, int n, bool ignore_case,
                              bool ignore_punctuation, bool ignore_numbers, tl_err *err);
void tl_gen_parsers_release(tl_gen_parsers *p);

/* Scores `response` for item it under mode m into out (initialised; overwritten). A NULL
 * response is status missing. out->answer: strict: the extracted final answer as written;
 * exact: the reply after lm-eval's option transforms (the reply itself by default). TL_OK, or
 * an internal failure (memory, a regex error). */
tl_status tl_gen_score(const tl_gen_parsers *p, tl_gen_mode m, const tl_gen_item *it, const char *response,
                       tl_parsed *out);

/* The strict mode's pieces, for the tests and the docs' examples. */
/* The final answer of a reply: [*a, *b) of r and the rule ("boxed", "answer_is", "answer_colon"),
 * or NULL when there is none (then the rule is "none"). */
const char *tl_gen_extract(const char *r, size_t *a, size_t *b);
/* The normalised form of s[0..n) (docs/GEN.md, "strict"): malloc'd, NULL when out of memory. */
char *tl_gen_normalise(const char *s, size_t n);
/* Whether two normalised answers are equal: as decimal numbers when both are one, else as
 * strings. */
bool tl_gen_equal(const char *x, const char *y);

#endif
