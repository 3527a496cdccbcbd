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
#define _GNU_SOURCE /* fopencookie (tl_replay_share_read) */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
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

/* The message of a duplicate line with key k, whose first line (kept) is kept_path:kept_line. */
static void dup_msg(char *msg, size_t msz, const tl_unit_key *k, const char *kept_path, unsigned long kept_line) {
  char turn[32] = "";
  if (k->sub) snprintf(turn, sizeof turn, ", turn %u", (unsigned)k->sub);
  if (k->stage > 1) snprintf(turn + strlen(turn), sizeof turn - strlen(turn), ", sample %d", k->stage - 1);
  snprintf(msg, msz, "duplicate %s for id '%s', model '%s', seed %d, variant %s%s (the one at %s:%lu is kept)",
           k->stage == 0 ? "answer" : "judgment", k->id, k->model, k->seed, k->variant, turn, kept_path, kept_line);
}

/* Fills x for the line jl just gave (key hash h, key and response in v), which starts at byte
 * `start` of source f. The caller checked the index's limits. */
static void fill_entry(entry *x, uint64_t h, uint64_t start, size_t f, const tl_jsonl *jl, const line_view *v) {
  const size_t len = jl->line.len;
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
    char msg[1024];
    dup_msg(msg, sizeof msg, &v->key, r->src[ent_src(x)].path, x->line);
    if (tl_inlog_report(log, TL_IN_DUPLICATE, jl->path, jl->line_no, "%s", msg)) return TL_EINPUT;
    return TL_OK;
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 1024;
    entry *p = realloc(r->e, cap * sizeof *p);
    if (!p) return tl_err_set(err, TL_ENOMEM, "out of memory");
    r->e = p;
    r->cap = cap;
  }
  fill_entry(&r->e[r->n], h, start, f, jl, v);
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

/* Opens src into jl and adds it as source r->nsrc - 1 (its descriptor for reading back and its
 * names). On failure jl is closed. */
static tl_status open_source(tl_replay *r, const tl_replay_source *src, size_t max_line, tl_jsonl *jl, tl_err *err) {
  if (!src->bench || !src->variant)
    return tl_err_set(err, TL_EINTERNAL, "replay source '%s' names no benchmark or default variant",
                      nz(src->path));
  tl_status st = tl_jsonl_open(jl, src->path, max_line, err);
  if (st != TL_OK) return st;
  /* a descriptor of the same open file, for reading lines back (pread leaves the reader's
   * position alone) */
  int fd = fcntl(fileno(jl->fp), F_DUPFD_CLOEXEC, 0);
  struct stat sb;
  if (fd < 0) st = tl_err_set(err, TL_EIO, "cannot open '%s': %s", jl->path, strerror(errno));
  else if (fstat(fd, &sb) != 0) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl->path, strerror(errno));
  else if (!S_ISREG(sb.st_mode))
    st = tl_err_set(err, TL_EIO, "'%s' is not a regular file: the replay engine reads each answer back from "
                    "its file when it is requested", jl->path);
  if (st != TL_OK) {
    if (fd >= 0) close(fd);
    tl_jsonl_close(jl);
    return st;
  }
  off_t base = ftello(jl->fp); /* before the first read */
  size_t f = r->nsrc;
  if (add_source(r, src, jl->path, fd) != TL_OK) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (base < 0 && st == TL_OK) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl->path, strerror(errno));
  r->src[f].base = base > 0 ? (uint64_t)base : 0;
  if (st != TL_OK) tl_jsonl_close(jl);
  return st;
}

