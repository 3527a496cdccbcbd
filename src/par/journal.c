/* journal.c - the resume journal (see journal.h). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "journal.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#include "tally/jsonl.h"
#include "tally/jsonw.h"
#include "tally/str.h"

char *tl_journal_dir(const char *output) {
  tl_buf b;
  tl_buf_init(&b);
  if (tl_buf_printf(&b, "%s.journal", output)) return NULL;
  return tl_buf_detach(&b);
}

static uint64_t fnv_text(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (const char *c = s; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return h;
}

/* The engine settings that say where and how a server is reached (job.c's load_http). */
static const char *const TRANSPORT[] = {"url", "urls", "port_base", "api_key_env", "concurrency",
                                        "timeouts", "retries", "health", "key_header",
                                        "max_reply_bytes", "tls", NULL};

static void drop_transport(cJSON *eng) {
  if (!cJSON_IsObject(eng)) return;
  for (int k = 0; TRANSPORT[k]; k++) cJSON_DeleteItemFromObjectCaseSensitive(eng, TRANSPORT[k]);
}

void tl_journal_job_hash(const char *job_json, char out[TL_JOB_HASH_LEN]) {
  const uint64_t raw = fnv_text(job_json);
  uint64_t canon = raw;
  cJSON *j = cJSON_Parse(job_json);
  if (cJSON_IsObject(j)) {
    drop_transport(cJSON_GetObjectItemCaseSensitive(j, "engine")); /* the older single engine */
    cJSON *engs = cJSON_GetObjectItemCaseSensitive(j, "engines");
    for (cJSON *e = cJSON_IsObject(engs) ? engs->child : NULL; e; e = e->next) drop_transport(e);
    tl_json_sort_keys(j);
    char *s = cJSON_PrintUnformatted(j);
    if (s) canon = fnv_text(s);
    free(s);
  }
  cJSON_Delete(j);
  snprintf(out, TL_JOB_HASH_LEN, "%016llx/%016llx", (unsigned long long)canon, (unsigned long long)raw);
}

/* 1 when a journal header's job hash h names the job of `job_hash` (tl_journal_job_hash). */
static int same_job(const char *h, const char *job_hash) {
  return strlen(h) == 16 && (strncmp(h, job_hash, 16) == 0 || strncmp(h, job_hash + 17, 16) == 0);
}

char *tl_journal_path(const char *dir, const char *attempt, int rank) {
  tl_buf b;
  tl_buf_init(&b);
  if (tl_buf_printf(&b, "%s/%s-r%05d.jsonl", dir, attempt, rank)) return NULL;
  return tl_buf_detach(&b);
}

static void jsync_start(tl_journal *j);

tl_status tl_journal_open(tl_journal *j, const char *dir, const char *attempt, int rank,
                          const char *job_hash, tl_err *err) {
  memset(j, 0, sizeof *j);
  tl_buf_init(&j->line);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return tl_err_set(err, TL_EIO, "cannot create the journal folder '%s': %s", dir, strerror(errno));
  j->path = tl_journal_path(dir, attempt, rank);
  if (!j->path) return tl_err_set(err, TL_ENOMEM, "out of memory");
  j->fp = fopen(j->path, "a");
  if (!j->fp) return tl_err_set(err, TL_EIO, "cannot create journal '%s': %s", j->path, strerror(errno));
  /* a line per unit: a 1 MiB buffer makes a write(2) per ~1,500 lines, not one per ~5 as
   * stdio's 4 KiB does (what is synced stays what tl_journal_sync flushed). glibc ignores the
   * size unless it is given the buffer. */
  if ((j->vbuf = malloc(TL_JOURNAL_VBUF))) setvbuf(j->fp, j->vbuf, _IOFBF, TL_JOURNAL_VBUF);
  int hn = fprintf(j->fp, "{\"tally_journal\": 1, \"job\": \"%.16s\", \"rank\": %d, \"attempt\": \"%s\"}\n",
                   job_hash, rank, attempt);
  j->pos = hn > 0 ? (uint64_t)hn : 0;
  j->unsynced = 1;
  tl_status st = tl_journal_sync(j, err);
  if (st == TL_OK) jsync_start(j);
  return st;
}

