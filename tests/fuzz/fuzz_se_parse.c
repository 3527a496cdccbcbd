/* fuzz_se_parse.c - libFuzzer target for the SpatialEval answer parsers (tl_se_parse), built
 * once per mode: fuzz_se_strict, fuzz_se_pr3, fuzz_se_legacy (FUZZ_SE_MODE).
 *
 * Input: one control byte, then the rest.
 *   bits 0-3: 0..7 = one of eight fixed demo items (demo/spatialeval/items.jsonl), and the rest
 *             is the response; 8..15 = the rest is "<item JSON line>\n<response>".
 *   bits 4-5: model name (legacy has model-specific branches): "", claude, geminiv, gpt4o.
 *   bit 6:    pass the prompt the model saw (pr3 reads its options from it); else NULL.
 *   bit 7:    that prompt is the letter variant; else the reason variant.
 * Only valid UTF-8 without NUL bytes reaches the parsers in production (answers and items are
 * validated on load), so other inputs are rejected (-1: not kept in the corpus). */
#include "fuzz_util.h"

#include <cjson/cJSON.h>

#include "tally/parsed.h"
#include "spatialeval.h"
#include "tally/str.h"

#ifndef FUZZ_SE_MODE
#define FUZZ_SE_MODE TL_SE_STRICT
#endif

