/* replay.h - the replay engine: replies already generated (a model's answers, a judge's
 * judgments), read from JSONL files and matched by unit key and stage (tally/engine.h).
 *
 * Accepted lines (docs/JOBS.md):
 *   tally's own:  {"id", "model"?, "seed"?, "prompt_variant"?, "turn"?, "turn_id"?, "response": str|null}
 *                 ("id": a string, or an integer read as its decimal text; "turn": the sub-unit,
 *                 an integer >= 0, default 0; "turn_id": the item's 1-based turn, sub turn_id - 1
 *                 unless tl_replay_open_subs's sub_of maps it)
 *   another tool's lines: a line without "response" that an answer format of a registered
 *                 module claims (tally/bench_vt.h tl_answer_format, asked through the registry:
 *                 the SpatialEval reference evaluator's output {"id", "answer", "oracle_answer",
 *                 ..., "prompt"?}, a LAVE release row {"dataset", "qid", ..., "prediction"}):
 *                 the format gives the response, the prompt kept and maybe the id; the other
 *                 fields are read as for tally's own lines.
 * Fields a line lacks come from the source's defaults (the job's answers entry). Each problem
 * (malformed line, missing/mistyped field, duplicate key) goes to the inlog with file:line; the
 * first of duplicates is kept. A JSON null response means "no reply was obtained" and is
 * replayed as such. One replay engine serves every source it is given: sources name their
 * benchmark and stage, and a request is answered from the sources of its key's benchmark and
 * stage.
 *
 * What is kept: an index, not the texts. Per accepted line 36 bytes: a 64-bit hash of its full
 * key (benchmark, stage, model, variant, seed, id, sub), its file, byte offset, length and line
 * number, where its response's JSON string starts, and a 64-bit checksum of its bytes; the
 * index is sorted by hash once loading ends,
 * with a directory of the hashes' top bits (2 to 4 bytes a line) to find a hash's entries.
 * Each file stays open (one descriptor per source) for the engine's lifetime, and a request's
 * line is read back from it (pread) and parsed when the request is submitted (into one buffer,
 * kept between requests while it is at most 1 MiB). Keys that share
 * a hash are told apart by reading their lines and comparing the real keys, at load time (a
 * duplicate or a collision) and at submit time. Sources must therefore be regular files (not
 * pipes); a file that changes after tl_replay_open is detected by the length and checksum of
 * the line read back, and answered with an error, never with another text. */
#ifndef TALLY_REPLAY_H
#define TALLY_REPLAY_H

#include <stdint.h>

#include "tally/engine.h"
#include "tally/inlog.h"
#include "tally/str.h"

typedef struct {
  const char *path;
  const char *bench;               /* the benchmark the file belongs to */
  int stage;                       /* 0: the model's answers; 1: the judge's replies */
  const char *model;               /* default model (NULL: lines must carry one) */
  int seed;                        /* default seed */
  const char *variant;             /* default prompt variant name (not NULL) */
  const char *const *variants;     /* the names a line's "prompt_variant" may take, NULL-terminated;
                                      NULL = any */
} tl_replay_source;

typedef struct tl_replay tl_replay;

/* Called once per accepted line (not for a bad line or a duplicate) during tl_replay_open, in
 * load order (source order, then line order), with the line's key and where it is: `path` is
 * the file's name as messages give it, `line` its 1-based line number. The key's strings and
 * `path` are borrowed for the call only. A nonzero return stops loading: tl_replay_open then
 * returns TL_EINPUT (err says where it stopped) and opens nothing. This is how a caller
 * discovers what the files hold (models, seeds, variants, items) and reports lines for items it
 * does not know (returning nonzero under strict input). */
typedef int (*tl_replay_key_fn)(void *ctx, const tl_unit_key *key, const char *path, long line);

/* Loads every source. TL_EIO when a file cannot be opened or read, is not a regular file, or is
 * past the index's limits (offsets under 2^48 bytes, lines under 2^32 bytes and 2^32 per file,
 * at most 65536 sources); err names it. TL_EINPUT when the log is strict and reported something,
 * or when key_fn (may be NULL) returned nonzero. The engine copies what it keeps of src (each
 * distinct benchmark, model and variant name once, each path once): src, its strings and its
 * variant lists need to live only during this call. */
tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay_key_fn key_fn, void *key_ctx, tl_replay **out, tl_err *err);
/* A line's sub, for tl_replay_open_subs: called with the source's benchmark, the line's item id,
 * its "turn" (the sub, from 0) and its "turn_id" (the item's 1-based turn), each -1 when absent.
 * Returns 0 with *sub set, else -1 with msg[0..msz) saying why the line names no unit (out of
 * range, a context-only turn, the two disagree): the line is then a bad line (file:line). An id
 * the caller does not know gives 0 (its key_fn reports it). */