/* Appends `,"key":v` for an integer v (|v| < 1e15: its digits, without printf). */
static void put_int(tl_buf *b, const char *key, long long v) {
  tl_json_key(b, key, 0);
  tl_json_num(b, (double)v);
}

/* Appends `"key":` and the JSON form of v (a string, or null). */
static void put_field(tl_buf *b, const char *key, const char *v, int first) {
  tl_json_key(b, key, first);
  tl_json_cstr(b, v);
}

tl_status tl_journal_add(tl_journal *j, const tl_unit_key *key, const tl_eng_reply *rep, uint64_t *offset,
                         tl_err *err) {
  /* Hand-written JSON (one reused buffer, no per-field allocation): this runs once per unit. */
  tl_buf *b = &j->line;
  tl_buf_reset(b);
  tl_buf_append(b, "{", 1);
  put_field(b, "b", key->bench, 1);
  put_field(b, "m", key->model, 0);
  put_field(b, "v", key->variant, 0);
  put_int(b, "s", key->seed);
  put_field(b, "id", key->id, 0);
  put_int(b, "t", (long long)(unsigned)key->sub);
  put_int(b, "st", key->stage);
  put_field(b, "text", rep->text, 0);
  put_field(b, "prompt", rep->prompt, 0);
  put_field(b, "source", rep->source, 0);
  if (rep->meta) { /* one JSON object on one line (the engine prints it unformatted) */
    tl_buf_append(b, ",\"meta\":", 8);
    tl_buf_append(b, rep->meta, strlen(rep->meta));
  }
  if (rep->failed) {
    put_field(b, "error", rep->error ? rep->error : "the engine gave up", 0);
    tl_buf_append(b, ",\"failed\":1", 11);
  }
  tl_buf_append(b, "}\n", 2);
  if (fwrite(b->data, 1, b->len, j->fp) != b->len)
    return tl_err_set(err, TL_EIO, "cannot write journal '%s': %s", j->path, strerror(errno));
  if (offset) *offset = j->pos;
  j->pos += b->len;
  j->unsynced++;
  return TL_OK;
}

/* The background fsync: the scoring thread asks (want), this thread fsyncs the descriptor. It
 * makes no MPI call (tally runs MPI_THREAD_FUNNELED) and touches no FILE: the scoring thread
 * flushed before asking. */
struct tl_jsync {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int fd;
  int want, quit;
  int err; /* errno of the first failed background fsync, 0 */
};

static void *jsync_main(void *arg) {
  struct tl_jsync *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->want && !s->quit) pthread_cond_wait(&s->cv, &s->mu);
    if (!s->want) break; /* quit, nothing asked */
    s->want = 0;
    pthread_mutex_unlock(&s->mu);
    int rc = fsync(s->fd), e = errno;
    pthread_mutex_lock(&s->mu);
    if (rc != 0 && !s->err) s->err = e ? e : EIO;
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Starts j's syncer; without one (no thread could be made) the timed syncs are inline. */
static void jsync_start(tl_journal *j) {
  struct tl_jsync *s = calloc(1, sizeof *s);
  if (!s) return;
  s->fd = fileno(j->fp);
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    free(s);
    return;
  }
  /* every signal blocked in the thread: SIGTERM and the others always reach the scoring thread,
   * whose waits they interrupt (the thread inherits the mask it is created under) */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int made = pthread_cond_init(&s->cv, NULL) == 0;
  if (made && pthread_create(&s->th, NULL, jsync_main, s) != 0) {
    pthread_cond_destroy(&s->cv);
    made = 0;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!made) {
    pthread_mutex_destroy(&s->mu);
    free(s);
    return;
  }
  j->bg = s;
}

/* Stops j's syncer (an fsync asked and not yet run runs first). */
static void jsync_stop(tl_journal *j) {
  struct tl_jsync *s = j->bg;
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->quit = 1;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->th, NULL);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
  j->bg = NULL;
}

/* An earlier background fsync's failure, as the caller's error (once). */
static tl_status jsync_failed(tl_journal *j, tl_err *err) {
  if (!j->bg) return TL_OK;
  pthread_mutex_lock(&j->bg->mu);
  int e = j->bg->err;
  j->bg->err = 0;
  pthread_mutex_unlock(&j->bg->mu);
  return e ? tl_err_set(err, TL_EIO, "cannot write journal '%s': %s", j->path, strerror(e)) : TL_OK;
}

