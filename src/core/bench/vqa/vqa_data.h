/* vqa_data.h - VQA question sets and results: the official JSON files (questions, annotations,
 * results), tally's JSONL item form, and the official per-question / per-type report.
 * Contract and file formats: docs/VQA.md.
 *
 * Core tier (cJSON; no MPI/HDF5/curl). Every problem with an input is reported through the
 * tl_inlog with its file and line (for the official files, the line where the offending array
 * element starts), counted, and skipped; under strict input the first one stops the load with
 * TL_EINPUT. Loaders return TL_OK (possibly with problems reported), TL_EINPUT (strict input,
 * or a file that holds nothing usable: err says why), TL_EIO (err says why) or TL_ENOMEM. */
#ifndef TALLY_VQA_DATA_H
#define TALLY_VQA_DATA_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"
#include "tally/inlog.h"
#include "tally/strmap.h"
#include "vqa_eval.h"

/* One question with its reference answers. Every string (and the answers array) is owned by
 * the set: it lives in the set's arena and is freed by tl_vqa_set_release, never alone. */
typedef struct {
  char *id;            /* canonical id: an integer's decimal digits ("42000"), or the string */
  int64_t num;         /* the integer id (0 for a string id) */
  int is_num;          /* the id was a JSON integer */
  char *question;      /* NULL when unknown (no questions file given, or not in it) */
  char *image;         /* JSONL "image", else NULL */
  char *question_type; /* NULL when absent (JSONL only: the official format requires it) */
  char *answer_type;   /* NULL when absent (likewise) */
  char **answers;      /* [n_answers] raw reference strings, in file order (>= 1) */
  size_t n_answers;
  size_t order;        /* 0-based position among the kept items in the file (official: the
                        * annotations file): the order the official script sums in */
  long line;           /* 1-based line where the item starts in its file */
} tl_vqa_item;

typedef struct {
  tl_vqa_item *items;  /* [n], sorted by id: numerically when every id is an integer, else by
                        * the canonical ids' bytes (strcmp) */
  size_t n;
  int numeric;         /* every id is an integer */
  int official;        /* loaded from the official files (result ids must be integers) */
  char *path;          /* the annotations or items file (owned), for messages */
  tl_strmap index;     /* canonical id -> the item's order (its position among the kept items
                        * in the file, built while reading: duplicates are found there) */
  size_t *at;          /* [n]: at[order] = the item's position in items (after the sort) */
  size_t n_not10;      /* items whose reference count is not 10 (allowed; counted to be shown) */
  size_t n_dropped;    /* items (annotations or lines) reported and left out */
  size_t n_no_question;   /* official: annotations with no question in the questions file */
  size_t n_no_annotation; /* official: questions with no annotation (left out) */
  size_t n_plain;      /* official: elements (questions and annotations) read in place, the
                        * rest parsed by cJSON (docs/VQA.md, "Loading") */
  struct vqa_arena *arena; /* owns every string of the items (vqa_scan.h) */
} tl_vqa_set;

void tl_vqa_set_init(tl_vqa_set *s);
void tl_vqa_set_release(tl_vqa_set *s);

/* Loads the official annotations file (required) and, when `questions` is non-NULL, the
 * questions file, into s (initialized by the call). Kept: every annotation with a valid
 * question_id, question_type, answer_type and 1+ answers ({"answer": string}); the question
 * text is attached from the questions file. Reported: malformed JSON, invalid UTF-8, duplicate
 * keys and \u0000 escapes (per element), missing or mistyped fields, 0 answers, a duplicate
 * question_id (the first kept), an annotation without a question and a question without an
 * annotation (unknown_item; the latter left out). */
tl_status tl_vqa_load_official(tl_vqa_set *s, const char *questions, const char *annotations,
                               tl_inlog *log, tl_err *err);

/* Loads tally's JSONL item form (one object per line: "id" or "question_id" (integer or
 * non-empty string), "question" (string), "answers" ([string, ...], 1 or more), and optional
 * "image", "question_type", "answer_type" (strings); other keys ignored) into s. */
tl_status tl_vqa_load_items(tl_vqa_set *s, const char *path, tl_inlog *log, tl_err *err);

/* The index of the item with canonical id `id`, or -1. */
long tl_vqa_find(const tl_vqa_set *s, const char *id);

/* Predictions for a set: answer[i] is the prediction for s->items[i], NULL when none. */
typedef struct {
  char **answer;       /* [n] owned strings or NULL */
  size_t n;            /* the set's item count */
  size_t n_given;      /* items with a prediction */
  size_t n_missing;    /* items without one (never scored as wrong) */
  size_t n_unknown;    /* results for an id the set does not have (reported, ignored) */
  size_t n_duplicate;  /* second results for an id (reported; the first kept) */
  size_t n_bad;        /* results reported for a missing or mistyped field */
  size_t n_plain;      /* results of the official array form read in place (vqa_scan.h) */
} tl_vqa_results;

/* An empty prediction table for s (every answer NULL). TL_OK or TL_ENOMEM. */
tl_status tl_vqa_results_init(tl_vqa_results *r, const tl_vqa_set *s);
void tl_vqa_results_release(tl_vqa_results *r);
/* Sets the prediction of item i to a copy of `answer` (replacing any). TL_OK or TL_ENOMEM. */
tl_status tl_vqa_results_set(tl_vqa_results *r, size_t i, const char *answer);

/* Reads a results file into r (tl_vqa_results_init'ed by the call): the official JSON array
 * [{"question_id": ..., "answer": string}, ...] when its first non-blank byte is '[', else JSONL
 * lines of the same objects ("id" accepted for "question_id"). A result for an unknown id, a
 * duplicate (first kept), a missing or mistyped field are reported; the items without a
 * result are reported once (missing_field, line 0, with the count and the first ids). */
tl_status tl_vqa_load_results(tl_vqa_results *r, const tl_vqa_set *s, const char *path,
                              tl_inlog *log, tl_err *err);

/* What a report covered. */
typedef struct {
  size_t n_items;      /* questions in the set */
  size_t n_scored;     /* with a prediction */
  size_t n_missing;    /* without (left out of every accuracy) */
  size_t n_not10;      /* scored questions with N != 10 references */
  size_t n_rounded;    /* scored questions whose exact accuracy had to be rounded (N > 20) */
  size_t n_normalized; /* scored questions whose references the version normalized */
  int64_t sum_units;   /* sum of the scored accuracies, units of 1/TL_VQA_ACC_SCALE (exact) */
  double overall;      /* the printed overall: round(100*sum(acc)/n, 2) as the script */
} tl_vqa_summary;

/* The official output of vqaEval.py for the scored items, as a new cJSON object (caller
 * deletes): {"overall": x, "perQuestionType": {type: x}, "perAnswerType": {type: x},
 * "perQuestion": {id: x}}, every x = round(100*acc, 2) computed in doubles as the script does
 * (per-question values from tl_vqa_acc_python; each group's mean summed in the annotations'
 * file order), written as raw numbers in Python's repr. Keys are in the order the script
 * inserts them (file order; types by first appearance). Items without a question_type (JSONL)
 * are left out of perQuestionType, likewise answer_type. TL_EINPUT when no item has a
 * prediction (err says so); TL_ENOMEM. *sum (if non-NULL) is filled in every case. */
tl_status tl_vqa_report(const tl_vqa_set *s, const tl_vqa_results *r, tl_vqa_version v,
                        cJSON **json, tl_vqa_summary *sum, tl_err *err);

#endif
