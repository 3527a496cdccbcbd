/* lmeval.h - private to src/import: the per-sample mapping shared by the lm-evaluation-harness
 * reader (imp_lmeval.c) and the lmms-eval reader (imp_lmmseval.c), whose sample objects share
 * most fields (../shared/spec/harness-formats.md). */
#ifndef TALLY_IMPORT_LMEVAL_H
#define TALLY_IMPORT_LMEVAL_H

#include "tally/import.h"
#include "tally/strmap.h"

/* State across one file's samples: the filter chosen per task (the first met in file order) and,
 * after a pre-pass (tl_lme_note), what the other filters of each doc said. */
typedef struct {
  const char *format;  /* "lm-eval" or "lmms-eval": for messages */
  tl_strmap filters;   /* task -> index into chosen */
  char **chosen;       /* [n] the chosen filter of each task seen */
  size_t n, cap;
  int noted;           /* the pre-pass ran: lines of other filters are folded, not reported */
  tl_strmap odocs;     /* "task\x1fdoc_id" -> index into others */
  cJSON **others;      /* [nothers] {filter: {"extracted", "verdict", "metric"}} of one doc */
  long *oline;         /* [nothers] the line of its first such line */
  char **okey;         /* [nothers] its task and doc id, for messages */
  int *oused;          /* [nothers] a line of the chosen filter took it */
  size_t nothers, capothers;
} tl_lme_state;

void tl_lme_init(tl_lme_state *s, const char *format);
void tl_lme_release(tl_lme_state *s);

/* Maps one sample object o (a samples line, an element of a results file's "samples" list or of
 * an lmms-eval "logs" array) to records and emits them: one per repeat of a generation (seed =
 * the repeat's index), one for a log-likelihood sample. where: "FILE:LINE" or "FILE: samples.T[3]";
 * line: the input log's line. A sample it cannot map is reported on log (TL_EINPUT when strict;
 * with err set). The first filter met in the file is the task's: after the pre-pass
 * (tl_lme_note) a line of another filter is folded into that filter's record (extra.filters);
 * without it, such a line is reported (kind duplicate) and not imported. */
tl_status tl_lme_sample(tl_lme_state *s, const cJSON *o, const char *path, const char *where, long line,
                        const char *task, const char *model, tl_inlog *log, tl_imp_emit emit, void *ctx,
                        tl_err *err);

/* The pre-pass: notes one sample o (line `line`) of task without emitting anything: the task's
 * chosen filter (the first met), and for a line of another filter its extraction and verdict,
 * which tl_lme_sample then puts in the chosen filter's record (extra.filters) instead of
 * reporting the line. A sample it cannot read is skipped (the emitting pass reports it). */
tl_status tl_lme_note(tl_lme_state *s, const cJSON *o, const char *task, long line);
/* The pre-pass over a JSONL file (bad lines skipped: the emitting pass reports them). */
tl_status tl_lme_note_file(tl_lme_state *s, const char *path, const char *task, tl_err *err);
/* After the emitting pass: each doc noted under another filter but never met under the chosen
 * one is reported (its line; kind missing_field): not imported. */
tl_status tl_lme_finish(tl_lme_state *s, const char *path, tl_inlog *log, tl_err *err);

/* The task of a samples file name: "samples_arc_easy_2024-05-01T10-00-00.123.jsonl" -> "arc_easy"
 * (lm-eval), "20240901_101010_samples_mmmu_val.jsonl" -> "mmmu_val" (lmms-eval). malloc'd; the
 * base name less its extension when no pattern fits. */
char *tl_lme_task_from_name(const char *path);

/* The model of "pretrained=org/name,dtype=..." (model_args), malloc'd, or NULL. */
char *tl_lme_model_from_args(const char *args);

/* Reads a whole JSON file (err: TL_EIO, or TL_EINPUT naming the file when it is not JSON). */
tl_status tl_lme_read_json(const char *path, cJSON **out, tl_err *err);

#endif
