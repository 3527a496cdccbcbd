/* vqa_load_time.c - the VQA loader alone: the official questions and annotations files
 * (tl_vqa_load_official) and a results file (tl_vqa_load_results), timed on their own (wall
 * clock and this process's CPU time, CLOCK_MONOTONIC / CLOCK_PROCESS_CPUTIME_ID), then a
 * digest of what was loaded (FNV-1a over every item's id, question, types and answers in set
 * order, and over the results), so that two builds can be shown to load the same thing.
 * bench/vqa_load.sh builds it against this tree and against a reference tree (the same source:
 * it uses only the public functions of vqa_data.h).
 * usage: vqa_load_time QUESTIONS ANNOTATIONS RESULTS
 * prints: "load_official S cpu S wall; load_results S cpu S wall; N items, digest X" */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tally/inlog.h"
#include "vqa_data.h"

static double clk(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t fnv(uint64_t h, const char *s) {
  if (!s) s = "\x01(null)";
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (h ^ 0xff) * 1099511628211ULL; /* a separator */
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: vqa_load_time QUESTIONS ANNOTATIONS RESULTS\n");
    return 2;
  }
  tl_inlog log;
  tl_err err;
  if (tl_inlog_init(&log, NULL, 0) != TL_OK) return 1;
  tl_vqa_set s;
  tl_vqa_results r;
  double c0 = clk(CLOCK_PROCESS_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
  tl_status st = tl_vqa_load_official(&s, argv[1], argv[2], &log, &err);
  double c1 = clk(CLOCK_PROCESS_CPUTIME_ID), w1 = clk(CLOCK_MONOTONIC);
  if (st == TL_OK) st = tl_vqa_load_results(&r, &s, argv[3], &log, &err);
  double c2 = clk(CLOCK_PROCESS_CPUTIME_ID), w2 = clk(CLOCK_MONOTONIC);
  if (st != TL_OK) {
    fprintf(stderr, "vqa_load_time: %s\n", err.msg);
    return 1;
  }
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < s.n; i++) {
    const tl_vqa_item *it = &s.items[i];
    h = fnv(fnv(fnv(fnv(h, it->id), it->question), it->question_type), it->answer_type);
    for (size_t k = 0; k < it->n_answers; k++) h = fnv(h, it->answers[k]);
    h = fnv(h, r.answer[i]);
  }
  printf("load_official %.3f s cpu %.3f s wall; load_results %.3f s cpu %.3f s wall; %zu items, %ld input problems, "
         "digest %016" PRIx64 "\n",
         c1 - c0, w1 - w0, c2 - c1, w2 - w1, s.n, log.total, h);
  tl_vqa_results_release(&r);
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
  return 0;
}
