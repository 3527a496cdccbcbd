/* outsafe.c - output safety: output vs input paths, the output's place, the output lock.
 * Contracts in outsafe.h. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* gethostname */
#include "outsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tally/str.h"

/* ---- same file ---- */

/* The folder part of a path ("." for a bare name, "/" for "/x"). malloc'd, NULL on OOM. */
static char *dir_of(const char *p) {
  const char *slash = strrchr(p, '/');
  return slash ? tl_strndup(p, slash == p ? 1 : (size_t)(slash - p)) : tl_strdup(".");
}

char *tl_path_absolute(const char *p) {
  char *full = realpath(p, NULL);
  if (full) return full;
  tl_buf b;
  tl_buf_init(&b);
  const char *slash = strrchr(p, '/');
  char *dir = dir_of(p);
  const char *base = slash ? slash + 1 : p;
  char *rdir = dir ? realpath(dir, NULL) : NULL;
  tl_status st;
  if (rdir) {
    st = tl_buf_printf(&b, "%s/%s", strcmp(rdir, "/") ? rdir : "", base);
  } else if (p[0] == '/') {
    st = tl_buf_puts(&b, p);
  } else {
    char cwd[PATH_MAX];
    st = getcwd(cwd, sizeof cwd) ? tl_buf_printf(&b, "%s/%s", cwd, p) : tl_buf_puts(&b, p);
  }
  free(dir);
  free(rdir);
  if (st) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

int tl_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return 0; /* one exists, the other does not */
  char *ra = tl_path_absolute(a), *rb = tl_path_absolute(b);
  int same = ra && rb && strcmp(ra, rb) == 0;
  free(ra);
  free(rb);
  return same;
}

