/* test_mtb_prompt.c - MT-Bench-101: taxonomy, dialogue loading, Python repr, judge prompts.
 *
 * Fixture group: the taxonomy, the loader's messages, repr() and isprintable, the system prompts'
 * lengths, and the user prompts of small dialogues in the four ref/text modes (expected strings
 * composed with Python, OpenCompass's loader code re-run on the fixture). Shared group
 * (../shared/data/mtbench101): the benchmark file's counts, the 3615 golden judge prompts of
 * OpenCompass byte for byte, and that mtb_strings.c is what tools/gen_mtb_strings.py writes. */
#define _POSIX_C_SOURCE 200809L /* popen, getline */
#include <unistd.h>

#include "testutil.h"

#include "mtb_prompt.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static void dlg(tl_mtb_dialogue *d, const char *json) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_err err;
  if (tl_mtb_dialogue_from_json(o, d, &err) != TL_OK) fail_msg("%s", err.msg);
  cJSON_Delete(o);
}

/* Parses json, expects TL_EINPUT with a message holding `want`, and an empty dialogue. */
static void bad_dlg(const char *json, const char *want) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_mtb_dialogue d;
  tl_err err = {{0}};
  tl_status st = tl_mtb_dialogue_from_json(o, &d, &err);
  cJSON_Delete(o);
  if (st != TL_EINPUT || !strstr(err.msg, want))
    fail_msg("%s: status %d, message '%s', wanted '%s'", json, (int)st, err.msg, want);
  assert_int_equal(d.nturns, 0);
  assert_null(d.turns);
}

static size_t utf8_chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

/* Byte-compares got with want; on a difference prints where (and the context) and fails. */
static int same_text(const char *what, long line, const char *got, size_t glen, const char *want,
                     size_t wlen) {
  size_t i = 0;
  while (i < glen && i < wlen && got[i] == want[i]) i++;
  if (i == glen && i == wlen) return 1;
  size_t from = i > 40 ? i - 40 : 0;
  print_message("line %ld: %s differs at byte %zu (got %zu bytes, want %zu); 40 bytes either side,"
                " newlines as \\n:\n", line, what, i, glen, wlen);
  const char *txt[2] = {got, want};
  size_t len[2] = {glen, wlen};
  for (int k = 0; k < 2; k++) {
    char ctx[256];
    size_t o = 0;
    for (size_t j = from; j < len[k] && j < i + 40; j++) {
      if (txt[k][j] == '\n') ctx[o++] = '\\', ctx[o++] = 'n';
      else ctx[o++] = txt[k][j];
    }
    ctx[o] = '\0';
    print_message("  %s '%s'\n", k ? "want:" : "got: ", ctx);
  }
  return 0;
}

static void expect_user(const tl_mtb_dialogue *d, uint32_t turn, const char *pred, tl_mtb_ref ref,
                        tl_mtb_text text, const char *want) {
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_buf_puts(&b, "KEEP"), TL_OK); /* appends after what is there */
  assert_int_equal(tl_mtb_judge_user(d, turn, pred, ref, text, &b), TL_OK);
  assert_memory_equal(b.data, "KEEP", 4);
  if (!same_text("user prompt", 0, b.data + 4, b.len - 4, want, strlen(want)))
    fail_msg("turn %u, ref %d, text %d", (unsigned)turn, (int)ref, (int)text);
  tl_buf_release(&b);
}

/* ---- taxonomy --------------------------------------------------------------------------- */

