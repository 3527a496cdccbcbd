/* journal.c - the resume journal (see journal.h). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
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
#include "replay.h"

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

/* The offset of the "tally_replay_file" line of answers file `path` (the engine's pointer, which
 * lives as long as the engine) in j's file: the one written before, or a new one written now. */
static tl_status path_decl(tl_journal *j, const char *path, uint64_t *at, tl_err *err) {
  if (j->npaths && j->paths[j->lastpath].key == path) {
    *at = j->paths[j->lastpath].at;
    return TL_OK;
  }
  for (int k = 0; k < j->npaths; k++)
    if (j->paths[k].key == path || strcmp(j->paths[k].path, path) == 0) {
      j->paths[k].key = path;
      j->lastpath = k;
      *at = j->paths[k].at;
      return TL_OK;
    }
  struct tl_jpath *p = realloc(j->paths, (size_t)(j->npaths + 1) * sizeof *p);
  if (!p) return tl_err_set(err, TL_ENOMEM, "out of memory");
  j->paths = p;
  char *real = realpath(path, NULL); /* the file a resume or merge from another folder opens */
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_append(&b, "{", 1);
  put_field(&b, "tally_replay_file", path, 1);
  put_field(&b, "at", real ? real : path, 0);
  tl_buf_append(&b, "}\n", 2);
  free(real);
  char *copy = tl_strdup(path);
  if (!b.data || !copy) {
    free(copy);
    tl_buf_release(&b);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  if (fwrite(b.data, 1, b.len, j->fp) != b.len) {
    free(copy);
    tl_buf_release(&b);
    return tl_err_set(err, TL_EIO, "cannot write journal '%s': %s", j->path, strerror(errno));
  }
  p[j->npaths] = (struct tl_jpath){path, copy, j->pos};
  *at = j->pos;
  j->pos += b.len;
  j->lastpath = j->npaths++;
  tl_buf_release(&b);
  return TL_OK;
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
  const tl_reply_ref *rf = &rep->ref;
  if (rf->src && rep->text && !rep->prompt && !rep->failed && rf->path) { /* named, not copied */
    uint64_t at = 0;
    tl_status st = path_decl(j, rf->path, &at, err);
    if (st) return st;
    char hex[16]; /* the checksum's 16 hex digits, without printf (once per unit) */
    for (int k = 0; k < 16; k++) hex[k] = "0123456789abcdef"[(rf->sum >> (60 - 4 * k)) & 15];
    tl_buf_append(b, ",\"ref\":[", 8);
    tl_json_num(b, (double)at);
    tl_buf_append(b, ",", 1);
    tl_json_num(b, (double)rf->off);
    tl_buf_append(b, ",", 1);
    tl_json_num(b, (double)rf->len);
    tl_buf_append(b, ",\"", 2);
    tl_buf_append(b, hex, 16);
    tl_buf_append(b, "\",", 2);
    tl_json_num(b, (double)rf->resp);
    tl_buf_append(b, ",", 1);
    tl_json_num(b, (double)rf->line);
    tl_buf_append(b, ",", 1);
    tl_json_num(b, (double)rf->tlen);
    tl_buf_append(b, "]", 1);
  } else {
    put_field(b, "text", rep->text, 0);
    put_field(b, "prompt", rep->prompt, 0);
    put_field(b, "source", rep->source, 0);
  }
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
  for (int k = 0; k < j->npaths; k++) free(j->paths[k].path);
  free(j->paths);
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

/* A record's "ref": [P, off, len, "sum", resp, line, tlen] (journal.h) into rec. 0 = ok, 1 =
 * malformed. */
static int parse_ref(const cJSON *rf, tl_journal_rec *rec) {
  if (!cJSON_IsArray(rf) || cJSON_GetArraySize(rf) != 7) return 1;
  const double lim[7] = {(double)(1ULL << 52), (double)(1ULL << 48), UINT32_MAX, 0, UINT32_MAX, UINT32_MAX,
                         (double)(1ULL << 52)};
  uint64_t v[7] = {0};
  int k = 0;
  for (const cJSON *e = rf->child; e; e = e->next, k++) {
    if (k == 3) {
      char *end = NULL;
      if (!cJSON_IsString(e) || strlen(e->valuestring) != 16) return 1;
      v[3] = (uint64_t)strtoull(e->valuestring, &end, 16);
      if (*end) return 1;
    } else if (!tl_json_is_int(e, 0, lim[k])) {
      return 1;
    } else {
      v[k] = (uint64_t)e->valuedouble;
    }
  }
  rec->has_ref = 1;
  rec->ref_at = v[0];
  rec->ref = (tl_reply_ref){NULL, v[1], v[3], 1, (uint32_t)v[2], (uint32_t)v[4], (uint32_t)v[5], v[6]};
  return 0;
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
  const cJSON *rf = cJSON_GetObjectItemCaseSensitive(o, "ref");
  if (rf) { /* its text, prompt and source are read back from the answers file */
    bad |= cJSON_GetObjectItemCaseSensitive(o, "text") || cJSON_GetObjectItemCaseSensitive(o, "prompt") ||
           cJSON_GetObjectItemCaseSensitive(o, "source") || parse_ref(rf, rec);
  } else {
    rec->text = str_or_null(o, "text", &bad);
    rec->prompt = str_or_null(o, "prompt", &bad);
    rec->source = str_or_null(o, "source", &bad);
  }
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


/* ---- references to answers files (journal.h): their "tally_replay_file" lines, and the texts
 * read back ---- */

static void jrefs_init(tl_jrefs *x) {
  memset(x, 0, sizeof *x);
  tl_buf_init(&x->line);
  tl_buf_init(&x->src);
  for (int k = 0; k < TL_JREFS_RA; k++) tl_rdahead_init(&x->ra[k]);
}

static void jrefs_release(tl_jrefs *x) {
  for (int k = 0; k < x->ndecl; k++) free(x->decl[k].path);
  for (int k = 0; k < x->nreal; k++) {
    if (x->fd[k] >= 0) close(x->fd[k]);
    free(x->real[k]);
  }
  free(x->decl);
  free(x->real);
  free(x->fd);
  tl_buf_release(&x->line);
  tl_buf_release(&x->src);
  free(x->text);
  for (int k = 0; k < TL_JREFS_RA; k++) tl_rdahead_release(&x->ra[k]);
  memset(x, 0, sizeof *x);
}

/* The len bytes at off of answers file `real` (descriptor fd), through the read-aheads (see
 * tl_jrefs); NULL when they cannot be read (*nomem = 1: out of memory). A read-ahead that holds
 * them, or one on the same file whose bytes end at most 64 KiB before them (its run goes on),
 * serves; else the least recently used one is refilled from off. */
static const char *jrefs_bytes(tl_jrefs *x, int real, int fd, uint64_t off, size_t len, int *nomem) {
  int pick = -1, lru = 0;
  x->ticks++;
  for (int k = 0; k < TL_JREFS_RA && pick < 0; k++) {
    const tl_rdahead *a = &x->ra[k];
    if (tl_rdahead_holds(a, real, off, len) ||
        (a->key == real && off >= a->off + a->len && off - (a->off + a->len) <= ((uint64_t)1 << 16)))
      pick = k;
    else if (x->ra_used[k] < x->ra_used[lru])
      lru = k;
  }
  if (pick < 0) pick = lru;
  x->ra_used[pick] = x->ticks;
  return tl_rdahead_at(&x->ra[pick], real, fd, off, len, nomem);
}

/* The declaration of (journal file, offset at): its index, or -1. */
static int jrefs_find(tl_jrefs *x, int file, uint64_t at) {
  if (x->ndecl && x->decl[x->last].file == file && x->decl[x->last].at == at) return x->last;
  for (int k = 0; k < x->ndecl; k++)
    if (x->decl[k].file == file && x->decl[k].at == at) return x->last = k;
  return -1;
}

/* Notes the "tally_replay_file" line o at (file, at). 0, 1 when it is malformed, -1 when out of
 * memory. */
static int jrefs_decl(tl_jrefs *x, int file, uint64_t at, const cJSON *o) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "tally_replay_file");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "at");
  if (!cJSON_IsString(p) || !cJSON_IsString(a)) return 1;
  if (jrefs_find(x, file, at) >= 0) return 0;
  int r = 0;
  while (r < x->nreal && strcmp(x->real[r], a->valuestring) != 0) r++;
  if (r == x->nreal) {
    char **rp = realloc(x->real, (size_t)(r + 1) * sizeof *rp);
    if (rp) x->real = rp;
    int *fd = rp ? realloc(x->fd, (size_t)(r + 1) * sizeof *fd) : NULL;
    if (fd) x->fd = fd;
    if (!fd || !(x->real[r] = tl_strdup(a->valuestring))) return -1;
    x->fd[r] = -1;
    x->nreal++;
  }
  struct tl_jdecl *d = realloc(x->decl, (size_t)(x->ndecl + 1) * sizeof *d);
  if (!d) return -1;
  x->decl = d;
  if (!(d[x->ndecl].path = tl_strdup(p->valuestring))) return -1;
  d[x->ndecl].file = file;
  d[x->ndecl].at = at;
  d[x->ndecl].real = r;
  x->last = x->ndecl++;
  return 0;
}

