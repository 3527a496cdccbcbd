/* replay.c - the replay engine (see replay.h). The engine keeps an index, not the texts: per
 * accepted line one `entry` (36 bytes: the key's hash, where the line is and where its response
 * lies in it, its checksum). While
 * the files load, an open-addressing table of entry numbers finds the entries of a hash (to tell
 * a duplicate from a collision, the earlier line is read back and the real keys compared); when
 * loading ends the table is dropped and the entries are sorted by hash, and a request finds its
 * entries through a directory of the hashes' top bits (about one entry a bucket: one or two
 * cache misses where a binary search over 150,000 entries took 17, 3% of a replay run). A request is answered at submit time, by reading its line back
 * (through a read-ahead buffer when the file is read in order), and queued. The engine names
 * no benchmark: what a benchmark allows (its variant names) comes with each source. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "rdahead.h"
#include "replay.h"
#include "tally/bench.h"
#include "tally/jsonl.h"
#include "tally/str.h"
#include "tally/strmap.h"

#define MAX_SOURCES 65536u                 /* the source number takes 16 bits of an entry */
#define MAX_OFFSET ((uint64_t)1 << 48)     /* the offset takes the other 48 */
#define RA_GAP ((uint64_t)1 << 16)
#define RA_STREAMS 4

/* One source: what its lines' keys default to, and the open file they are read back from. */
typedef struct {
  char *path;                /* owned: the file's name as messages give it */
  const char *bench, *model, *variant; /* in the pool; model may be NULL */
  const char **variants;     /* owned array of pooled names, NULL-terminated; NULL = any */
  int seed, stage;
  tl_replay_sub_fn sub_of;   /* tl_replay_open_subs's, NULL = none */
  void *sub_ctx;
  int fd;                    /* -1 when not open */
  uint64_t base;             /* the file offset the reader started at (0 but for stdin) */
} source;

/* One accepted line. uint32_t halves keep it at 36 bytes with 4-byte alignment. */
typedef struct {
  uint32_t h[2];   /* the key's hash: low, high half */
  uint32_t pos[2]; /* the line's byte offset: low 32 bits; high 16 bits | source << 16 */
  uint32_t len;    /* bytes of the line (without its "\r\n"/"\n") */
  uint32_t line;   /* 1-based line number */
  uint32_t sum[2]; /* 64-bit checksum of the line's bytes: low, high half */
  uint32_t resp;   /* where the response's JSON string starts in the line (its opening quote),
                      when it is a string member of the line's object and the line has no
                      prompt; 0 otherwise (a line starts with '{') */
} entry;

struct tl_replay {
  tl_engine base;
  source *src;
  size_t nsrc;
  entry *e;
  size_t n, cap;
  uint32_t *tab;       /* while loading: entry number + 1 per slot, 0 = empty */
  uint32_t *dir;       /* once loaded: [2^dbits + 1], dir[b] = the first entry whose hash's top
                          dbits bits are >= b (NULL when there are no entries) */
  int dbits;
  size_t tcap;         /* slots (a power of two), or 0 */
  tl_strmap pool;      /* interned bench, model and variant names (the map owns the copies) */
  uint64_t (*hash)(const tl_unit_key *key);
  char *lbuf;          /* a line read back */
  size_t lcap;
  /* Read-ahead: requests come in key order, and answer files are mostly written in that order,
   * or in a few interleaved runs of it (a file in the items' order, when the ids do not sort
   * that way: a question's variants .0, .1, .2 listed in three blocks). Each of RA_STREAMS
   * streams follows one run: a line that starts at most RA_GAP bytes after the end of the last
   * line a stream read from its file is read through that stream's 1 MiB read-ahead (one pread
   * for ~1,500 lines, not one each); any other line is read on its own, and the least recently
   * used stream then follows on from it. */
  struct ra_stream {
    tl_rdahead ra;     /* its key: the source number */
    long f;            /* the source it follows, -1 none */
    uint64_t end;      /* the end of the last line it read */
    uint64_t used;     /* when it was last used (a request count) */
  } ras[RA_STREAMS];
  uint64_t ticks;
  int ra_on;           /* 0 while loading (duplicates are read back on their own) */
  tl_eng_reply *queue; /* FIFO of replies */
  double *ready;       /* [qcap] time each reply becomes ready (CLOCK_MONOTONIC seconds) */
  size_t qhead, qlen, qcap;
  int latency_ms;
  size_t served, served_fast;
  tl_replay_sub_fn sub_of;   /* tl_replay_open_subs's, NULL = none */
  void *sub_ctx;
};

static const char *nz(const char *s) { return s ? s : ""; }

/* ---- hashing ---- */

static uint64_t fmix64(uint64_t h) { /* MurmurHash3's finalizer: every bit affects every bit */
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) { /* FNV-1a 64 */
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v) { return fnv(h, &v, sizeof v); }

static uint64_t fnv_str(uint64_t h, const char *s) { /* length-prefixed: "ab"+"c" != "a"+"bc" */
  size_t n = strlen(nz(s));
  return fnv(fnv_u64(h, (uint64_t)n), nz(s), n);
}

/* The hash of a full key: FNV-1a 64 over its fields, each string with its length, then mixed. */
static uint64_t key_hash(const tl_unit_key *k) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv_str(h, k->bench);
  h = fnv_u64(h, (uint64_t)(int64_t)k->stage);
  h = fnv_str(h, k->model);
  h = fnv_str(h, k->variant);
  h = fnv_u64(h, (uint64_t)(int64_t)k->seed);
  h = fnv_str(h, k->id);
  h = fnv_u64(h, (uint64_t)k->sub);
  return fmix64(h);
}

