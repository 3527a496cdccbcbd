/* import.h - readers of other harnesses' saved outputs (../shared/spec/harness-formats.md):
 * each turns one file (or a HELM run folder) into tally records - items, answers, judgments -
 * with the harness's own verdict kept beside each answer, so that re-scoring it is an ordinary
 * `tally run` and the audit can set the harness's verdict beside tally's, item by item.
 *
 * Tier: src/import/ sits on core (cJSON, the input log) and may use libdeflate and zstd (the
 * .eval zips of inspect_ai); par and cli use it, core does not. `tally import` prints what a
 * reader makes of a file (tally's own answer lines); `tally run` converts every job input given
 * as {"format": NAME, "path": FILE} (format optional: detected) before the job is loaded
 * (tl_import_job), so the job loader, the modules and the replay engine only ever see tally's
 * own formats.
 *
 * Records are emitted in file order; a reader never drops one silently: a record it cannot map
 * (a missing field, an unknown shape) is reported to the input log with the file and the record
 * named ("FILE:LINE" or "FILE: sample 'x' epoch 2") and counted, and the rest goes on. */
#ifndef TALLY_IMPORT_H
#define TALLY_IMPORT_H

#include <stdio.h>

#include "cJSON.h"
#include "tally/err.h"
#include "tally/inlog.h"

/* One record of a foreign file. Every pointer is borrowed from the reader and valid only during
 * the emit call. */
typedef struct {
  const char *where;      /* the record, for messages: "FILE:LINE", "FILE: sample 'x' epoch 2" */
  long line;              /* its line (JSONL formats) or record number from 1 (others): the input
                             log's line */
  const char *task;       /* the harness's task or dataset name ("arc_easy", "mtbench101"), or NULL */
  const char *id;         /* the item id tally keys it by: the dataset's own id when the harness
                             saved one (lm-eval doc "id", OpenCompass multi_id, inspect sample id,
                             HELM instance id, VLMEvalKit index), else the harness's row index */
  const char *model;      /* the model, or NULL when the file does not name one */
  int seed;               /* the repeat: inspect epoch - 1, HELM train_trial_index, lm-eval
                             repeats index; -1 when the format has none (seed 0 then) */
  int turn_id;            /* the dialogue's turn, from 1 (OpenCompass MT-Bench-101); -1 none */
  int stage;              /* 0: the model's answer, 1: a judge's text about it */
  const char *response;   /* the raw text as saved (NULL: the harness saved none: a null reply) */
  const char *prompt;     /* the prompt as saved, or NULL */
  /* The item, when the file holds it, as the generic modules read items: {"id", "question",
   * "choices": [...], "answer": gold (letter, index or text), ...and the dataset's own fields
   * (lm-eval's doc, SpatialEval's "oracle_option")}. NULL when the file holds none. */
  const cJSON *item;
  /* The harness's own verdict on this answer: has_verdict 0 when it saved none (a judge-less
   * run, a generation without a metric). */
  int has_verdict;
  double verdict;         /* its per-item score: 1/0 for a correct/incorrect, a rating, a mean */
  const char *verdict_metric; /* the score's name: "exact_match", "choice", "acc", "hit", ... */
  const char *extracted;  /* what the harness's extraction took from the reply ("B"), or NULL */
  const cJSON *extra;     /* anything else kept (lm-eval's filter and log-likelihoods, HELM's
                             output_mapping), or NULL */
} tl_imp_rec;

/* Called once per record. A non-OK status stops the reader, which returns it. */
typedef tl_status (*tl_imp_emit)(void *ctx, const tl_imp_rec *rec, tl_err *err);