/* Same as tl_same_file, with "-" meaning standard input. */
static int same_as_input(const char *out, const char *in) {
  if (strcmp(in, "-") != 0) return tl_same_file(out, in);
  struct stat so, si;
  if (fstat(0, &si) != 0 || !S_ISREG(si.st_mode) || stat(out, &so) != 0) return 0;
  return so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

tl_status tl_out_check_inputs(const char *out, const char *out_what, const tl_path_role *in, int n,
                              tl_err *err) {
  static const char *const SUFFIX[] = {"", ".part", ".lock"};
  if (tl_path_is_std(out)) return tl_stdout_check_inputs(in, n, err);
  tl_buf p;
  tl_buf_init(&p);
  tl_status st = TL_OK;
  for (size_t s = 0; s < sizeof SUFFIX / sizeof *SUFFIX && !st; s++) {
    tl_buf_reset(&p);
    if (tl_buf_printf(&p, "%s%s", out, SUFFIX[s])) {
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
      break;
    }
    for (int i = 0; i < n && !st; i++) {
      if (!in[i].path || !same_as_input(p.data, in[i].path)) continue;
      if (s == 0)
        st = tl_err_set(err, TL_EUSAGE, "%s '%s' is the same file as %s '%s': writing it would destroy "
                        "that input; choose another output path", out_what, out, in[i].what, in[i].path);
      else
        st = tl_err_set(err, TL_EUSAGE, "%s '%s' would write '%s', which is %s '%s'; choose another "
                        "output path", out_what, out, p.data, in[i].what, in[i].path);
    }
  }
  tl_buf_release(&p);
  return st;
}

tl_status tl_stdout_check_inputs(const tl_path_role *in, int n, tl_err *err) {
  struct stat so, si;
  if (fstat(1, &so) != 0 || !S_ISREG(so.st_mode)) return TL_OK;
  for (int i = 0; i < n; i++) {
    if (!in[i].path || strcmp(in[i].path, "-") == 0 || stat(in[i].path, &si) != 0) continue;
    if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      return tl_err_set(err, TL_EUSAGE, "standard output is %s '%s' (the shell has already emptied "
                        "it when redirecting with '>'); write the output elsewhere", in[i].what, in[i].path);
  }
  return TL_OK;
}

/* ---- the output's place ---- */

int tl_path_is_std(const char *p) { return p && strcmp(p, "-") == 0; }

/* "a device", "a FIFO", ... for messages. */
static const char *kind_of(mode_t m) {
  return S_ISCHR(m) || S_ISBLK(m) ? "a device" : S_ISFIFO(m) ? "a FIFO (named pipe)" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The folder of `out` exists, is a folder and is writable. */
static tl_status check_dir(const char *out, tl_err *err) {
  struct stat s;
  char *dir = dir_of(out);
  if (!dir) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st = TL_OK;
  if (stat(dir, &s) != 0)
    st = tl_err_set(err, TL_EUSAGE, "the folder '%s' of output '%s' does not exist: %s", dir, out, strerror(errno));
  else if (!S_ISDIR(s.st_mode))
    st = tl_err_set(err, TL_EUSAGE, "'%s' in output path '%s' is not a folder", dir, out);
  else if (access(dir, W_OK | X_OK) != 0) /* a read-only old output is fine: it is replaced by rename */
    st = tl_err_set(err, TL_EUSAGE, "the folder '%s' of output '%s' is not writable: %s", dir, out, strerror(errno));
  free(dir);
  return st;
}

/* A folder given as the output. */
static tl_status check_not_dir(const char *out, const char *example, tl_err *err) {
  struct stat s;
  size_t n = strlen(out);
  if (n == 0) return tl_err_set(err, TL_EUSAGE, "the output path is empty");
  if (out[n - 1] == '/' || (stat(out, &s) == 0 && S_ISDIR(s.st_mode)))
    return tl_err_set(err, TL_EUSAGE, "output '%s' is a directory; give a file path (e.g. '%s%s%s')", out, out,
                      out[n - 1] == '/' ? "" : "/", example);
  return TL_OK;
}

tl_status tl_out_check_place(const char *out, tl_err *err) {
  struct stat s;
  if (tl_path_is_std(out))
    return tl_err_set(err, TL_EUSAGE, "output '-': an HDF5 file cannot be written to standard output (HDF5 seeks and "
                      "rereads its file, and tally writes it as OUTPUT.part beside its journal and lock); give a file path");
  tl_status st = check_not_dir(out, "run.h5", err);
  if (st) return st;
  /* an HDF5 output is written beside itself (OUTPUT.part, OUTPUT.journal/, OUTPUT.lock) and
   * renamed over it at the end: a device, FIFO or socket there (/dev/null) can take none of that */
  if (stat(out, &s) == 0 && !S_ISREG(s.st_mode))
    return tl_err_set(err, TL_EUSAGE, "output '%s' is not a regular file (%s): an HDF5 output must be a regular file "
                      "(HDF5 seeks and rereads it, and tally writes it as '%s.part' beside its journal and lock, renamed "
                      "at the end); give a file path", out, kind_of(s.st_mode), out);
  return check_dir(out, err);
}

tl_status tl_out_check_stream_place(const char *out, tl_err *err) {
  struct stat s;
  if (tl_path_is_std(out)) return TL_OK;
  tl_status st = check_not_dir(out, "out.jsonl", err);
  if (st) return st;
  if (stat(out, &s) == 0 && !S_ISREG(s.st_mode)) return TL_OK; /* a device or FIFO: written in place */
  return check_dir(out, err);
}

tl_status tl_out_check_replace(const char *out, int force, tl_err *err) {
  struct stat s;
  if (force || tl_path_is_std(out) || stat(out, &s) != 0 || !S_ISREG(s.st_mode)) return TL_OK;
  return tl_err_set(err, TL_EUSAGE, "output '%s' exists (a finished output): pass --force to replace it, or choose "
                    "another output", out);
}

/* ---- text outputs ---- */

tl_status tl_out_stream_open(tl_out_stream *o, const char *out, tl_err *err) {
  memset(o, 0, sizeof *o);
  struct stat s;
  if (tl_path_is_std(out)) {
    o->f = stdout;
    o->std = 1;
    o->name = "standard output";
    return TL_OK;
  }
  if (!(o->path = tl_strdup(out))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  o->name = o->path;
  if (stat(out, &s) == 0 && !S_ISREG(s.st_mode)) { /* a device or FIFO: written in place, never replaced */
    if (!(o->f = fopen(out, "w"))) {
      tl_status st = tl_err_set(err, TL_EIO, "cannot open '%s' for writing: %s", out, strerror(errno));
      free(o->path);
      o->path = NULL;
      return st;
    }
    return TL_OK;
  }
  tl_buf tmp;
  tl_buf_init(&tmp);
  int fd = -1;
  if (tl_buf_printf(&tmp, "%s.tmp-XXXXXX", out) == TL_OK) fd = mkstemp(tmp.data);
  if (fd >= 0) {
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0 || !(o->f = fdopen(fd, "w"))) {
      int e = errno;
      close(fd);
      unlink(tmp.data);
      errno = e;
      fd = -1;
    }
  }
  if (fd < 0) {
    tl_status st = tmp.data ? tl_err_set(err, TL_EIO, "cannot create a temporary file beside '%s': %s", out, strerror(errno))
                            : tl_err_set(err, TL_ENOMEM, "out of memory");
    tl_buf_release(&tmp);
    free(o->path);
    o->path = NULL;
    return st;
  }
  o->tmp = tl_buf_detach(&tmp);
  o->name = o->tmp;
  return TL_OK;
}

tl_status tl_out_stream_close(tl_out_stream *o, int ok, tl_err *err) {
  tl_status st = TL_OK;
  if (!o->f) return TL_OK;
  const char *name = o->tmp ? o->tmp : o->path ? o->path : "standard output";
  int e = 0;
  if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
  if (!e && ok && o->tmp && fsync(fileno(o->f)) != 0) e = errno;
  if (!o->std && fclose(o->f) != 0 && !e) e = errno;
  o->f = NULL;
  if (e && ok) st = tl_err_set(err, TL_EIO, "cannot write %s%s%s: %s", o->std ? "" : "'", name, o->std ? "" : "'",
                               strerror(e));
  if (!st && ok && o->tmp && rename(o->tmp, o->path) != 0)
    st = tl_err_set(err, TL_EIO, "cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
  if (o->tmp && (st || !ok)) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  o->tmp = o->path = NULL;
  return st;
}

/* ---- standard input as a file ---- */

tl_status tl_in_spool(const char *src, char **path, tl_err *err) {
  *path = NULL;
  const int std = src == NULL;
  const char *what = std ? "standard input" : src;
  int in = std ? 0 : open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", src, strerror(errno));
  const char *tmp = getenv("TMPDIR"), *base = std ? "stdin" : strrchr(src, '/');
  base = base && !std ? base + 1 : base;
  if (!base || !*base || !strcmp(base, ".") || !strcmp(base, "..")) base = "input";
  tl_buf d;
  tl_buf_init(&d);
  tl_status st = TL_OK;
  if (tl_buf_printf(&d, "%s/tally-XXXXXX", tmp && *tmp ? tmp : "/tmp")) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  else if (!mkdtemp(d.data))
    st = tl_err_set(err, TL_EIO, "cannot make a folder '%s' for %s: %s", d.data, what, strerror(errno));
  if (st) {
    if (!std) close(in);
    tl_buf_release(&d);
    return st;
  }
  tl_buf_printf(&d, "/%s", base);
  int fd = d.data ? open(d.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
  int e = fd < 0 ? errno : 0;
  char buf[65536];
  for (ssize_t n; !e && (n = read(in, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno != EINTR) e = errno;
      continue;
    }
    for (ssize_t off = 0; !e && off < n;) {
      ssize_t w = write(fd, buf + off, (size_t)(n - off));
      if (w < 0 && errno != EINTR) e = errno;
      else if (w > 0) off += w;
    }
  }
  if (!std) close(in);
  if (fd >= 0 && close(fd) != 0 && !e) e = errno;
  if (e) {
    st = tl_err_set(err, TL_EIO, "cannot copy %s to '%s': %s", what, d.data ? d.data : "?", strerror(e));
    tl_in_spool_release(tl_buf_detach(&d));
    return st;
  }
  *path = tl_buf_detach(&d);
  return TL_OK;
}

tl_status tl_in_spool_stdin(char **path, tl_err *err) { return tl_in_spool(NULL, path, err); }

int tl_in_once(const char *path) {
  struct stat sb, nul;
  if (stat(path, &sb) != 0) return 0;
  if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)) return 1;
  /* a terminal or another device; /dev/null reads the same (nothing) every time */
  return S_ISCHR(sb.st_mode) && !(stat("/dev/null", &nul) == 0 && S_ISCHR(nul.st_mode) && nul.st_rdev == sb.st_rdev);
}

void tl_in_spool_release(char *path) {
  if (!path) return;
  unlink(path);
  char *slash = strrchr(path, '/');
  if (slash) {
    *slash = 0;
    rmdir(path);
  }
  free(path);
}

/* ---- the lock ---- */

typedef struct {
  char host[256];
  long pid;
  long long epoch;
  char started[32];
  char slurm_job[64];
  long slurm_restart;
  int complete; /* all of host, pid, epoch present */
} lock_info;

static void field(const char *text, const char *key, char *out, size_t n) {
  out[0] = 0;
  size_t k = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, k) == 0 && l[k] == '=') {
      const char *v = l + k + 1, *e = strchr(v, '\n');
      size_t len = e ? (size_t)(e - v) : strlen(v);
      if (len >= n) len = n - 1;
      memcpy(out, v, len);
      out[len] = 0;
      return;
    }
  }
}