typedef int (*tl_replay_sub_fn)(void *ctx, const char *bench, const char *id, int64_t turn, int64_t turn_id,
                                uint32_t *sub, char *msg, size_t msz);
/* tl_replay_open with sub_of (NULL: a line's sub is its "turn", default 0, or "turn_id" - 1,
 * unchecked), called for every line, at load and when a line is read back. */
tl_status tl_replay_open_subs(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                              tl_replay_key_fn key_fn, void *key_ctx, tl_replay_sub_fn sub_of, void *sub_ctx,
                              tl_replay **out, tl_err *err);
tl_engine *tl_replay_engine(tl_replay *r); /* the engine view; freeing it frees r (and closes
                                              the files) */

/* submit() answers at once and queues the reply: text = the line's response (NULL for a JSON
 * null, with error "the answer file records no response (null)"); prompt = the prompt an answer
 * format kept (the reference evaluator's "prompt"), NULL when none; source = "PATH:LINE". A key
 * with no line: error "no answer in the replay files". A line that cannot be read back as it was
 * loaded (a read error, the file cut short or changed): error "the answer file changed since it
 * was read: PATH:LINE", no text. Only an allocation failure makes submit fail. */

/* References (tl_reply_ref, tally/engine.h): a reply submit answers by the fast way (its line's
 * response a string member, no prompt, the only key of its hash) carries in rep.ref where its
 * text lies, so the journal and the spilled rows name the line instead of copying the text. The
 * text comes back from a reference by the same read submit does: the line's len bytes at off
 * read back, checked against the checksum, and the JSON string at resp parsed (its length must
 * be tlen). Each returns 0 with *text (malloc'd), 1 when the line is not the one referenced any
 * more (the file changed, was cut short or cannot be read: the caller must not take another
 * text), 2 when out of memory. */
#define TL_REPLAY_REF_OK 0
#define TL_REPLAY_REF_CHANGED 1
#define TL_REPLAY_REF_NOMEM 2
/* From the file open as fd (a journal read back without the engine: resume, merge); buf: the
 * caller's scratch buffer for the line. */
int tl_replay_ref_read(int fd, const tl_reply_ref *ref, tl_buf *buf, char **text);
/* The same from the line's ref->len bytes the caller read (at ref->off of the file). */
int tl_replay_ref_parse(const char *line, const tl_reply_ref *ref, char **text);
/* Through engine r's own descriptor of the reference's file (ref.src) and its read-ahead: the
 * spilled rows' texts when the tables are written. The text and a NUL are appended to out
 * (nothing on failure but, when out of memory, maybe part of it). The line may come from the
 * engine's read-ahead, which can still hold its bytes as they were answered after the file
 * changed: the text is then the one answered (the checksum vouches for it), never another. */
int tl_replay_ref_text(tl_replay *r, const tl_reply_ref *ref, tl_buf *out);

/* The path of source `src` (tl_reply_ref.src: 1 + its index) as replies' sources name it; NULL
 * when there is no such source. Borrowed: lives as long as r. */
const char *tl_replay_source_path(const tl_replay *r, uint32_t src);
/* 1 + the index of the source whose path (as sources name it) is `path`; 0 when none: how a
 * reference read back from a journal names the file in this run's engine. */
uint32_t tl_replay_source_find(const tl_replay *r, const char *path);

/* Simulated latency: every reply becomes ready `ms` milliseconds after its request (0 = at
 * once). For tests of scheduling, interruption and resume, and for scheduling benchmarks. */
void tl_replay_set_latency(tl_replay *r, int ms);

/* Number of requests answered so far (a call counter for tests). */
size_t tl_replay_served(const tl_replay *r);
/* Of those, the requests answered by parsing only the response's JSON string of the line read
 * back (a string member of the line's object, the only key of its hash, no prompt), not the
 * whole line. */
size_t tl_replay_served_fast(const tl_replay *r);

/* Bytes of index held (the heap the engine keeps per accepted line, for measurements). */
size_t tl_replay_index_bytes(const tl_replay *r);