/* One foreign format. */
typedef struct {
  const char *name;       /* "lm-eval", "lmms-eval", "opencompass", "inspect", "vlmevalkit", "helm" */
  const char *describe;   /* one line for messages and `tally import --list`: the files it reads */
  /* Whether path is of this format: is_dir when it is a folder; head holds its first n bytes
   * (n <= TL_IMPORT_HEAD; 0 for a folder). 1 yes, 0 no. Formats claim disjoint files. */
  int (*detect)(const char *path, int is_dir, const unsigned char *head, size_t n);
  /* Reads path, emitting every record in file order; a record it cannot map goes to log (strict
   * input: TL_EINPUT at the first). A file it cannot read at all: TL_EIO or TL_EINPUT, with err
   * naming the file and what is wrong. */
  tl_status (*read)(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err);
} tl_importer;

#define TL_IMPORT_HEAD 65536

/* The importer named name, or NULL. */
const tl_importer *tl_importer_find(const char *name);
/* The importer that claims path; NULL with TL_EINPUT in err naming the file and every known
 * format ("'x.json' is not a file of a known format (lm-eval samples, ...): give its "format"")
 * when none does, or when it cannot be read. */
const tl_importer *tl_importer_detect(const char *path, tl_err *err);
/* Every importer, in a fixed order; n of them. */
const tl_importer *const *tl_importers(int *n);

/* Counts of one conversion. */
typedef struct {
  long records, answers, judgments, items, verdicts; /* records emitted; of which each kind */
} tl_import_counts;

/* Converts path (read by imp) to tally's own files: answer lines to `answers` (stage 0) and
 * `judgments` (stage 1; NULL: refused with TL_EINPUT when the file holds judgments), and each
 * distinct item (by id) to `items` (NULL: not written; counted all the same). The first item of
 * an id is kept; the same item again is silent; a different one under that id is reported to log
 * (kind duplicate; TL_EINPUT when strict). An answer line is tally's
 * {"id", "model", "seed", "turn_id"?, "response", "prompt"?} plus "harness": {"format", "task",
 * "verdict", "metric", "extracted", "where", "extra"?} (verdict null when the harness saved none;
 * extra = rec->extra); a judgment line the same. The replay engine reads the tally members and
 * ignores "prompt" and "harness". default_model names the model when the file does not (NULL:
 * "unknown"); id_prefix (NULL: none) goes in front of every answer's and judgment's id, for a
 * benchmark whose item ids carry what the harness did not save (VQA's "<dataset>:"). Records
 * the reader could not map are on log (the caller counts them: log->total). Write errors are
 * TL_EIO. */
tl_status tl_import_convert(const tl_importer *imp, const char *path, const char *default_model,
                            const char *id_prefix, FILE *answers,
                            FILE *judgments, FILE *items, tl_inlog *log, tl_import_counts *n, tl_err *err);

/* Rewrites a parsed job (its JSON, in place) so that it names only tally's own files: every
 * benchmark entry's "answers", "judgments" and "items" given as {"format"?, "path", "model"?,
 * "id_prefix"?}
 * (or a list of them) is converted with tl_import_convert into files under tmpdir (made by the
 * caller, removed by the caller), and replaced by their paths (an entry's other keys kept).
 * Relative paths resolve in job_dir. An entry without "format" is converted when a reader claims
 * its file (detection); an answers or judgments object no reader claims is left as it is (tally's
 * own {path, model, seed, prompt_variant}); an items object must be of a known format. An
 * unknown format, or one that another reader claims the file for: TL_EJOB naming the entry and
 * the known formats. The files go under tmpdir as NN.answers.jsonl, NN.judgments.jsonl,
 * NN.items.jsonl (NN counting conversions, so the same job converts to the same names); when the
 * entry names no "items" (or "judgments") and an answers file held some, those files become the
 * entry's "items" ("judgments"). Each conversion says on log (when non-NULL) what it read:
 * "tally: import: FILE (inspect): 100 answers, 100 items, 100 harness verdicts" (and "; N records
 * not mapped" when the input log got N reports). */
tl_status tl_import_job(cJSON *job, const char *job_dir, const char *tmpdir, tl_inlog *in, FILE *log, tl_err *err);

#endif