static void parse_info(const char *text, lock_info *li) {
  char v[64];
  memset(li, 0, sizeof *li);
  li->slurm_restart = -1;
  field(text, "host", li->host, sizeof li->host);
  field(text, "pid", v, sizeof v);
  li->pid = v[0] ? strtol(v, NULL, 10) : 0;
  field(text, "started_epoch", v, sizeof v);
  li->epoch = v[0] ? strtoll(v, NULL, 10) : 0;
  field(text, "started", li->started, sizeof li->started);
  field(text, "slurm_job_id", li->slurm_job, sizeof li->slurm_job);
  field(text, "slurm_restart_count", v, sizeof v);
  if (v[0]) li->slurm_restart = strtol(v, NULL, 10);
  li->complete = li->host[0] && li->pid > 0 && li->epoch > 0;
}

static void describe(const lock_info *li, char *out, size_t n) {
  if (!li->complete) {
    snprintf(out, n, "holder unknown: the lock file is empty or unreadable");
    return;
  }
  int k = snprintf(out, n, "host %s, pid %ld, started %s", li->host, li->pid, li->started);
  if (li->slurm_job[0] && k > 0 && (size_t)k < n) snprintf(out + k, n - (size_t)k, ", SLURM job %s", li->slurm_job);
}

/* Start time (epoch seconds) of a process on this host from /proc; -1 when unknown; *zombie
 * is set when it has ended and waits to be reaped (state Z or X: it holds nothing any more). */
