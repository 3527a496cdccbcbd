/* se_legacy.c - SpatialEval answer extraction, mode 'legacy'. STUB: to be written. */
#include <stdlib.h>

#include "tally/spatialeval.h"

struct tl_se_legacy {
  int unused;
};

tl_se_legacy *tl_se_legacy_new(tl_err *err) {
  (void)err;
  return calloc(1, sizeof(tl_se_legacy));
}

void tl_se_legacy_free(tl_se_legacy *s) { free(s); }

tl_status tl_se_legacy_parse(const tl_se_legacy *s, const tl_se_item *item, const char *response,
                             const char *model, tl_parsed *out) {
  (void)s; (void)item; (void)response; (void)model;
  out->status = TL_PS_NO_ANSWER;
  out->rule = "stub";
  return TL_OK;
}
