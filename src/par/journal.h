/* journal.h - the resume journal.
 *
 * Every rank appends each unit it finishes to its own file in `<output>.journal/`, named
 * `<attempt>-r<rank, zero-padded to 5 digits>.jsonl` (a new attempt never overwrites an earlier one's files). Line 1 is
 * a header {"tally_journal": 1, "job": "<hash of the job JSON>", "rank": r, "attempt": "..."};
 * then one line per finished stage of a unit:
 *   {"b": benchmark, "m": model, "v": variant, "s": seed, "id": item id, "t": sub-unit,
 *    "st": stage, "text": reply|null, "prompt": str|null, "source": str|null,
 *    "meta": {the engine's evidence}?, "error": str?, "failed": 1?}
 * ("t" and "st" are 0 when absent, as in the lines of earlier versions).
 * A reply the replay engine served from a line of an answers file (tl_eng_reply.ref) is not
 * copied: its line carries, instead of "text", "prompt" and "source",
 *   "ref": [P, off, len, "sum", resp, line, tlen]
 * where P is the byte offset, in the same journal file, of a line
 *   {"tally_replay_file": "<the file as sources name it>", "at": "<its real path>"}
 * written once per file before the first reference to it, and the rest is tl_reply_ref's (the
 * answers line's byte offset and length, its checksum as 16 hex digits, where its response's
 * JSON string starts in it, its line number, the text's length). Reading such a line back reads
 * the answers line again (tl_replay_ref_read; from the "at" path, else, when that cannot be
 * opened, the name as given): the record's text is that JSON string and its
 * source "<file>:<line>"; an answers line whose bytes changed (or a file gone) makes the record
 * `stale` (no text: the unit is done again, never with another text). Lines with "text" (HTTP
 * replies, lines the engine parsed whole, journals of earlier versions) are read as before.
 * Lines stay plain JSON text, one per stage, uncompressed: measured on the 60,000-unit
 * SpatialEval replay job, 713 bytes a unit with the text copied, 147.5 with the reference;
 * zstd-1 in per-batch frames would make it 21.7 for 0.32 us a unit, but the run's scratch is
 * already under half its input without it, and a text journal stays greppable and recoverable
 * line by line after a kill (docs/PERFORMANCE.md "Scratch: references, not copies"). Answers
 * files that tally run converted from another harness's outputs live in a temporary folder made
 * afresh for each attempt: their replies are copied (schedule.c ref_kept).
 * Lines are buffered (1 MiB); after each batch of replies (one engine poll) they are flushed,
 * i.e. written to the kernel, so a killed process loses at most the batch being written; and
 * when the last fsync is TL_JOURNAL_SYNC_S seconds or more ago the journal's own thread fsyncs
 * the file while scoring goes on (an fsync took 28 ms on this project's disk, more on a
 * parallel file system: done inline, they cost 8% of a replay run's time). On a signal and at
 * the end the journal is flushed and fsync'ed before tally goes on. A crash of the node loses
 * at most the units finished in the last TL_JOURNAL_SYNC_S seconds and those of an fsync under
 * way: they are simply done again on resume. On resume every file of the folder is read: a line cut short by
 * the kill, or any malformed line, is skipped (that unit is simply done again); a header whose
 * job hash differs stops the run (the folder belongs to another job). */
#ifndef TALLY_JOURNAL_H
#define TALLY_JOURNAL_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "tally/engine.h"
#include "rdahead.h"
#include "tally/err.h"

#include "tally/str.h"

#define TL_JOURNAL_SYNC_S 0.5

#define TL_JOURNAL_VBUF ((size_t)1 << 20) /* stdio buffer of a journal (and of a rank's spilled rows) */

typedef struct {
  FILE *fp;
  char *path;
  long unsynced;    /* lines written since the last sync */
  uint64_t pos;     /* bytes written to the file so far (the next line's offset) */
  double last_sync; /* CLOCK_MONOTONIC seconds */
  tl_buf line;      /* reused line buffer */
  struct tl_jpath { /* the answers files this file's "tally_replay_file" lines name */
    const char *key; /* the engine's path pointer last seen for it (borrowed) */
    char *path;      /* owned copy */
    uint64_t at;     /* the byte offset of its line */
  } *paths;
  int npaths, lastpath;
  char *vbuf;       /* fp's buffer (TL_JOURNAL_VBUF bytes), owned; freed after fp is closed */
  struct tl_jsync *bg; /* the thread that fsyncs after each timed flush; NULL: they are inline */
} tl_journal;

/* "<output>.journal" (malloc'd). */
char *tl_journal_dir(const char *output);
/* The job's identity in journals, "CANON/RAW" (TL_JOB_HASH_LEN - 1 characters). CANON, the one
 * a journal's header names, is FNV-1a 64 (16 hex digits) of the job JSON with every object's
 * keys sorted and the engines' transport settings left out (url, urls, port_base, api_key_env,
 * concurrency, timeouts, retries, health: where and how a server is reached, not what it is
 * asked), so moving a server, raising a timeout or reformatting the job file keeps the journal.
 * RAW is the same hash of the job text as it is, which journals written before CANON carry:
 * they are still read. A job text that is not JSON has CANON = RAW. */
#define TL_JOB_HASH_LEN 34
void tl_journal_job_hash(const char *job_json, char out[TL_JOB_HASH_LEN]);

/* The file of `rank` in attempt `attempt`: "<dir>/<attempt>-r<rank, 5 digits>.jsonl" (malloc'd). */
char *tl_journal_path(const char *dir, const char *attempt, int rank);
/* Creates dir if needed and this rank's file; writes the header. */
tl_status tl_journal_open(tl_journal *j, const char *dir, const char *attempt, int rank,
                          const char *job_hash, tl_err *err);
