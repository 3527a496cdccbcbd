/* imp_util.c - helpers the import readers share (imp_util.h). */
#include <string.h>

#include "imp_util.h"

/* cJSON cannot read Python's NaN / Infinity / -Infinity, which json.dump writes for a float that
 * is not finite (pandas' missing cells): each such token outside strings becomes null, in a copy
 * of the text (written here: cJSON has no option for it). */
tl_status tl_imp_nan_to_null(const tl_buf *in, tl_buf *out) {
  static const char *const tok[] = {"-Infinity", "Infinity", "NaN"};
  int in_str = 0;
  size_t i = 0, from = 0;
  tl_status st = TL_OK;
  while (i < in->len && !st) {
    char c = in->data[i];
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') in_str = 0;
      i++;
      continue;
    }
    if (c == '"') {
      in_str = 1;
      i++;
      continue;
    }
    size_t m = 0;
    for (int k = 0; k < 3 && !m; k++) {
      size_t l = strlen(tok[k]);
      if (i + l <= in->len && memcmp(in->data + i, tok[k], l) == 0) m = l;
    }
    if (!m) {
      i++;
      continue;
    }
    if (!(st = tl_buf_append(out, in->data + from, i - from))) st = tl_buf_puts(out, "null");
    i += m;
    from = i;
  }
  if (!st) st = tl_buf_append(out, in->data + from, in->len - from);
  return st;
}