static tl_status load_source(tl_replay *r, const tl_replay_source *src, size_t max_line, tl_inlog *log,
                             tl_replay_key_fn key_fn, void *key_ctx, tl_err *err) {
  tl_jsonl jl;
  tl_status st = open_source(r, src, max_line, &jl, err);
  if (st != TL_OK) return st;
  line_load c = {r, r->nsrc - 1, log, key_fn, key_ctx, err};
  st = tl_inlog_each(log, &jl, src->stage ? "judgments" : "answers", answer_line, &c, err);
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

static tl_status replay_new(int nsrc, tl_replay_sub_fn sub_of, void *sub_ctx, tl_replay **out, tl_err *err);
static void index_finish(tl_replay *r);

/* Sorts r->e[0..n) by cmp_entry: a counting sort on the hashes' top bits (about one entry a
 * bucket: hashes are uniform), then each bucket by cmp_entry (insertion sort, qsort past 16
 * entries: a test's constant hash puts all in one). glibc's qsort sorts elements over 32 bytes
 * through an array of pointers: 0.5 s for 900,000 entries here, where this takes a tenth of
 * that. Falls back to qsort without memory for the copy. */
static void sort_entries(tl_replay *r) {
  const size_t n = r->n;
  if (n < 2) return;
  int bits = 1;
  while (bits < 24 && ((size_t)2 << bits) <= n) bits++;
  const size_t nb = (size_t)1 << bits;
  size_t *at = calloc(nb + 1, sizeof *at);
  entry *out = at ? malloc(n * sizeof *out) : NULL;
  if (!out) {
    free(at);
    qsort(r->e, n, sizeof *r->e, cmp_entry);
    return;
  }
  for (size_t i = 0; i < n; i++) at[(ent_hash(&r->e[i]) >> (64 - bits)) + 1]++;
  for (size_t b = 0; b < nb; b++) at[b + 1] += at[b];
  for (size_t i = 0; i < n; i++) out[at[ent_hash(&r->e[i]) >> (64 - bits)]++] = r->e[i];
  /* at[b] is now the end of bucket b */
  for (size_t b = 0, lo = 0; b < nb; lo = at[b++]) {
    const size_t hi = at[b];
    if (hi - lo > 16) {
      qsort(out + lo, hi - lo, sizeof *out, cmp_entry);
      continue;
    }
    for (size_t i = lo + 1; i < hi; i++) {
      entry x = out[i];
      size_t j = i;
      for (; j > lo && cmp_entry(&out[j - 1], &x) > 0; j--) out[j] = out[j - 1];
      out[j] = x;
    }
  }
  free(at);
  free(r->e);
  r->e = out;
  r->cap = n;
}

tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay_key_fn key_fn, void *key_ctx, tl_replay **out, tl_err *err) {
  return tl_replay_open_subs(src, nsrc, max_line, log, key_fn, key_ctx, NULL, NULL, out, err);
}

tl_status tl_replay_open_subs(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                              tl_replay_key_fn key_fn, void *key_ctx, tl_replay_sub_fn sub_of, void *sub_ctx,
                              tl_replay **out, tl_err *err) {
  *out = NULL;
  tl_replay *r;
  tl_status st = replay_new(nsrc, sub_of, sub_ctx, &r, err);
  for (int f = 0; f < nsrc && st == TL_OK; f++) st = load_source(r, &src[f], max_line, log, key_fn, key_ctx, err);
  if (st != TL_OK) {
    if (r) free_(&r->base);
    return st;
  }
  sort_entries(r);
  index_finish(r);
  *out = r;
  return TL_OK;
}

