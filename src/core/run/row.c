/* row.c - unit rows: init, release; stage column prefixes (tally/row.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/row.h"

void tl_row_init(tl_row *r) {
  memset(r, 0, sizeof *r);
  for (int m = 0; m < TL_MAX_MODES; m++) tl_parsed_init(&r->res[m]);
}

void tl_row_release(tl_row *r) {
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    free(r->text[s]);
    free(r->prompt[s]);
    free(r->source[s]);
    free(r->meta[s]);
    free(r->ev[s]);
    free(r->error[s]);
  }
  for (int m = 0; m < TL_MAX_MODES; m++) tl_parsed_release(&r->res[m]);
  for (int i = 0; i < r->nextra; i++) tl_parsed_release(&r->extra[i]);
  free(r->extra);
  tl_row_init(r);
}

const char *tl_stage_prefix(int s, char *buf, size_t n) {
  if (s <= 0) snprintf(buf, n, "%s", "");
  else if (s == 1) snprintf(buf, n, "judge_");
  else snprintf(buf, n, "judge%d_", s - 1);
  return buf;
}