/* Appends one finished stage of a unit (buffered). */
tl_status tl_journal_add(tl_journal *j, const tl_unit_key *key, const tl_eng_reply *rep, uint64_t *offset,
                         tl_err *err);
/* (*offset, when not NULL: the byte offset of the line in j->path, for tl_jfiles_read once the
 * journal is synced.) */
/* End of a batch: flushes; when the last fsync is TL_JOURNAL_SYNC_S or more ago, has the
 * journal's thread fsync (an error of an earlier background fsync is reported here). */
tl_status tl_journal_batch_done(tl_journal *j, tl_err *err);
/* fflush + fsync in the caller's thread: the lines written so far survive a crash. */
tl_status tl_journal_sync(tl_journal *j, tl_err *err);
void tl_journal_close(tl_journal *j);

/* One recorded stage of a unit, as read back. Strings are borrowed for the callback's duration. */
typedef struct {
  tl_unit_key key;
  const char *text, *prompt, *source;
  const cJSON *meta; /* the reply's evidence object, or NULL */
  const char *error; /* why the engine gave up, when failed */
  int failed;        /* 1: the engine gave up on this stage (resume asks again) */
  int file;          /* tl_journal_read_all: index in tl_journal_files' order; tl_jfiles_read: its own */
  uint64_t offset;   /* byte offset of the line in that file */
  int has_ref;       /* 1: the line references its text in an answers file ("ref"); text and
                        source were read back from it (or, stale, could not be) */
  int stale;         /* 1: the referenced answers line is not there any more: text NULL, the
                        stage must be done again; source names the line */
  uint64_t ref_at;   /* has_ref: the offset of the "tally_replay_file" line */
  tl_reply_ref ref;  /* has_ref: the reference (ref.path NULL: read from that line) */
} tl_journal_rec;
typedef tl_status (*tl_journal_cb)(void *ctx, const tl_journal_rec *rec);

/* Reads every .jsonl file of dir (sorted by name). *nfiles and *nrecs count what was read, *nskipped
 * the lines ignored (cut short or malformed). TL_EJOB when a header names another job. A
 * missing dir is not an error (nothing recorded). */
tl_status tl_journal_read_all(const char *dir, const char *job_hash, tl_journal_cb cb, void *ctx,
                              long *nfiles, long *nrecs, long *nskipped, tl_err *err);
/* One journal file (path; its folder dir for messages), its records numbered rec->file = file;
 * the header must name job_hash (TL_EJOB otherwise). *nrecs and *nskipped are added to. */
tl_status tl_journal_read_file(const char *path, const char *dir, int file, const char *job_hash, tl_journal_cb cb,
                               void *ctx, long *nrecs, long *nskipped, tl_err *err);

/* The journal files of dir, full paths, sorted by name (the order tl_journal_read_all reads
 * them in and numbers rec->file by): *paths a malloc'd array of *n malloc'd strings; NULL and 0
 * when there is none (or no dir). TL_ENOMEM (message in err) when out of memory: *paths NULL,
 * *n 0. Local (no MPI): a caller before a collective agrees on the status. */
tl_status tl_journal_files(const char *dir, char ***paths, int *n, tl_err *err);

/* Lines read back by (file, offset): how a row's texts come back from the journal when its
 * table is written, so no rank keeps them in memory meanwhile. One fd per file, opened on first
 * use and kept, at most TL_JFILES_MAX_OPEN at once (a merge of many inputs reads thousands of
 * files: past that, another file is closed and opened again when next read). */
#ifndef TL_JFILES_MAX_OPEN
#define TL_JFILES_MAX_OPEN 256
#endif
/* The answers files journal lines reference, opened as they are first read (shared by the
 * journal files that name the same real path). */
typedef struct {
  struct tl_jdecl { /* a "tally_replay_file" line read: journal file, offset, what it names */
    int file;
    uint64_t at;
    char *path;      /* as the sources name it (what a reply's source starts with) */
    int real;        /* index in real/fd */
  } *decl;
  int ndecl, last;
  char **real;       /* real paths */
  int *fd;           /* -1: not open (or closed to stay under TL_JFILES_MAX_OPEN) */
  int nreal, nopen, victim;
  tl_buf line, src;
  char *text;        /* the last text read back for a record of tl_journal_read_file, owned */
  /* the answers lines are read through TL_JREFS_RA read-aheads (keyed by real path index): a
   * journal's records follow the units' key order, which walks an answers file in a few
   * interleaved runs (one per prompt variant, say); each read-ahead follows one, and a line
   * none holds refills the least recently used */
  tl_rdahead ra[4];
  uint64_t ra_used[4], ticks;
} tl_jrefs;
#define TL_JREFS_RA 4

typedef struct {
  char **paths;
  int *fd;
  int n;
  int nopen, victim; /* fds open; where the search for one to close starts */
  tl_buf line;
  tl_jrefs refs;     /* the answers files the lines read reference */
} tl_jfiles;
void tl_jfiles_init(tl_jfiles *f);
tl_status tl_jfiles_add(tl_jfiles *f, const char *path, int *index); /* copies path */
/* Reads the record at offset of file; rec's strings live in *obj (cJSON_Delete it). TL_EIO
 * when the line cannot be read or no longer parses as a record, or when it references a
 * reply whose answers line changed since (err names the answers file and line). */
tl_status tl_jfiles_read(tl_jfiles *f, int file, uint64_t offset, tl_journal_rec *rec, cJSON **obj,
                         tl_err *err);
void tl_jfiles_release(tl_jfiles *f);

/* True when dir exists and holds at least one journal file. */
int tl_journal_exists(const char *dir);
/* Removes the journal files and the folder (after the output is safely written). */
tl_status tl_journal_remove(const char *dir, tl_err *err);

#endif
