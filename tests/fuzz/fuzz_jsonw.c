/* fuzz_jsonw.c - libFuzzer target for tally's JSON writer (tally/jsonw.h) against cJSON.
 *
 * Input: the bytes of a string. Up to the first NUL they go through tl_json_str (and, as a key,
 * tl_json_key) and must come out exactly as cJSON_PrintUnformatted writes the same string, and
 * parse back to the same bytes. The first 8 bytes, read as a double, and as an integer count of
 * milliseconds, go through tl_json_num and tl_json_milli and must match cJSON's number. */
#include "fuzz_util.h"

#include <cjson/cJSON.h>

#include "tally/jsonw.h"

static void same(cJSON *item, const tl_buf *b) {
  char *ref = cJSON_PrintUnformatted(item);
  FZ_CHECK(ref != NULL);
  if (strlen(ref) != b->len || memcmp(ref, b->data, b->len) != 0) {
    fprintf(stderr, "tally '%s'\ncJSON '%s'\n", b->data, ref);
    abort();
  }
  free(ref);
  cJSON_Delete(item);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t n = 0;
  while (n < size && data[n]) n++;
  char *s = malloc(n + 1);
  FZ_CHECK(s != NULL);
  memcpy(s, data, n);
  s[n] = 0;
  tl_buf b;
  tl_buf_init(&b);
  FZ_CHECK(tl_json_str(&b, s, n) == TL_OK);
  same(cJSON_CreateString(s), &b);
  cJSON *back = cJSON_ParseWithLength(b.data, b.len);
  FZ_CHECK(cJSON_IsString(back) && strcmp(back->valuestring, s) == 0);
  cJSON_Delete(back);
  /* as a key: `,"key":` */
  tl_buf_reset(&b);
  FZ_CHECK(tl_json_key(&b, s, 0) == TL_OK);
  tl_buf k;
  tl_buf_init(&k);
  FZ_CHECK(tl_buf_append(&k, ",", 1) == TL_OK && tl_json_str(&k, s, n) == TL_OK && tl_buf_append(&k, ":", 1) == TL_OK);
  FZ_CHECK(k.len == b.len && memcmp(k.data, b.data, b.len) == 0);
  tl_buf_release(&k);
  if (size >= 8) {
    double d;
    int64_t ms;
    memcpy(&d, data, 8);
    memcpy(&ms, data, 8);
    tl_buf_reset(&b);
    FZ_CHECK(tl_json_num(&b, d) == TL_OK);
    same(cJSON_CreateNumber(d), &b);
    tl_buf_reset(&b);
    FZ_CHECK(tl_json_milli(&b, (long long)ms) == TL_OK);
    same(cJSON_CreateNumber((double)ms / 1e3), &b);
  }
  tl_buf_release(&b);
  free(s);
  return 0;
}