/* A new engine with room for nsrc sources (*out NULL on failure). */
static tl_status replay_new(int nsrc, tl_replay_sub_fn sub_of, void *sub_ctx, tl_replay **out, tl_err *err) {
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
  *out = r;
  if (nsrc && !(r->src = calloc((size_t)nsrc, sizeof *r->src))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  return TL_OK;
}

/* Ends loading: r->e[0..n) is sorted (cmp_entry); builds the directory and turns read-ahead on. */
static void index_finish(tl_replay *r) {
  /* the table is for loading only: the index is the entries, sorted by hash */
  drop_long_buffer(r);
  r->ra_on = 1;
  free(r->tab);
  r->tab = NULL;
  r->tcap = 0;
  if (r->n) {
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
}

tl_engine *tl_replay_engine(tl_replay *r) { return &r->base; }
size_t tl_replay_served(const tl_replay *r) { return r->served; }
size_t tl_replay_served_fast(const tl_replay *r) { return r->served_fast; }
size_t tl_replay_index_bytes(const tl_replay *r) {
  return r->cap * sizeof *r->e + (r->dir ? (((size_t)1 << r->dbits) + 1) * sizeof *r->dir : 0);
}

/* ---- one load shared by several processes (replay.h "one load shared") ----
 * Hand-written: a share of a text file read through stdio ends at a byte offset, which no
 * stdio call gives; fopencookie (glibc, musl) makes the reader's FILE one that reads
 * [pos, end) of a descriptor with pread. */

_Static_assert(sizeof(entry) == TL_REPLAY_ENTRY_BYTES, "the exchanged entry's size");

struct tl_replay_share {
  tl_replay *r;          /* the engine being built: r->e is this rank's entries (step 1), then
                            every rank's (tl_replay_share_index) */
  int rank, nranks;
  tl_inlog *rec;         /* the caller's recorder (rows in file:line order of this rank's shares) */
  size_t nsrc;
  struct share_src {
    uint64_t lo, hi;     /* the share: the lines starting in bytes [lo, hi) of the file */
    int64_t lines, recs; /* its physical lines; its records and bad lines */
    int64_t line0, total;/* (place) the lines before the share; records and bad lines of the file */
    int64_t matched;     /* what key_fn added to rec's matched count for the share's kept lines */
    size_t row0, row1;   /* rec's rows [row0, row1) were reported while the share was read */
  } *s;
  int32_t *dm;           /* [r->cap while reading] what key_fn added to rec's matched count per line */
  entry *own;            /* (index) this rank's entries, until duplicates are undone */
  size_t nown;
  unsigned char *drop;   /* (index) [rec rows] 1 = the row of a line found to be a duplicate */
  struct share_dup {
    size_t f;
    uint32_t line;
    char *msg;           /* owned */
  } *dup;
  size_t ndup, capdup;
  size_t hint;           /* rec's file last found by matched_of */
};

typedef struct {
  int fd;
  uint64_t pos, end;
} range_cookie;

static ssize_t range_read(void *cv, char *buf, size_t n) {
  range_cookie *c = cv;
  if (n > c->end - c->pos) n = (size_t)(c->end - c->pos);
  if (n == 0) return 0;
  ssize_t k;
  do k = pread(c->fd, buf, n, (off_t)c->pos);
  while (k < 0 && errno == EINTR);
  if (k > 0) c->pos += (uint64_t)k;
  return k;
}

static int range_close(void *cv) {
  free(cv);
  return 0;
}

/* The offset after the first '\n' at or after `from` (size when there is none); UINT64_MAX on a
 * read error. */
static uint64_t line_after(int fd, uint64_t from, uint64_t size) {
  char buf[65536];
  while (from < size) {
    size_t n = size - from < sizeof buf ? (size_t)(size - from) : sizeof buf;
    ssize_t k = pread(fd, buf, n, (off_t)from);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return k == 0 ? size : UINT64_MAX;
    const char *nl = memchr(buf, '\n', (size_t)k);
    if (nl) return from + (uint64_t)(nl - buf) + 1;
    from += (uint64_t)k;
  }
  return size;
}

/* rec's matched count of path (0 when it has none). */
static long matched_of(tl_replay_share *sh, const char *path) {
  const tl_inlog *l = sh->rec;
  if (sh->hint < l->nfiles && strcmp(l->files[sh->hint].path, path) == 0) return l->files[sh->hint].matched;
  for (size_t k = l->nfiles; k-- > 0;)
    if (strcmp(l->files[k].path, path) == 0) return sh->hint = k, l->files[k].matched;
  return 0;
}

/* Adds the line jl just gave (of source f, key v) to this rank's entries and hands it to key_fn. */
static tl_status share_add(tl_replay_share *sh, const tl_jsonl *jl, size_t f, const line_view *v,
                           tl_replay_key_fn key_fn, void *key_ctx, tl_err *err) {
  tl_replay *r = sh->r;
  const uint64_t start = sh->s[f].lo + jl->line_off;
  if (start >= MAX_OFFSET || jl->line.len > UINT32_MAX || r->n >= UINT32_MAX - 1)
    return tl_err_set(err, TL_EIO, "%s: the line at byte %llu is past the replay index's limits (offsets under "
                      "2^48, lines under 2^32 bytes, under 2^32 lines)", jl->path, (unsigned long long)start);
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 1024;
    entry *p = realloc(r->e, cap * sizeof *p);
    if (p) r->e = p;
    int32_t *d = p ? realloc(sh->dm, cap * sizeof *d) : NULL;
    if (!d) return tl_err_set(err, TL_ENOMEM, "out of memory");
    sh->dm = d;
    r->cap = cap;
  }
  fill_entry(&r->e[r->n], r->hash(&v->key), start, f, jl, v);
  const long m0 = key_fn ? matched_of(sh, jl->path) : 0;
  int stop = key_fn && key_fn(key_ctx, &v->key, jl->path, jl->line_no);
  sh->dm[r->n] = key_fn ? (int32_t)(matched_of(sh, jl->path) - m0) : 0;
  sh->s[f].matched += sh->dm[r->n];
  r->n++;
  if (stop) return tl_err_set(err, TL_EINPUT, "%s: loading stopped here (line %ld of this rank's share)", jl->path,
                              jl->line_no);
  return TL_OK;
}

/* Reads the lines of source f's share [lo, hi) through jl (open on the whole file). */
static tl_status share_lines(tl_replay_share *sh, size_t f, tl_jsonl *jl, tl_replay_key_fn key_fn, void *key_ctx,
                             tl_err *err) {
  range_cookie *c = malloc(sizeof *c);
  if (!c) return tl_err_set(err, TL_ENOMEM, "out of memory");
  *c = (range_cookie){sh->r->src[f].fd, sh->s[f].lo, sh->s[f].hi};
  FILE *fp = fopencookie(c, "r", (cookie_io_functions_t){range_read, NULL, NULL, range_close});
  if (!fp) {
    free(c);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  if (jl->fp != stdin) fclose(jl->fp);
  jl->fp = fp; /* (tl_jsonl_close closes it) */
  tl_status st = TL_OK;
  cJSON *obj;
  tl_jl_result res;
  tl_err e;
  while (st == TL_OK && (res = tl_jsonl_next(jl, &obj, &e)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) return tl_err_set(err, TL_EIO, "%s", e.msg);
    if (res == TL_JL_BAD) {
      if (tl_inlog_report_bad_line(sh->rec, jl) != TL_OK) st = tl_err_set(err, TL_ENOMEM, "out of memory");
      continue;
    }
    line_view v;
    tl_in_kind kind;
    char msg[512];
    if (read_answer(obj, &sh->r->src[f], &v, &kind, msg, sizeof msg) != 0) {
      if (tl_inlog_report(sh->rec, kind, jl->path, jl->line_no, "%s", msg) != TL_OK)
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
    } else {
      st = share_add(sh, jl, f, &v, key_fn, key_ctx, err);
    }
    cJSON_Delete(obj);
  }
  return st;
}

/* Opens source f and reads this rank's share of it. */
static tl_status share_source(tl_replay_share *sh, const tl_replay_source *src, size_t max_line,
                              tl_replay_key_fn key_fn, void *key_ctx, tl_err *err) {
  tl_replay *r = sh->r;
  const size_t f = r->nsrc;
  struct share_src *ss = &sh->s[f];
  ss->row0 = ss->row1 = sh->rec->table->nrows;
  tl_jsonl jl;
  tl_status st = open_source(r, src, max_line, &jl, err);
  if (st != TL_OK) return st;
  const int fd = r->src[f].fd;
  const uint64_t base = r->src[f].base;
  struct stat sb;
  if (fstat(fd, &sb) != 0) st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl.path, strerror(errno));
  if (st == TL_OK) {
    const uint64_t size = (uint64_t)sb.st_size > base ? (uint64_t)sb.st_size : base, span = size - base;
    const uint64_t n = (uint64_t)sh->nranks, k = (uint64_t)sh->rank;
    /* o_j = base + floor(span * j / n), without overflow */
    const uint64_t ok = base + span / n * k + span % n * k / n, ok1 = base + span / n * (k + 1) + span % n * (k + 1) / n;
    ss->lo = k == 0 ? base : line_after(fd, ok, size);
    ss->hi = k + 1 == n ? size : line_after(fd, ok1, size);
    if (ss->lo == UINT64_MAX || ss->hi == UINT64_MAX)
      st = tl_err_set(err, TL_EIO, "cannot read '%s': %s", jl.path, strerror(errno));
    else if (ss->lo < ss->hi)
      st = share_lines(sh, f, &jl, key_fn, key_ctx, err);
  }
  ss->lines = jl.line_no;
  ss->recs = jl.n_records + jl.n_bad;
  ss->row1 = sh->rec->table->nrows;
  tl_jsonl_close(&jl);
  return st;
}

void tl_replay_share_free(tl_replay_share *sh) {
  if (!sh) return;
  if (sh->r) free_(&sh->r->base);
  for (size_t i = 0; i < sh->ndup; i++) free(sh->dup[i].msg);
  free(sh->dup);
  free(sh->s);
  free(sh->dm);
  free(sh->own);
  free(sh->drop);
  free(sh);
}

tl_status tl_replay_share_read(const tl_replay_source *src, int nsrc, size_t max_line, int rank, int nranks,
                               tl_inlog *rec, tl_replay_key_fn key_fn, void *key_ctx, tl_replay_sub_fn sub_of,
                               void *sub_ctx, tl_replay_share **out, tl_err *err) {
  *out = NULL;
  if (nranks < 1 || rank < 0 || rank >= nranks) return tl_err_set(err, TL_EINTERNAL, "rank %d of %d", rank, nranks);
  tl_replay_share *sh = calloc(1, sizeof *sh);
  if (!sh) return tl_err_set(err, TL_ENOMEM, "out of memory");
  sh->rank = rank;
  sh->nranks = nranks;
  sh->rec = rec;
  tl_status st = replay_new(nsrc, sub_of, sub_ctx, &sh->r, err);
  sh->nsrc = nsrc > 0 ? (size_t)nsrc : 0;
  if (st == TL_OK && !(sh->s = calloc(sh->nsrc ? sh->nsrc : 1, sizeof *sh->s)))
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int f = 0; f < nsrc && st == TL_OK; f++) st = share_source(sh, &src[f], max_line, key_fn, key_ctx, err);
  *out = sh; /* (also on failure: the caller frees it) */
  return st;
}