static long long proc_start_epoch(long pid, int *zombie) {
  char p[64], buf[1024];
  snprintf(p, sizeof p, "/proc/%ld/stat", pid);
  FILE *f = fopen(p, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *c = strrchr(buf, ')'); /* the command name may hold spaces */
  if (!c) return -1;
  *zombie = c[1] == ' ' && (c[2] == 'Z' || c[2] == 'X');
  unsigned long long start = 0;
  int fieldno = 2;
  for (char *t = c + 1; *t; t++)
    if (*t == ' ' && ++fieldno == 22) {
      start = strtoull(t + 1, NULL, 10);
      break;
    }
  if (fieldno != 22) return -1;
  f = fopen("/proc/stat", "r");
  if (!f) return -1;
  long long btime = -1;
  char line[256];
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "btime ", 6) == 0) btime = strtoll(line + 6, NULL, 10);
  fclose(f);
  long tck = sysconf(_SC_CLK_TCK);
  if (btime < 0 || tck <= 0) return -1;
  return btime + (long long)(start / (unsigned long long)tck);
}

/* 1 when the holder is provably gone, 0 when this run cannot tell (another host, an unreadable
 * lock), -1 when it provably lives (a running process on this host); `why` says how. */
static int holder_gone(const lock_info *li, const char *myhost, char *why, size_t n, int *same_job) {
  *same_job = 0;
  const char *job = getenv("SLURM_JOB_ID"), *rs = getenv("SLURM_RESTART_COUNT");
  long my_restart = rs && *rs ? strtol(rs, NULL, 10) : 0;
  if (li->slurm_job[0] && job && strcmp(job, li->slurm_job) == 0 && li->slurm_restart >= 0 &&
      li->slurm_restart < my_restart) {
    snprintf(why, n, "it was taken by an earlier run of this SLURM job (%s, restart %ld; this is restart %ld), "
             "which SLURM ended before requeueing it", job, li->slurm_restart, my_restart);
    *same_job = 1;
    return 1;
  }
  if (!li->complete) {
    snprintf(why, n, "its holder cannot be checked");
    return 0;
  }
  if (strcmp(li->host, myhost) != 0) {
    snprintf(why, n, "its holder ran on another host, where this run cannot check it");
    return 0;
  }
  if (kill((pid_t)li->pid, 0) != 0 && errno == ESRCH) {
    snprintf(why, n, "process %ld is no longer running on this host", li->pid);
    return 1;
  }
  int zombie = 0;
  long long ps = proc_start_epoch(li->pid, &zombie);
  if (zombie) {
    snprintf(why, n, "process %ld has ended (it is a zombie waiting to be reaped)", li->pid);
    return 1;
  }
  if (ps > li->epoch + 2) {
    snprintf(why, n, "process %ld now is another program, started after the lock", li->pid);
    return 1;
  }
  snprintf(why, n, "process %ld is still running on this host", li->pid);
  return -1;
}