/* Adds a string member k to o, taking `owned` (malloc'd: cJSON's hooks are malloc and free)
 * when it is not NULL, else copying v. The new item, NULL when out of memory. */
static cJSON *add_text(cJSON *o, const char *k, char *owned, const char *v) {
  cJSON *it = cJSON_CreateString(owned ? "" : v);
  if (!it) return free(owned), NULL;
  if (owned) {
    cJSON_free(it->valuestring);
    it->valuestring = owned;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(o, k);
  cJSON_AddItemToObject(o, k, it);
  return it;
}

/* A referencing record's text and source, read back from its answers file (declaration d) into
 * o (the record's object; NULL: into x, until the next record) and rec; a line that is not the
 * one referenced makes rec stale (no text). TL_ENOMEM when out of memory. */
static tl_status jrefs_resolve(tl_jrefs *x, int d, cJSON *o, tl_journal_rec *rec) {
  const struct tl_jdecl *dc = &x->decl[d];
  int *fd = &x->fd[dc->real];
  if (*fd < 0) {
    if (x->nopen >= TL_JFILES_MAX_OPEN) /* many inputs' answers files: close another one */
      for (int k = 0; k < x->nreal; k++, x->victim = (x->victim + 1) % x->nreal)
        if (x->fd[x->victim] >= 0 && x->victim != dc->real) {
          close(x->fd[x->victim]);
          x->fd[x->victim] = -1;
          x->nopen--;
          break;
        }
    *fd = open(x->real[dc->real], O_RDONLY);
    if (*fd < 0) *fd = open(dc->path, O_RDONLY); /* moved: the name the job gave (relative to here) */
    if (*fd >= 0) x->nopen++;
  }
  char *text = NULL;
  int rb = TL_REPLAY_REF_CHANGED, nomem = 0;
  const char *line = *fd >= 0 ? jrefs_bytes(x, dc->real, *fd, rec->ref.off, rec->ref.len, &nomem) : NULL;
  if (line) rb = tl_replay_ref_parse(line, &rec->ref, &text);
  if (rb == TL_REPLAY_REF_NOMEM || nomem) return free(text), TL_ENOMEM;
  char num[24]; /* the source the engine gave, "<path>:<line>" (its source_of), without printf */
  int nd = 0;
  for (unsigned long ln = rec->ref.line; nd == 0 || ln; ln /= 10) num[sizeof num - 1 - nd++] = (char)('0' + ln % 10);
  tl_buf_reset(&x->src);
  if (tl_buf_append(&x->src, dc->path, strlen(dc->path)) || tl_buf_append(&x->src, ":", 1) ||
      tl_buf_append(&x->src, num + sizeof num - nd, (size_t)nd))
    return free(text), TL_ENOMEM;
  rec->stale = !text;
  rec->ref.path = dc->path;
  if (!o) { /* the strings live in x until the next record (tl_journal_read_file's callback) */
    free(x->text);
    x->text = text;
    rec->source = x->src.data;
    rec->text = text;
    return TL_OK;
  }
  const cJSON *src = add_text(o, "source", NULL, x->src.data);
  const cJSON *txt = text ? add_text(o, "text", text, NULL) : NULL;
  if (!src || (text && !txt)) return TL_ENOMEM;
  rec->source = src->valuestring;
  rec->text = txt ? txt->valuestring : NULL;
  return TL_OK;
}

tl_status tl_journal_read_file(const char *path, const char *dir, int file, const char *job_hash, tl_journal_cb cb,
                               void *ctx, long *nrecs, long *nskipped, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, 0, err);
  if (st) return st;
  tl_jrefs refs;
  jrefs_init(&refs);
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
    if (cJSON_GetObjectItemCaseSensitive(o, "tally_replay_file")) { /* what later lines reference */
      int k = jrefs_decl(&refs, file, r.line_off, o);
      if (k < 0) st = tl_err_set(err, TL_ENOMEM, "out of memory reading the journal");
      else if (k) (*nskipped)++;
      cJSON_Delete(o);
      continue;
    }
    tl_journal_rec rec;
    int bad = parse_rec(o, &rec);
    rec.file = file;
    rec.offset = r.line_off;
    int d = !bad && rec.has_ref ? jrefs_find(&refs, file, rec.ref_at) : 0;
    if (d < 0) bad = 1; /* a reference without its file's line: malformed */
    else if (!bad && rec.has_ref && jrefs_resolve(&refs, d, NULL, &rec))
      st = tl_err_set(err, TL_ENOMEM, "out of memory reading the journal");
    if (st) {
    } else if (bad) (*nskipped)++;
    else {
      (*nrecs)++;
      st = cb(ctx, &rec);
    }
    cJSON_Delete(o);
  }
  jrefs_release(&refs);
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
  jrefs_init(&f->refs);
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
  jrefs_release(&f->refs);
  memset(f, 0, sizeof *f);
}