void tl_replay_share_counts(const tl_replay_share *sh, int64_t *out) {
  for (size_t f = 0; f < sh->nsrc; f++) {
    out[2 * f] = sh->s[f].lines;
    out[2 * f + 1] = sh->s[f].recs;
  }
}

tl_status tl_replay_share_place(tl_replay_share *sh, const int64_t *all, tl_err *err) {
  const size_t w = 2 * sh->nsrc;
  for (size_t f = 0; f < sh->nsrc; f++) {
    struct share_src *ss = &sh->s[f];
    ss->line0 = ss->total = 0;
    for (int j = 0; j < sh->nranks; j++) {
      if (j < sh->rank) ss->line0 += all[(size_t)j * w + 2 * f];
      ss->total += all[(size_t)j * w + 2 * f + 1];
    }
    tl_table *t = sh->rec->table;
    for (size_t i = ss->row0; i < ss->row1; i++)
      if (t->cols[2].v.i[i] > 0) t->cols[2].v.i[i] += ss->line0;
  }
  tl_replay *r = sh->r;
  for (size_t i = 0; i < r->n; i++) {
    entry *x = &r->e[i];
    const uint64_t line = (uint64_t)x->line + (uint64_t)sh->s[ent_src(x)].line0;
    if (line > UINT32_MAX)
      return tl_err_set(err, TL_EIO, "%s:%llu: past the replay index's limits (offsets under 2^48, lines under "
                        "2^32 bytes, under 2^32 lines)", r->src[ent_src(x)].path, (unsigned long long)line);
    x->line = (uint32_t)line;
  }
  return TL_OK;
}