tl_status tl_journal_sync(tl_journal *j, tl_err *err) {
  tl_status st = j->fp ? jsync_failed(j, err) : TL_OK;
  if (st || !j->fp || !j->unsynced) return st;
  j->last_sync = now_s();
  if (fflush(j->fp) != 0 || fsync(fileno(j->fp)) != 0)
    return tl_err_set(err, TL_EIO, "cannot write journal '%s': %s", j->path, strerror(errno));
  j->unsynced = 0;
  return TL_OK;
}

void tl_journal_close(tl_journal *j) {
  jsync_stop(j); /* a failed background fsync was reported by the next sync; after the last one the run ends */
  if (j->fp) fclose(j->fp);
  free(j->vbuf);
  free(j->path);
  tl_buf_release(&j->line);
  memset(j, 0, sizeof *j);
}

tl_status tl_journal_batch_done(tl_journal *j, tl_err *err) {
  if (!j->fp || !j->unsynced) return TL_OK;
  if (fflush(j->fp) != 0) /* every batch: a killed process loses none of its lines */
    return tl_err_set(err, TL_EIO, "cannot write journal '%s': %s", j->path, strerror(errno));
  if (now_s() - j->last_sync < TL_JOURNAL_SYNC_S) return TL_OK;
  if (!j->bg) return tl_journal_sync(j, err);
  tl_status st = jsync_failed(j, err);
  if (st) return st;
  j->last_sync = now_s();
  pthread_mutex_lock(&j->bg->mu);
  j->bg->want = 1;
  pthread_cond_signal(&j->bg->cv);
  pthread_mutex_unlock(&j->bg->mu);
  j->unsynced = 0;
  return TL_OK;
}

static int is_journal(const char *name) {
  size_t n = strlen(name);
  return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, int n) {
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

/* The journal file names of dir, sorted: *out a malloc'd array of *n malloc'd names (NULL and 0
 * when there is none, or no dir). TL_ENOMEM when out of memory (nothing is kept then). */
static tl_status list_files(const char *dir, char ***out, int *n) {
  *n = 0;
  *out = NULL;
  DIR *d = opendir(dir);
  if (!d) return TL_OK;
  char **names = NULL;
  int cap = 0, k = 0;
  tl_status st = TL_OK;
  struct dirent *e;
  while (st == TL_OK && (e = readdir(d))) {
    if (!is_journal(e->d_name)) continue;
    if (k == cap) {
      cap = cap ? cap * 2 : 16;
      char **p = realloc(names, (size_t)cap * sizeof *names);
      if (!p) { st = TL_ENOMEM; break; }
      names = p;
    }
    if (!(names[k] = tl_strdup(e->d_name))) st = TL_ENOMEM;
    else k++;
  }
  closedir(d);
  if (st != TL_OK) {
    free_names(names, k);
    return st;
  }
  if (k) qsort(names, (size_t)k, sizeof *names, cmp_str);
  *out = names;
  *n = k;
  return TL_OK;
}

int tl_journal_exists(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d))) found = is_journal(e->d_name);
  closedir(d);
  return found;
}

static const char *str_or_null(const cJSON *o, const char *k, int *bad) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsString(v)) return v->valuestring;
  if (!cJSON_IsNull(v)) *bad = 1;
  return NULL;
}