static void test_taxonomy(void **state) {
  (void)state;
  static const struct {
    const char *code, *name, *ability, *domain;
    bool skip, ref;
  } T[13] = {
      {"CM", "Context Memory", "memory", "perceptivity", true, false},
      {"SI", "Separate Input", "understanding", "perceptivity", false, false},
      {"AR", "Anaphora Resolution", "understanding", "perceptivity", true, false},
      {"TS", "Topic Shift", "interference", "perceptivity", false, false},
      {"CC", "Content Confusion", "interference", "perceptivity", false, false},
      {"CR", "Content Rephrasing", "rephrasing", "adaptability", true, false},
      {"FR", "Format Rephrasing", "rephrasing", "adaptability", true, false},
      {"SC", "Self-Correction", "reflection", "adaptability", true, false},
      {"SA", "Self-Affirmation", "reflection", "adaptability", true, false},
      {"MR", "Mathematical Reasoning", "reasoning", "adaptability", false, true},
      {"GR", "General Reasoning", "reasoning", "adaptability", false, true},
      {"IC", "Instruction Clarification", "questioning", "interactivity", false, false},
      {"PI", "Proactive Interaction", "questioning", "interactivity", false, false},
  };
  assert_int_equal(tl_mtb_ntasks(), 13);
  assert_int_equal(tl_mtb_nabilities(), 7);
  assert_int_equal(tl_mtb_ndomains(), 3);
  assert_int_equal(TL_MTB_GR, 10);
  for (int t = 0; t < 13; t++) {
    assert_string_equal(tl_mtb_task_code(t), T[t].code);
    assert_string_equal(tl_mtb_task_name(t), T[t].name);
    assert_int_equal(tl_mtb_task_from_code(T[t].code), t);
    int a = tl_mtb_task_ability(t), dm = tl_mtb_task_domain(t);
    assert_string_equal(tl_mtb_ability_name(a), T[t].ability);
    assert_string_equal(tl_mtb_domain_name(dm), T[t].domain);
    assert_int_equal(tl_mtb_ability_domain(a), dm);
    assert_int_equal(tl_mtb_ability_from_name(T[t].ability), a);
    assert_int_equal(tl_mtb_domain_from_name(T[t].domain), dm);
    assert_int_equal(tl_mtb_skip_first(t), T[t].skip);
    assert_int_equal(tl_mtb_need_ref(t), T[t].ref);
    assert_int_equal(tl_mtb_first_judged(t), T[t].skip ? 1 : 0);
  }
  /* the abilities in order, each with its domain */
  static const char *const AB[7] = {"memory",     "understanding", "interference", "rephrasing",
                                    "reflection", "reasoning",     "questioning"};
  static const int AD[7] = {0, 0, 0, 1, 1, 1, 2};
  for (int a = 0; a < 7; a++) {
    assert_string_equal(tl_mtb_ability_name(a), AB[a]);
    assert_int_equal(tl_mtb_ability_domain(a), AD[a]);
  }
  assert_string_equal(tl_mtb_domain_name(TL_MTB_INTERACTIVITY), "interactivity");
  /* out of range, unknown */
  assert_int_equal(tl_mtb_task_from_code("gr"), -1);
  assert_int_equal(tl_mtb_task_from_code("GRX"), -1);
  assert_int_equal(tl_mtb_task_from_code(""), -1);
  assert_int_equal(tl_mtb_task_from_code(NULL), -1);
  assert_null(tl_mtb_task_code(13));
  assert_null(tl_mtb_task_code(-1));
  assert_null(tl_mtb_task_name(13));
  assert_int_equal(tl_mtb_task_ability(-1), -1);
  assert_int_equal(tl_mtb_task_domain(13), -1);
  assert_null(tl_mtb_ability_name(7));
  assert_int_equal(tl_mtb_ability_domain(7), -1);
  assert_null(tl_mtb_domain_name(3));
  assert_int_equal(tl_mtb_ability_from_name("Memory"), -1);
  assert_int_equal(tl_mtb_domain_from_name(NULL), -1);
  assert_false(tl_mtb_skip_first(13));
  assert_false(tl_mtb_need_ref(-1));
  assert_string_equal(tl_mtb_task_codes(), "CM SI AR TS CC CR FR SC SA MR GR IC PI");
  /* setting names */
  assert_string_equal(tl_mtb_ref_name(TL_MTB_REF_GOLDEN), "golden");
  assert_string_equal(tl_mtb_ref_name(TL_MTB_REF_OPENCOMPASS), "opencompass");
  assert_int_equal(tl_mtb_ref_from_name("opencompass"), TL_MTB_REF_OPENCOMPASS);
  assert_int_equal(tl_mtb_ref_from_name("golden"), TL_MTB_REF_GOLDEN);
  assert_int_equal(tl_mtb_ref_from_name("repr"), -1);
  assert_string_equal(tl_mtb_text_name(TL_MTB_TEXT_CLEAN), "clean");
  assert_int_equal(tl_mtb_text_from_name("verbatim"), TL_MTB_TEXT_VERBATIM);
  assert_int_equal(tl_mtb_text_from_name("clean"), TL_MTB_TEXT_CLEAN);
  assert_int_equal(tl_mtb_text_from_name("Clean"), -1);
  assert_int_equal(TL_MTB_REF_GOLDEN, 0);    /* the default is the zero value */
  assert_int_equal(TL_MTB_TEXT_VERBATIM, 0);
}

/* ---- dialogues -------------------------------------------------------------------------- */

