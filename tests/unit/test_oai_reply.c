/* test_oai_reply.c - the reply fields of tally/oai_reply.h: the one-pass scan against cJSON's
 * tree. Whenever the scan takes a text, cJSON must parse it and tl_oai_reply_json must give the
 * same fields; the table also says which texts the scan takes (the replies servers send) and
 * which it must leave to cJSON (where cJSON reads them differently from strict JSON, or the
 * fields need what only the tree keeps). Every taken reply is then mutated at every byte (each
 * byte replaced by a set of bytes that matter to JSON, or dropped) and the contract checked
 * again on each mutant. */
#include <math.h>

#include "testutil.h"
#include "tally/oai_reply.h"

#define CHAT 0
#define COMPL 1

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }
static int same_num(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Checks the contract on s[0..n): returns 1 when the scan took it (fields then equal to cJSON's),
 * 0 when it declined. */
static int check(const char *s, size_t n, int mode, const char *what) {
  tl_oai_reply f, j;
  tl_buf sb;
  tl_buf_init(&sb);
  const int took = tl_oai_reply_scan(s, n, mode, &f, &sb);
  assert_true(sb.data[sb.len] == 0);
  if (took) {
    cJSON *t = cJSON_ParseWithLength(s, n);
    char why[256];
    if (tl_oai_reply_json(t, n, mode, &j, why, sizeof why) != 0) fail_msg("%s: the scan took '%.*s', cJSON: %s", what, (int)n, s, why);
    const int same = same_str(f.content, j.content) && same_str(f.reasoning, j.reasoning) &&
                     same_str(f.finish_reason, j.finish_reason) && same_str(f.model, j.model) && same_str(f.id, j.id) &&
                     same_num(f.prompt_tokens, j.prompt_tokens) && same_num(f.completion_tokens, j.completion_tokens) &&
                     f.n_choices == j.n_choices && !f.logprobs && !j.logprobs;
    if (!same)
      fail_msg("%s: '%.*s' read differently: content '%s' / '%s', reasoning '%s' / '%s', finish '%s' / '%s', model '%s' / "
               "'%s', id '%s' / '%s', tokens %g %g / %g %g, choices %d / %d, logprobs %p / %p",
               what, (int)n, s, f.content, j.content, f.reasoning, j.reasoning, f.finish_reason, j.finish_reason, f.model,
               j.model, f.id, j.id, f.prompt_tokens, f.completion_tokens, j.prompt_tokens, j.completion_tokens, f.n_choices,
               j.n_choices, (const void *)f.logprobs, (const void *)j.logprobs);
    cJSON_Delete(t);
  }
  tl_buf_release(&sb);
  return took;
}

typedef struct {
  int mode;
  int took;            /* 1: the scan must take it; 0: it must decline */
  const char *text;
  const char *content; /* with took: the content expected ("<null>": none) */
} row;

static const row ROWS[] = {
    /* what servers send: taken */
    {CHAT, 1,
     "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"toy-vlm-a\",\"choices\":[{\"index\":0,"
     "\"message\":{\"role\":\"assistant\",\"content\":\"Answer: A.\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":"
     "{\"prompt_tokens\":101,\"completion_tokens\":2,\"total_tokens\":103}}",
     "Answer: A."},
    {CHAT, 1,
     "{\"id\":\"chatcmpl-9f\",\"object\":\"chat.completion\",\"created\":1733000000,\"model\":\"Qwen/Qwen2.5-7B\",\"choices\":"
     "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"reasoning_content\":\"hmm\\nso\",\"content\":\"B\",\"refusal\":null,"
     "\"annotations\":null,\"audio\":null,\"function_call\":null,\"tool_calls\":[]},\"logprobs\":null,\"finish_reason\":\"length\","
     "\"stop_reason\":null}],\"service_tier\":null,\"system_fingerprint\":null,\"usage\":{\"prompt_tokens\":12,\"total_tokens\""
     ":40,\"completion_tokens\":28,\"prompt_tokens_details\":null},\"prompt_logprobs\":null,\"kv_transfer_params\":null}",
     "B"},
    {CHAT, 1, "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"r\"},\"finish_reason\":null}]}", "<null>"},
    {CHAT, 1, "{\"choices\":[{\"message\":{\"role\":\"assistant\"}}],\"usage\":null,\"model\":7,\"id\":[1]}", "<null>"},
    {CHAT, 1, "{\"choices\":[{\"message\":{\"content\":\"x\",\"reasoning_content\":5,\"reasoning\":\"r2\"}}]}", "x"},
    {CHAT, 1,
     "{\"choices\":[{\"message\":{\"content\":\"q\\\"b\\\\s\\/b\\bf\\fn\\nr\\rt\\t \\u00e9\\u20AC\\ud83d\\ude00 \xc3\xa9 \xff\"}}]}",
     "q\"b\\s/b\bf\fn\nr\rt\t \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xc3\xa9 \xff"},
    {CHAT, 1,
     "{\"choices\":[{\"message\":{\"content\":\"a\"}},{\"message\":{\"content\":[1,{\"b\":[true,false,null]}]}},3],"
     "\"usage\":{\"prompt_tokens\":-0,\"completion_tokens\":999999999999999,\"x\":-1.5e-3}}",
     "a"},
    {CHAT, 1,
     " \n{ \"choices\" : [ { \"message\" : { \"content\" : \"a b\" } , \"finish_reason\" : \"stop\" } ] ,\r\n\t\"usage\" : "
     "{ \"prompt_tokens\" : 0 } , \"n\" : 0.5E+2 }\n ",
     "a b"},
    {CHAT, 1, "{\"choices\":[{\"text\":5,\"message\":{\"content\":\"\"}}],\"usage\":[],\"e\":{},\"f\":[],\"g\":\"\"}", ""},
    {CHAT, 1, "{\"choices\":[{\"message\":{\"content\":\"y\"}}],\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", "y"},
    {COMPL, 1,
     "{\"id\":\"cmpl-2\",\"object\":\"text_completion\",\"model\":\"base\",\"choices\":[{\"index\":0,\"text\":\" Paris.\","
     "\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}",
     " Paris."},
    {COMPL, 1, "{\"choices\":[{\"message\":7,\"text\":\"t\"}]}", "t"},
    /* left to cJSON */
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"},\"logprobs\":{\"content\":[{\"token\":\"a\",\"logprob\":-0.1}]}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":1.5}}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":1e2}}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"usage\":{\"completion_tokens\":1000000000000000}}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\\u0000b\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\\uZZZZb\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\\ud800b\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\\udc00b\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\tb\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"cont\\u0065nt\":\"a\"}}]}", NULL},
    {CHAT, 0, "{\"model\":\"m1\",\"choices\":[{\"message\":{\"content\":\"a\"}}],\"model\":\"m2\"}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}]} trailing", NULL},
    {CHAT, 0, "\xef\xbb\xbf{\"choices\":[{\"message\":{\"content\":\"a\"}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"x\":01}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"x\":1.000000000000000000000000000000000000000000000000000000000000001}", NULL}, /* 65 bytes */
    {CHAT, 0, "[{\"choices\":[]}]", NULL},
    {CHAT, 0, "{\"choices\":[]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":5}}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":\"hi\"}]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}]", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"d\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
              "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
              "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\v\"x\":1}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}},]}", NULL},
    {CHAT, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}],}", NULL},
    {CHAT, 0, "", NULL},
    {CHAT, 0, "{\"choices\":[{\"text\":\"t\"}]}", NULL},
    {COMPL, 0, "{\"choices\":[{\"message\":{\"content\":\"a\"}}]}", NULL},
    {COMPL, 0, "{\"choices\":[{\"text\":null}]}", NULL},
};