/* A record line's fields into rec (strings borrowed from o). 0 = ok, 1 = malformed. */
static int parse_rec(const cJSON *o, tl_journal_rec *rec) {
  int bad = !cJSON_IsObject(o);
  memset(rec, 0, sizeof *rec);
  if (bad) return 1;
  rec->key.bench = str_or_null(o, "b", &bad);
  rec->key.model = str_or_null(o, "m", &bad);
  rec->key.variant = str_or_null(o, "v", &bad);
  rec->key.id = str_or_null(o, "id", &bad);
  rec->text = str_or_null(o, "text", &bad);
  rec->prompt = str_or_null(o, "prompt", &bad);
  rec->source = str_or_null(o, "source", &bad);
  rec->meta = cJSON_GetObjectItemCaseSensitive(o, "meta");
  if (rec->meta && !cJSON_IsObject(rec->meta)) bad = 1;
  const cJSON *er = cJSON_GetObjectItemCaseSensitive(o, "error");
  if (er && !cJSON_IsString(er)) bad = 1;
  rec->error = cJSON_IsString(er) ? er->valuestring : NULL;
  const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "failed");
  if (fl && !tl_json_is_int(fl, 0, 1)) bad = 1;
  rec->failed = fl ? (int)fl->valuedouble : 0;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "s");
  if (!tl_json_is_int(s, INT_MIN, INT_MAX)) bad = 1;
  else rec->key.seed = (int)s->valuedouble;
  /* "t" (sub-unit) and "st" (stage): 0 when absent (lines of earlier versions) */
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
  if (t && !tl_json_is_int(t, 0, UINT32_MAX)) bad = 1;
  else rec->key.sub = t ? (uint32_t)t->valuedouble : 0;
  const cJSON *stg = cJSON_GetObjectItemCaseSensitive(o, "st");
  if (stg && !tl_json_is_int(stg, 0, INT_MAX)) bad = 1;
  else rec->key.stage = stg ? (int)stg->valuedouble : 0;
  bad |= !rec->key.bench || !rec->key.model || !rec->key.variant || !rec->key.id;
  return bad;
}

tl_status tl_journal_files(const char *dir, char ***paths, int *n, tl_err *err) {
  char **names = NULL;
  int k = 0;
  tl_status st = list_files(dir, &names, &k);
  for (int i = 0; i < k && st == TL_OK; i++) {
    tl_buf p;
    tl_buf_init(&p);
    st = tl_buf_printf(&p, "%s/%s", dir, names[i]);
    free(names[i]);
    names[i] = st == TL_OK ? tl_buf_detach(&p) : NULL;
    tl_buf_release(&p);
  }
  *paths = NULL;
  *n = 0;
  if (st != TL_OK) {
    free_names(names, k);
    return tl_err_set(err, TL_ENOMEM, "out of memory listing the journal files of '%s'", dir);
  }
  *paths = names;
  *n = k;
  return TL_OK;
}


tl_status tl_journal_read_file(const char *path, const char *dir, int file, const char *job_hash, tl_journal_cb cb,
                               void *ctx, long *nrecs, long *nskipped, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, 0, err);
  if (st) return st;
  cJSON *o;
  tl_jl_result res;
  tl_err e;
  int header = 1;
  while (st == TL_OK && (res = tl_jsonl_next(&r, &o, &e)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) { st = tl_err_set(err, TL_EIO, "%s", e.msg); break; }
    if (res == TL_JL_BAD) { (*nskipped)++; continue; }
    if (header) {
      header = 0;
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "job");
      if (!cJSON_GetObjectItemCaseSensitive(o, "tally_journal") || !cJSON_IsString(h)) {
        st = tl_err_set(err, TL_EJOB, "%s: not a tally journal", r.path);
      } else if (!same_job(h->valuestring, job_hash)) {
        st = tl_err_set(err, TL_EJOB,
                        "%s belongs to another job (the job changed since it was written: its "
                        "benchmarks, models, seeds, parsers or what the engines are asked; an engine's "
                        "url, timeouts, concurrency, retries or health wait may change, as may the "
                        "file's layout); remove '%s' to start over", r.path, dir);
      }
      cJSON_Delete(o);
      continue;
    }
    tl_journal_rec rec;
    int bad = parse_rec(o, &rec);
    rec.file = file;
    rec.offset = r.line_off;
    if (bad) (*nskipped)++;
    else {
      (*nrecs)++;
      st = cb(ctx, &rec);
    }
    cJSON_Delete(o);
  }
  tl_jsonl_close(&r);
  return st;
}