static const char *const ITEMS[8] = {
    /* spatialmap.tqa.2000.0 */
    "{\"id\": \"spatialmap.tqa.2000.0\", \"text\": \"Consider a map with multiple objects: \\"
    "nViolet Vases is in the map.  Dune Donuts is to the Southeast of Violet Vases.  Granite "
    "Games is to the Southeast of Violet Vases. Granite Games is to the Northeast of Dune Don"
    "uts.  Kestrel Kites is to the Southeast of Violet Vases. Kestrel Kites is to the Northwe"
    "st of Dune Donuts.  Nimbus Notes is to the Northeast of Dune Donuts. Nimbus Notes is to "
    "the Southwest of Granite Games.  Willow Woodworks is to the Southeast of Granite Games. "
    "Willow Woodworks is to the Northeast of Kestrel Kites. \\n\\n Please answer the followin"
    "g multiple-choice question based on the provided information. In which direction is Kest"
    "rel Kites relative to Violet Vases? Available options:\\nA. Northeast\\nB. Northwest\\nC"
    ". Southeast\\nD. Southwest.\", \"oracle_answer\": \"Southeast\", \"oracle_option\": \"C\", \"oracle_full_answer\": \"C. Southeast\"}",
    /* spatialmap.tqa.2000.1 */
    "{\"id\": \"spatialmap.tqa.2000.1\", \"text\": \"Consider a map with multiple objects: \\"
    "nViolet Vases is in the map.  Dune Donuts is to the Southeast of Violet Vases.  Granite "
    "Games is to the Southeast of Violet Vases. Granite Games is to the Northeast of Dune Don"
    "uts.  Kestrel Kites is to the Southeast of Violet Vases. Kestrel Kites is to the Northwe"
    "st of Dune Donuts.  Nimbus Notes is to the Northeast of Dune Donuts. Nimbus Notes is to "
    "the Southwest of Granite Games.  Willow Woodworks is to the Southeast of Granite Games. "
    "Willow Woodworks is to the Northeast of Kestrel Kites. \\n\\n Please answer the followin"
    "g multiple-choice question based on the provided information. Which object is in the Sou"
    "theast of Kestrel Kites? Available options:\\nA. Dune Donuts\\nB. Willow Woodworks\\nC. "
    "Violet Vases\\nD. Granite Games.\", \"oracle_answer\": \"Dune Donuts\", \"oracle_option\": \"A\", \"oracle_full_answer\": \"A. Dune Donuts\"}",
    /* spatialmap.tqa.2000.2 */
    "{\"id\": \"spatialmap.tqa.2000.2\", \"text\": \"Consider a map with multiple objects: \\"
    "nViolet Vases is in the map.  Dune Donuts is to the Southeast of Violet Vases.  Granite "
    "Games is to the Southeast of Violet Vases. Granite Games is to the Northeast of Dune Don"
    "uts.  Kestrel Kites is to the Southeast of Violet Vases. Kestrel Kites is to the Northwe"
    "st of Dune Donuts.  Nimbus Notes is to the Northeast of Dune Donuts. Nimbus Notes is to "
    "the Southwest of Granite Games.  Willow Woodworks is to the Southeast of Granite Games. "
    "Willow Woodworks is to the Northeast of Kestrel Kites. \\n\\n Please answer the followin"
    "g multiple-choice question based on the provided information. How many objects are in th"
    "e Southwest of Violet Vases? Available options:\\nA. 2\\nB. 0\\nC. 3\\nD. 5.\", \"oracle"
    "_answer\": \"0\", \"oracle_option\": \"B\", \"oracle_full_answer\": \"B. 0\"}",
    /* mazenav.tqa.0.0 */
    "{\"id\": \"mazenav.tqa.0.0\", \"text\": \"This is a maze drawn with ASCII characters: '#"
    "' is a wall, '.' is an open cell, 'S' is the starting point, 'E' is the exit, and 'X' ma"
    "rks the path from S to E.\\n#######\\n#.#.#.#\\n#E..#.#\\n#X###.#\\n#X#XXS#\\n#XXX###\\n"
    "#######\\n\\n Please answer the following multiple-choice question based on the provided"
    " information. How many right turns are there in the provided path (marked by X) from S t"
    "o E? Available options:\\nA. 0\\nB. 2\\nC. 3\\nD. 5.\", \"oracle_answer\": \"2\", \"orac"
    "le_option\": \"B\", \"oracle_full_answer\": \"B. 2\"}",
    /* mazenav.tqa.0.2 */
    "{\"id\": \"mazenav.tqa.0.2\", \"text\": \"This is a maze drawn with ASCII characters: '#"
    "' is a wall, '.' is an open cell, 'S' is the starting point, 'E' is the exit, and 'X' ma"
    "rks the path from S to E.\\n#######\\n#.#.#.#\\n#E..#.#\\n#X###.#\\n#X#XXS#\\n#XXX###\\n"
    "#######\\n\\n Please answer the following multiple-choice question based on the provided"
    " information. Is the exit (E) directly below the starting point (S), with no horizontal "
    "displacement? Available options:\\nA. Yes\\nB. No.\", \"oracle_answer\": \"No\", \"oracl"
    "e_option\": \"B\", \"oracle_full_answer\": \"B. No\"}",
    /* spatialgrid.tqa.0.1 */
    "{\"id\": \"spatialgrid.tqa.0.1\", \"text\": \"Consider a 5x5 grid of blocks, where each "
    "block holds exactly one animal from ['cat', 'dog', 'elephant', 'giraffe', 'rabbit']. The"
    " grid, row by row from top to bottom:\\n| dog | giraffe | rabbit | giraffe | cat |\\n| e"
    "lephant | dog | giraffe | dog | dog |\\n| elephant | elephant | elephant | rabbit | elep"
    "hant |\\n| rabbit | giraffe | rabbit | rabbit | elephant |\\n| cat | rabbit | giraffe | "
    "elephant | dog |\\n\\n Please answer the following multiple-choice question based on the"
    " provided information. What is the animal of the block located at the top-left corner (t"
    "he first row and the first column) of the grid? Available options:\\nA. dog\\nB. cat\\nC"
    ". elephant\\nD. giraffe.\", \"oracle_answer\": \"dog\", \"oracle_option\": \"A\", \"orac"
    "le_full_answer\": \"A. dog\"}",
    /* spatialreal.tqa.sa_1001.0 */
    "{\"id\": \"spatialreal.tqa.sa_1001.0\", \"text\": \"Consider this description of a photo"
    "graph: a wooden kitchen table stands by a window. On the table there is a white bowl hol"
    "ding six oranges, with two mugs to the right of the bowl and a folded newspaper in front"
    " of it.\\n\\n Please answer the following multiple-choice question based on the provided"
    " information. How many oranges are in the bowl? Available options:\\nA. eight\\nB. four\\nC. five\\nD. six.\", \"oracle_answer\": \"six\", \"oracle_option\": \"D\", \"oracle_fu"
    "ll_answer\": \"D. six\"}",
    /* spatialmap.vqa.2003.1 */
    "{\"id\": \"spatialmap.vqa.2003.1\", \"text\": \"The figure represents a map with several"
    " labelled objects; north points up. Please answer the following multiple-choice question"
    " based on the provided image. Which object is in the Northwest of Kestrel Kites? Availab"
    "le options:\\nA. Nimbus Notes\\nB. Umber Umbrellas\\nC. Dune Donuts\\nD. Otter's Optics."
    "\", \"oracle_answer\": \"Otter's Optics\", \"oracle_option\": \"D\", \"oracle_full_answe"
    "r\": \"D. Otter's Optics\"}",
};

