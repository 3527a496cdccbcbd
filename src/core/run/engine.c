/* engine.c - what every engine shares (tally/engine.h). Core tier: no MPI, HDF5 or curl. */
#include <stdlib.h>
#include <string.h>

#include "tally/engine.h"

void tl_eng_reply_release(tl_eng_reply *r) {
  free(r->text);
  free(r->prompt);
  free(r->source);
  free(r->error);
  free(r->meta);
  free(r->ev);
  memset(r, 0, sizeof *r);
}

const char *tl_role_name(tl_role r) {
  switch (r) {
  case TL_ROLE_MODEL: return "model";
  case TL_ROLE_JUDGE: return "judge";
  default: return "?";
  }
}