static void test_dialogue_json(void **state) {
  (void)state;
  tl_mtb_dialogue d;
  /* unknown keys are tolerated at both levels */
  dlg(&d, "{\"task\":\"AR\",\"id\":12,\"x\":[1],\"history\":[{\"user\":\"u1\",\"bot\":\"b1\","
          "\"extra\":null},{\"bot\":\"b2\",\"user\":\"u2\"}]}");
  assert_int_equal(d.task, TL_MTB_AR);
  assert_int_equal(d.id, 12);
  assert_int_equal(d.nturns, 2);
  assert_string_equal(d.turns[0].user, "u1");
  assert_string_equal(d.turns[1].bot, "b2");
  assert_int_equal(tl_mtb_first_judged(d.task), 1);
  assert_int_equal(tl_mtb_judged_turns(&d), 1);
  char uid[32];
  tl_mtb_dialogue_uid(&d, uid, sizeof uid);
  assert_string_equal(uid, "AR:12");
  tl_err err;
  assert_int_equal(tl_mtb_dialogue_check(&d, &err), TL_OK);
  tl_mtb_dialogue_release(&d);
  assert_null(d.turns);
  assert_int_equal(d.nturns, 0);
  tl_mtb_dialogue_release(&d); /* twice is harmless */

  /* a skip-first dialogue of one turn has nothing to judge: the check says so */
  dlg(&d, "{\"task\":\"CM\",\"id\":5,\"history\":[{\"user\":\"\",\"bot\":\"\"}]}");
  assert_int_equal(tl_mtb_judged_turns(&d), 0);
  assert_int_equal(tl_mtb_dialogue_check(&d, &err), TL_EINPUT);
  assert_string_equal(err.msg, "dialogue 'CM:5' has no judged turn: it has 1 turn and turn 1 of a "
                               "CM dialogue is context only");
  tl_mtb_dialogue_release(&d);
  /* ... while any other task judges its single turn */
  dlg(&d, "{\"task\":\"SI\",\"id\":9007199254740992,\"history\":[{\"user\":\"a\",\"bot\":\"b\"}]}");
  assert_int_equal(d.id, 9007199254740992LL);
  assert_int_equal(tl_mtb_judged_turns(&d), 1);
  assert_int_equal(tl_mtb_dialogue_check(&d, &err), TL_OK);
  tl_mtb_dialogue_release(&d);

  bad_dlg("[1]", "dialogue: not a JSON object");
  bad_dlg("{\"id\":1,\"history\":[]}", "missing field 'task'");
  bad_dlg("{\"task\":3,\"id\":1,\"history\":[]}", "field 'task' is not a string");
  bad_dlg("{\"task\":\"XX\",\"id\":1,\"history\":[]}",
          "unknown task code 'XX' (known: CM SI AR TS CC CR FR SC SA MR GR IC PI)");
  bad_dlg("{\"task\":\"gr\",\"id\":1,\"history\":[]}", "unknown task code 'gr'");
  bad_dlg("{\"task\":\"GR\",\"history\":[]}", "dialogue (task GR): missing field 'id'");
  bad_dlg("{\"task\":\"GR\",\"id\":\"1\",\"history\":[]}", "field 'id' is not a positive integer");
  bad_dlg("{\"task\":\"GR\",\"id\":1.5,\"history\":[]}", "field 'id' is not a positive integer");
  bad_dlg("{\"task\":\"GR\",\"id\":0,\"history\":[]}", "field 'id' is not a positive integer");
  bad_dlg("{\"task\":\"GR\",\"id\":-3,\"history\":[]}", "field 'id' is not a positive integer");
  bad_dlg("{\"task\":\"GR\",\"id\":1e300,\"history\":[]}", "field 'id' is not a positive integer");
  bad_dlg("{\"task\":\"GR\",\"id\":1}", "dialogue 'GR:1': missing field 'history'");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":{}}",
          "dialogue 'GR:1': field 'history' is not an array");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":[]}", "dialogue 'GR:1': field 'history' is empty");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":[{\"user\":\"a\",\"bot\":\"b\"},\"x\"]}",
          "dialogue 'GR:1': history turn 2 is not a JSON object");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":[{\"bot\":\"b\"}]}",
          "dialogue 'GR:1': history turn 1: missing field 'user'");
  bad_dlg(
      "{\"task\":\"GR\",\"id\":1,\"history\":[{\"user\":\"a\",\"bot\":\"b\"},{\"user\":\"a\"}]}",
      "dialogue 'GR:1': history turn 2: missing field 'bot'");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":[{\"user\":null,\"bot\":\"b\"}]}",
          "history turn 1: field 'user' is not a string");
  bad_dlg("{\"task\":\"GR\",\"id\":1,\"history\":[{\"user\":\"a\",\"bot\":\"b\"},"
          "{\"user\":\"a\",\"bot\":\"b\"},{\"user\":\"a\",\"bot\":[\"b\"]}]}",
          "dialogue 'GR:1': history turn 3: field 'bot' is not a string");

  /* a hand-built tree with invalid UTF-8 */
  cJSON *o = cJSON_Parse("{\"task\":\"GR\",\"id\":2,\"history\":[{\"user\":\"a\",\"bot\":\"b\"}]}");
  assert_non_null(o);
  cJSON *turn = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "history"), 0);
  cJSON_ReplaceItemInObject(turn, "bot", cJSON_CreateString("ok\xff"));
  assert_int_equal(tl_mtb_dialogue_from_json(o, &d, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "history turn 1: field 'bot' is not valid UTF-8 (byte 2)"));
  cJSON_Delete(o);
  /* a long unknown code is cut, at a character boundary */
  o = cJSON_Parse("{\"task\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
                  "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
                  "\\u00e9\\u00e9\",\"id\":1,\"history\":[]}");
  assert_non_null(o);
  assert_int_equal(tl_mtb_dialogue_from_json(o, &d, &err), TL_EINPUT);
  assert_true(tl_utf8_valid(err.msg, strlen(err.msg), NULL));
  assert_non_null(strstr(err.msg, "...' (known:"));
  cJSON_Delete(o);
}

/* ---- Python repr ------------------------------------------------------------------------ */

static void expect_repr(const char *s, const char *want) {
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_mtb_py_repr_str(s, &b), TL_OK);
  assert_string_equal(b.data, want);
  tl_buf_release(&b);
}

static void test_repr(void **state) {
  (void)state;
  /* the expected values are Python 3.11's repr() */
  expect_repr("", "''");
  expect_repr("plain", "'plain'");
  expect_repr("it's", "\"it's\"");
  expect_repr("say \"hi\"", "'say \"hi\"'");
  expect_repr("both ' and \"", "'both \\' and \"'");
  expect_repr("back\\slash", "'back\\\\slash'");
  expect_repr("a\nb\rc\td", "'a\\nb\\rc\\td'");
  expect_repr("\x01\x1f\x7f", "'\\x01\\x1f\\x7f'");
  expect_repr("{x} [[6]] ~", "'{x} [[6]] ~'");
  /* non-ASCII: printable kept raw; the rest escaped by size */
  expect_repr("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x8e\x89",
              "'caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x8e\x89'");
  expect_repr("\xc2\xa0|\xc2\x85|\xc2\xad", "'\\xa0|\\x85|\\xad'");
  expect_repr("\xe2\x80\x8d|\xef\xbb\xbf|\xe2\x80\xa8|\xe3\x80\x80",
              "'\\u200d|\\ufeff|\\u2028|\\u3000'");
  expect_repr("\xf3\xa0\x81\x81|\xf4\x8f\xbf\xbf", "'\\U000e0041|\\U0010ffff'");
  expect_repr("\xee\x80\x80|\xef\xbf\xbe", "'\\ue000|\\ufffe'"); /* private use, noncharacter */
  /* the fixture strings of test_user_prompts */
  expect_repr("Tom's {x} caf\303\251\302\240ok", "\"Tom's {x} caf\303\251\\xa0ok\"");
  expect_repr("Say \"hi\" and 'bye' \\path\n\ttab\r",
              "'Say \"hi\" and \\'bye\\' \\\\path\\n\\ttab\\r'");
  expect_repr("zwj\342\200\215, bom\357\273\277, emoji \360\237\216\211, ctrl \001 \177, c1 "
              "\302\205, tag \363\240\201\201",
              "'zwj\\u200d, bom\\ufeff, emoji \360\237\216\211, ctrl \\x01 \\x7f, c1 \\x85, tag "
              "\\U000e0041'");
  /* invalid UTF-8: TL_EINPUT, the buffer unchanged */
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_buf_puts(&b, "x"), TL_OK);
  assert_int_equal(tl_mtb_py_repr_str("bad \xc3", &b), TL_EINPUT);
  assert_int_equal(tl_mtb_py_repr_str("bad \xed\xa0\x80", &b), TL_EINPUT); /* a surrogate */
  assert_string_equal(b.data, "x");
  assert_int_equal(b.len, 1);
  assert_int_equal(tl_mtb_py_repr_str(NULL, &b), TL_EINTERNAL);
  tl_buf_release(&b);
}

