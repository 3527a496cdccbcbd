/* test_jsonw.c - tally's JSON writer (tally/jsonw.h) and the request bodies built on it
 * (tally/http_body.h) against cJSON_PrintUnformatted, byte for byte: the reply cache's keys hash
 * the bodies, and before the writer existed cJSON wrote them. The reference body below is built
 * the way src/engines/openai.c built it with cJSON (a tree, keys sorted, printed unformatted). */
#include <float.h>
#include <limits.h>
#include <math.h>

#include "testutil.h"
#include "tally/http_body.h"
#include "tally/jsonw.h"

static void same_as_cjson(cJSON *item, const char *ours, size_t n) {
  char *ref = cJSON_PrintUnformatted(item);
  assert_non_null(ref);
  if (strlen(ref) != n || memcmp(ref, ours, n) != 0) fail_msg("tally wrote '%.*s', cJSON '%s'", (int)n, ours, ref);
  free(ref);
  cJSON_Delete(item);
}

static void test_numbers(void **state) {
  (void)state;
  const double D[] = {0.0, -0.0, 1.0, -1.0, 0.7, 0.1 + 0.2, 1e-20, 1e15, 1e16, 3e9, -3e9, 2147483647.0,
                      -2147483648.0, 2147483647.5, -2147483648.5, 2147483648.0, 123456.789, 1.0 / 3, 2.5, -2.5,
                      1e15 + 0.3, 5e-324, DBL_MAX, -DBL_MAX, DBL_MIN, 0.1, 100.25, 9007199254740993.0,
                      1e21, 1e-7, 64.0, 0.30000000000000004, NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof D / sizeof *D; i++) {
    tl_buf b;
    tl_buf_init(&b);
    assert_int_equal(tl_json_num(&b, D[i]), TL_OK);
    same_as_cjson(cJSON_CreateNumber(D[i]), b.data, b.len);
    tl_buf_release(&b);
  }
}

/* tl_json_milli(k) is cJSON's k / 1e3, and tl_json_num's: all k in a range, and scattered large
 * ones. */
static void test_milli(void **state) {
  (void)state;
  tl_buf a, b;
  tl_buf_init(&a);
  tl_buf_init(&b);
  uint64_t x = 88172645463325252ULL;
  for (long long i = -3000; i < 200000 + 3000; i++) {
    long long k = i < 200000 ? i - 100000 : 0;
    if (i >= 200000) { /* xorshift: magnitudes up to 2^63, both signs */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      k = (long long)(x >> (x % 50));
      if (x & 1) k = -k;
    }
    tl_buf_reset(&a);
    tl_buf_reset(&b);
    assert_int_equal(tl_json_milli(&a, k), TL_OK);
    assert_int_equal(tl_json_num(&b, (double)k / 1e3), TL_OK);
    if (strcmp(a.data, b.data) != 0) fail_msg("k=%lld: milli '%s', num '%s'", k, a.data, b.data);
    same_as_cjson(cJSON_CreateNumber((double)k / 1e3), a.data, a.len);
  }
  tl_buf_release(&a);
  tl_buf_release(&b);
}

