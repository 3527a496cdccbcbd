/* fuzz_oai_reply.c - libFuzzer target for the reply fields of tally/oai_reply.h: the one-pass
 * scan against cJSON's tree.
 *
 * Input: the first byte's low bit picks the API (0 chat, 1 completions); the rest is the reply's
 * text. Whenever tl_oai_reply_scan takes the text, cJSON must parse it, tl_oai_reply_json must
 * accept it, and every field must be the same (strings byte for byte, numbers with their sign). */
#include "fuzz_util.h"

#include <math.h>

#include "tally/oai_reply.h"

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }
static int same_num(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const int mode = data[0] & 1;
  const char *s = (const char *)data + 1;
  const size_t n = size - 1;
  tl_oai_reply f, j;
  tl_buf sb;
  tl_buf_init(&sb);
  const int took = tl_oai_reply_scan(s, n, mode, &f, &sb);
  if (sb.data[sb.len] != 0) abort();
  if (took) {
    cJSON *t = cJSON_ParseWithLength(s, n);
    char why[256];
    if (tl_oai_reply_json(t, n, mode, &j, why, sizeof why) != 0) {
      fprintf(stderr, "the scan took a reply cJSON does not read: %s\n", why);
      abort();
    }
    if (!(same_str(f.content, j.content) && same_str(f.reasoning, j.reasoning) && same_str(f.finish_reason, j.finish_reason) &&
          same_str(f.model, j.model) && same_str(f.id, j.id) && same_num(f.prompt_tokens, j.prompt_tokens) &&
          same_num(f.completion_tokens, j.completion_tokens) && f.n_choices == j.n_choices && !f.logprobs && !j.logprobs)) {
      fprintf(stderr, "read differently: content '%s' / '%s', model '%s' / '%s', tokens %g %g / %g %g\n", f.content ? f.content : "(null)",
              j.content ? j.content : "(null)", f.model ? f.model : "(null)", j.model ? j.model : "(null)", f.prompt_tokens,
              f.completion_tokens, j.prompt_tokens, j.completion_tokens);
      abort();
    }
    cJSON_Delete(t);
  }
  tl_buf_release(&sb);
  return 0;
}