/* ---- one load shared by several processes ----
 * tl_replay_open_subs on N ranks, each reading a share of the bytes: the par tier runs these
 * steps on every rank and moves their bytes between ranks (src/par/run/share.c; this tier has
 * no MPI). The engine every rank ends with, and what the log holds, are those of
 * tl_replay_open_subs on one rank with the same arguments.
 *
 * 1. tl_replay_share_read: rank k of n reads, of each source, the lines that start in its
 *    share of the file's bytes [base, size): with o_j = base + (size - base) * j / n, share k
 *    starts after the first '\n' at or after o_k (k > 0; share 0 starts at base) and ends where
 *    share k + 1 starts (as Hadoop and Spark split text files). Each line is checked as
 *    tl_replay_open_subs checks it; its problems go to `rec` (a silent, non-strict log of the
 *    caller's, empty, used for nothing else) with its line number within the share (1 = the
 *    share's first line); key_fn is called for every accepted line with that number, before
 *    duplicates are known (the caller's key_fn reports to `rec` too). Contract on key_fn: what
 *    it does outside `rec` is the same for a key given twice as once; what it did to `rec` for
 *    a line found to be a duplicate (its reports, its tl_inlog_matched counts on `path`) is
 *    undone in step 3.
 * 2. tl_replay_share_counts gives int64 [2 * nsrc]: per source the share's physical lines and
 *    its lines that count (records and bad lines, not blank ones); the caller gathers every
 *    rank's, in rank order, and tl_replay_share_place numbers the share's lines truly (in its
 *    entries and in rec), adding the lines of the shares before it.
 * 3. tl_replay_share_entries gives this rank's index entries (TL_REPLAY_ENTRY_BYTES each, their
 *    bytes opaque); the caller gathers every rank's in rank order into one malloc'd buffer and
 *    gives it to tl_replay_share_index, which keeps it: sorted as tl_replay_open_subs sorts, the
 *    later lines of a key dropped (read back and compared, the first in file order kept), and
 *    this rank's key_fn effects on rec for the dropped lines undone.
 * 4. tl_replay_share_events serializes this rank's problems (rec's rows, but those undone) and
 *    key_fn's matched counts into *out; the caller gathers every rank's; tl_replay_share_report
 *    reports them all, and the duplicates, into `log` in file:line order, notes each file's
 *    lines and matched count and an empty file, as tl_replay_open_subs does: TL_EINPUT when the
 *    log is strict and a problem is reported (it stops there), as tl_replay_open_subs stops.
 * 5. tl_replay_share_finish gives the engine (and frees sh); on any failure
 *    tl_replay_share_free frees sh and what it holds. */
typedef struct tl_replay_share tl_replay_share;
#define TL_REPLAY_ENTRY_BYTES 36
tl_status tl_replay_share_read(const tl_replay_source *src, int nsrc, size_t max_line, int rank, int nranks,
                               tl_inlog *rec, tl_replay_key_fn key_fn, void *key_ctx, tl_replay_sub_fn sub_of,
                               void *sub_ctx, tl_replay_share **out, tl_err *err);
void tl_replay_share_counts(const tl_replay_share *sh, int64_t *out);
/* all: [nranks][2 * nsrc], every rank's tl_replay_share_counts. TL_EIO past the index's limits. */
tl_status tl_replay_share_place(tl_replay_share *sh, const int64_t *all, tl_err *err);
void tl_replay_share_entries(const tl_replay_share *sh, const void **p, size_t *n);
/* all: n entries (malloc'd; taken, also on failure). TL_EIO when a line cannot be read back as
 * loaded (the file changed). Reads the lines of keys that share a hash. */
tl_status tl_replay_share_index(tl_replay_share *sh, void *all, size_t n, tl_err *err);
tl_status tl_replay_share_events(const tl_replay_share *sh, tl_buf *out);
/* blobs: the nranks events, concatenated in rank order, len[r] bytes each. TL_EINPUT (strict),
 * TL_ENOMEM, TL_EINTERNAL for a blob that does not parse. */
tl_status tl_replay_share_report(const tl_replay_share *sh, const char *blobs, const uint64_t *len, tl_inlog *log,
                                 tl_err *err);
tl_replay *tl_replay_share_finish(tl_replay_share *sh);
void tl_replay_share_free(tl_replay_share *sh);

/* ---- tests only ---- */
/* Replaces the key hash of the engines opened from now on (NULL: the real one), so that tests
 * can force collisions (a function returning one value for every key). An engine keeps the
 * hash it was opened with. Not thread-safe. */
void tl_replay_test_hash(uint64_t (*fn)(const tl_unit_key *key));
/* The real key hash: FNV-1a 64 over the fields (strings with their lengths; NULL = ""), then
 * mixed. */
uint64_t tl_replay_key_hash(const tl_unit_key *key);

#endif