static tl_status write_info(int fd, const char *path, tl_err *err) {
  char host[256] = "?", ts[32];
  if (gethostname(host, sizeof host - 1) != 0) strcpy(host, "?");
  host[sizeof host - 1] = 0;
  time_t t = time(NULL);
  struct tm tmv;
  gmtime_r(&t, &tmv);
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  const char *job = getenv("SLURM_JOB_ID"), *rs = getenv("SLURM_RESTART_COUNT");
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_buf_printf(&b, "tally output lock\nhost=%s\npid=%ld\nstarted=%s\nstarted_epoch=%lld\n", host,
                               (long)getpid(), ts, (long long)t);
  if (!st && job && *job) st = tl_buf_printf(&b, "slurm_job_id=%s\nslurm_restart_count=%s\n", job, rs && *rs ? rs : "0");
  if (st) {
    tl_buf_release(&b);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  int ok = ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0;
  for (size_t off = 0; ok && off < b.len;) {
    ssize_t w = write(fd, b.data + off, b.len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = 0;
    else off += (size_t)w;
  }
  ok = ok && fsync(fd) == 0;
  tl_buf_release(&b);
  if (!ok) return tl_err_set(err, TL_EIO, "cannot write the lock '%s': %s", path, strerror(errno));
  return TL_OK;
}

static int fcntl_lock(int fd, int wait) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) == 0 ? 0 : errno;
}