/* Every byte alone, and escapes at each position around the 8-byte words the scan reads. */
static void test_strings(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  for (int c = 1; c < 256; c++) {
    char s[2] = {(char)c, 0};
    tl_buf_reset(&b);
    assert_int_equal(tl_json_str(&b, s, 1), TL_OK);
    same_as_cjson(cJSON_CreateString(s), b.data, b.len);
  }
  const char ESC[] = {'"', '\\', '\b', '\f', '\n', '\r', '\t', 0x01, 0x1f, 0x7f};
  for (size_t e = 0; e < sizeof ESC; e++)
    for (int at = 0; at < 20; at++) {
      char s[32];
      for (int i = 0; i < 24; i++) s[i] = (char)(i % 2 ? 0xc3 : 'a' + i % 26); /* bytes >= 0x80 too */
      s[24] = 0;
      for (int i = 1; i < 24; i += 2) s[i] = (char)0xa9; /* valid UTF-8 pairs: é */
      for (int i = 0; i < 24; i += 2) s[i] = (char)('a' + i % 26);
      s[at] = ESC[e];
      if (at % 2 == 0 && at + 1 < 24) s[at + 1] = 'z';
      tl_buf_reset(&b);
      assert_int_equal(tl_json_cstr(&b, s), TL_OK);
      same_as_cjson(cJSON_CreateString(s), b.data, b.len);
    }
  /* long strings (the word-at-a-time path): every byte at every position of 8-byte words, and
   * two escapes in a row */
  for (int c = 1; c < 256; c++)
    for (int at = 0; at < 41; at++) {
      char s[48];
      memset(s, 'x', 42);
      s[42] = 0;
      s[at] = (char)c;
      if (at % 5 == 0) s[at + 1] = '\n';
      tl_buf_reset(&b);
      assert_int_equal(tl_json_cstr(&b, s), TL_OK);
      same_as_cjson(cJSON_CreateString(s), b.data, b.len);
    }
  tl_buf_reset(&b);
  assert_int_equal(tl_json_str(&b, NULL, 0), TL_OK);
  assert_string_equal(b.data, "\"\"");
  tl_buf_reset(&b);
  assert_int_equal(tl_json_cstr(&b, NULL), TL_OK);
  assert_string_equal(b.data, "null");
  tl_buf_reset(&b);
  assert_int_equal(tl_json_key(&b, "a\"b", 0), TL_OK);
  assert_string_equal(b.data, ",\"a\\\"b\":");
  tl_buf_release(&b);
}

/* The body as openai.c built it with cJSON. */
static char *ref_body(const tl_http_cfg *c, const char *model, const tl_eng_request *rq, char *const *urls,
                      const cJSON *extra) {
  cJSON *body = cJSON_CreateObject();
  cJSON_AddStringToObject(body, "model", model);
  int img_msg = -1;
  for (int i = 0; i < rq->nmsg; i++)
    if (rq->msgs[i].role && !strcmp(rq->msgs[i].role, "user")) img_msg = i;
  if (c->completions) {
    tl_buf p;
    tl_buf_init(&p);
    for (int i = 0; i < rq->nmsg; i++) tl_buf_printf(&p, "%s%s", i ? "\n\n" : "", rq->msgs[i].content ? rq->msgs[i].content : "");
    cJSON_AddStringToObject(body, "prompt", p.data);
    tl_buf_release(&p);
  } else {
    cJSON *msgs = cJSON_AddArrayToObject(body, "messages");
    for (int i = 0; i < rq->nmsg; i++) {
      cJSON *m = cJSON_CreateObject();
      cJSON_AddItemToArray(msgs, m);
      if (i == img_msg && rq->nimages > 0) {
        cJSON *parts = cJSON_AddArrayToObject(m, "content");
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "text", rq->msgs[i].content ? rq->msgs[i].content : "");
        cJSON_AddStringToObject(t, "type", "text");
        cJSON_AddItemToArray(parts, t);
        for (int k = 0; k < rq->nimages; k++) {
          cJSON *im = cJSON_CreateObject(), *iu = cJSON_CreateObject();
          cJSON_AddStringToObject(iu, "url", urls[k]);
          cJSON_AddItemToObject(im, "image_url", iu);
          cJSON_AddStringToObject(im, "type", "image_url");
          cJSON_AddItemToArray(parts, im);
        }
      } else {
        cJSON_AddStringToObject(m, "content", rq->msgs[i].content ? rq->msgs[i].content : "");
      }
      cJSON_AddStringToObject(m, "role", rq->msgs[i].role ? rq->msgs[i].role : "user");
    }
  }
  double temp = !isnan(c->temperature) ? c->temperature : rq->temperature >= 0 ? rq->temperature : 0.0;
  cJSON_AddNumberToObject(body, "temperature", temp);
  if (!isnan(c->top_p)) cJSON_AddNumberToObject(body, "top_p", c->top_p);
  int mt = c->max_tokens > 0 ? c->max_tokens : rq->max_tokens > 0 ? rq->max_tokens : -1;
  if (mt > 0) cJSON_AddNumberToObject(body, "max_tokens", mt);
  if (c->send_seed) cJSON_AddNumberToObject(body, "seed", rq->seed);
  if (c->n > 0) cJSON_AddNumberToObject(body, "n", c->n);
  if (c->nstop) {
    cJSON *s = cJSON_AddArrayToObject(body, "stop");
    for (int i = 0; i < c->nstop; i++) cJSON_AddItemToArray(s, cJSON_CreateString(c->stop[i]));
  }
  if (c->logprobs >= 0) cJSON_AddBoolToObject(body, "logprobs", c->logprobs);
  if (c->top_logprobs >= 0) cJSON_AddNumberToObject(body, "top_logprobs", c->top_logprobs);
  for (const cJSON *e = extra ? extra->child : NULL; e; e = e->next)
    cJSON_AddItemToObject(body, e->string, cJSON_Duplicate(e, 1));
  tl_json_sort_keys(body);
  char *s = cJSON_PrintUnformatted(body);
  cJSON_Delete(body);
  return s;
}