uint64_t tl_replay_key_hash(const tl_unit_key *key) { return key_hash(key); }

static uint64_t (*g_test_hash)(const tl_unit_key *key);
void tl_replay_test_hash(uint64_t (*fn)(const tl_unit_key *key)) { g_test_hash = fn; }

/* The checksum of a line's bytes (a change detector): 64 bits, so a line read back whose sum
 * matches is, but for a chance of 2^-64, the line loaded, which was checked then (UTF-8, no NUL,
 * JSON): read_back does not check those again. */
static uint64_t line_sum(const char *p, size_t n) { return tl_hash64(p, n); }
static uint64_t ent_sum(const entry *e) { return (uint64_t)e->sum[1] << 32 | e->sum[0]; }

static uint64_t ent_hash(const entry *e) { return (uint64_t)e->h[1] << 32 | e->h[0]; }
static uint64_t ent_off(const entry *e) { return (uint64_t)(e->pos[1] & 0xffffu) << 32 | e->pos[0]; }
static size_t ent_src(const entry *e) { return e->pos[1] >> 16; }

static int key_equal(const tl_unit_key *a, const tl_unit_key *b) {
  return a->stage == b->stage && a->seed == b->seed && a->sub == b->sub &&
         strcmp(nz(a->id), nz(b->id)) == 0 && strcmp(nz(a->model), nz(b->model)) == 0 &&
         strcmp(nz(a->variant), nz(b->variant)) == 0 && strcmp(nz(a->bench), nz(b->bench)) == 0;
}

/* ---- lines ---- */

/* A line's key and reply, borrowed from its cJSON tree and its source. */
typedef struct {
  tl_unit_key key;
  const cJSON *resp;  /* a string or null */
  const char *prompt; /* NULL when none */
  char idbuf[320];    /* the id a foreign format makes (a LAVE-release row's "<dataset>:<qid>")
                         or an integer id's decimal text; key.id points here */
} line_view;

/* The message for a "prompt_variant" that is none of `names` (NULL-terminated, not NULL):
 * `field 'prompt_variant' is not "a"`, `... "a" or "b"`, `... "a", "b" or "c"`. */
static void variant_msg(const char *const *names, char *msg, size_t msz) {
  size_t n = 0;
  while (names[n]) n++;
  if (n == 0) {
    snprintf(msg, msz, "field 'prompt_variant' is given but the benchmark has no prompt variants");
    return;
  }
  int len = snprintf(msg, msz, "field 'prompt_variant' is not");
  for (size_t i = 0; i < n && len >= 0 && (size_t)len < msz; i++) {
    const char *sep = i == 0 ? " " : i + 1 == n ? " or " : ", ";
    int w = snprintf(msg + len, msz - (size_t)len, "%s\"%s\"", sep, names[i]);
    if (w < 0) break;
    len += w;
  }
}

/* Validates one line into v (strings borrowed from o and s). Returns 0 ok, else fills
 * kind/msg. */
