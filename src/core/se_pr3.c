/* se_pr3.c - SpatialEval answer extraction, mode 'pr3'. STUB: to be written. */
#include <stdlib.h>

#include "tally/spatialeval.h"

struct tl_se_pr3 {
  int unused;
};

tl_se_pr3 *tl_se_pr3_new(tl_err *err) {
  (void)err;
  return calloc(1, sizeof(tl_se_pr3));
}

void tl_se_pr3_free(tl_se_pr3 *s) { free(s); }

tl_status tl_se_pr3_parse(const tl_se_pr3 *s, const tl_se_item *item, const char *prompt,
                          const char *response, tl_parsed *out) {
  (void)s; (void)item; (void)prompt; (void)response;
  out->status = TL_PS_NO_ANSWER;
  out->rule = "stub";
  return TL_OK;
}