static void test_isprintable(void **state) {
  (void)state;
  /* assigned code points at the edges of the ranges, as Python 3.11's str.isprintable() sees them
   * (an unassigned one would be non-printable in Python: see mtb_prompt.h) */
  static const uint32_t yes[] = {0x20,    0x7E,    0xA1,    0xAC,   0xAE,   0x5F4,  0x606,
                                 0x1FFE,  0x2010,  0x2027,  0x2030, 0x205E, 0x2070, 0x2FFB,
                                 0x3001,  0xD7FB,  0xF900,  0xFDCF, 0xFDF0, 0xFEFC, 0xFF01,
                                 0xFFFC,  0xFFFD,  0x1F389, 0x110BC, 0x1D172, 0x1D17B, 0xE0100};
  static const uint32_t no[] = {0x00,    0x0A,    0x1F,    0x7F,    0x80,    0x9F,    0xA0,
                                0xAD,    0x600,   0x605,   0x61C,   0x6DD,   0x70F,   0x890,
                                0x891,   0x8E2,   0x1680,  0x180E,  0x2000,  0x200B,  0x200D,
                                0x200F,  0x2028,  0x2029,  0x202A,  0x202F,  0x205F,  0x2060,
                                0x2064,  0x2065,  0x2066,  0x206F,  0x3000,  0xD800,  0xDFFF,
                                0xE000,  0xF8FF,  0xFDD0,  0xFDEF,  0xFEFF,  0xFFF9,  0xFFFB,
                                0xFFFE,  0xFFFF,  0x1FFFE, 0x10FFFF, 0x110BD, 0x110CD, 0x13430,
                                0x13438, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0001, 0xE0020,
                                0xE007F, 0xF0000, 0xFFFFD, 0x100000, 0x10FFFD, 0x110000};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    if (!tl_mtb_py_isprintable(yes[i])) fail_msg("U+%04X should be printable", (unsigned)yes[i]);
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
    if (tl_mtb_py_isprintable(no[i])) fail_msg("U+%04X should not be printable", (unsigned)no[i]);
}

/* ---- system prompts --------------------------------------------------------------------- */