void tl_replay_share_entries(const tl_replay_share *sh, const void **p, size_t *n) {
  *p = sh->r->e;
  *n = sh->r->n;
}

static int cmp_src_off(const entry *a, size_t f, uint64_t off) { /* a against (f, off), file order */
  const uint64_t x = (uint64_t)ent_src(a) << 48 | ent_off(a), y = (uint64_t)f << 48 | off;
  return (x > y) - (x < y);
}

/* Line x (of every rank's entries) is a duplicate: when it is this rank's, what key_fn did to
 * rec for it is undone (its matched count, its reports: rec's rows at its line). */
static void share_undo(tl_replay_share *sh, const entry *x) {
  const size_t f = ent_src(x);
  struct share_src *ss = &sh->s[f];
  const uint64_t off = ent_off(x);
  if (off < ss->lo || off >= ss->hi) return;
  size_t lo = 0, hi = sh->nown;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cmp_src_off(&sh->own[mid], f, off) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < sh->nown && cmp_src_off(&sh->own[lo], f, off) == 0) ss->matched -= sh->dm[lo];
  const int64_t *line = sh->rec->table->cols[2].v.i;
  lo = ss->row0, hi = ss->row1;
  while (lo < hi) { /* rows are in line order */
    size_t mid = lo + (hi - lo) / 2;
    if (line[mid] < (int64_t)x->line) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < ss->row1 && line[lo] == (int64_t)x->line; lo++) sh->drop[lo] = 1;
}

