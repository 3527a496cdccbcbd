/* outsafe.h - output safety shared by every command: no output ever replaces an input, an output
 * goes only where it can be written, and one run at a time writes a given output.
 *
 * Plain POSIX (stat, realpath, open, fcntl); no MPI. Callers run these on one process (rank 0)
 * before anything is opened for writing, and agree on the result collectively themselves. */
#ifndef TALLY_OUTSAFE_H
#define TALLY_OUTSAFE_H

#include <stdio.h>

#include "tally/err.h"

/* One path a command reads, with what it is for messages ("the items file"). */
typedef struct {
  const char *path;
  const char *what;
} tl_path_role;

/* The resolved form of a path that may not exist yet: its realpath when it exists, else the
 * realpath of its folder + the last component, else the absolute path as given. malloc'd, NULL
 * on OOM. */
char *tl_path_absolute(const char *p);

/* 1 when a and b name the same file: the same (st_dev, st_ino) after following links when both
 * exist; otherwise the same resolved path (realpath of the folder + the last component, or the
 * lexically cleaned path when the folder does not exist either). */
int tl_same_file(const char *a, const char *b);

/* Refuses (TL_EUSAGE, err names both paths) when `out`, or the files the writers derive from it
 * (`out.part`, written first and renamed; `out.lock`), is one of the inputs. An input "-" stands
 * for standard input: it is compared through fstat(0) when stdin is a regular file. */
tl_status tl_out_check_inputs(const char *out, const char *out_what, const tl_path_role *in, int n,
                              tl_err *err);

/* Refuses (TL_EUSAGE) when standard output is a regular file that is one of the inputs (the
 * shell has then already emptied it: `tally parse --input a.jsonl > a.jsonl`). */
tl_status tl_stdout_check_inputs(const tl_path_role *in, int n, tl_err *err);

/* 1 when p is "-": standard output for an output option, standard input for an input one. */
int tl_path_is_std(const char *p);

/* The place of an HDF5 output (tally run, merge, correlate --out), checked before any work:
 * `out` must not be "-" (HDF5 seeks and rereads its file: no stream), a directory or any other
 * file that is not a regular file (a device such as /dev/null, a FIFO, a socket: the output is
 * written as `out.part` beside its journal and lock and renamed over it at the end), and its
 * folder must exist, be a folder and be writable (access W_OK|X_OK). TL_EUSAGE with the reason. */
tl_status tl_out_check_place(const char *out, tl_err *err);

/* The place of a text output (JSONL, JSON: tally parse --output, score vqa --output, run
 * --dry-run=FILE): "-" is standard output and an existing device, FIFO or socket is written in
 * place (never renamed over); otherwise as tl_out_check_place. TL_EUSAGE with the reason. */
tl_status tl_out_check_stream_place(const char *out, tl_err *err);

/* Refuses (TL_EUSAGE, naming it and --force) to replace an existing regular file `out` unless
 * `force`. Outputs of runs (tally run, merge, correlate --out) call it; a `--resume` into the
 * same output continues that output and does not. */
tl_status tl_out_check_replace(const char *out, int force, tl_err *err);

/* A text output being written (tl_out_stream_open .. tl_out_stream_close): standard output for
 * "-"; a device or FIFO opened in place; a regular file through `out.tmp-XXXXXX` in the same
 * folder, renamed over it only when every byte is written (a failure leaves no half file). */
typedef struct {
  FILE *f;          /* write here */
  const char *name; /* for messages: "standard output", the output or its temporary file */
  char *path;       /* the output; NULL for standard output */
  char *tmp;        /* the temporary file, or NULL (stdout, in place) */
  int std;          /* standard output: never closed */
} tl_out_stream;

/* TL_EIO (err names the file and the errno text), TL_ENOMEM. */
tl_status tl_out_stream_open(tl_out_stream *o, const char *out, tl_err *err);
/* Flushes; for a file fsyncs, closes and renames the temporary file over the output. ok = 0 (the
 * command failed): the temporary file is removed and nothing is renamed. TL_EIO naming the file
 * and the errno text (ENOSPC: "No space left on device") when a write, the flush or the rename
 * failed; no-op when not open. */
tl_status tl_out_stream_close(tl_out_stream *o, int ok, tl_err *err);

/* Standard input as a file, for readers that open a path (and may read it twice): copies it
 * into a new folder "$TMPDIR/tally-XXXXXX" (TMPDIR unset: /tmp) as the file "stdin", so
 * messages name ".../stdin:LINE". *path: malloc'd; tl_in_spool_release removes the file and
 * folder and frees it. TL_EIO naming the cause (a full disk: "No space left on device"). */
tl_status tl_in_spool_stdin(char **path, tl_err *err);
/* The same for the file src that can be read only once (tl_in_once: a named pipe, a process
 * substitution's /dev/fd/N, a device): copied as "$TMPDIR/tally-XXXXXX/<its base name>".
 * TL_EIO when it cannot be opened or copied. */
tl_status tl_in_spool(const char *src, char **path, tl_err *err);
/* 1 when path names a FIFO, a socket or a character device other than /dev/null: what a second
 * open would not read again (0 for a regular file, /dev/null, and a path that cannot be
 * stat'ed: the reader then says why). */
int tl_in_once(const char *path);
void tl_in_spool_release(char *path);

/* The lock of one output, held from before the first write (`.part`, journal) to the end.
 *
 * Mechanism, chosen to work on cluster file systems (NFSv3+, Lustre, GPFS, BeeGFS):
 *   - `<out>.lock` is created with O_CREAT|O_EXCL (atomic on these file systems) and holds one
 *     line per field: host, pid, start time (UTC and epoch), SLURM_JOB_ID and
 *     SLURM_RESTART_COUNT when set. Its existence is the lock.
 *   - An fcntl write lock is also taken on it and held while the process lives, so where fcntl
 *     locks work (local disks; NFS with lockd; Lustre mounted with flock) a live holder is
 *     proven by the kernel, and a killed holder's lock vanishes with it.
 * A second run finds the file and exits 2 naming the holder; nothing is removed. The lock is
 * *stale* when the fcntl lock is free and the holder is provably gone: on the same host (the
 * lock's `host` equals gethostname) its pid is not running (kill(pid, 0) fails with ESRCH, a
 * zombie, or a process started after the lock: the pid was reused); under SLURM the lock was
 * taken by an earlier incarnation of this same job (same SLURM_JOB_ID, lower
 * SLURM_RESTART_COUNT: SLURM ends a job before it requeues it). A stale lock is taken over at
 * once with a one-line notice on `log` (a run killed by SIGKILL or SIGPIPE needs no --break-lock
 * on its own host). A lock whose holder this run cannot check (another host, an unreadable lock)
 * is taken over only with `break_stale` (`--break-lock`); a live holder never. */
typedef struct {
  char *path; /* "<out>.lock", NULL when not held */
  int fd;
  int live;   /* after a refusal: 1 when the holder provably runs, 0 when it may be gone */
} tl_out_lock;

/* Takes the lock. TL_OK: held (log gets a line when a stale lock was taken over); TL_EUSAGE:
 * held by another run, or by one this host cannot check without break_stale (err says which,
 * with the holder);
 * TL_EIO: the lock file cannot be created (err says why). */
tl_status tl_out_lock_take(tl_out_lock *l, const char *out, int break_stale, FILE *log, tl_err *err);
/* Removes the lock file and closes it; no-op when not held. */
void tl_out_lock_release(tl_out_lock *l);

#endif
