/* parsed.h - the one parsed-result type every parser returns (answer or rating, status, rule).
 *
 * Every answer is evidence: a parser never returns a silent zero. When no answer can be taken
 * the status says why and `answer` is NULL; `rule` names the rule that fired (a static string,
 * never NULL; "" only for TL_PS_MISSING, which may also name the stage that got no reply,
 * e.g. "no_judgment"). The numbers are stable (packed rows carry
 * them between ranks, and outputs list them in this order); new statuses are only appended. */
#ifndef TALLY_PARSED_H
#define TALLY_PARSED_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  TL_PS_OK = 0,          /* an answer was extracted */
  TL_PS_NO_ANSWER = 1,   /* nothing that counts as an answer */
  TL_PS_AMBIGUOUS = 2,   /* several candidates, none preferred (e.g. two option texts) */
  TL_PS_CONFLICT = 3,    /* a letter and an option text that name different options */
  TL_PS_OUT_OF_RANGE = 4,/* an option letter the item does not have */
  TL_PS_UNTERMINATED = 5,/* reasoning block opened and never closed: no answer */
  TL_PS_SKIPPED = 6,     /* the reference evaluator raises/skips this line (counted wrong) */
  TL_PS_NO_OPTIONS = 7,  /* the item/prompt has no parseable options block */
  TL_PS_MISSING = 8,     /* no response was obtained for this unit */
  TL_PS_PARSE_LIMIT = 9, /* a regex resource limit (rx.h) stopped the parse: no answer, counted
                            wrong; rule "parse_limit". A property of the response, not an error */
  TL_PS_ENGINE_ERROR = 10,/* the engine gave up on a stage of the unit (retries spent, or a request
                            the server refused): no reply to score. Counted, never scored wrong:
                            accuracies leave these units out of their denominators */
  TL_PS__COUNT = 11
} tl_pstatus;

/* Stable lower-case names used in outputs: "ok", "no_answer", ... Never NULL. */
const char *tl_pstatus_name(tl_pstatus st);
/* Inverse of tl_pstatus_name; -1 when unknown. */
int tl_pstatus_from_name(const char *name);

typedef struct {
  char *answer;        /* owned (malloc); NULL when there is none */
  int correct;         /* 0 or 1; always 0 unless status is TL_PS_OK (legacy: see its docs) */
  int64_t value;       /* a numeric result (a judge's rating, a score in fixed point); 0 when
                          the mode has none */
  tl_pstatus status;
  const char *rule;    /* static; which rule fired */
} tl_parsed;

void tl_parsed_init(tl_parsed *p);
void tl_parsed_release(tl_parsed *p); /* frees answer and re-inits */

#endif
