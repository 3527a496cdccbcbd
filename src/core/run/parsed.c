/* parsed.c - the parsed-result type. */
#include <stdlib.h>
#include <string.h>

#include "tally/parsed.h"

static const char *const NAMES[TL_PS__COUNT] = {
    "ok", "no_answer", "ambiguous", "conflict", "out_of_range",
    "unterminated_think", "skipped", "no_options", "missing", "parse_limit", "engine_error"};

const char *tl_pstatus_name(tl_pstatus st) {
  return (st >= 0 && st < TL_PS__COUNT) ? NAMES[st] : "unknown";
}

int tl_pstatus_from_name(const char *name) {
  for (int i = 0; i < TL_PS__COUNT; i++)
    if (strcmp(NAMES[i], name) == 0) return i;
  return -1;
}

void tl_parsed_init(tl_parsed *p) {
  p->answer = NULL;
  p->correct = 0;
  p->value = 0;
  p->status = TL_PS_NO_ANSWER;
  p->rule = "";
}

void tl_parsed_release(tl_parsed *p) {
  free(p->answer);
  tl_parsed_init(p);
}