static void test_system_prompts(void **state) {
  (void)state;
  /* the spec's lengths, in characters */
  static const size_t chars[13] = {4025, 2976, 2872, 4014, 2500, 2433, 2433,
                                   2627, 2827, 3768, 3641, 3946, 3959};
  static const char JUDGE[] = "Please act as an impartial judge follow this instructions: In the "
                              "following conversations, only the response of the 'assistant' in "
                              "the last round of conversations";
  static const char SCORE_END[] = "'Rating: [[6]]'. The DIALGUE need to be judged is in this "
                                  "format: \n *** \n DIALGUE \n ***";
  for (int t = 0; t < 13; t++) {
    const char *v = tl_mtb_judge_system(t, TL_MTB_TEXT_VERBATIM);
    assert_non_null(v);
    size_t len = strlen(v);
    assert_int_equal(tl_mtb_judge_system_len(t, TL_MTB_TEXT_VERBATIM), len);
    if (utf8_chars(v) != chars[t])
      fail_msg("%s: %zu characters, want %zu", tl_mtb_task_code(t), utf8_chars(v), chars[t]);
    assert_memory_equal(v, JUDGE, sizeof JUDGE - 1);
    assert_string_equal(v + len - (sizeof SCORE_END - 1), SCORE_END);
    assert_non_null(strstr(v, "groud truth history which do NOT need to be evaluated."));
    /* eight rubrics follow "evaluated." directly, five after "\n" */
    const char *after = strstr(v, "need to be evaluated.") + strlen("need to be evaluated.");
    bool nl =
        t == TL_MTB_SI || t == TL_MTB_CR || t == TL_MTB_FR || t == TL_MTB_CC || t == TL_MTB_TS;
    assert_int_equal(after[0] == '\n', nl);
    assert_true(tl_utf8_valid(v, len, NULL));

    const char *c = tl_mtb_judge_system(t, TL_MTB_TEXT_CLEAN);
    assert_non_null(c);
    assert_int_equal(tl_mtb_judge_system_len(t, TL_MTB_TEXT_CLEAN), strlen(c));
    assert_non_null(strstr(c, "Please act as an impartial judge and follow these instructions: "));
    assert_non_null(strstr(c, "the previous conversations are the ground truth history and do NOT "
                              "need to be evaluated.\n\n"));
    assert_non_null(strstr(c, "'Rating: [[score]]', for example 'Rating: [[6]]'. The DIALOGUE to "
                              "be judged is in this format:\n***\nDIALOGUE\n***"));
    static const char *const typos[] = {
        "follow this instructions", "groud", "DIALGUE", "ta///sk", "  ", " \n", "\n ", "\n\n\n",
        "\xe2\x80\x98", "\xe2\x80\x99", "need to be judged", "counter-questions for",
        "'Human's'"};
    for (size_t k = 0; k < sizeof typos / sizeof typos[0]; k++)
      if (strstr(c, typos[k])) fail_msg("clean %s holds '%s'", tl_mtb_task_code(t), typos[k]);
    assert_true(c[0] != '\n' && c[strlen(c) - 1] == '*');
    assert_true(tl_utf8_valid(c, strlen(c), NULL));
    assert_ptr_equal(tl_mtb_judge_system(t, TL_MTB_TEXT_CLEAN), c); /* static storage */
  }
  assert_string_equal(tl_mtb_judge_system(TL_MTB_CR, TL_MTB_TEXT_VERBATIM),
                      tl_mtb_judge_system(TL_MTB_FR, TL_MTB_TEXT_VERBATIM));
  assert_non_null(strstr(tl_mtb_judge_system(TL_MTB_SI, TL_MTB_TEXT_VERBATIM), "ta///sk"));
  assert_non_null(strstr(tl_mtb_judge_system(TL_MTB_GR, TL_MTB_TEXT_VERBATIM),
                         "format \xe2\x80\x98### reference solution ###\xe2\x80\x98 for"));
  assert_non_null(strstr(tl_mtb_judge_system(TL_MTB_GR, TL_MTB_TEXT_CLEAN),
                         "in the format '### reference solution ###' for the specific problem."));
  assert_non_null(strstr(tl_mtb_judge_system(TL_MTB_SI, TL_MTB_TEXT_CLEAN),
                         "answer the task.\n2. Starting"));
  assert_non_null(strstr(tl_mtb_judge_system(TL_MTB_CM, TL_MTB_TEXT_CLEAN),
                         "as follows:\n\n1. Analyze whether"));
  assert_null(tl_mtb_judge_system(13, TL_MTB_TEXT_VERBATIM));
  assert_null(tl_mtb_judge_system(-1, TL_MTB_TEXT_CLEAN));
  assert_null(tl_mtb_judge_system(0, TL_MTB__NTEXTS));
  assert_int_equal(tl_mtb_judge_system_len(13, TL_MTB_TEXT_CLEAN), 0);
  assert_non_null(strstr(tl_mtb_strings_source, "da7b1c3"));
}

/* ---- user prompts ----------------------------------------------------------------------- */

/* GR: quotes of both kinds, backslashes, newlines, \r, braces, non-ASCII, U+00A0, U+200D, U+FEFF,
 * an emoji, C0 and C1 controls, a tag character; unknown keys at both levels. */
static const char FIX_GR[] =
    "{\"task\": \"GR\", \"id\": 7, \"extra\": 1, \"history\": [{\"user\": \"Tom's {x} caf\\u00e9"
    "\\u00a0ok\", \"bot\": \"Say \\\"hi\\\" and 'bye' \\\\path\\n\\ttab\\r\", \"note\": \"x\"}, "
    "{\"user\": \"zwj\\u200d, bom\\ufeff, emoji \\ud83c\\udf89, ctrl \\u0001 \\u007f, c1 \\u0085, "
    "tag \\udb40\\udc41\", \"bot\": \"only \\\"double\\\" quotes {}\"}]}";
static const char PRED[] = "P {p} \"q\" \\";

static const char GR0_OC[] =
    "The dialogue need to be judged is: \n"
    " *** \n"
    " \n"
    "\n"
    " Human: Tom's {x} caf\303\251\302\240ok\n"
    "\n"
    "Assistant:  P {p} \"q\" \\ \n"
    " ***\n"
    "\n"
    "                    The reference solution is: \n"
    " ### \n"
    " [{'role': 'user', 'content': \"Tom's {x} caf\303\251\\xa0ok\"}, {'role': 'assistant', "
    "'content': 'Say \"hi\" and \\'bye\\' \\\\path\\n\\ttab\\r'}] \n"
    " ###\n"
    "\n";
static const char GR1_OC[] =
    "The dialogue need to be judged is: \n"
    " *** \n"
    " \n"
    "\n"
    " Human: Tom's {x} caf\303\251\302\240ok\n"
    "\n"
    "Assistant: Say \"hi\" and 'bye' \\path\n"
    "\ttab\015\n"
    "\n"
    " Human: zwj\342\200\215, bom\357\273\277, emoji \360\237\216\211, ctrl \001 \177, c1 "
    "\302\205, tag \363\240\201\201\n"
    "\n"
    "Assistant:  P {p} \"q\" \\ \n"
    " ***\n"
    "\n"
    "                    The reference solution is: \n"
    " ### \n"
    " [{'role': 'user', 'content': \"Tom's {x} caf\303\251\\xa0ok\"}, {'role': 'assistant', "
    "'content': 'Say \"hi\" and \\'bye\\' \\\\path\\n\\ttab\\r'}, {'role': 'user', 'content': "
    "'zwj\\u200d, bom\\ufeff, emoji \360\237\216\211, ctrl \\x01 \\x7f, c1 \\x85, tag "
    "\\U000e0041'}, {'role': 'assistant', 'content': 'only \"double\" quotes {}'}] \n"
    " ###\n"
    "\n";