/* The line at offset of journal file `file` into f->line (without its newline). */
static tl_status jfiles_line(tl_jfiles *f, int file, uint64_t offset, tl_err *err) {
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
  return TL_OK;
}

/* The declaration at offset `at` of journal file `file`: *d its index in f->refs, read now when
 * it was not. TL_EIO or TL_ENOMEM (err set) when it cannot be. */
static tl_status jfiles_decl(tl_jfiles *f, int file, uint64_t at, int *d, tl_err *err) {
  if ((*d = jrefs_find(&f->refs, file, at)) >= 0) return TL_OK;
  tl_status st = jfiles_line(f, file, at, err);
  if (st) return st;
  cJSON *o = f->line.data ? cJSON_ParseWithLength(f->line.data, f->line.len) : NULL;
  int k = o ? jrefs_decl(&f->refs, file, at, o) : 1;
  cJSON_Delete(o);
  if (k < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if (k)
    return tl_err_set(err, TL_EIO, "journal '%s': the line at byte %llu changed since it was written", f->paths[file],
                      (unsigned long long)at);
  *d = jrefs_find(&f->refs, file, at);
  return TL_OK;
}

tl_status tl_jfiles_read(tl_jfiles *f, int file, uint64_t offset, tl_journal_rec *rec, cJSON **obj, tl_err *err) {
  *obj = NULL;
  if (file < 0 || file >= f->n) return tl_err_set(err, TL_EINTERNAL, "journal: no file %d", file);
  tl_status st = jfiles_line(f, file, offset, err);
  if (st) return st;
  cJSON *o = f->line.data ? cJSON_ParseWithLength(f->line.data, f->line.len) : NULL;
  if (!o || parse_rec(o, rec)) {
    cJSON_Delete(o);
    return tl_err_set(err, TL_EIO, "journal '%s': the line at byte %llu changed since it was written",
                      f->paths[file], (unsigned long long)offset);
  }
  if (rec->has_ref) {
    int d;
    if ((st = jfiles_decl(f, file, rec->ref_at, &d, err)) == TL_OK && jrefs_resolve(&f->refs, d, o, rec))
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (st) {
      cJSON_Delete(o);
      return st;
    }
    if (rec->stale) {
      tl_err_set(err, TL_EIO, "journal '%s': the reply its line at byte %llu names, %s, changed since it was "
                 "journaled (the answers file was modified)", f->paths[file], (unsigned long long)offset, rec->source);
      cJSON_Delete(o);
      return TL_EIO;
    }
  }
  rec->file = file;
  rec->offset = offset;
  *obj = o;
  return TL_OK;
}