static const char *const MODELS[4] = {"", "claude-3-opus", "GeminiVision-pro", "gpt4o-mini"};

static tl_se_parser *g_parser;
static tl_se_item g_items[8];

static void fz_free_all(void) {
  for (int i = 0; i < 8; i++) tl_se_item_release(&g_items[i]);
  tl_se_parser_free(g_parser);
}

static int load_item(const char *json, size_t n, tl_se_item *it) {
  cJSON *o = cJSON_ParseWithLength(json, n);
  if (!o) return -1;
  tl_err err;
  tl_se_item_init(it);
  tl_status st = tl_se_item_from_json(o, it, &err);
  cJSON_Delete(o);
  if (st != TL_OK) {
    tl_se_item_release(it);
    return -1;
  }
  return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  tl_err err;
  g_parser = tl_se_parser_new(FUZZ_SE_MODE, &err);
  if (!g_parser) {
    fprintf(stderr, "tl_se_parser_new: %s\n", err.msg);
    abort();
  }
  for (int i = 0; i < 8; i++)
    if (load_item(ITEMS[i], strlen(ITEMS[i]), &g_items[i]) != 0) {
      fprintf(stderr, "fixed item %d does not load\n", i);
      abort();
    }
  atexit(fz_free_all);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  const unsigned ctl = data[0];
  const char *rest = (const char *)data + 1;
  size_t n = size - 1;
  if (memchr(rest, 0, n) || !tl_utf8_valid(rest, n, NULL)) return -1;
  tl_se_item custom;
  const tl_se_item *item;
  const char *resp = rest;
  size_t resp_n = n;
  if ((ctl & 15) < 8) {
    item = &g_items[ctl & 7];
  } else {
    const char *nl = memchr(rest, '\n', n);
    if (!nl) return -1;
    if (load_item(rest, (size_t)(nl - rest), &custom) != 0) return -1;
    item = &custom;
    resp = nl + 1;
    resp_n = n - (size_t)(nl + 1 - rest);
  }
  char *response = tl_strndup(resp, resp_n);
  char *prompt = NULL;
  if (ctl & 64) {
    prompt = tl_se_build_prompt(item, (ctl & 128) ? TL_SE_PROMPT_LETTER : TL_SE_PROMPT_REASON, 0);
    FZ_CHECK(prompt != NULL);
  }
  FZ_CHECK(response != NULL);
  tl_parsed out;
  tl_parsed_init(&out);
  tl_status st = tl_se_parse(g_parser, item, prompt, response, MODELS[(ctl >> 4) & 3], &out);
  if (st != TL_OK) { /* only internal failures may be errors: a response is never one */
    fprintf(stderr, "tl_se_parse (%s) returned %d: %s\n", tl_se_mode_name(FUZZ_SE_MODE), (int)st,
            tl_strerror(st));
    abort();
  }
  FZ_CHECK(out.rule != NULL);
  FZ_CHECK(out.status >= TL_PS_OK && out.status < TL_PS__COUNT);
  FZ_CHECK(out.correct == 0 || out.correct == 1);
  if (out.answer) FZ_CHECK(tl_utf8_valid(out.answer, strlen(out.answer), NULL));
  if (FUZZ_SE_MODE != TL_SE_LEGACY) FZ_CHECK(!out.correct || out.status == TL_PS_OK);
  if (FUZZ_SE_MODE == TL_SE_STRICT) { /* docs/parser-strict.md, "Result" */
    FZ_CHECK((out.status == TL_PS_OK) == (out.answer != NULL));
    if (out.answer) {
      int known = 0;
      for (int i = 0; i < item->n_options; i++)
        known |= out.answer[0] == item->opt_letter[i] && out.answer[1] == 0;
      FZ_CHECK(known);
      FZ_CHECK(out.correct == (strcmp(out.answer, item->oracle_option) == 0));
    }
  }
  tl_parsed_release(&out);
  free(prompt);
  free(response);
  if (item == &custom) tl_se_item_release(&custom);
  return 0;
}