tl_status tl_journal_read_all(const char *dir, const char *job_hash, tl_journal_cb cb, void *ctx,
                              long *nfiles, long *nrecs, long *nskipped, tl_err *err) {
  *nfiles = *nrecs = *nskipped = 0;
  int n = 0;
  char **names = NULL;
  tl_status st = tl_journal_files(dir, &names, &n, err);
  for (int f = 0; f < n && st == TL_OK; f++) {
    st = tl_journal_read_file(names[f], dir, f, job_hash, cb, ctx, nrecs, nskipped, err);
    if (st == TL_OK) (*nfiles)++;
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  return st;
}

tl_status tl_journal_remove(const char *dir, tl_err *err) {
  int n = 0;
  char **names = NULL;
  if (list_files(dir, &names, &n) != TL_OK)
    return tl_err_set(err, TL_ENOMEM, "out of memory listing the journal files of '%s'", dir);
  tl_status st = TL_OK;
  for (int i = 0; i < n; i++) {
    tl_buf p;
    tl_buf_init(&p);
    if (tl_buf_printf(&p, "%s/%s", dir, names[i]) != TL_OK) {
      if (st == TL_OK) st = tl_err_set(err, TL_ENOMEM, "out of memory removing the journal");
    } else if (unlink(p.data) != 0 && st == TL_OK)
      st = tl_err_set(err, TL_EIO, "cannot remove journal '%s': %s", p.data, strerror(errno));
    tl_buf_release(&p);
    free(names[i]);
  }
  free(names);
  if (st == TL_OK && rmdir(dir) != 0 && errno != ENOENT)
    st = tl_err_set(err, TL_EIO, "cannot remove the journal folder '%s': %s", dir, strerror(errno));
  return st;
}

void tl_jfiles_init(tl_jfiles *f) {
  memset(f, 0, sizeof *f);
  tl_buf_init(&f->line);
}

tl_status tl_jfiles_add(tl_jfiles *f, const char *path, int *index) {
  char **p = realloc(f->paths, (size_t)(f->n + 1) * sizeof *p);
  if (!p) return TL_ENOMEM;
  f->paths = p;
  int *fd = realloc(f->fd, (size_t)(f->n + 1) * sizeof *fd);
  if (!fd) return TL_ENOMEM;
  f->fd = fd;
  if (!(f->paths[f->n] = tl_strdup(path))) return TL_ENOMEM;
  f->fd[f->n] = -1;
  if (index) *index = f->n;
  f->n++;
  return TL_OK;
}

void tl_jfiles_release(tl_jfiles *f) {
  for (int i = 0; i < f->n; i++) {
    if (f->fd[i] >= 0) close(f->fd[i]);
    free(f->paths[i]);
  }
  free(f->paths);
  free(f->fd);
  tl_buf_release(&f->line);
  memset(f, 0, sizeof *f);
}

tl_status tl_jfiles_read(tl_jfiles *f, int file, uint64_t offset, tl_journal_rec *rec, cJSON **obj, tl_err *err) {
  *obj = NULL;
  if (file < 0 || file >= f->n) return tl_err_set(err, TL_EINTERNAL, "journal: no file %d", file);
  if (f->fd[file] < 0) {
    if (f->nopen >= TL_JFILES_MAX_OPEN) { /* a merge of many inputs: close another one first */
      for (int k = 0; k < f->n; k++, f->victim = (f->victim + 1) % f->n)
        if (f->fd[f->victim] >= 0 && f->victim != file) {
          close(f->fd[f->victim]);
          f->fd[f->victim] = -1;
          f->nopen--;
          break;
        }
    }
    if ((f->fd[file] = open(f->paths[file], O_RDONLY)) < 0)
      return tl_err_set(err, TL_EIO, "cannot read journal '%s': %s", f->paths[file], strerror(errno));
    f->nopen++;
  }
  tl_buf_reset(&f->line);
  char chunk[4096];
  uint64_t at = offset;
  for (;;) { /* up to the line's newline */
    ssize_t k = pread(f->fd[file], chunk, sizeof chunk, (off_t)at);
    if (k < 0) return tl_err_set(err, TL_EIO, "cannot read journal '%s': %s", f->paths[file], strerror(errno));
    if (k == 0) break;
    const char *nl = memchr(chunk, '\n', (size_t)k);
    size_t n = nl ? (size_t)(nl - chunk) : (size_t)k;
    if (tl_buf_append(&f->line, chunk, n)) return tl_err_set(err, TL_ENOMEM, "out of memory");
    if (nl) break;
    at += (uint64_t)k;
  }
  cJSON *o = f->line.data ? cJSON_ParseWithLength(f->line.data, f->line.len) : NULL;
  if (!o || parse_rec(o, rec)) {
    cJSON_Delete(o);
    return tl_err_set(err, TL_EIO, "journal '%s': the line at byte %llu changed since it was written",
                      f->paths[file], (unsigned long long)offset);
  }
  rec->file = file;
  rec->offset = offset;
  *obj = o;
  return TL_OK;
}
