/* mtb_data.c - the MT-Bench-101 taxonomy and dialogue loading (mtb_data.h). */
#include "mtb_data.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"
#include "tally/str.h"

static const struct {
  const char *code, *name;
  tl_mtb_ability ability;
  bool skip_first, need_ref;
} TASKS[TL_MTB__NTASKS] = {
    [TL_MTB_CM] = {"CM", "Context Memory", TL_MTB_MEMORY, true, false},
    [TL_MTB_SI] = {"SI", "Separate Input", TL_MTB_UNDERSTANDING, false, false},
    [TL_MTB_AR] = {"AR", "Anaphora Resolution", TL_MTB_UNDERSTANDING, true, false},
    [TL_MTB_TS] = {"TS", "Topic Shift", TL_MTB_INTERFERENCE, false, false},
    [TL_MTB_CC] = {"CC", "Content Confusion", TL_MTB_INTERFERENCE, false, false},
    [TL_MTB_CR] = {"CR", "Content Rephrasing", TL_MTB_REPHRASING, true, false},
    [TL_MTB_FR] = {"FR", "Format Rephrasing", TL_MTB_REPHRASING, true, false},
    [TL_MTB_SC] = {"SC", "Self-Correction", TL_MTB_REFLECTION, true, false},
    [TL_MTB_SA] = {"SA", "Self-Affirmation", TL_MTB_REFLECTION, true, false},
    [TL_MTB_MR] = {"MR", "Mathematical Reasoning", TL_MTB_REASONING, false, true},
    [TL_MTB_GR] = {"GR", "General Reasoning", TL_MTB_REASONING, false, true},
    [TL_MTB_IC] = {"IC", "Instruction Clarification", TL_MTB_QUESTIONING, false, false},
    [TL_MTB_PI] = {"PI", "Proactive Interaction", TL_MTB_QUESTIONING, false, false},
};

static const struct {
  const char *name;
  tl_mtb_domain domain;
} ABILITIES[TL_MTB__NABILITIES] = {
    [TL_MTB_MEMORY] = {"memory", TL_MTB_PERCEPTIVITY},
    [TL_MTB_UNDERSTANDING] = {"understanding", TL_MTB_PERCEPTIVITY},
    [TL_MTB_INTERFERENCE] = {"interference", TL_MTB_PERCEPTIVITY},
    [TL_MTB_REPHRASING] = {"rephrasing", TL_MTB_ADAPTABILITY},
    [TL_MTB_REFLECTION] = {"reflection", TL_MTB_ADAPTABILITY},
    [TL_MTB_REASONING] = {"reasoning", TL_MTB_ADAPTABILITY},
    [TL_MTB_QUESTIONING] = {"questioning", TL_MTB_INTERACTIVITY},
};

static const char *const DOMAINS[TL_MTB__NDOMAINS] = {
    [TL_MTB_PERCEPTIVITY] = "perceptivity",
    [TL_MTB_ADAPTABILITY] = "adaptability",
    [TL_MTB_INTERACTIVITY] = "interactivity",
};

int tl_mtb_ntasks(void) { return TL_MTB__NTASKS; }
int tl_mtb_nabilities(void) { return TL_MTB__NABILITIES; }
int tl_mtb_ndomains(void) { return TL_MTB__NDOMAINS; }

static bool task_ok(int t) { return t >= 0 && t < TL_MTB__NTASKS; }

int tl_mtb_task_from_code(const char *code) {
  if (!code) return -1;
  for (int t = 0; t < TL_MTB__NTASKS; t++)
    if (strcmp(code, TASKS[t].code) == 0) return t;
  return -1;
}

const char *tl_mtb_task_code(int task) { return task_ok(task) ? TASKS[task].code : NULL; }
const char *tl_mtb_task_name(int task) { return task_ok(task) ? TASKS[task].name : NULL; }
int tl_mtb_task_ability(int task) { return task_ok(task) ? (int)TASKS[task].ability : -1; }

int tl_mtb_task_domain(int task) {
  return task_ok(task) ? (int)ABILITIES[TASKS[task].ability].domain : -1;
}

const char *tl_mtb_ability_name(int a) {
  return a >= 0 && a < TL_MTB__NABILITIES ? ABILITIES[a].name : NULL;
}

int tl_mtb_ability_domain(int a) {
  return a >= 0 && a < TL_MTB__NABILITIES ? (int)ABILITIES[a].domain : -1;
}

const char *tl_mtb_domain_name(int d) { return d >= 0 && d < TL_MTB__NDOMAINS ? DOMAINS[d] : NULL; }

int tl_mtb_ability_from_name(const char *name) {
  if (!name) return -1;
  for (int a = 0; a < TL_MTB__NABILITIES; a++)
    if (strcmp(name, ABILITIES[a].name) == 0) return a;
  return -1;
}

int tl_mtb_domain_from_name(const char *name) {
  if (!name) return -1;
  for (int d = 0; d < TL_MTB__NDOMAINS; d++)
    if (strcmp(name, DOMAINS[d]) == 0) return d;
  return -1;
}

bool tl_mtb_skip_first(int task) { return task_ok(task) && TASKS[task].skip_first; }
bool tl_mtb_need_ref(int task) { return task_ok(task) && TASKS[task].need_ref; }

const char *tl_mtb_task_codes(void) { return "CM SI AR TS CC CR FR SC SA MR GR IC PI"; }

/* ---- dialogues ------------------------------------------------------------------------ */

void tl_mtb_dialogue_init(tl_mtb_dialogue *d) {
  d->id = 0;
  d->task = -1;
  d->nturns = 0;
  d->turns = NULL;
}