/* Notes the duplicate x of kept line k (key v). */
static tl_status share_dup(tl_replay_share *sh, const entry *x, const entry *k, const line_view *v) {
  if (sh->ndup == sh->capdup) {
    size_t cap = sh->capdup ? 2 * sh->capdup : 16;
    struct share_dup *d = realloc(sh->dup, cap * sizeof *d);
    if (!d) return TL_ENOMEM;
    sh->dup = d;
    sh->capdup = cap;
  }
  char msg[1024];
  dup_msg(msg, sizeof msg, &v->key, sh->r->src[ent_src(k)].path, k->line);
  struct share_dup *d = &sh->dup[sh->ndup];
  d->f = ent_src(x);
  d->line = x->line;
  if (!(d->msg = tl_strdup(msg))) return TL_ENOMEM;
  sh->ndup++;
  share_undo(sh, x);
  return TL_OK;
}

/* The entries [i, j) share a hash (in file order): each is read back and compared with the kept
 * ones before it; the kept are moved to e[*w...]. */
static tl_status dedupe_run(tl_replay_share *sh, size_t i, size_t j, size_t *w, tl_err *err) {
  tl_replay *r = sh->r;
  line_view *kv = malloc((j - i) * sizeof *kv);
  cJSON **ko = calloc(j - i, sizeof *ko);
  size_t *kat = malloc((j - i) * sizeof *kat), nk = 0;
  tl_status st = kv && ko && kat ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t q = i; q < j && st == TL_OK; q++) {
    const entry x = r->e[q];
    int rb = read_back(r, &x, &ko[nk], &kv[nk]);
    if (rb == RB_NOMEM) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    else if (rb == RB_CHANGED)
      st = tl_err_set(err, TL_EIO, "%s:%lu: cannot read the line back: the file changed while it was read",
                      r->src[ent_src(&x)].path, (unsigned long)x.line);
    if (st != TL_OK) break;
    size_t k = 0;
    while (k < nk && !key_equal(&kv[k].key, &kv[nk].key)) k++;
    if (k < nk) { /* the first of its key is kept */
      if (share_dup(sh, &x, &r->e[kat[k]], &kv[nk]) != TL_OK) st = tl_err_set(err, TL_ENOMEM, "out of memory");
      cJSON_Delete(ko[nk]);
      ko[nk] = NULL;
      continue;
    }
    kat[nk++] = *w; /* (*w <= q: the kept move down, never over one not read yet) */
    r->e[(*w)++] = x;
  }
  for (size_t k = 0; ko && k < nk + 1 && k < j - i; k++) cJSON_Delete(ko[k]);
  free(kv);
  free(ko);
  free(kat);
  return st;
}

