/* mcq.h - the generic multiple-choice benchmark (docs/MCQ.md): items, the scoring modes (tally's
 * strict letter extraction and each harness's own extraction, reproduced so that its published
 * numbers are and the difference is measured), and log-likelihood answers.
 *
 * Items are JSONL {"id", "question", "choices": [2..TL_LETTER_MAX strings], "answer": the gold as
 * a letter ("B"), a 0-based index (1) or the choice text, "task"?, ...}; other fields are kept
 * in the file and ignored here. */
#ifndef TALLY_MCQ_H
#define TALLY_MCQ_H

#include <cjson/cJSON.h>

#include "tally/bench_vt.h"
#include "tally/err.h"
#include "tally/letter.h"
#include "tally/parsed.h"
#include "tally/rx.h"

#define TL_MCQ_MAX_CHOICES TL_LETTER_MAX

typedef struct {
  char *id;
  char *question;
  char *task;     /* "default" when the item has none */
  int n;          /* choices */
  char *choice[TL_MCQ_MAX_CHOICES];
  int gold;       /* 0-based */
  char gold_letter[2];
  int task_ix;    /* index into the item set's tasks (module.c) */
} tl_mcq_item;

void tl_mcq_item_release(tl_mcq_item *it);
/* Reads an item; TL_EINPUT with msg naming the field when it is not one, TL_ENOMEM. */
tl_status tl_mcq_item_from_json(const cJSON *o, tl_mcq_item *it, char *msg, size_t msz);

typedef enum {
  TL_MCQ_STRICT = 0,    /* tally's strict letter extraction (tally/letter.h) */
  TL_MCQ_LMEVAL = 1,    /* lm-eval's regex filter + take_first */
  TL_MCQ_INSPECT = 2,   /* inspect_ai's multiple_choice answer line, choice() scorer */
  TL_MCQ_HELM = 3,      /* HELM's joint multiple choice: the stripped completion is a key */
  TL_MCQ_VLMEVAL = 4,   /* VLMEvalKit's can_infer (option letter, then choice text) */
  TL_MCQ_ACC_NORM = 5,  /* log-likelihood lines: argmax of loglik / characters (else = strict) */
  TL_MCQ_ACC_BYTES = 6, /* log-likelihood lines: argmax of loglik / UTF-8 bytes (else = strict) */
  TL_MCQ__NMODES = 7
} tl_mcq_mode;

const char *tl_mcq_mode_name(tl_mcq_mode m);
int tl_mcq_mode_from_name(const char *name); /* -1 when unknown */

#define TL_MCQ_LMEVAL_DEFAULT "Answer: ([A-D])"

/* Compiled state of the modes: immutable after creation, shareable by threads. */
typedef struct {
  tl_letter *strict;
  tl_rx *lmeval;       /* the job's lm-eval pattern (no flags, as lm-eval compiles it) */
  tl_rx *inspect_line; /* inspect's answer line, then anywhere */
  tl_rx *inspect_any;
} tl_mcq_parsers;

/* lmeval_pattern NULL: TL_MCQ_LMEVAL_DEFAULT. TL_OK or an error (a bad pattern: TL_EREGEX). */
tl_status tl_mcq_parsers_init(tl_mcq_parsers *p, const char *lmeval_pattern, tl_err *err);
void tl_mcq_parsers_release(tl_mcq_parsers *p);

/* A log-likelihood answer travels as its reply text: this prefix, then the logliks as a JSON
 * array of numbers (the answer format "mcq-loglik" writes it, tl_mcq_loglik_text). */
#define TL_MCQ_LOGLIK_PREFIX "\xe2\x9f\xa6tally-loglik\xe2\x9f\xa7"
/* The reply text of an array of logliks (numbers, or strings holding one, as lm-eval saves
 * them): malloc'd, or NULL with msg set (not an array of numbers, empty) or out of memory. */
char *tl_mcq_loglik_text(const cJSON *arr, char *msg, size_t msz);
/* The logliks of a reply text: their count (>= 1) into v[0..max), 0 when the text is not a
 * loglik reply, -1 when it is one but malformed. */
int tl_mcq_loglik_parse(const char *text, double *v, int max);

/* Scores `response` for item it under mode m into out (initialised; overwritten). A NULL
 * response is status missing; a loglik reply is scored as lm-eval's acc (acc_norm/acc_bytes by
 * their own rule) in every mode. TL_OK, or an internal failure (memory, a regex error). */
tl_status tl_mcq_score(const tl_mcq_parsers *p, tl_mcq_mode m, const tl_mcq_item *it, const char *response,
                       tl_parsed *out);

/* Hooks (mcq_hooks.c). */
extern const tl_answer_format *const tl_mcq_formats[];
extern const tl_parser_set tl_mcq_parser_set;
extern const tl_compare_defaults tl_mcq_compare;

#endif
