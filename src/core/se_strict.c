/* se_strict.c - SpatialEval answer extraction, mode 'strict'. STUB: to be written. */
#include <stdlib.h>

#include "tally/spatialeval.h"

struct tl_se_strict {
  int unused;
};

tl_se_strict *tl_se_strict_new(tl_err *err) {
  (void)err;
  return calloc(1, sizeof(tl_se_strict));
}

void tl_se_strict_free(tl_se_strict *s) { free(s); }

tl_status tl_se_strict_parse(const tl_se_strict *s, const tl_se_item *item, const char *response,
                             tl_parsed *out) {
  (void)s; (void)item; (void)response;
  out->status = TL_PS_NO_ANSWER;
  out->rule = "stub";
  return TL_OK;
}