tl_status tl_replay_share_index(tl_replay_share *sh, void *all, size_t n, tl_err *err) {
  tl_replay *r = sh->r;
  sh->own = r->e;
  sh->nown = r->n;
  r->e = all;
  r->n = r->cap = n;
  const size_t rows = sh->rec->table->nrows;
  if (!(sh->drop = calloc(rows ? rows : 1, 1))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  sort_entries(r);
  size_t w = 0;
  tl_status st = TL_OK;
  for (size_t i = 0; i < n && st == TL_OK;) {
    size_t j = i + 1;
    while (j < n && ent_hash(&r->e[j]) == ent_hash(&r->e[i])) j++;
    if (j - i == 1) r->e[w++] = r->e[i];
    else st = dedupe_run(sh, i, j, &w, err);
    i = j;
  }
  r->n = w;
  free(sh->own);
  sh->own = NULL;
  sh->nown = 0;
  return st;
}

static int kind_of(const char *name) {
  for (int k = 0; k < TL_IN__NKINDS; k++)
    if (strcmp(tl_in_kind_name((tl_in_kind)k), name) == 0) return k;
  return TL_IN_BAD_FIELD;
}

/* The serialized events: int64 [nsrc] matched counts, then per problem uint32 source, uint32
 * kind, int64 line, uint32 message bytes, the message (no NUL). Native byte order (the ranks of
 * one job share a machine architecture). */
tl_status tl_replay_share_events(const tl_replay_share *sh, tl_buf *out) {
  const tl_table *t = sh->rec->table;
  for (size_t f = 0; f < sh->nsrc; f++)
    if (tl_buf_append(out, (const char *)&sh->s[f].matched, sizeof(int64_t))) return TL_ENOMEM;
  for (size_t f = 0; f < sh->nsrc; f++)
    for (size_t i = sh->s[f].row0; i < sh->s[f].row1; i++) {
      if (sh->drop && sh->drop[i]) continue;
      const uint32_t hd[2] = {(uint32_t)f, (uint32_t)kind_of(t->cols[0].v.s[i])};
      const int64_t line = t->cols[2].v.i[i];
      const uint32_t len = (uint32_t)strlen(t->cols[3].v.s[i]);
      if (tl_buf_append(out, (const char *)hd, sizeof hd) || tl_buf_append(out, (const char *)&line, sizeof line) ||
          tl_buf_append(out, (const char *)&len, sizeof len) || tl_buf_append(out, t->cols[3].v.s[i], len))
        return TL_ENOMEM;
    }
  return TL_OK;
}

typedef struct {
  size_t f, seq;
  int64_t line;
  int kind;
  const char *msg;
  uint32_t len;
} share_event;

static int cmp_event(const void *a, const void *b) { /* file order, then as reported */
  const share_event *x = a, *y = b;
  if (x->f != y->f) return (x->f > y->f) - (x->f < y->f);
  if (x->line != y->line) return (x->line > y->line) - (x->line < y->line);
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Parses the nranks blobs into *ev (every problem, then the duplicates) and matched[nsrc]. */
static tl_status share_parse(const tl_replay_share *sh, const char *blobs, const uint64_t *len, int64_t *matched,
                             share_event **ev, size_t *nev, tl_err *err) {
  size_t cap = sh->ndup + 16, n = 0;
  share_event *e = malloc(cap * sizeof *e);
  if (!e) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const char *p = blobs;
  for (int j = 0; j < sh->nranks; j++) {
    const char *end = p + len[j];
    for (size_t f = 0; f < sh->nsrc; f++, p += sizeof(int64_t)) {
      int64_t m;
      if (p + sizeof m > end) goto bad;
      memcpy(&m, p, sizeof m);
      matched[f] += m;
    }
    while (p < end) {
      uint32_t hd[2], mlen;
      int64_t line;
      if (end - p < (ptrdiff_t)(sizeof hd + sizeof line + sizeof mlen)) goto bad;
      memcpy(hd, p, sizeof hd);
      memcpy(&line, p + sizeof hd, sizeof line);
      memcpy(&mlen, p + sizeof hd + sizeof line, sizeof mlen);
      p += sizeof hd + sizeof line + sizeof mlen;
      if ((uint64_t)(end - p) < mlen || hd[0] >= sh->nsrc || hd[1] >= TL_IN__NKINDS) goto bad;
      if (n + sh->ndup == cap) {
        share_event *q = realloc(e, 2 * cap * sizeof *q);
        if (!q) return free(e), tl_err_set(err, TL_ENOMEM, "out of memory");
        e = q;
        cap *= 2;
      }
      e[n] = (share_event){hd[0], n, line, (int)hd[1], p, mlen};
      n++;
      p += mlen;
    }
  }
  for (size_t i = 0; i < sh->ndup; i++, n++)
    e[n] = (share_event){sh->dup[i].f, n, sh->dup[i].line, TL_IN_DUPLICATE, sh->dup[i].msg,
                         (uint32_t)strlen(sh->dup[i].msg)};
  qsort(e, n, sizeof *e, cmp_event);
  *ev = e;
  *nev = n;
  return TL_OK;
bad:
  free(e);
  return tl_err_set(err, TL_EINTERNAL, "internal error: a rank's replay problems do not parse");
}

tl_status tl_replay_share_report(const tl_replay_share *sh, const char *blobs, const uint64_t *len, tl_inlog *log,
                                 tl_err *err) {
  int64_t *matched = calloc(sh->nsrc ? sh->nsrc : 1, sizeof *matched);
  if (!matched) return tl_err_set(err, TL_ENOMEM, "out of memory");
  share_event *ev = NULL;
  size_t nev = 0, i = 0;
  tl_status st = share_parse(sh, blobs, len, matched, &ev, &nev, err);
  for (size_t f = 0; f < sh->nsrc && st == TL_OK; f++) {
    const source *s = &sh->r->src[f];
    for (; i < nev && ev[i].f == f && st == TL_OK; i++) {
      st = tl_inlog_report(log, (tl_in_kind)ev[i].kind, s->path, (long)ev[i].line, "%.*s", (int)ev[i].len, ev[i].msg);
      if (st == TL_EINPUT) tl_err_set(err, st, "%s:%lld: stopped at this problem (strict input)", s->path,
                                      (long long)ev[i].line);
    }
    if (st != TL_OK) break;
    const char *what = s->stage ? "judgments" : "answers";
    if (tl_inlog_lines(log, s->path, what, (long)sh->s[f].total) != TL_OK ||
        (matched[f] && tl_inlog_matched(log, s->path, (long)matched[f]) != TL_OK))
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
    else if (sh->s[f].total == 0 &&
             (st = tl_inlog_report(log, TL_IN_EMPTY_FILE, s->path, 0, "no %s in this file", what)) == TL_EINPUT)
      tl_err_set(err, TL_EINPUT, "%s: no %s (strict input)", s->path, what);
  }
  if (st == TL_ENOMEM && !err->msg[0]) tl_err_set(err, st, "out of memory");
  free(ev);
  free(matched);
  return st;
}

tl_replay *tl_replay_share_finish(tl_replay_share *sh) {
  tl_replay *r = sh->r;
  sh->r = NULL;
  tl_replay_share_free(sh);
  index_finish(r);
  return r;
}