static int read_answer(const cJSON *o, const source *s, line_view *v, tl_in_kind *kind, char *msg,
                       size_t msz) {
  memset(v, 0, sizeof *v);
  if (!cJSON_IsObject(o)) {
    *kind = TL_IN_BAD_FIELD;
    snprintf(msg, msz, "answer line is not a JSON object");
    return -1;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(o, "response");
  const cJSON *prompt = NULL;
  const char *own_id = NULL; /* the item id a foreign format makes (in v->idbuf), else the line's "id" */
  if (!resp) { /* another tool's line? the registry knows which module reads its format */
    const tl_answer_format *f = tl_bench_answer_format(o, NULL);
    if (f) {
      tl_answer_line fl = {NULL, NULL, NULL};
      *kind = TL_IN_BAD_FIELD;
      if (f->read(o, &fl, v->idbuf, sizeof v->idbuf, msg, msz) != 0) return -1;
      resp = fl.resp;
      prompt = fl.prompt;
      own_id = fl.id;
    }
  }
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(o, "prompt_variant");
  const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
  const cJSON *turn_id = cJSON_GetObjectItemCaseSensitive(o, "turn_id");
  const cJSON *sample = cJSON_GetObjectItemCaseSensitive(o, "sample");
  *kind = TL_IN_MISSING_FIELD;
  if (!id && !own_id) return snprintf(msg, msz, "missing field 'id'"), -1;
  if (!resp) return snprintf(msg, msz, "missing field 'response'"), -1;
  if (!model && !s->model)
    return snprintf(msg, msz, "missing field 'model' (and the job gives no default model for this file)"), -1;
  *kind = TL_IN_BAD_FIELD;
  const char *idtext = own_id;
  if (!own_id && tl_json_is_int(id, -9007199254740992.0, 9007199254740992.0)) { /* an integer id: its decimal text */
    snprintf(v->idbuf, sizeof v->idbuf, "%lld", (long long)id->valuedouble);
    idtext = v->idbuf;
  } else if (!own_id) {
    if (!cJSON_IsString(id) || !*id->valuestring)
      return snprintf(msg, msz, "field 'id' is not a non-empty string or an integer"), -1;
    idtext = id->valuestring;
  }
  if (!cJSON_IsString(resp) && !cJSON_IsNull(resp))
    return snprintf(msg, msz, "field 'response' is not a string or null"), -1;
  if (model && (!cJSON_IsString(model) || !*model->valuestring))
    return snprintf(msg, msz, "field 'model' is not a non-empty string"), -1;
  if (seed && !tl_json_is_int(seed, INT_MIN, INT_MAX))
    return snprintf(msg, msz, "field 'seed' is not an integer"), -1;
  const char *variant = s->variant;
  if (var) {
    if (s->variants) {
      variant = NULL;
      if (cJSON_IsString(var))
        for (const char *const *n = s->variants; *n; n++)
          if (strcmp(*n, var->valuestring) == 0) variant = *n;
      if (!variant) return variant_msg(s->variants, msg, msz), -1;
    } else {
      if (!cJSON_IsString(var) || !*var->valuestring)
        return snprintf(msg, msz, "field 'prompt_variant' is not a non-empty string"), -1;
      variant = var->valuestring;
    }
  }
  if (turn && !tl_json_is_int(turn, 0, UINT32_MAX))
    return snprintf(msg, msz, "field 'turn' is not an integer >= 0"), -1;
  if (turn_id && !tl_json_is_int(turn_id, 1, UINT32_MAX))
    return snprintf(msg, msz, "field 'turn_id' is not an integer >= 1 (the dialogue's turn, from 1)"), -1;
  const int64_t tv = turn ? (int64_t)turn->valuedouble : -1, tiv = turn_id ? (int64_t)turn_id->valuedouble : -1;
  uint32_t sub = tv >= 0 ? (uint32_t)tv : 0;
  if (s->sub_of) {
    if (s->sub_of(s->sub_ctx, s->bench, idtext, tv, tiv, &sub, msg, msz) != 0) return -1;
  } else if (tiv >= 0) {
    if (tv >= 0 && tv + 1 != tiv)
      return snprintf(msg, msz, "fields 'turn' (%lld, from 0) and 'turn_id' (%lld, from 1) name different turns",
                      (long long)tv, (long long)tiv), -1;
    sub = (uint32_t)(tiv - 1);
  }
  if (sample && s->stage == 0)
    return snprintf(msg, msz, "field 'sample' belongs to judgment lines (the judge's sample j), not to answers"), -1;
  if (sample && !tl_json_is_int(sample, 0, TL_MAX_STAGES - 2))
    return snprintf(msg, msz, "field 'sample' is not an integer from 0 to %d", TL_MAX_STAGES - 2), -1;
  if (prompt && !cJSON_IsString(prompt)) prompt = NULL;
  v->key.bench = s->bench;
  v->key.stage = s->stage + (sample ? (int)sample->valuedouble : 0); /* judge sample j: stage 1 + j */
  v->key.id = idtext;
  v->key.model = model ? model->valuestring : s->model;
  v->key.variant = variant;
  v->key.seed = seed ? (int)seed->valuedouble : s->seed;
  v->key.sub = sub;
  v->resp = resp;
  v->prompt = prompt ? prompt->valuestring : NULL;
  return 0;
}

/* What reading a line back gave. */
enum { RB_OK = 0, RB_CHANGED = 1, RB_NOMEM = 2 };

/* Reads entry x's line back and parses it as loading did. RB_OK: *o (caller deletes) and *v
 * are set. RB_CHANGED: the line is not what was loaded (read error, file cut short, other bytes
 * by its checksum, not JSON, another key). Bytes with the checksum of the loaded line are taken
 * to be those bytes, which passed tl_jsonl_next's checks at load time; of those checks only the
 * NUL byte and UTF-8 ones are run again (cheap, and the parsers rely on valid UTF-8), not
 * tl_json_check (a third of the cost of a request). */
/* The bytes of entry x's line: from the read-ahead buffer, or read. NULL on a read error or a
 * file cut short (*nomem = 1 when out of memory). */
static const char *line_bytes(tl_replay *r, const entry *x, int *nomem) {
  const size_t f = ent_src(x), len = x->len;
  const uint64_t off = ent_off(x);
  const source *s = &r->src[f];
  *nomem = 0;
  r->ticks++;
  struct ra_stream *lru = NULL;
  for (int k = 0; r->ra_on && k < RA_STREAMS; k++) {
    struct ra_stream *q = &r->ras[k];
    const int in_order = q->f == (long)f && off >= q->end && off - q->end <= RA_GAP;
    if (in_order || tl_rdahead_holds(&q->ra, (long)f, off, len)) {
      const char *p = tl_rdahead_at(&q->ra, (long)f, s->fd, off, len, nomem);
      if (p) {
        q->end = off + len;
        q->used = r->ticks;
      }
      return p;
    }
    if (!lru || q->used < lru->used) lru = q;
  }
  if (len + 1 > r->lcap) {
    char *b = realloc(r->lbuf, len + 1);
    if (!b) return *nomem = 1, NULL;
    r->lbuf = b;
    r->lcap = len + 1;
  }
  if (tl_pread_full(s->fd, r->lbuf, len, off) != 0) return NULL;
  if (lru) { /* follows on from here */
    lru->f = (long)f;
    lru->end = off + len;
    lru->used = r->ticks;
  }
  return r->lbuf;
}

/* Entry x's line as it was loaded (its checksum matches): its x->len bytes; NULL with *rb set
 * (RB_CHANGED, RB_NOMEM) when it cannot be read or is not that line any more. */
static const char *checked_line(tl_replay *r, const entry *x, int *rb) {
  int nomem;
  const char *buf = line_bytes(r, x, &nomem);
  if (!buf) return *rb = nomem ? RB_NOMEM : RB_CHANGED, NULL;
  if (line_sum(buf, x->len) != ent_sum(x)) return *rb = RB_CHANGED, NULL;
  return buf;
}

static int read_back(tl_replay *r, const entry *x, cJSON **o, line_view *v) {
  *o = NULL;
  const source *s = &r->src[ent_src(x)];
  size_t len = x->len;
  int rb;
  const char *buf = checked_line(r, x, &rb);
  if (!buf) return rb;
  const char *end = NULL;
  cJSON *p = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  while (p && end < buf + len && (unsigned char)*end <= 32) end++; /* cJSON's whitespace */
  if (p && end != buf + len) { /* as loading required: nothing after the value */
    cJSON_Delete(p);
    p = NULL;
  }
  if (!p) return RB_CHANGED; /* also when cJSON ran out of memory: never a wrong text */
  tl_in_kind kind;
  char msg[256];
  if (read_answer(p, s, v, &kind, msg, sizeof msg) != 0 ||
      r->hash(&v->key) != ent_hash(x)) {
    cJSON_Delete(p);
    return RB_CHANGED;
  }
  *o = p;
  return RB_OK;
}

/* ---- the engine ---- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tl_replay_set_latency(tl_replay *r, int ms) { r->latency_ms = ms; }

/* The first entry (of the sorted index) whose hash is >= h: a binary search within h's bucket of
 * the directory (whose end is the next bucket's first entry, so an h above every hash of its
 * bucket gets that). */
static size_t lower_bound(const tl_replay *r, uint64_t h) {
  size_t lo = 0, hi = r->n;
  if (r->dir) {
    const uint64_t b = r->dbits ? h >> (64 - r->dbits) : 0;
    lo = r->dir[b];
    hi = r->dir[b + 1];
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ent_hash(&r->e[mid]) < h) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* "<path>:<line>" of entry x, without printf (once per request); NULL when out of memory. */
static char *source_of(const tl_replay *r, const entry *x) {
  char num[24];
  int nd = 0;
  for (unsigned long ln = x->line; nd == 0 || ln; ln /= 10) num[sizeof num - 1 - nd++] = (char)('0' + ln % 10);
  const char *path = r->src[ent_src(x)].path;
  tl_buf b;
  tl_buf_init(&b);
  int bad = tl_buf_append(&b, path, strlen(path)) != TL_OK || tl_buf_append(&b, ":", 1) != TL_OK ||
            tl_buf_append(&b, num + sizeof num - nd, (size_t)nd) != TL_OK;
  if (bad) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

/* The fast way to entry x's text, when the key's hash is the real one (not a test's), x is the
 * only entry of its hash, and its line's response is a string member it knows the place of:
 * the line is read back and checked against its checksum as read_back does, and only the
 * response's JSON string is parsed (not the whole line, whose key the checksum vouches for: the
 * request's key has x's 64-bit hash, and x's is the only key of the files with it). Returns
 * RB_OK with *text set (caller frees), RB_CHANGED or RB_NOMEM; -1 when x does not qualify. */
/* The JSON string that starts at byte resp of the len bytes of a line (buf), as a malloc'd
 * text: RB_OK, RB_CHANGED (not a string there), RB_NOMEM. What submit and a reference's read-back
 * (tl_replay_ref_read) both parse. */
static int resp_string(const char *buf, size_t len, size_t resp, char **text) {
  *text = NULL;
  if (resp == 0 || resp >= len) return RB_CHANGED;
  /* A string without escapes (most replies) is its bytes up to the closing quote: what cJSON's
   * parse gives for it (it copies unescaped bytes as they are), without its item and parse. */
  const char *q = buf + resp + 1, *e = buf + len;
  const char *p = q;
  while (p < e && *p != '"' && *p != '\\') p++;
  if (p < e && *p == '"') {
    const size_t n = (size_t)(p - q);
    if (!(*text = malloc(n + 1))) return RB_NOMEM;
    memcpy(*text, q, n);
    (*text)[n] = 0;
    return RB_OK;
  }
  const char *end = NULL;
  cJSON *s = cJSON_ParseWithLengthOpts(buf + resp, len - resp, &end, 0);
  if (!cJSON_IsString(s)) { /* cannot be, for the line loaded; also when cJSON ran out of memory */
    int rb = s ? RB_CHANGED : RB_NOMEM;
    cJSON_Delete(s);
    return rb;
  }
  *text = s->valuestring; /* taken from the item: cJSON_Delete leaves a NULL valuestring */
  s->valuestring = NULL;
  cJSON_Delete(s);
  return RB_OK;
}

static int fast_text(tl_replay *r, const entry *x, char **text) {
  *text = NULL;
  if (!x->resp || r->hash != key_hash) return -1;
  int rb;
  const char *buf = checked_line(r, x, &rb);
  if (!buf) return rb;
  return resp_string(buf, x->len, x->resp, text);
}

/* Where entry x's text lies (the fast path's reply, whose text is x's response string). */
static void ref_of(const tl_replay *r, const entry *x, const char *text, tl_reply_ref *ref) {
  ref->path = r->src[ent_src(x)].path;
  ref->off = ent_off(x);
  ref->sum = ent_sum(x);
  ref->src = (uint32_t)ent_src(x) + 1;
  ref->len = x->len;
  ref->resp = x->resp;
  ref->line = x->line;
  ref->tlen = strlen(text);
}

int tl_replay_ref_read(int fd, const tl_reply_ref *ref, tl_buf *buf, char **text) {
  *text = NULL;
  if (!ref->src || ref->resp == 0 || ref->resp >= ref->len) return RB_CHANGED;
  tl_buf_reset(buf);
  if (tl_buf_extend(buf, (size_t)ref->len + 1) != TL_OK) return RB_NOMEM;
  if (tl_pread_full(fd, buf->data, ref->len, ref->off) != 0) return RB_CHANGED;
  return tl_replay_ref_parse(buf->data, ref, text);
}

int tl_replay_ref_parse(const char *line, const tl_reply_ref *ref, char **text) {
  *text = NULL;
  if (!ref->src || ref->resp == 0 || ref->resp >= ref->len) return RB_CHANGED;
  if (line_sum(line, ref->len) != ref->sum) return RB_CHANGED;
  int rb = resp_string(line, ref->len, ref->resp, text);
  if (rb == RB_OK && strlen(*text) != ref->tlen) {
    free(*text);
    *text = NULL;
    rb = RB_CHANGED;
  }
  return rb;
}

const char *tl_replay_source_path(const tl_replay *r, uint32_t src) {
  return src && src <= r->nsrc ? r->src[src - 1].path : NULL;
}

uint32_t tl_replay_source_find(const tl_replay *r, const char *path) {
  for (size_t i = 0; path && i < r->nsrc; i++)
    if (strcmp(r->src[i].path, path) == 0) return (uint32_t)i + 1;
  return 0;
}

int tl_replay_ref_text(tl_replay *r, const tl_reply_ref *ref, tl_buf *out) {
  if (!ref->src || ref->src > r->nsrc || ref->off >= MAX_OFFSET || r->src[ref->src - 1].fd < 0) return RB_CHANGED;
  entry x; /* the entry the reference was made from, as far as reading its line back goes */
  memset(&x, 0, sizeof x);
  x.pos[0] = (uint32_t)ref->off;
  x.pos[1] = (uint32_t)(ref->off >> 32) | (uint32_t)(ref->src - 1) << 16;
  x.len = ref->len;
  x.line = ref->line;
  x.sum[0] = (uint32_t)ref->sum;
  x.sum[1] = (uint32_t)(ref->sum >> 32);
  x.resp = ref->resp;
  int rb;
  const char *buf = checked_line(r, &x, &rb);
  if (!buf) return rb;
  if (x.resp == 0 || x.resp >= x.len) return RB_CHANGED;
  const char *q = buf + x.resp + 1, *e = buf + x.len, *p = q;
  while (p < e && *p != '"' && *p != '\\') p++;
  if (p < e && *p == '"') { /* no escapes: its bytes, straight into out (resp_string's fast way) */
    if ((uint64_t)(p - q) != ref->tlen) return RB_CHANGED;
    if (tl_buf_append(out, q, (size_t)(p - q)) || tl_buf_append(out, "", 1)) return RB_NOMEM;
    return RB_OK;
  }
  char *text;
  rb = resp_string(buf, x.len, x.resp, &text);
  if (rb == RB_OK && strlen(text) != ref->tlen) rb = RB_CHANGED;
  if (rb == RB_OK && (tl_buf_append(out, text, (size_t)ref->tlen) || tl_buf_append(out, "", 1))) rb = RB_NOMEM;
  free(text);
  return rb;
}

/* Fills out (tag set, the rest zero) for key k. TL_ENOMEM leaves out's strings freed. */
static tl_status answer(tl_replay *r, const tl_unit_key *k, tl_eng_reply *out) {
  uint64_t h = r->hash(k);
  const entry *changed = NULL;
  tl_buf b;
  tl_buf_init(&b);
  size_t first = lower_bound(r, h);
  if (first < r->n && ent_hash(&r->e[first]) == h && (first + 1 == r->n || ent_hash(&r->e[first + 1]) != h)) {
    char *text;
    int rb = fast_text(r, &r->e[first], &text);
    if (rb == RB_NOMEM) return TL_ENOMEM;
    if (rb == RB_OK) {
      r->served_fast++;
      out->text = text;
      ref_of(r, &r->e[first], text, &out->ref);
      if (!(out->source = source_of(r, &r->e[first]))) {
        tl_eng_reply_release(out);
        return TL_ENOMEM;
      }
      return TL_OK;
    }
    /* RB_CHANGED: read_back below says so; -1: the whole line is parsed */
  }
  for (size_t i = first; i < r->n && ent_hash(&r->e[i]) == h; i++) {
    cJSON *o;
    line_view v;
    int rb = read_back(r, &r->e[i], &o, &v);
    if (rb == RB_NOMEM) return TL_ENOMEM;
    if (rb == RB_CHANGED) {
      if (!changed) changed = &r->e[i];
      continue;
    }
    if (!key_equal(&v.key, k)) { /* another key with the same hash */
      cJSON_Delete(o);
      continue;
    }
    int bad = !(out->source = source_of(r, &r->e[i]));
    if (cJSON_IsString(v.resp)) bad |= !(out->text = tl_strdup(v.resp->valuestring));
    else bad |= !(out->error = tl_strdup("the answer file records no response (null)"));
    if (v.prompt) bad |= !(out->prompt = tl_strdup(v.prompt));
    cJSON_Delete(o);
    if (bad) {
      tl_eng_reply_release(out);
      return TL_ENOMEM;
    }
    return TL_OK;
  }
  if (changed) {
    if (tl_buf_printf(&b, "the answer file changed since it was read: %s:%lu", r->src[ent_src(changed)].path,
                      (unsigned long)changed->line) != TL_OK) {
      tl_buf_release(&b);
      return TL_ENOMEM;
    }
    out->error = tl_buf_detach(&b);
  } else {
    out->error = tl_strdup("no answer in the replay files");
  }
  return out->error ? TL_OK : TL_ENOMEM;
}

/* The read-back buffer is kept between requests only while it is small. */
static void drop_long_buffer(tl_replay *r) {
  for (int k = 0; k < RA_STREAMS; k++) tl_rdahead_shrink(&r->ras[k].ra, TL_RDAHEAD_BYTES); /* it held a longer line */
  if (r->lcap <= ((size_t)1 << 20)) return;
  free(r->lbuf);
  r->lbuf = NULL;
  r->lcap = 0;
}

static tl_status submit(tl_engine *e, const tl_eng_request *req) {
  tl_replay *r = (tl_replay *)e;
  if (r->qhead + r->qlen == r->qcap) {
    if (r->qhead) {
      memmove(r->queue, r->queue + r->qhead, r->qlen * sizeof *r->queue);
      memmove(r->ready, r->ready + r->qhead, r->qlen * sizeof *r->ready);
      r->qhead = 0;
    } else {
      size_t cap = r->qcap ? r->qcap * 2 : 256;
      tl_eng_reply *q = realloc(r->queue, cap * sizeof *q);
      if (!q) return TL_ENOMEM;
      r->queue = q;
      double *rd = realloc(r->ready, cap * sizeof *rd);
      if (!rd) return TL_ENOMEM;
      r->ready = rd;
      r->qcap = cap;
    }
  }
  r->ready[r->qhead + r->qlen] = r->latency_ms ? now_s() + 1e-3 * r->latency_ms : 0;
  tl_eng_reply *out = &r->queue[r->qhead + r->qlen];
  memset(out, 0, sizeof *out);
  out->tag = req->tag;
  tl_status st = answer(r, &req->key, out);
  drop_long_buffer(r);
  if (st != TL_OK) return st;
  r->qlen++;
  r->served++;
  return TL_OK;
}

static int poll_(tl_engine *e, tl_eng_reply *out, int max, int timeout_ms) {
  tl_replay *r = (tl_replay *)e;
  int k = 0;
  if (r->latency_ms && r->qlen) {
    /* wait (at most timeout_ms) for the oldest request to become ready */
    double wait = r->ready[r->qhead] - now_s();
    if (wait > 1e-3 * timeout_ms) wait = 1e-3 * timeout_ms;
    if (wait > 0) {
      struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
      nanosleep(&ts, NULL);
    }
    double t = now_s();
    while (k < max && r->qlen && r->ready[r->qhead] <= t) {
      out[k++] = r->queue[r->qhead++];
      r->qlen--;
    }
    if (!r->qlen) r->qhead = 0;
    return k;
  }
  while (k < max && r->qlen) {
    out[k++] = r->queue[r->qhead++];
    r->qlen--;
  }
  if (!r->qlen) r->qhead = 0;
  return k;
}

static size_t in_flight(const tl_engine *e) { return ((const tl_replay *)e)->qlen; }

static void free_(tl_engine *e) {
  tl_replay *r = (tl_replay *)e;
  if (!r) return;
  for (size_t i = 0; i < r->qlen; i++) tl_eng_reply_release(&r->queue[r->qhead + i]);
  for (size_t i = 0; i < r->nsrc; i++) {
    if (r->src[i].fd >= 0) close(r->src[i].fd);
    free(r->src[i].path);
    free(r->src[i].variants);
  }
  free(r->src);
  free(r->queue);
  free(r->ready);
  free(r->e);
  free(r->tab);
  free(r->dir);
  free(r->lbuf);
  for (int k = 0; k < RA_STREAMS; k++) tl_rdahead_release(&r->ras[k].ra);
  tl_strmap_release(&r->pool);
  free(r);
}

static const tl_engine_vtbl VT = {"replay", submit, poll_, in_flight, free_};

/* ---- loading ---- */

/* The pool's copy of s (stable while the engine lives), NULL when out of memory. */
static const char *intern(tl_replay *r, const char *s) {
  const char *k = tl_strmap_stored_key(&r->pool, s);
  if (k) return k;
  if (tl_strmap_put(&r->pool, s, 0, NULL, NULL) != TL_OK) return NULL;
  return tl_strmap_stored_key(&r->pool, s);
}

/* Makes the load-time table hold at least n + 1 entries at a load of at most 1/2. */
static tl_status table_reserve(tl_replay *r) {
  if ((r->n + 1) * 2 <= r->tcap) return TL_OK;
  size_t cap = r->tcap ? r->tcap * 2 : 1024;
  uint32_t *t = calloc(cap, sizeof *t);
  if (!t) return TL_ENOMEM;
  for (size_t i = 0; i < r->n; i++) {
    size_t j = (size_t)ent_hash(&r->e[i]) & (cap - 1);
    while (t[j]) j = (j + 1) & (cap - 1);
    t[j] = (uint32_t)(i + 1);
  }
  free(r->tab);
  r->tab = t;
  r->tcap = cap;
  return TL_OK;
}

/* Copies src[f] into r->src[f] (its names into the pool). */
static tl_status add_source(tl_replay *r, const tl_replay_source *s, const char *path, int fd) {
  source *d = &r->src[r->nsrc];
  memset(d, 0, sizeof *d);
  d->fd = fd;
  r->nsrc++;
  d->path = tl_strdup(path);
  d->bench = intern(r, s->bench);
  d->variant = intern(r, s->variant);
  d->model = s->model ? intern(r, s->model) : NULL;
  d->seed = s->seed;
  d->stage = s->stage;
  d->sub_of = r->sub_of;
  d->sub_ctx = r->sub_ctx;
  if (!d->path || !d->bench || !d->variant || (s->model && !d->model)) return TL_ENOMEM;
  if (s->variants) {
    size_t n = 0;
    while (s->variants[n]) n++;
    d->variants = calloc(n + 1, sizeof *d->variants);
    if (!d->variants) return TL_ENOMEM;
    for (size_t i = 0; i < n; i++)
      if (!(d->variants[i] = intern(r, s->variants[i]))) return TL_ENOMEM;
  }
  return TL_OK;
}

/* Indexes one line (o, parsed from jl's current line, with key v): a duplicate is reported,
 * anything else is added and handed to key_fn. */
static tl_status add_line(tl_replay *r, const tl_jsonl *jl, size_t f, const line_view *v, tl_inlog *log,
                          tl_replay_key_fn key_fn, void *key_ctx, tl_err *err) {
  /* the line's text starts where its physical line does (the reader drops only the "\r"s and
   * "\n" after it) */
  uint64_t start = r->src[f].base + jl->line_off;
  size_t len = jl->line.len;
  if (start >= MAX_OFFSET || len > UINT32_MAX || jl->line_no > (long)UINT32_MAX || r->n >= UINT32_MAX - 1)
    return tl_err_set(err, TL_EIO, "%s:%ld: past the replay index's limits (offsets under 2^48, lines "
                      "under 2^32 bytes, under 2^32 lines)", jl->path, jl->line_no);
  uint64_t h = r->hash(&v->key);
  if (table_reserve(r) != TL_OK) return tl_err_set(err, TL_ENOMEM, "out of memory");
  size_t j = (size_t)h & (r->tcap - 1);
  for (; r->tab[j]; j = (j + 1) & (r->tcap - 1)) {
    const entry *x = &r->e[r->tab[j] - 1];
    if (ent_hash(x) != h) continue;
    cJSON *o;
    line_view pv;
    int rb = read_back(r, x, &o, &pv);
    if (rb == RB_NOMEM) return tl_err_set(err, TL_ENOMEM, "out of memory");
    if (rb == RB_CHANGED)
      return tl_err_set(err, TL_EIO, "%s:%lu: cannot read the line back: the file changed while it was read",
                        r->src[ent_src(x)].path, (unsigned long)x->line);
    int same = key_equal(&pv.key, &v->key);
    cJSON_Delete(o);
    if (!same) continue; /* a collision: both are kept */
    char turn[32] = "";
    if (v->key.sub) snprintf(turn, sizeof turn, ", turn %u", (unsigned)v->key.sub);
    if (v->key.stage > 1) snprintf(turn + strlen(turn), sizeof turn - strlen(turn), ", sample %d", v->key.stage - 1);
    if (tl_inlog_report(log, TL_IN_DUPLICATE, jl->path, jl->line_no,
                        "duplicate %s for id '%s', model '%s', seed %d, variant %s%s (the one at %s:%lu is kept)",
                        v->key.stage == 0 ? "answer" : "judgment", v->key.id, v->key.model, v->key.seed,
                        v->key.variant, turn, r->src[ent_src(x)].path, (unsigned long)x->line))
      return TL_EINPUT;
    return TL_OK;
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 1024;
    entry *p = realloc(r->e, cap * sizeof *p);
    if (!p) return tl_err_set(err, TL_ENOMEM, "out of memory");
    r->e = p;
    r->cap = cap;
  }
  entry *x = &r->e[r->n];
  x->h[0] = (uint32_t)h;
  x->h[1] = (uint32_t)(h >> 32);
  x->pos[0] = (uint32_t)start;
  x->pos[1] = (uint32_t)(start >> 32) | (uint32_t)f << 16;
  x->len = (uint32_t)len;
  x->line = (uint32_t)jl->line_no;
  size_t roff = 0, rlen = 0;
  x->resp = cJSON_IsString(v->resp) && !v->prompt && tl_jsonl_span(jl, v->resp, &roff, &rlen) &&
                    roff > 0 && roff < len && jl->line.data[roff] == '"'
                ? (uint32_t)roff
                : 0;
  const uint64_t sum = line_sum(jl->line.data, len);
  x->sum[0] = (uint32_t)sum;
  x->sum[1] = (uint32_t)(sum >> 32);
  r->tab[j] = (uint32_t)++r->n;
  if (key_fn && key_fn(key_ctx, &v->key, jl->path, jl->line_no))
    return tl_err_set(err, TL_EINPUT, "%s:%ld: loading stopped here", jl->path, jl->line_no);
  return TL_OK;
}

/* Reads source f into r. */
/* The loader's state for one source, for tl_inlog_each. */
typedef struct {
  tl_replay *r;
  size_t f;
  tl_inlog *log;
  tl_replay_key_fn key_fn;
  void *key_ctx;
  tl_err *err;
} line_load;

/* One answer line: checked, then indexed. */
static tl_status answer_line(void *vctx, const cJSON *o, const tl_jsonl *jl) {
  line_load *c = vctx;
  line_view v;
  tl_in_kind kind;
  char msg[512];
  if (read_answer(o, &c->r->src[c->f], &v, &kind, msg, sizeof msg) != 0)
    return tl_inlog_report(c->log, kind, jl->path, jl->line_no, "%s", msg) ? TL_EINPUT : TL_OK;
  return add_line(c->r, jl, c->f, &v, c->log, c->key_fn, c->key_ctx, c->err);
}

static tl_status load_source(tl_replay *r, const tl_replay_source *src, size_t max_line, tl_inlog *log,
                             tl_replay_key_fn key_fn, void *key_ctx, tl_err *err) {
  if (!src->bench || !src->variant)
    return tl_err_set(err, TL_EINTERNAL, "replay source '%s' names no benchmark or default variant",
                      nz(src->path));
  tl_jsonl jl;
  tl_status st = tl_jsonl_open(&jl, src->path, max_line, err);
  if (st != TL_OK) return st;
  /* a descriptor of the same open file, for reading lines back (pread leaves the reader's
   * position alone) */
  int fd = fcntl(fileno(jl.fp), F_DUPFD_CLOEXEC, 0);
  struct stat sb;
  if (fd < 0) st = tl_err_set(err, TL_EIO, "cannot open '%s': %s", jl.path, strerror(errno));
  else if (fstat(fd, &sb) != 0) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl.path, strerror(errno));
  else if (!S_ISREG(sb.st_mode))
    st = tl_err_set(err, TL_EIO, "'%s' is not a regular file: the replay engine reads each answer back from "
                    "its file when it is requested", jl.path);
  if (st != TL_OK) {
    if (fd >= 0) close(fd);
    tl_jsonl_close(&jl);
    return st;
  }
  off_t base = ftello(jl.fp); /* before the first read */
  size_t f = r->nsrc;
  if (add_source(r, src, jl.path, fd) != TL_OK) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (base < 0 && st == TL_OK) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl.path, strerror(errno));
  r->src[f].base = base > 0 ? (uint64_t)base : 0;
  line_load c = {r, f, log, key_fn, key_ctx, err};
  if (st == TL_OK) st = tl_inlog_each(log, &jl, src->stage ? "judgments" : "answers", answer_line, &c, err);
  tl_jsonl_close(&jl);
  return st;
}

static int cmp_entry(const void *a, const void *b) { /* by hash, then file order */
  uint64_t x = ent_hash(a), y = ent_hash(b);
  if (x != y) return (x > y) - (x < y);
  x = (uint64_t)ent_src(a) << 48 | ent_off(a);
  y = (uint64_t)ent_src(b) << 48 | ent_off(b);
  return (x > y) - (x < y);
}

tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay_key_fn key_fn, void *key_ctx, tl_replay **out, tl_err *err) {
  return tl_replay_open_subs(src, nsrc, max_line, log, key_fn, key_ctx, NULL, NULL, out, err);
}