void tl_mtb_dialogue_release(tl_mtb_dialogue *d) {
  if (!d) return;
  for (uint32_t i = 0; i < d->nturns; i++) {
    free(d->turns[i].user);
    free(d->turns[i].bot);
  }
  free(d->turns);
  tl_mtb_dialogue_init(d);
}

int tl_mtb_dialogue_uid(const tl_mtb_dialogue *d, char *buf, size_t n) {
  const char *code = tl_mtb_task_code(d->task);
  return snprintf(buf, n, "%s:%" PRId64, code ? code : "?", d->id);
}

/* Copies the string field `key` of turn object `t` (1-based turn number k) into *out. */
static tl_status turn_string(const cJSON *t, const char *key, uint32_t k, const char *uid,
                             char **out, tl_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);
  if (!v)
    return tl_err_set(err, TL_EINPUT, "dialogue '%s': history turn %" PRIu32 ": missing field '%s'",
                      uid, k, key);
  if (!cJSON_IsString(v) || !v->valuestring)
    return tl_err_set(err, TL_EINPUT,
                      "dialogue '%s': history turn %" PRIu32 ": field '%s' is not a string", uid,
                      k, key);
  size_t n = strlen(v->valuestring), bad;
  if (!tl_utf8_valid(v->valuestring, n, &bad))
    return tl_err_set(err, TL_EINPUT,
                      "dialogue '%s': history turn %" PRIu32
                      ": field '%s' is not valid UTF-8 (byte %zu)",
                      uid, k, key, bad);
  *out = tl_strndup(v->valuestring, n);
  return *out ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
}

tl_status tl_mtb_dialogue_from_json(const cJSON *o, tl_mtb_dialogue *d, tl_err *err) {
  tl_mtb_dialogue_init(d);
  if (!cJSON_IsObject(o)) return tl_err_set(err, TL_EINPUT, "dialogue: not a JSON object");

  const cJSON *task = cJSON_GetObjectItemCaseSensitive(o, "task");
  if (!task) return tl_err_set(err, TL_EINPUT, "dialogue: missing field 'task'");
  if (!cJSON_IsString(task) || !task->valuestring)
    return tl_err_set(err, TL_EINPUT, "dialogue: field 'task' is not a string");
  int t = tl_mtb_task_from_code(task->valuestring);
  if (t < 0) {
    size_t len = strlen(task->valuestring);
    len = tl_utf8_floor(task->valuestring, len < 40 ? len : 40); /* whole characters only */
    return tl_err_set(err, TL_EINPUT,
                      "dialogue: field 'task': unknown task code '%.*s%s' (known: %s)", (int)len,
                      task->valuestring, task->valuestring[len] ? "..." : "", tl_mtb_task_codes());
  }

  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  if (!id)
    return tl_err_set(err, TL_EINPUT, "dialogue (task %s): missing field 'id'", TASKS[t].code);
  if (!tl_json_is_int(id, 1, 9007199254740992.0)) /* 2^53: exact in a double */
    return tl_err_set(err, TL_EINPUT,
                      "dialogue (task %s): field 'id' is not a positive integer (at most 2^53)",
                      TASKS[t].code);
  int64_t idv = (int64_t)id->valuedouble;
  char uid[48];
  snprintf(uid, sizeof uid, "%s:%" PRId64, TASKS[t].code, idv);

  const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "history");
  if (!hist) return tl_err_set(err, TL_EINPUT, "dialogue '%s': missing field 'history'", uid);
  if (!cJSON_IsArray(hist))
    return tl_err_set(err, TL_EINPUT, "dialogue '%s': field 'history' is not an array", uid);
  int n = cJSON_GetArraySize(hist);
  if (n <= 0)
    return tl_err_set(err, TL_EINPUT, "dialogue '%s': field 'history' is empty (no turns)", uid);

  tl_mtb_turn *turns = calloc((size_t)n, sizeof *turns);
  if (!turns) return tl_err_set(err, TL_ENOMEM, "out of memory");
  d->turns = turns;
  d->task = t;
  d->id = idv;
  tl_status st = TL_OK;
  uint32_t k = 0;
  for (const cJSON *e = hist->child; e; e = e->next) {
    d->nturns = k + 1; /* so that release frees this turn's strings too */
    if (!cJSON_IsObject(e)) {
      st = tl_err_set(err, TL_EINPUT,
                      "dialogue '%s': history turn %" PRIu32 " is not a JSON object", uid, k + 1);
      break;
    }
    if ((st = turn_string(e, "user", k + 1, uid, &turns[k].user, err)) != TL_OK) break;
    if ((st = turn_string(e, "bot", k + 1, uid, &turns[k].bot, err)) != TL_OK) break;
    k++;
  }
  if (st != TL_OK) {
    tl_mtb_dialogue_release(d);
    return st;
  }
  d->nturns = k;
  return TL_OK;
}

uint32_t tl_mtb_first_judged(int task) { return tl_mtb_skip_first(task) ? 1u : 0u; }

uint32_t tl_mtb_judged_turns(const tl_mtb_dialogue *d) {
  uint32_t f = tl_mtb_first_judged(d->task);
  return d->nturns > f ? d->nturns - f : 0u;
}

tl_status tl_mtb_dialogue_check(const tl_mtb_dialogue *d, tl_err *err) {
  if (tl_mtb_judged_turns(d) > 0) return TL_OK;
  char uid[48];
  tl_mtb_dialogue_uid(d, uid, sizeof uid);
  if (d->nturns == 0) return tl_err_set(err, TL_EINPUT, "dialogue '%s' has no turns", uid);
  const char *code = tl_mtb_task_code(d->task);
  return tl_err_set(err, TL_EINPUT,
                    "dialogue '%s' has no judged turn: it has %" PRIu32
                    " turn%s and turn 1 of a %s dialogue is context only",
                    uid, d->nturns, d->nturns == 1 ? "" : "s", code ? code : "?");
}
