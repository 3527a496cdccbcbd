/* test_judged.h - "test_judged", a two-stage benchmark module for the test suite only: stage 0
 * asks the model a question (one unit per dialogue turn), stage 1 asks a judge to rate the
 * answer ("Rating: [[n]]", n in 1..10). Both stages are normally answered from replay files. It
 * exists to prove the multi-stage pipeline, per-stage journaling and resume, and MIN reductions
 * without any real benchmark's logic (the registry lists it only under TALLY_TEST_MODULES=1).
 *
 * Job keys (besides the loader's): "items": a path or a list of paths of JSONL files, one item a
 * line: {"id": str (non-empty), "question": str, "turns": int 1..8}. Items are sorted by id
 * (strcmp); item i has turns[i] units per cfg, sub = turn - 1.
 *
 * One scoring mode, "rating" (res[0]):
 *   text[0] NULL               -> missing      rule ""            (no answer to judge)
 *   text[1] NULL               -> missing      rule "no_judgment" (the judge gave nothing)
 *   last "Rating: [[d]]" or "Rating: [[dd]]" in text[1] has n in 1..10
 *                              -> ok           rule "last_rating", value n, answer "n",
 *                                              correct = n >= 6
 *   that last one is outside 1..10 -> out_of_range rule "rating_range" (value 0)
 *   none                       -> no_answer    rule "no_rating"  (value 0)
 * "Last" is the last occurrence of the pattern, whatever its value: a judge quoting the format
 * ("Example: Rating: [[10]]") before its verdict is read by its verdict.
 *
 * Aggregates (acc_layout):
 *   block 0, SUM, [ncfgs][4]: n_units, n_ok, sum of the OK ratings, n_missing (both causes)
 *   block 1, MIN, [ncfgs][n_items], init INT64_MAX: the least rating of the item's turns; a
 *            turn that is not OK counts as 0 (a dialogue with a failed turn has minimum 0)
 * Tables: /items/test_judged (one row per unit), /metrics/test_judged/by_cfg,
 * /metrics/test_judged/dialogue_min (min_rating -1 when no unit of the item was added).
 *
 * Hooks around the run (tally/bench_vt.h), all in test_judged.c - the proof that a module brings
 * them from its own folder:
 *   answer format "test_judged-qa": a line {"question_id": str, "output": str|null,
 *     "instruction"?: str} (and no "response") is the answer "output" to item question_id, with
 *     the prompt "instruction"; a question_id that is not a non-empty string is a bad line
 *   parser "test_judged-rating" (`tally parse`): {"response"} -> {"answer": "7"|null,
 *     "rating": 7|null, "status", "rule"}, the rating rules above (null response: missing,
 *     rule no_judgment)
 *   compare defaults: metric "rating", no groups, status "status", dialogues (the least rating
 *   over an item's turns). */
#ifndef TALLY_TEST_JUDGED_H
#define TALLY_TEST_JUDGED_H

#include "tally/bench.h"

extern const tl_bench_vt tl_bench_test_judged;

/* Test-only constructor, bypassing the job loader: the module object for the items files
 * paths[0 .. n) (copied; the caller keeps its array). Items are not loaded yet (vt->load).
 * NULL when out of memory or n < 1 or a path is NULL. Free with tl_bench_test_judged.free. */
tl_bench *tl_test_judged_open_paths(char *const *paths, int n);

#endif