static const char GR1_GOLDEN[] =
    "The dialogue need to be judged is: \n"
    " *** \n"
    " \n"
    "\n"
    " Human: Tom's {x} caf\303\251\302\240ok\n"
    "\n"
    "Assistant: Say \"hi\" and 'bye' \\path\n"
    "\ttab\015\n"
    "\n"
    " Human: zwj\342\200\215, bom\357\273\277, emoji \360\237\216\211, ctrl \001 \177, c1 "
    "\302\205, tag \363\240\201\201\n"
    "\n"
    "Assistant:  P {p} \"q\" \\ \n"
    " ***\n"
    "\n"
    "The reference solution is: \n"
    " ### \n"
    " only \"double\" quotes {} \n"
    " ###\n"
    "\n";
static const char GR1_CLEAN_GOLDEN[] =
    "The dialogue to be judged is:\n"
    "***\n"
    "Human: Tom's {x} caf\303\251\302\240ok\n"
    "\n"
    "Assistant: Say \"hi\" and 'bye' \\path\n"
    "\ttab\015\n"
    "\n"
    "Human: zwj\342\200\215, bom\357\273\277, emoji \360\237\216\211, ctrl \001 \177, c1 \302\205, "
    "tag \363\240\201\201\n"
    "\n"
    "Assistant: P {p} \"q\" \\\n"
    "***\n"
    "\n"
    "The reference solution is:\n"
    "###\n"
    "only \"double\" quotes {}\n"
    "###";
static const char GR0_CLEAN_OC[] =
    "The dialogue to be judged is:\n"
    "***\n"
    "Human: Tom's {x} caf\303\251\302\240ok\n"
    "\n"
    "Assistant: P {p} \"q\" \\\n"
    "***\n"
    "\n"
    "The reference solution is:\n"
    "###\n"
    "[{'role': 'user', 'content': \"Tom's {x} caf\303\251\\xa0ok\"}, {'role': 'assistant', "
    "'content': 'Say \"hi\" and \\'bye\\' \\\\path\\n\\ttab\\r'}]\n"
    "###";
/* CM: skip-first, no reference block; the reference mode changes nothing */
static const char FIX_CM[] =
    "{\"task\":\"CM\",\"id\":3,\"history\":[{\"user\":\"u1\",\"bot\":\"b1\"},{\"user\":\"u2\","
    "\"bot\":\"b2\"},{\"user\":\"u3\",\"bot\":\"\"}]}";
static const char CM2_VERBATIM[] =
    "The dialogue need to be judged is: \n"
    " *** \n"
    " \n"
    "\n"
    " Human: u1\n"
    "\n"
    "Assistant: b1\n"
    "\n"
    " Human: u2\n"
    "\n"
    "Assistant: b2\n"
    "\n"
    " Human: u3\n"
    "\n"
    "Assistant:  X \n"
    " ***";
static const char CM1_CLEAN[] =
    "The dialogue to be judged is:\n"
    "***\n"
    "Human: u1\n"
    "\n"
    "Assistant: b1\n"
    "\n"
    "Human: u2\n"
    "\n"
    "Assistant: X\n"
    "***";

