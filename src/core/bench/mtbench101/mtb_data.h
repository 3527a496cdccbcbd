/* mtb_data.h - MT-Bench-101: the task taxonomy and the benchmark's dialogues.
 *
 * Facts (../shared/spec/mtbench101.md sections 1-2): 13 tasks grouped into 7 abilities and 3
 * domains; the benchmark file has one dialogue a line, {"task": "GR", "id": 1, "history":
 * [{"user": str, "bot": str}, ...]}, each `bot` the golden answer. Turns of the six skip-first
 * tasks (FR CR AR SA SC CM) start with a context-only turn that is never generated or judged;
 * every other turn is judged, on the golden history of the turns before it. MR and GR judges
 * get a reference solution. The task codes and grouping are verified; the long task names are
 * the paper's as recalled in the spec (marked unverified there).
 *
 * Turns are 0-based everywhere in this API (OpenCompass's turn_id is this index + 1). */
#ifndef TALLY_MTB_DATA_H
#define TALLY_MTB_DATA_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

/* The tasks, in the paper's column order (the index of every per-task array). */
typedef enum {
  TL_MTB_CM = 0, /* Context Memory */
  TL_MTB_SI = 1, /* Separate Input */
  TL_MTB_AR = 2, /* Anaphora Resolution */
  TL_MTB_TS = 3, /* Topic Shift */
  TL_MTB_CC = 4, /* Content Confusion */
  TL_MTB_CR = 5, /* Content Rephrasing */
  TL_MTB_FR = 6, /* Format Rephrasing */
  TL_MTB_SC = 7, /* Self-Correction */
  TL_MTB_SA = 8, /* Self-Affirmation */
  TL_MTB_MR = 9, /* Mathematical Reasoning */
  TL_MTB_GR = 10, /* General Reasoning */
  TL_MTB_IC = 11, /* Instruction Clarification */
  TL_MTB_PI = 12, /* Proactive Interaction */
  TL_MTB__NTASKS = 13
} tl_mtb_task;

typedef enum {
  TL_MTB_MEMORY = 0,        /* CM */
  TL_MTB_UNDERSTANDING = 1, /* SI AR */
  TL_MTB_INTERFERENCE = 2,  /* TS CC */
  TL_MTB_REPHRASING = 3,    /* CR FR */
  TL_MTB_REFLECTION = 4,    /* SC SA */
  TL_MTB_REASONING = 5,     /* MR GR */
  TL_MTB_QUESTIONING = 6,   /* IC PI */
  TL_MTB__NABILITIES = 7
} tl_mtb_ability;

typedef enum {
  TL_MTB_PERCEPTIVITY = 0,  /* memory, understanding, interference */
  TL_MTB_ADAPTABILITY = 1,  /* rephrasing, reflection, reasoning */
  TL_MTB_INTERACTIVITY = 2, /* questioning */
  TL_MTB__NDOMAINS = 3
} tl_mtb_domain;

/* The counts, as functions for callers that prefer them to the enum ends. */
int tl_mtb_ntasks(void);     /* 13 */
int tl_mtb_nabilities(void); /* 7 */
int tl_mtb_ndomains(void);   /* 3 */

/* "GR" -> TL_MTB_GR; -1 for NULL or an unknown code (exact, case-sensitive match). */
int tl_mtb_task_from_code(const char *code);

/* Out-of-range indices give NULL (the strings) or -1 (the indices). */
const char *tl_mtb_task_code(int task);    /* "CM" */
const char *tl_mtb_task_name(int task);    /* "Context Memory" */
int tl_mtb_task_ability(int task);         /* a tl_mtb_ability */
int tl_mtb_task_domain(int task);          /* a tl_mtb_domain */
const char *tl_mtb_ability_name(int ability); /* "memory", "understanding", ... */
int tl_mtb_ability_domain(int ability);    /* a tl_mtb_domain */
const char *tl_mtb_domain_name(int domain);   /* "perceptivity", "adaptability", ... */
int tl_mtb_ability_from_name(const char *name); /* -1 unknown */
int tl_mtb_domain_from_name(const char *name);  /* -1 unknown */

/* The upstream task lists, as predicates (false for an out-of-range index). */
bool tl_mtb_skip_first(int task); /* FR CR AR SA SC CM: turn 0 is context only */
bool tl_mtb_need_ref(int task);   /* MR GR: the judge gets a reference solution */

/* "CM SI AR TS CC CR FR SC SA MR GR IC PI": the known codes, for messages. */
const char *tl_mtb_task_codes(void);

/* ---- dialogues ------------------------------------------------------------------------ */

typedef struct {
  char *user; /* the user message of the turn */
  char *bot;  /* the golden answer of the turn */
} tl_mtb_turn;

/* One benchmark dialogue. The strings and the turns array are owned by the dialogue. */
typedef struct {
  int64_t id;          /* the benchmark's id: 1..1388, unique over the file */
  int task;            /* a tl_mtb_task */
  uint32_t nturns;     /* >= 1 */
  tl_mtb_turn *turns;  /* nturns turns, 0-based */
} tl_mtb_dialogue;

void tl_mtb_dialogue_init(tl_mtb_dialogue *d);
void tl_mtb_dialogue_release(tl_mtb_dialogue *d); /* frees everything and re-inits */

/* Reads one benchmark row. TL_EINPUT, with a message that names the field (and, once task and
 * id are read, the dialogue as 'GR:1'), when:
 *  - the value is not a JSON object;
 *  - "task" is missing or not a string, or not one of the 13 codes (the message lists them);
 *  - "id" is missing, or not a JSON number holding an integer in [1, 2^53];
 *  - "history" is missing, not an array, or empty;
 *  - a history element is not an object, or its "user" or "bot" is missing or not a string
 *    (the message says which turn, 1-based, as the upstream turn_id counts);
 *  - a string is not valid UTF-8 (possible only when the cJSON tree was built by hand).
 * Unknown keys are tolerated, at the top level and in the turns, and ignored: upstream ignores
 * them too, and a later release of the file may add some. TL_ENOMEM when allocation fails.
 * On any failure *d is left empty (as tl_mtb_dialogue_init leaves it). */
tl_status tl_mtb_dialogue_from_json(const cJSON *o, tl_mtb_dialogue *d, tl_err *err);

/* "GR:1" (JudgeArena's dialogue_uid) into buf; returns what snprintf returns. */
int tl_mtb_dialogue_uid(const tl_mtb_dialogue *d, char *buf, size_t n);

/* The first judged turn: 1 for the skip-first tasks (turn 0 is context only), else 0. */
uint32_t tl_mtb_first_judged(int task);

/* The judged turns of d: turns first_judged .. nturns-1, so nturns - first_judged of them
 * (0 when a skip-first dialogue has a single turn). */
uint32_t tl_mtb_judged_turns(const tl_mtb_dialogue *d);

/* TL_OK when d has at least one judged turn; otherwise TL_EINPUT with "dialogue 'CM:5' has no
 * judged turn: it has 1 turn and turn 1 of a CM dialogue is context only". The loader reports
 * such a dialogue as a problem (the benchmark file has none). */
tl_status tl_mtb_dialogue_check(const tl_mtb_dialogue *d, tl_err *err);

#endif