tl_status tl_replay_open_subs(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                              tl_replay_key_fn key_fn, void *key_ctx, tl_replay_sub_fn sub_of, void *sub_ctx,
                              tl_replay **out, tl_err *err) {
  *out = NULL;
  if (nsrc < 0 || (unsigned)nsrc > MAX_SOURCES)
    return tl_err_set(err, TL_EIO, "%d replay files: at most %u can be read at once", nsrc, MAX_SOURCES);
  tl_replay *r = calloc(1, sizeof *r);
  if (!r) return tl_err_set(err, TL_ENOMEM, "out of memory");
  r->base.vt = &VT;
  r->sub_of = sub_of;
  r->sub_ctx = sub_ctx;
  for (int k = 0; k < RA_STREAMS; k++) {
    tl_rdahead_init(&r->ras[k].ra);
    r->ras[k].f = -1;
  }
  r->hash = g_test_hash ? g_test_hash : key_hash;
  tl_strmap_init(&r->pool);
  tl_status st = TL_OK;
  if (nsrc && !(r->src = calloc((size_t)nsrc, sizeof *r->src))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int f = 0; f < nsrc && st == TL_OK; f++) st = load_source(r, &src[f], max_line, log, key_fn, key_ctx, err);
  if (st != TL_OK) {
    free_(&r->base);
    return st;
  }
  /* the table is for loading only: the index is the entries, sorted by hash */
  drop_long_buffer(r);
  r->ra_on = 1;
  free(r->tab);
  r->tab = NULL;
  r->tcap = 0;
  if (r->n) {
    qsort(r->e, r->n, sizeof *r->e, cmp_entry);
    entry *p = realloc(r->e, r->n * sizeof *p);
    if (p) {
      r->e = p;
      r->cap = r->n;
    }
    /* the directory: 2^dbits buckets, dbits = floor(log2 n), so 1 to 2 entries a bucket on
     * average and 2 to 4 bytes a line; without memory for it, lookups search the whole index */
    int bits = 0;
    while (bits < 30 && ((size_t)2 << bits) <= r->n) bits++;
    const size_t nb = (size_t)1 << bits;
    if ((r->dir = malloc((nb + 1) * sizeof *r->dir))) {
      r->dbits = bits;
      size_t i = 0;
      for (size_t b = 0; b < nb; b++) {
        while (i < r->n && (bits ? ent_hash(&r->e[i]) >> (64 - bits) : 0) < b) i++;
        r->dir[b] = (uint32_t)i;
      }
      r->dir[nb] = (uint32_t)r->n;
    }
  }
  *out = r;
  return TL_OK;
}

tl_engine *tl_replay_engine(tl_replay *r) { return &r->base; }
size_t tl_replay_served(const tl_replay *r) { return r->served; }
size_t tl_replay_served_fast(const tl_replay *r) { return r->served_fast; }
size_t tl_replay_index_bytes(const tl_replay *r) {
  return r->cap * sizeof *r->e + (r->dir ? (((size_t)1 << r->dbits) + 1) * sizeof *r->dir : 0);
}