static void test_user_prompts(void **state) {
  (void)state;
  tl_mtb_dialogue d;
  dlg(&d, FIX_GR);
  expect_user(&d, 0, PRED, TL_MTB_REF_OPENCOMPASS, TL_MTB_TEXT_VERBATIM, GR0_OC);
  expect_user(&d, 1, PRED, TL_MTB_REF_OPENCOMPASS, TL_MTB_TEXT_VERBATIM, GR1_OC);
  expect_user(&d, 1, PRED, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, GR1_GOLDEN);
  expect_user(&d, 1, PRED, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_CLEAN, GR1_CLEAN_GOLDEN);
  expect_user(&d, 0, PRED, TL_MTB_REF_OPENCOMPASS, TL_MTB_TEXT_CLEAN, GR0_CLEAN_OC);

  /* the reference list on its own, and misuse */
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_mtb_py_repr_dialogue(&d, 0, &b), TL_OK);
  assert_string_equal(b.data, "[{'role': 'user', 'content': \"Tom's {x} caf\303\251\\xa0ok\"}, "
                              "{'role': 'assistant', 'content': 'Say \"hi\" and \\'bye\\' "
                              "\\\\path\\n\\ttab\\r'}]");
  tl_buf_reset(&b);
  assert_int_equal(tl_mtb_py_repr_dialogue(&d, 2, &b), TL_EINTERNAL);
  assert_int_equal(tl_mtb_judge_user(&d, 2, PRED, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINTERNAL);
  assert_int_equal(tl_mtb_judge_user(&d, 0, NULL, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINTERNAL);
  assert_int_equal(tl_mtb_judge_user(&d, 0, PRED, (tl_mtb_ref)2, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINTERNAL);
  assert_int_equal(tl_mtb_judge_user(&d, 0, PRED, TL_MTB_REF_GOLDEN, TL_MTB__NTEXTS, &b),
                   TL_EINTERNAL);
  assert_int_equal(tl_mtb_judge_user(NULL, 0, PRED, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINTERNAL);
  assert_int_equal(b.len, 0);

  /* invalid UTF-8 reaching repr (a hand-made dialogue): TL_EINPUT, out unchanged; the golden
   * mode copies bytes and does not care */
  char *keep = d.turns[0].user;
  d.turns[0].user = (char *)"bad \xff";
  assert_int_equal(tl_buf_puts(&b, "x"), TL_OK);
  assert_int_equal(tl_mtb_judge_user(&d, 1, PRED, TL_MTB_REF_OPENCOMPASS, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINPUT);
  assert_string_equal(b.data, "x");
  assert_int_equal(tl_mtb_judge_user(&d, 1, PRED, TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, &b),
                   TL_OK);
  d.turns[0].user = keep;
  tl_buf_release(&b);
  tl_mtb_dialogue_release(&d);

  /* OpenCompass's add_format leaves out the assistant entry of an empty bot */
  dlg(&d, "{\"task\":\"MR\",\"id\":4,\"history\":[{\"user\":\"a\",\"bot\":\"\"},{\"user\":\"b\","
          "\"bot\":\"c\"}]}");
  tl_buf_init(&b);
  assert_int_equal(tl_mtb_py_repr_dialogue(&d, 1, &b), TL_OK);
  assert_string_equal(b.data,
                      "[{'role': 'user', 'content': 'a'}, {'role': 'user', 'content': 'b'}, "
                      "{'role': 'assistant', 'content': 'c'}]");
  tl_buf_release(&b);
  tl_mtb_dialogue_release(&d);

  dlg(&d, FIX_CM);
  for (int r = 0; r < 2; r++) {
    expect_user(&d, 2, "X", (tl_mtb_ref)r, TL_MTB_TEXT_VERBATIM, CM2_VERBATIM);
    expect_user(&d, 1, "X", (tl_mtb_ref)r, TL_MTB_TEXT_CLEAN, CM1_CLEAN);
  }
  tl_buf_init(&b);
  /* turn 0 of a skip-first task is context only: never judged */
  assert_int_equal(tl_mtb_judge_user(&d, 0, "X", TL_MTB_REF_GOLDEN, TL_MTB_TEXT_VERBATIM, &b),
                   TL_EINTERNAL);
  tl_buf_release(&b);
  tl_mtb_dialogue_release(&d);
}

/* ---- shared data ------------------------------------------------------------------------ */

#define NIDS 1388

static int load_all(const char *path, tl_mtb_dialogue **out) {
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
  tl_mtb_dialogue *byid = calloc(NIDS + 1, sizeof *byid);
  assert_non_null(byid);
  for (int i = 0; i <= NIDS; i++) tl_mtb_dialogue_init(&byid[i]);
  cJSON *obj;
  tl_jl_result res;
  int n = 0;
  while ((res = tl_jsonl_next(&r, &obj, &err)) != TL_JL_EOF) {
    if (res != TL_JL_RECORD) fail_msg("%s", err.msg);
    tl_mtb_dialogue d;
    if (tl_mtb_dialogue_from_json(obj, &d, &err) != TL_OK)
      fail_msg("line %ld: %s", r.line_no, err.msg);
    cJSON_Delete(obj);
    if (d.id < 1 || d.id > NIDS) fail_msg("line %ld: id %lld", r.line_no, (long long)d.id);
    if (byid[d.id].turns) fail_msg("line %ld: id %lld twice", r.line_no, (long long)d.id);
    byid[d.id] = d;
    n++;
  }
  tl_jsonl_close(&r);
  *out = byid;
  return n;
}

static void free_all(tl_mtb_dialogue *byid) {
  for (int i = 0; i <= NIDS; i++) tl_mtb_dialogue_release(&byid[i]);
  free(byid);
}

static void test_shared_dataset(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "mtbench101/mtbench101.jsonl");
  tl_mtb_dialogue *byid;
  assert_int_equal(load_all(path, &byid), 1388);
  /* the spec's table: dialogues, turns, judged turns per task */
  static const unsigned want[13][3] = {
      {80, 319, 239},  {149, 620, 620}, {153, 560, 407}, {83, 249, 249}, {147, 352, 352},
      {136, 389, 253}, {74, 197, 123},  {77, 154, 77},   {73, 146, 73},  {108, 224, 224},
      {71, 218, 218},  {150, 426, 426}, {87, 354, 354}};
  unsigned got[13][3] = {{0}}, turns = 0, judged = 0;
  tl_err err;
  for (int i = 1; i <= NIDS; i++) {
    tl_mtb_dialogue *d = &byid[i];
    assert_non_null(d->turns);
    got[d->task][0]++;
    got[d->task][1] += d->nturns;
    got[d->task][2] += tl_mtb_judged_turns(d);
    turns += d->nturns;
    judged += tl_mtb_judged_turns(d);
    if (tl_mtb_dialogue_check(d, &err) != TL_OK) fail_msg("%s", err.msg);
    if ((d->task == TL_MTB_SC || d->task == TL_MTB_SA) && d->nturns != 2)
      fail_msg("id %d: %u turns", i, (unsigned)d->nturns);
  }
  assert_int_equal(turns, 4208);
  assert_int_equal(judged, 3615);
  for (int t = 0; t < 13; t++)
    for (int k = 0; k < 3; k++)
      if (got[t][k] != want[t][k])
        fail_msg("%s: column %d is %u, want %u", tl_mtb_task_code(t), k, got[t][k], want[t][k]);
  /* every mode builds every judged turn */
  tl_buf b;
  tl_buf_init(&b);
  for (int i = 1; i <= NIDS; i++) {
    tl_mtb_dialogue *d = &byid[i];
    for (uint32_t t = tl_mtb_first_judged(d->task); t < d->nturns; t++)
      for (int m = 0; m < 4; m++) {
        tl_buf_reset(&b);
        tl_mtb_ref ref = (tl_mtb_ref)(m & 1);
        tl_mtb_text text = (tl_mtb_text)(m >> 1);
        assert_int_equal(tl_mtb_judge_user(d, t, "PRED", ref, text, &b), TL_OK);
        assert_true(tl_utf8_valid(b.data, b.len, NULL));
        bool ref_block = strstr(b.data, "The reference solution is:") != NULL;
        assert_int_equal(ref_block, tl_mtb_need_ref(d->task));
        if (text == TL_MTB_TEXT_CLEAN) assert_null(strstr(b.data, "need to be judged"));
        if (ref == TL_MTB_REF_GOLDEN && ref_block) {
          const char *bot = d->turns[t].bot;
          size_t bl = strlen(bot), tail = text == TL_MTB_TEXT_CLEAN ? 4 : 8; /* "\n###" */
          assert_true(b.len > bl + tail);
          assert_memory_equal(b.data + b.len - tail - bl, bot, bl);
        }
      }
  }
  tl_buf_release(&b);
  free_all(byid);
}

static void test_shared_golden(void **state) {
  (void)state;
  TU_NEED_SHARED(dpath, "mtbench101/mtbench101.jsonl");
  char dcopy[4096];
  snprintf(dcopy, sizeof dcopy, "%s", dpath);
  TU_NEED_SHARED(gpath, "mtbench101/opencompass_judge_prompts.jsonl.gz");
  tl_mtb_dialogue *byid;
  assert_int_equal(load_all(dcopy, &byid), 1388);
  static unsigned char seen[NIDS + 1][8];
  memset(seen, 0, sizeof seen);

  char cmd[4200];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", gpath);
  FILE *pf = popen(cmd, "r");
  assert_non_null(pf);
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  long lineno = 0, matched = 0, bad = 0;
  tl_buf b;
  tl_buf_init(&b);
  while ((got = getline(&line, &cap, pf)) > 0) {
    lineno++;
    cJSON *o = cJSON_Parse(line);
    if (!o) fail_msg("line %ld: not JSON", lineno);
    const cJSON *task = cJSON_GetObjectItem(o, "task"), *mid = cJSON_GetObjectItem(o, "multi_id");
    const cJSON *tid = cJSON_GetObjectItem(o, "turn_id"),
                *sys = cJSON_GetObjectItem(o, "system_prompt");
    const cJSON *usr = cJSON_GetObjectItem(o, "user_prompt_template");
    assert_true(cJSON_IsString(task) && cJSON_IsNumber(mid) && cJSON_IsString(tid) &&
                cJSON_IsString(sys) && cJSON_IsString(usr));
    int t = tl_mtb_task_from_code(task->valuestring);
    int id = mid->valueint, turn1 = atoi(tid->valuestring);
    if (t < 0 || id < 1 || id > NIDS || turn1 < 1 || turn1 > 8)
      fail_msg("line %ld: task %s, id %d, turn %d", lineno, task->valuestring, id, turn1);
    tl_mtb_dialogue *d = &byid[id];
    assert_int_equal(d->task, t);
    assert_true((uint32_t)turn1 <= d->nturns);
    assert_int_equal(seen[id][turn1 - 1]++, 0);
    int ok = 1;
    const char *s = tl_mtb_judge_system(t, TL_MTB_TEXT_VERBATIM);
    ok &= same_text("system prompt", lineno, s, strlen(s), sys->valuestring,
                    strlen(sys->valuestring));
    tl_buf_reset(&b);
    assert_int_equal(tl_mtb_judge_user(d, (uint32_t)turn1 - 1, "{prediction}",
                                       TL_MTB_REF_OPENCOMPASS, TL_MTB_TEXT_VERBATIM, &b),
                     TL_OK);
    ok &=
        same_text("user prompt", lineno, b.data, b.len, usr->valuestring, strlen(usr->valuestring));
    matched += ok;
    bad += !ok;
    cJSON_Delete(o);
  }
  free(line);
  assert_int_equal(pclose(pf), 0);
  tl_buf_release(&b);
  print_message("mtbench101 golden judge prompts: %ld of %ld match\n", matched, lineno);
  assert_int_equal(bad, 0);
  assert_int_equal(lineno, 3615);
  assert_int_equal(matched, 3615);
  /* exactly the judged turns, each once */
  for (int i = 1; i <= NIDS; i++)
    for (uint32_t k = 0; k < byid[i].nturns; k++)
      if (seen[i][k] != (k >= tl_mtb_first_judged(byid[i].task)))
        fail_msg("id %d turn %u: %d golden vectors", i, (unsigned)k + 1, seen[i][k]);
  free_all(byid);
}

/* mtb_strings.c is what tools/gen_mtb_strings.py writes from the shared JSON */
static void test_shared_generated(void **state) {
  (void)state;
  TU_NEED_SHARED(jpath, "mtbench101/opencompass_prompt_strings.json");
  if (access("/usr/bin/python3", X_OK) != 0) TU_SKIP("skipped: no /usr/bin/python3\n");
  char cmd[8400];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tools/gen_mtb_strings.py' --check '%s' 2>&1",
           TALLY_SOURCE_DIR, jpath);
  FILE *pf = popen(cmd, "r");
  assert_non_null(pf);
  char msg[1024] = "";
  size_t n = fread(msg, 1, sizeof msg - 1, pf);
  msg[n] = '\0';
  int rc = pclose(pf);
  if (rc != 0) fail_msg("gen_mtb_strings.py --check: %s", msg);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_taxonomy),       cmocka_unit_test(test_dialogue_json),
      cmocka_unit_test(test_repr),           cmocka_unit_test(test_isprintable),
      cmocka_unit_test(test_system_prompts), cmocka_unit_test(test_user_prompts),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_shared_dataset),
      cmocka_unit_test(test_shared_golden),
      cmocka_unit_test(test_shared_generated),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
