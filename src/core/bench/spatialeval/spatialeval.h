/* spatialeval.h - SpatialEval items, option blocks, prompts and the three answer parsers.
 *
 * Format facts (../shared/spec/spatialeval.md): items are {id, text, oracle_answer,
 * oracle_option, oracle_full_answer}; id = "<task>.<mode>.<instance>.<qid>"; the options sit in
 * `text` after "Available options:\n" as "A. x\nB. y\n...", the last carrying a trailing ".";
 * Maze-Nav q2 has two (Yes/No). */
#ifndef TALLY_SPATIALEVAL_H
#define TALLY_SPATIALEVAL_H

#include <cjson/cJSON.h>

#include "tally/bench_vt.h"
#include "tally/err.h"
#include "tally/parsed.h"

#define TL_SE_MAX_OPTIONS 8

typedef enum {
  TL_SE_SPATIALMAP = 0,
  TL_SE_MAZENAV = 1,
  TL_SE_SPATIALGRID = 2,
  TL_SE_SPATIALREAL = 3,
  TL_SE__NTASKS = 4
} tl_se_task;

const char *tl_se_task_name(tl_se_task t); /* "spatialmap", ... */

/* The question's mode, the paper's TQA / VQA / VTQA: the description as text only, as an image
 * only, or both (the id's second field). Not a parser: the code calls the parsers tl_se_mode
 * for historical reasons, the job and the tables call them parsers. */
typedef enum { TL_SE_TQA = 0, TL_SE_VQA = 1, TL_SE_VTQA = 2, TL_SE__NQMODES = 3 } tl_se_qmode;
const char *tl_se_qmode_name(tl_se_qmode q); /* "tqa" | "vqa" | "vtqa" */
int tl_se_qmode_from_name(const char *name);  /* -1 when unknown */

/* One item. All strings owned by the item (tl_se_item_release frees them). */
typedef struct {
  char *id;                 /* "spatialmap.tqa.2000.0" */
  char *text;               /* question text with the options block */
  char *oracle_answer;      /* "Northeast" */
  char *oracle_option;      /* "A" */
  char *oracle_full_answer; /* "A. Northeast" */
  tl_se_task task;
  char mode[8];             /* "tqa" | "vqa" | "vtqa" */
  tl_se_qmode qmode;        /* the same, as a number */
  char *image;              /* the item's "image" as written (a path), or NULL when absent, null
                               or ""; the loader (se_eval.c) replaces it by the resolved path */
  char *instance;           /* "2000", "sa_1543979" */
  int qid;                  /* 0..2 */
  int n_options;            /* 0 when the text has no options block */
  char opt_letter[TL_SE_MAX_OPTIONS];
  char *opt_text[TL_SE_MAX_OPTIONS]; /* as written, the last option's trailing '.' removed */
} tl_se_item;

void tl_se_item_init(tl_se_item *it);
void tl_se_item_release(tl_se_item *it);

/* Splits an id into its parts. Returns TL_EINPUT with a message when it is not
 * "<known task>.<tqa|vqa|vtqa>.<instance>.<qid digits>". */
tl_status tl_se_parse_id(const char *id, tl_se_task *task, char mode[8], char **instance,
                         int *qid, tl_err *err);

/* Reads an item from a JSON object (the benchmark's row format). Missing or mistyped fields,
 * a bad id, or oracle fields that disagree give TL_EINPUT with a message naming the field.
 * oracle_answer may be a JSON number or string (kept as its text). "image" is optional: a
 * string (kept as written), null or absent; another type is a bad field. */
tl_status tl_se_item_from_json(const cJSON *obj, tl_se_item *it, tl_err *err);

/* Parses the "Available options:" block of `text` into letters and texts (up to
 * TL_SE_MAX_OPTIONS). Returns the option count, 0 when there is no block. Texts are malloc'd
 * into texts[] (caller frees); letters are consecutive from 'A'. */
int tl_se_parse_options(const char *text, char letters[TL_SE_MAX_OPTIONS],
                        char *texts[TL_SE_MAX_OPTIONS]);