static void test_bodies(void **state) {
  (void)state;
  const tl_msg M1[] = {{"system", "You are \"terse\".\n"}, {"user", "Which is it?\tA\\B \x01 caf\xc3\xa9"}};
  const tl_msg M2[] = {{"user", "first"}, {"assistant", "second\r\n"}, {"user", NULL}, {NULL, "no role"}};
  char *stops[] = {"\n\n", "END\"", "</s>"};
  char *urls[] = {"data:image/png;base64,iVBORw0KGgo=", "data:image/jpeg;base64,/9j/4AAQ"};
  const char *imgs[] = {"a.png", "b.jpg"};
  const char *EXTRA[] = {NULL, "{\"top_k\":20,\"repetition_penalty\":1.05,\"chat_template_kwargs\":{\"z\":1,\"enable_thinking\":false}}",
                         "{\"a\":[3,{\"y\":null,\"x\":\"\\u0007\"}],\"zz\":\"last\",\"min_p\":0.1}"};
  int ncase = 0;
  for (int api = 0; api < 2; api++)
    for (int set = 0; set < 4; set++)
      for (int ex = 0; ex < 3; ex++)
        for (int msgset = 0; msgset < 3; msgset++) {
          tl_http_cfg c;
          memset(&c, 0, sizeof c);
          c.completions = api;
          c.temperature = set == 0 ? NAN : set == 1 ? 0.7 : set == 2 ? 0.0 : 1e-20;
          c.top_p = set >= 2 ? 0.95 : NAN;
          c.max_tokens = set == 1 ? 512 : -1;
          c.n = set == 3 ? 2 : -1;
          c.logprobs = set == 0 ? -1 : set == 3;
          c.top_logprobs = set == 3 ? 5 : -1;
          c.send_seed = set != 2;
          c.stop = stops;
          c.nstop = set == 1 ? 3 : set == 3 ? 1 : 0;
          tl_eng_request rq;
          memset(&rq, 0, sizeof rq);
          rq.key.model = "toy-vlm-a";
          rq.msgs = msgset == 1 ? M2 : M1;
          rq.nmsg = msgset == 1 ? 4 : 2;
          rq.temperature = msgset == 0 ? -1 : 0.3;
          rq.max_tokens = msgset == 2 ? 64 : 0;
          rq.seed = msgset == 0 ? 0 : msgset == 1 ? -17 : 2147483647;
          if (msgset == 2 && !api) {
            rq.images = imgs;
            rq.nimages = 2;
          }
          cJSON *extra = EXTRA[ex] ? cJSON_Parse(EXTRA[ex]) : NULL;
          tl_http_body_tpl t;
          assert_int_equal(tl_http_body_prepare(&t, &c, extra), TL_OK);
          const char *model = set == 1 ? "served/name \"x\"" : rq.key.model;
          tl_buf b;
          tl_buf_init(&b);
          double temp = -1;
          assert_int_equal(tl_http_body(&b, &t, &c, model, &rq, rq.nimages ? urls : NULL, &temp), TL_OK);
          char *ref = ref_body(&c, model, &rq, urls, extra);
          if (strcmp(ref, b.data) != 0) fail_msg("case api=%d set=%d extra=%d msgs=%d:\n tally %s\n cJSON %s", api, set, ex, msgset, b.data, ref);
          assert_true(temp == (!isnan(c.temperature) ? c.temperature : rq.temperature >= 0 ? rq.temperature : 0.0));
          free(ref);
          tl_buf_release(&b);
          tl_http_body_free(&t);
          cJSON_Delete(extra);
          ncase++;
        }
  assert_int_equal(ncase, 72);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_numbers), cmocka_unit_test(test_milli), cmocka_unit_test(test_strings),
                                     cmocka_unit_test(test_bodies)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
