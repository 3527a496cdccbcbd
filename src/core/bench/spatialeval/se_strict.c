/* se_strict.c - SpatialEval answer extraction, mode 'strict' (ours, the default): the shared
 * strict letter parser (tally/letter.h, src/core/base/letter.c) on the item's options block,
 * scored against oracle_option. docs/parser-strict.md has the rules. */
#include "spatialeval.h"
#include "tally/letter.h"

/* tl_se_strict is never defined: a tl_se_strict * is the shared parser (tl_letter *) itself. */
_Static_assert(TL_SE_MAX_OPTIONS == TL_LETTER_MAX, "SpatialEval's options are the shared parser's");

tl_se_strict *tl_se_strict_new(tl_err *err) {
  return (tl_se_strict *)tl_letter_new(err);
}

void tl_se_strict_test_full_search(int on) { tl_letter_test_full_search(on); }

void tl_se_strict_free(tl_se_strict *s) { tl_letter_free((tl_letter *)s); }

tl_status tl_se_strict_parse(const tl_se_strict *s, const tl_se_item *item, const char *response, tl_parsed *out) {
  const char *const *texts = (const char *const *)item->opt_text;
  int n = item->n_options > TL_SE_MAX_OPTIONS ? TL_SE_MAX_OPTIONS : item->n_options;
  return tl_letter_parse((const tl_letter *)s, n, texts, item->oracle_option, response, out);
}