/* Prompt variants. REASON is the original SpatialEval `--w_reason` prompt ("First, provide a
 * concise answer in one sentence. ..."); LETTER is the published single-letter prompt
 * ("... -- Answer: <A single letter option ...>.\nReason: ...", question repeated). `lm` selects
 * the text-only LM style of REASON (a space instead of "\n" before the instruction); LETTER has
 * one form. Returns a malloc'd string. */
typedef enum { TL_SE_PROMPT_REASON = 0, TL_SE_PROMPT_LETTER = 1 } tl_se_prompt_kind;
char *tl_se_build_prompt(const tl_se_item *it, tl_se_prompt_kind kind, int lm);
const char *tl_se_prompt_name(tl_se_prompt_kind k); /* "reason" | "letter" */
int tl_se_prompt_from_name(const char *name);       /* -1 when unknown */

/* ---- answer extraction ---------------------------------------------------------------- */

typedef enum {
  TL_SE_STRICT = 0, /* ours, the default: option letter vs oracle_option */
  TL_SE_PR3 = 1,    /* the published generic parser (CerebrasResearch PR #3), bugs included */
  TL_SE_LEGACY = 2, /* the original evaluator (substring check), bugs included */
  TL_SE__NMODES = 3
} tl_se_mode;

const char *tl_se_mode_name(tl_se_mode m); /* "strict" | "pr3" | "legacy" */
int tl_se_mode_from_name(const char *name); /* -1 when unknown */

/* A compiled parser for one mode: immutable after creation, shareable. */
typedef struct tl_se_parser tl_se_parser;

tl_se_parser *tl_se_parser_new(tl_se_mode mode, tl_err *err);
void tl_se_parser_free(tl_se_parser *p);
tl_se_mode tl_se_parser_mode(const tl_se_parser *p);

/* Extracts the answer from `response` for `item` and scores it.
 *   prompt: the prompt the model saw, or NULL (then item->text stands in). pr3 reads its options
 *           from the prompt, as the published parser does; the other modes use item->text.
 *   model:  the model name (legacy has model-specific branches); NULL = "".
 * `out` must be initialised; it is overwritten. Returns TL_OK, or an error only for internal
 * failures (regex resource limits, memory) - any property of the response is a status. */
tl_status tl_se_parse(const tl_se_parser *p, const tl_se_item *item, const char *prompt,
                      const char *response, const char *model, tl_parsed *out);

/* Per-mode entry points (used by tl_se_parse; exposed for tests). Each file owns its state. */
typedef struct tl_se_strict tl_se_strict;
tl_se_strict *tl_se_strict_new(tl_err *err);
/* Tests only: 1 makes every later strict parse search its markers from every position, as
 * before the skip over text that cannot hold one (se_strict.c, marker_from); 0 restores it. */
void tl_se_strict_test_full_search(int on);
void tl_se_strict_free(tl_se_strict *s);
tl_status tl_se_strict_parse(const tl_se_strict *s, const tl_se_item *item, const char *response,
                             tl_parsed *out);

typedef struct tl_se_pr3 tl_se_pr3;
tl_se_pr3 *tl_se_pr3_new(tl_err *err);
void tl_se_pr3_free(tl_se_pr3 *s);
/* Tests only: s keeps the options of at most n (1 .. 4096) prompts before its cache is emptied. */
void tl_se_pr3_test_cache_max(tl_se_pr3 *s, size_t n);
tl_status tl_se_pr3_parse(const tl_se_pr3 *s, const tl_se_item *item, const char *prompt,
                          const char *response, tl_parsed *out);

typedef struct tl_se_legacy tl_se_legacy;
tl_se_legacy *tl_se_legacy_new(tl_err *err);
void tl_se_legacy_free(tl_se_legacy *s);
tl_status tl_se_legacy_parse(const tl_se_legacy *s, const tl_se_item *item, const char *response,
                             const char *model, tl_parsed *out);

/* The module's hooks around the run (se_hooks.c; tally/bench_vt.h): the reference evaluator's
 * output lines as an answer format, the parsers spatialeval-strict|pr3|legacy of `tally parse`,
 * and `tally compare`'s defaults. */
extern const tl_answer_format *const tl_se_formats[];
extern const tl_parser_set tl_se_parser_set;
extern const tl_compare_defaults tl_se_compare;

#endif