static void test_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
    const row *r = &ROWS[i];
    char what[32];
    snprintf(what, sizeof what, "row %zu", i);
    const int took = check(r->text, strlen(r->text), r->mode, what);
    if (took != r->took) fail_msg("row %zu: the scan %s '%s'", i, took ? "took" : "declined", r->text);
    if (took) {
      tl_oai_reply f;
      tl_buf sb;
      tl_buf_init(&sb);
      assert_true(tl_oai_reply_scan(r->text, strlen(r->text), r->mode, &f, &sb));
      if (!strcmp(r->content, "<null>")) assert_null(f.content);
      else if (!f.content || strcmp(f.content, r->content)) fail_msg("row %zu: content '%s'", i, f.content);
      tl_buf_release(&sb);
    }
  }
}

/* The fields of the two server replies, spelled out. */
static void test_fields(void **state) {
  (void)state;
  tl_oai_reply f;
  tl_buf sb;
  tl_buf_init(&sb);
  assert_true(tl_oai_reply_scan(ROWS[1].text, strlen(ROWS[1].text), CHAT, &f, &sb));
  assert_string_equal(f.reasoning, "hmm\nso");
  assert_string_equal(f.finish_reason, "length");
  assert_string_equal(f.model, "Qwen/Qwen2.5-7B");
  assert_string_equal(f.id, "chatcmpl-9f");
  assert_true(f.prompt_tokens == 12 && f.completion_tokens == 28 && f.n_choices == 1);
  assert_true(tl_oai_reply_scan(ROWS[3].text, strlen(ROWS[3].text), CHAT, &f, &sb));
  assert_true(!f.model && !f.id && !f.finish_reason && isnan(f.prompt_tokens) && isnan(f.completion_tokens));
  assert_true(tl_oai_reply_scan(ROWS[6].text, strlen(ROWS[6].text), CHAT, &f, &sb));
  assert_true(f.n_choices == 3 && f.prompt_tokens == 0 && signbit(f.prompt_tokens) && f.completion_tokens == 999999999999999.0);
  assert_null(f.reasoning);
  tl_buf_release(&sb);
}

/* Each taken reply, mutated at every byte: the contract holds on every mutant, and some are
 * taken and some declined (the mutations reach both sides). */
static void test_mutants(void **state) {
  (void)state;
  static const char SUB[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\t', '\v', '0', '-', 'e', '.', 'u', 'n', 'd', 'x', 0, 0x7f, (char)0xff};
  char buf[2048];
  long taken = 0, declined = 0;
  for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
    if (!ROWS[i].took) continue;
    const size_t n = strlen(ROWS[i].text);
    assert_true(n < sizeof buf);
    for (size_t at = 0; at < n; at++) {
      for (size_t m = 0; m <= sizeof SUB; m++) {
        size_t k = n;
        memcpy(buf, ROWS[i].text, n);
        if (m < sizeof SUB) buf[at] = SUB[m];
        else memmove(buf + at, buf + at + 1, n - at - 1), k = n - 1;
        char what[64];
        snprintf(what, sizeof what, "row %zu, byte %zu, mutation %zu", i, at, m);
        if (check(buf, k, ROWS[i].mode, what)) taken++;
        else declined++;
      }
    }
  }
  assert_true(taken > 1000 && declined > 1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_table), cmocka_unit_test(test_fields), cmocka_unit_test(test_mutants)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