tl_status tl_out_lock_take(tl_out_lock *l, const char *out, int break_stale, FILE *log, tl_err *err) {
  l->path = NULL;
  l->fd = -1;
  l->live = 0;
  tl_buf p;
  tl_buf_init(&p);
  if (tl_buf_printf(&p, "%s.lock", out)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  char myhost[256] = "";
  if (gethostname(myhost, sizeof myhost - 1) != 0) myhost[0] = 0;
  tl_status st = TL_OK;
  for (int attempt = 0;; attempt++) {
    int fd = open(p.data, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      int e = fcntl_lock(fd, 1); /* an inspector holds it for a moment at most */
      (void)e;                   /* ENOLCK: no fcntl locks here; the file alone is the lock */
      if ((st = write_info(fd, p.data, err))) {
        close(fd);
        unlink(p.data);
        break;
      }
      l->fd = fd;
      l->path = tl_buf_detach(&p);
      return TL_OK;
    }
    if (errno != EEXIST) {
      st = tl_err_set(err, TL_EIO, "cannot create the lock '%s' of output '%s': %s", p.data, out, strerror(errno));
      break;
    }
    fd = open(p.data, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT && attempt < 5) continue; /* released meanwhile: try again */
      st = tl_err_set(err, TL_EIO, "cannot open the lock '%s' of output '%s': %s", p.data, out, strerror(errno));
      break;
    }
    int e = fcntl_lock(fd, 0);
    char text[2048];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    lock_info li;
    parse_info(text, &li);
    char who[512];
    describe(&li, who, sizeof who);
    if (e == EAGAIN || e == EACCES) {
      close(fd);
      l->live = 1;
      st = tl_err_set(err, TL_EUSAGE, "output '%s' is being written by another tally run (%s; lock '%s'); "
                      "wait for it to finish or choose another output", out, who, p.data);
      break;
    }
    /* We hold the fcntl lock now (or fcntl locks do not work here): is it still the file at
     * the path (not one its holder removed a moment ago)? */
    struct stat sf, sp;
    if (fstat(fd, &sf) != 0 || stat(p.data, &sp) != 0 || sf.st_ino != sp.st_ino || sf.st_dev != sp.st_dev) {
      close(fd);
      if (attempt < 5) continue;
      st = tl_err_set(err, TL_EIO, "the lock '%s' of output '%s' keeps changing", p.data, out);
      break;
    }
    if (!li.complete && attempt < 5) { /* being written by its creator: look again */
      close(fd);
      struct timespec ts = {0, 100 * 1000 * 1000};
      nanosleep(&ts, NULL);
      continue;
    }
    char why[512];
    int same_job = 0, gone = holder_gone(&li, myhost, why, sizeof why, &same_job);
    /* a holder provably gone (its pid ended on this host, or an earlier run of this SLURM job)
     * is taken over at once; one this run cannot check only with --break-lock */
    if (gone > 0 || (break_stale && gone == 0)) {
      if ((st = write_info(fd, p.data, err))) {
        close(fd);
        break;
      }
      if (log)
        fprintf(log, "tally: %s the %slock '%s' (%s): %s\n", gone > 0 ? "took over" : "--break-lock: took over",
                gone > 0 ? "stale " : "", p.data, who, why);
      l->fd = fd;
      l->path = tl_buf_detach(&p);
      return TL_OK;
    }
    close(fd);
    st = tl_err_set(err, TL_EUSAGE, "output '%s' is locked by another tally run (%s; lock '%s'): %s. If "
                      "you are sure that run is gone, run again with --break-lock", out, who, p.data, why);
    l->live = gone < 0;
    if (gone < 0 && break_stale) /* a live holder is never broken */
      st = tl_err_set(err, TL_EUSAGE, "output '%s' is locked by a running tally (%s; lock '%s'): %s; "
                      "--break-lock does not take a live lock", out, who, p.data, why);
    break;
  }
  tl_buf_release(&p);
  return st;
}

void tl_out_lock_release(tl_out_lock *l) {
  if (!l->path) return;
  unlink(l->path);
  if (l->fd >= 0) close(l->fd);
  free(l->path);
  l->path = NULL;
  l->fd = -1;
}
