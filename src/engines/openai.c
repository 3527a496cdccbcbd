/* openai.c - the OpenAI-compatible HTTP engine (see openai.h). One curl multi handle; requests
 * wait in a FIFO until an endpoint has room, then become transfers; finished transfers are
 * classified (reply, retry later, give up) inside poll(). Easy handles are kept and reused, so
 * connections stay open (keep-alive) across requests.
 *
 * Event loop: libcurl's socket interface. libcurl tells us which sockets it waits on
 * (CURLMOPT_SOCKETFUNCTION: they go into one epoll set) and when it wants a timeout
 * (CURLMOPT_TIMERFUNCTION); poll() waits in epoll_wait and hands libcurl only the sockets that
 * are ready (curl_multi_socket_action), so the cost per wake-up follows the transfers that
 * moved, not the transfers in flight (curl_multi_perform + curl_multi_poll walk all of them). */
#define _GNU_SOURCE /* memmem */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "openai.h"
#include "tally/http_body.h"
#include "tally/jsonl.h"
#include "tally/jsonw.h"
#include "tally/oai_reply.h"
#include "tally/str.h"

/* ---- small helpers ---- */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s) { /* for the backoff jitter */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Replaces every "{name}" in tmpl by val. malloc'd. */
static char *subst(const char *tmpl, const char *name, const char *val) {
  tl_buf b;
  tl_buf_init(&b);
  size_t nl = strlen(name);
  for (const char *p = tmpl; *p;) {
    const char *q = strstr(p, name);
    if (!q) {
      tl_buf_puts(&b, p);
      break;
    }
    tl_buf_append(&b, p, (size_t)(q - p));
    tl_buf_puts(&b, val);
    p = q + nl;
  }
  return tl_buf_detach(&b);
}

/* ---- endpoints ---- */
typedef struct {
  char *base;          /* e.g. http://127.0.0.1:8001/v1 */
  char *url;           /* base + /chat/completions or /completions */
  CURLU *uh;           /* url, parsed once: each transfer copies it (CURLOPT_CURLU) rather than
                          parsing the string again, some 12,000 instructions a request less */
  char *health;        /* root + health path */
  double limit;        /* requests in flight allowed (fractional: additive growth) */
  int in_flight;
  double paused_until; /* after a 429: no new request before this */
  double lat_min;      /* the fastest reply seen (s); 0 = none yet */
  int backed_off;      /* 1 after the first 429: growth is additive */
  int slots;           /* requests the server serves at once, from llama.cpp's GET /props
                          (total_slots) at health time; 0 = unknown. The limit never exceeds it:
                          llama-server keeps one HTTP thread per kept-alive connection and queues
                          without a 429, so requests past its slots only wait (and starve) */
  char *root;          /* the URL less its final "/v1" (owned) */
  char *served;        /* owned: the ids GET {base}/models lists, ", "-joined; NULL = unknown */
  char *dead;          /* owned: why the endpoint refused us for good (HTTP 401/403: the key
                          or the account; no retry or resume fixes that): it gets no request
                          again, and when every endpoint is dead every request fails at once */
} endpoint;

/* ---- requests ---- */
typedef struct req {
  uint64_t tag;
  int stage;                /* the unit's stage (the cache file records it) */
  char *body;               /* the JSON body; NULL for a request failed before sending */
  size_t body_len;
  char *key_hdr;            /* "X-Tally-Key: ...": built only when sent (key_header) or shown (a
                               dry run), else NULL */
  char hash[65];            /* cache key, "" = not cacheable */
  int cache_read;           /* may be answered from the cache */
  int attempts;
  double t_first, t_sent, not_before;
  char *last_err;           /* why the last attempt failed */
  int ep;                   /* endpoint of the attempt in flight, -1 */
  CURL *h;
  /* the request's headers, a list libcurl reads (CURLOPT_HTTPHEADER) built in place: nodes and
   * strings are q's and the engine's, so a request allocates none (NULL data: not built yet) */
  struct curl_slist hdrs[4];
  tl_buf resp;              /* the reply body */
  char reqid[128];          /* x-request-id header */
  double retry_after;       /* seconds, from a 429 */
  int too_big;              /* the reply grew past max_reply_bytes: the transfer was stopped */
  double max_bytes;         /* max_reply_bytes */
  struct req *next;         /* in the FIFO or the retry list */
  struct req *aprev, *anext;/* in the list of transfers */
} req;

struct tl_openai {
  tl_engine base;
  tl_http_cfg cfg;          /* copied scalars; strings below */
  char *model, *api_key_hdr;
  char *key;                /* the API key's value (NULL: none), only to scrub it from every
                               server text tally stores or prints (scrub) */
  char *health_path;        /* "health".path (owned) */
  char *ca_file, *ca_dir;   /* certificate authorities: "tls".ca_bundle, else CURL_CA_BUNDLE or
                               SSL_CERT_FILE; SSL_CERT_DIR (owned; NULL: libcurl's default) */
  const volatile sig_atomic_t *stop; /* nonzero: a signal came; the health wait ends */
  FILE *log;                /* warnings (the health wait's probe); NULL: none */
  char *cache_err;          /* the first cache write failure (owned), for the report */
  tl_http_body_tpl tpl;     /* the members every request body holds alike */
  int proxy_env;            /* a proxy variable is set: libcurl reads the environment per
                               transfer (no_proxy against each URL); else it is told "no proxy"
                               once, which is what it would find, without the getenv calls */
  tl_role role;
  endpoint *ep;
  int nep;
  CURLM *multi;
  int epfd;                 /* the sockets libcurl waits on (-1 before open) */
  unsigned char *fdst;      /* [fdcap] per socket: FD_* bits (see on_socket) */
  int fdcap;
  double timer_due;         /* when libcurl wants CURL_SOCKET_TIMEOUT (now_s clock); < 0: never */
  CURL **idle;              /* easy handles kept for reuse */
  int nidle, capidle;
  req *q_head, *q_tail;     /* waiting for room, FIFO */
  req *retry;               /* waiting for their backoff to pass (unordered) */
  req *active;              /* transfers (doubly linked) */
  size_t nactive;           /* transfers */
  size_t nwait;             /* in the FIFO and the retry list */
  tl_eng_reply *ready;      /* replies not yet polled: ready[rhead .. nready) */
  size_t rhead, nready, rcap;
  char *cache_dir;
  FILE *dry;
  tl_openai_stats st;
  tl_openai_change *hist;
  size_t nhist, caphist;
  double t0;
  uint64_t rng;
  tl_buf tmp;  /* the meta being written */
  tl_buf rstr; /* the strings of the reply being read (tl_oai_reply_scan) */
  size_t body_hint; /* bytes to reserve for the next request body (build_body) */
};

#define MAX_HISTORY 100000

static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a);
static int on_close_socket(void *ud, curl_socket_t s);

static void note_limit(tl_openai *o, int e, char why) {
  if (o->nhist >= MAX_HISTORY) return;
  if (o->nhist == o->caphist) {
    size_t cap = o->caphist ? o->caphist * 2 : 64;
    tl_openai_change *h = realloc(o->hist, cap * sizeof *h);
    if (!h) return;
    o->hist = h;
    o->caphist = cap;
  }
  o->hist[o->nhist++] = (tl_openai_change){now_s() - o->t0, e, (int)o->ep[e].limit, why};
}

static void set_limit(tl_openai *o, int e, double v, char why) {
  endpoint *p = &o->ep[e];
  if (v < o->cfg.conc_min) v = o->cfg.conc_min;
  if (v > o->cfg.conc_max) v = o->cfg.conc_max;
  if (p->slots > 0 && v > p->slots) v = p->slots;
  int before = (int)p->limit;
  p->limit = v;
  if ((int)v != before) note_limit(o, e, why);
}

/* ---- replies out ---- */
static tl_status push_reply(tl_openai *o, tl_eng_reply *r) {
  if (o->nready == o->rcap) {
    if (o->rhead) { /* slide down before growing */
      memmove(o->ready, o->ready + o->rhead, (o->nready - o->rhead) * sizeof *o->ready);
      o->nready -= o->rhead;
      o->rhead = 0;
    }
    if (o->nready == o->rcap) {
      size_t cap = o->rcap ? o->rcap * 2 : 256;
      tl_eng_reply *p = realloc(o->ready, cap * sizeof *p);
      if (!p) {
        tl_eng_reply_release(r);
        return TL_ENOMEM;
      }
      o->ready = p;
      o->rcap = cap;
    }
  }
  o->ready[o->nready++] = *r;
  memset(r, 0, sizeof *r);
  return TL_OK;
}

static void req_free(tl_openai *o, req *q) {
  if (!q) return;
  if (q->h) {
    curl_multi_remove_handle(o->multi, q->h);
    if (o->nidle < o->capidle) o->idle[o->nidle++] = q->h;
    else curl_easy_cleanup(q->h);
  }
  free(q->body);
  free(q->key_hdr);
  free(q->last_err);
  tl_buf_release(&q->resp);
  free(q);
}

/* Overwrites every occurrence of the API key's value in s[0..n) with '*' (a server may echo the
 * key in an error text or a reply: nothing tally stores, journals or prints holds it). */
static void scrub(const tl_openai *o, char *s, size_t n) {
  if (!o->key || !s) return;
  size_t k = strlen(o->key);
  for (char *p = s; k && (p = memmem(p, n - (size_t)(p - s), o->key, k)); p += k) memset(p, '*', k);
}
static void scrub_str(const tl_openai *o, char *s) {
  if (s) scrub(o, s, strlen(s));
}

/* 1 when the JSON text s[0..n) holds a \u0000 escape (a NUL, which would cut the string it is
 * in): a backslash run of odd length before "u0000". */
static int has_nul_escape(const char *s, size_t n) {
  for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), "u0000", 5)); p += 5) {
    size_t b = 0;
    while (p - b > s && p[-(ptrdiff_t)b - 1] == '\\') b++;
    if (b % 2 == 1) return 1;
  }
  return 0;
}

/* The deepest nesting of arrays and objects in the JSON text s[0..n), outside strings. */
static int json_depth(const char *s, size_t n) {
  int d = 0, max = 0, in = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (in) {
      if (c == '\\') i++;
      else if (c == '"') in = 0;
    } else if (c == '"') in = 1;
    else if (c == '[' || c == '{') max = ++d > max ? d : max;
    else if (c == ']' || c == '}') d--;
  }
  return max;
}

/* A permanent failure of q: a reply with failed = 1 and the reason. Frees q. */
static tl_status give_up(tl_openai *o, req *q, const char *why) {
  tl_eng_reply r;
  memset(&r, 0, sizeof r);
  r.tag = q->tag;
  r.failed = 1;
  tl_buf b;
  tl_buf_init(&b);
  if (q->attempts > 1) tl_buf_printf(&b, "%s (gave up after %d attempts)", why, q->attempts);
  else tl_buf_puts(&b, why);
  r.error = tl_buf_detach(&b);
  scrub_str(o, r.error);
  cJSON *m = cJSON_CreateObject();
  cJSON_AddNumberToObject(m, "attempts", q->attempts);
  cJSON_AddBoolToObject(m, "cached", 0);
  if (q->attempts) cJSON_AddNumberToObject(m, "latency_ms", floor(1e6 * (now_s() - q->t_first) + 0.5) / 1e3);
  if (q->ep >= 0 && q->ep < o->nep) cJSON_AddStringToObject(m, "endpoint", o->ep[q->ep].base);
  r.meta = m ? cJSON_PrintUnformatted(m) : NULL;
  cJSON_Delete(m);
  o->st.failed++;
  req_free(o, q);
  return push_reply(o, &r);
}

/* ---- the cache ---- */
static void sha256_hex(const char *a, size_t na, const char *b, size_t nb, char out[65]) {
  unsigned char md[32];
  unsigned int mdl = 0;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL) || !EVP_DigestUpdate(c, a, na) ||
      !EVP_DigestUpdate(c, b, nb) || !EVP_DigestFinal_ex(c, md, &mdl)) {
    out[0] = 0;
  } else {
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
  }
  EVP_MD_CTX_free(c);
}

static char *cache_path(const tl_openai *o, const char *hash, int dir_only) {
  tl_buf b;
  tl_buf_init(&b);
  if (dir_only) tl_buf_printf(&b, "%s/%.2s", o->cache_dir, hash);
  else tl_buf_printf(&b, "%s/%.2s/%s.json", o->cache_dir, hash, hash);
  return tl_buf_detach(&b);
}

/* The stored reply of q's hash, parsed ({"v":1,...,"reply":{...},"request":BODY}\n), or NULL
 * when there is none or it cannot be trusted: a file that does not end in q's very body (another
 * request whose hash collides, a torn or edited file) or whose reply is not a well-formed one
 * (a content string) is not a hit; the request is sent and the entry rewritten. */
static cJSON *cache_get(tl_openai *o, const req *q) {
  const char *hash = q->hash;
  char *path = cache_path(o, hash, 0);
  FILE *f = path ? fopen(path, "rb") : NULL;
  free(path);
  if (!f) return NULL;
  tl_buf_reset(&o->tmp);
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&o->tmp, chunk, k);
  fclose(f);
  if (o->tmp.len < q->body_len + 2 || memcmp(o->tmp.data + o->tmp.len - 2, "}\n", 2) != 0 ||
      memcmp(o->tmp.data + o->tmp.len - 2 - q->body_len, q->body, q->body_len) != 0)
    return NULL;
  cJSON *j = cJSON_ParseWithLength(o->tmp.data, o->tmp.len);
  cJSON *rep = j ? cJSON_GetObjectItemCaseSensitive(j, "reply") : NULL;
  const cJSON *ct = cJSON_IsObject(rep) ? cJSON_GetObjectItemCaseSensitive(rep, "content") : NULL;
  if (!cJSON_IsString(ct) || !tl_utf8_valid(ct->valuestring, strlen(ct->valuestring), NULL)) {
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

/* Stores the reply object (rj: its JSON text) under q's hash: a temporary file in the same
 * folder, then rename. */
static void cache_put(tl_openai *o, const req *q, const char *rj) {
  char *dir = cache_path(o, q->hash, 1), *path = cache_path(o, q->hash, 0);
  if (!dir || !path) goto out;
  mkdir(o->cache_dir, 0777);
  mkdir(dir, 0777);
  tl_buf tmp;
  tl_buf_init(&tmp);
  tl_buf_printf(&tmp, "%s/.%s.%ld.%llx.tmp", dir, q->hash, (long)getpid(), (unsigned long long)splitmix(&o->rng));
  errno = 0;
  FILE *f = fopen(tmp.data, "wb");
  int ok = 0;
  if (f) {
    ok = fprintf(f, "{\"v\":1,\"role\":\"%s\",\"stage\":%d,\"reply\":%s,\"request\":", tl_role_name(o->role),
                 q->stage, rj) > 0 &&
         fwrite(q->body, 1, q->body_len, f) == q->body_len && fputs("}\n", f) >= 0;
    ok = fclose(f) == 0 && ok;
  }
  int e = f ? errno : errno;
  if (ok && rename(tmp.data, path) == 0) {
    o->st.cache_writes++;
  } else {
    e = errno ? errno : e;
    if (f) unlink(tmp.data);
    o->st.cache_write_errors++;
    if (!o->cache_err) {
      tl_buf m;
      tl_buf_init(&m);
      tl_buf_printf(&m, "cannot write the cache entry '%s': %s", path, strerror(e ? e : EIO));
      o->cache_err = tl_buf_detach(&m);
    }
  }
  tl_buf_release(&tmp);
out:
  free(dir);
  free(path);
}

/* ---- building a request ---- */
static const char *b64_tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The file at path as a data URL (base64). NULL with *why set when it cannot be read. */
static char *image_url(const char *path, char *why, size_t whysz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, whysz, "cannot read the image '%s': %s", path, strerror(errno));
    return NULL;
  }
  tl_buf raw;
  tl_buf_init(&raw);
  char chunk[65536];
  size_t k;
  int oom = 0;
  while (!oom && (k = fread(chunk, 1, sizeof chunk, f)) > 0) oom = tl_buf_append(&raw, chunk, k) != TL_OK;
  int err = ferror(f);
  fclose(f);
  if (err || oom) { /* never a truncated image */
    if (oom) snprintf(why, whysz, "out of memory");
    else snprintf(why, whysz, "cannot read the image '%s'", path);
    tl_buf_release(&raw);
    return NULL;
  }
  const char *ext = strrchr(path, '.');
  const char *mime = "image/png";
  if (ext && (!strcasecmp(ext, ".jpg") || !strcasecmp(ext, ".jpeg"))) mime = "image/jpeg";
  else if (ext && !strcasecmp(ext, ".gif")) mime = "image/gif";
  else if (ext && !strcasecmp(ext, ".webp")) mime = "image/webp";
  tl_buf b;
  tl_buf_init(&b);
  /* the prefix, then 4 characters per 3 bytes (RFC 4648), written in place: the size is known */
  const size_t n = raw.len, n64 = (n + 2) / 3 * 4;
  if (tl_buf_printf(&b, "data:%s;base64,", mime) != TL_OK || tl_buf_extend(&b, n64) != TL_OK) {
    snprintf(why, whysz, "out of memory");
    tl_buf_release(&raw);
    tl_buf_release(&b);
    return NULL;
  }
  const unsigned char *s = (const unsigned char *)raw.data;
  char *o = b.data + b.len - n64;
  size_t i = 0;
  for (; i + 3 <= n; i += 3, o += 4) {
    const unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
    o[0] = b64_tab[v >> 18 & 63];
    o[1] = b64_tab[v >> 12 & 63];
    o[2] = b64_tab[v >> 6 & 63];
    o[3] = b64_tab[v & 63];
  }
  if (i < n) { /* 1 or 2 bytes left: padded with '=' */
    const unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0u);
    o[0] = b64_tab[v >> 18 & 63];
    o[1] = b64_tab[v >> 12 & 63];
    o[2] = i + 1 < n ? b64_tab[v >> 6 & 63] : '=';
    o[3] = '=';
  }
  tl_buf_release(&raw);
  return tl_buf_detach(&b);
}

/* Percent-encodes what a header value may not hold. */
static void hdr_put(tl_buf *b, const char *s) {
  static const char HEX[] = "0123456789ABCDEF";
  const unsigned char *run = (const unsigned char *)(s ? s : ""), *p = run;
  for (;; p++) {
    if (*p >= 0x20 && *p < 0x7f && *p != '%' && *p != '/') continue;
    tl_buf_append(b, (const char *)run, (size_t)(p - run));
    if (!*p) break;
    const char e[3] = {'%', HEX[*p >> 4], HEX[*p & 15]};
    tl_buf_append(b, e, 3);
    run = p + 1;
  }
}

/* Builds q's body from the request (tl_http_body). Returns 0, or -1 with why set (the request
 * cannot be made: a permanent failure, e.g. an unreadable image). */
static int build_body(tl_openai *o, const tl_eng_request *rq, req *q, char *why, size_t whysz) {
  const tl_http_cfg *c = &o->cfg;
  if (c->completions && rq->nimages) {
    snprintf(why, whysz, "the completions API takes no images: use \"api\": \"chat\"");
    return -1;
  }
  char **urls = NULL;
  if (rq->nimages) {
    urls = calloc((size_t)rq->nimages, sizeof *urls);
    if (!urls) goto oom;
    for (int k = 0; k < rq->nimages; k++)
      if (!(urls[k] = image_url(rq->images[k], why, whysz))) {
        for (int i = 0; i < k; i++) free(urls[i]);
        free(urls);
        return -1;
      }
  }
  tl_buf b;
  tl_buf_init(&b);
  /* room for a body the size of the last one (at most 64 KiB): one allocation where doubling
   * from 64 bytes took six; a larger body still grows, a smaller one wastes what it leaves */
  if (o->body_hint) (void)tl_buf_reserve(&b, o->body_hint); /* out of memory: tl_http_body says so */
  double temp = 0;
  tl_status st = tl_http_body(&b, &o->tpl, c, o->model ? o->model : rq->key.model, rq, urls, &temp);
  for (int k = 0; k < rq->nimages; k++) free(urls[k]);
  free(urls);
  if (st) {
    tl_buf_release(&b);
    goto oom;
  }
  q->body_len = b.len;
  q->body = tl_buf_detach(&b);
  o->body_hint = q->body_len < 65536 ? q->body_len : 65536;
  /* the cache key: role, stage, body; reads only when the reply is reproducible */
  if (o->cache_dir) {
    char pre[64];
    int np = snprintf(pre, sizeof pre, "tally-cache-v1\n%s\n%d\n", tl_role_name(o->role), rq->key.stage);
    sha256_hex(pre, (size_t)np, q->body, q->body_len, q->hash);
    q->cache_read = temp == 0 || c->send_seed || c->cache_unseeded;
  }
  return 0;
oom:
  snprintf(why, whysz, "out of memory");
  return -1;
}

/* ---- replies in ---- */
/* The text scoring sees: with think stripping, what follows the last </think> (leading
 * whitespace dropped). *stripped = 1 when that is not the whole content. */
static const char *answer_part(const tl_openai *o, const char *content, int *stripped) {
  *stripped = 0;
  if (o->cfg.think_keep || !content) return content;
  const char *end = NULL;
  for (const char *p = strstr(content, "</think>"); p; p = strstr(p + 1, "</think>")) end = p;
  if (!end) return content;
  end += strlen("</think>");
  while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t') end++;
  *stripped = 1;
  return end;
}

/* A reply's fields (tally/oai_reply.h), as read from a server's completion or from a cached reply
 * object; its id is the request id: the server's x-request-id header when it sent one, else the
 * completion's id. */
typedef tl_oai_reply reply_view;

/* Appends v's members "finish_reason", "prompt_tokens", "completion_tokens", "model",
 * "request_id", "n_choices", then "content_null" when with_null, then "logprobs", each when
 * present; *first is cleared once one is written. The reply object the cache stores and the
 * meta share them, in this order. */
static tl_status put_fields(tl_buf *b, const reply_view *v, int with_null, int *first) {
  tl_status st = TL_OK;
  if (v->finish_reason) st |= tl_json_key(b, "finish_reason", *first) | tl_json_cstr(b, v->finish_reason), *first = 0;
  if (!isnan(v->prompt_tokens)) st |= tl_json_key(b, "prompt_tokens", *first) | tl_json_num(b, v->prompt_tokens), *first = 0;
  if (!isnan(v->completion_tokens))
    st |= tl_json_key(b, "completion_tokens", *first) | tl_json_num(b, v->completion_tokens), *first = 0;
  if (v->model) st |= tl_json_key(b, "model", *first) | tl_json_cstr(b, v->model), *first = 0;
  if (v->id) st |= tl_json_key(b, "request_id", *first) | tl_json_cstr(b, v->id), *first = 0;
  if (v->n_choices > 1) st |= tl_json_key(b, "n_choices", *first) | tl_json_num(b, v->n_choices), *first = 0;
  if (with_null && !v->content) st |= tl_json_key(b, "content_null", *first) | tl_buf_puts(b, "true"), *first = 0;
  if (v->logprobs) {
    char *t = cJSON_PrintUnformatted(v->logprobs);
    st |= tl_json_key(b, "logprobs", *first) | (t ? tl_buf_puts(b, t) : TL_ENOMEM), *first = 0;
    free(t);
  }
  return st;
}

/* The reply object the cache stores: {"content" | "content_null", "reasoning", then
 * put_fields'}, each when present. */
static tl_status view_json(tl_buf *b, const reply_view *v) {
  tl_status st = tl_buf_append(b, "{", 1);
  if (v->content) st |= tl_json_key(b, "content", 1) | tl_json_cstr(b, v->content);
  else st |= tl_buf_puts(b, "\"content_null\":true");
  if (v->reasoning) st |= tl_json_key(b, "reasoning", 0) | tl_json_cstr(b, v->reasoning);
  int first = 0;
  st |= put_fields(b, v, 0, &first);
  return st | tl_buf_append(b, "}", 1);
}

/* The view of a cached reply object (view_json's form; a member of another type counts as
 * absent). */
static void view_of_cached(const cJSON *rep, reply_view *v) {
  memset(v, 0, sizeof *v);
  const char *const S[] = {"content", "reasoning", "finish_reason", "model", "request_id"};
  const char **sdst[] = {&v->content, &v->reasoning, &v->finish_reason, &v->model, &v->id};
  for (int i = 0; i < 5; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(rep, S[i]);
    *sdst[i] = cJSON_IsString(x) ? x->valuestring : NULL;
  }
  const cJSON *pt = cJSON_GetObjectItemCaseSensitive(rep, "prompt_tokens");
  const cJSON *ct = cJSON_GetObjectItemCaseSensitive(rep, "completion_tokens");
  const cJSON *nc = cJSON_GetObjectItemCaseSensitive(rep, "n_choices");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(rep, "logprobs");
  v->prompt_tokens = cJSON_IsNumber(pt) ? pt->valuedouble : NAN;
  v->completion_tokens = cJSON_IsNumber(ct) ? ct->valuedouble : NAN;
  v->n_choices = cJSON_IsNumber(nc) ? nc->valueint : 0;
  v->logprobs = lp && !cJSON_IsNull(lp) ? lp : NULL;
}

/* Hands q's reply on: the text scoring sees, the request id as its source, and the evidence
 * (meta), written in this order: "finish_reason", "prompt_tokens", "completion_tokens", "model",
 * "request_id", "n_choices", "content_null", "logprobs" (each when present), "attempts",
 * "cached", "latency_ms" (fresh replies), "endpoint" (fresh), "raw" (the whole text, when the
 * reasoning was sent apart or stripped from the answer). */
static tl_status emit(tl_openai *o, req *q, const reply_view *v, int cached, double latency, int ep) {
  tl_eng_reply r;
  memset(&r, 0, sizeof r);
  r.tag = q->tag;
  const char *ctext = v->content ? v->content : "";
  int stripped = 0;
  r.text = tl_strdup(answer_part(o, ctext, &stripped));
  if (v->id && v->id[0]) r.source = tl_strdup(v->id);
  tl_buf *m = &o->tmp;
  tl_buf_reset(m);
  tl_status st = tl_buf_append(m, "{", 1);
  int first = 1;
  st |= put_fields(m, v, 1, &first);
  st |= tl_json_key(m, "attempts", first) | tl_json_num(m, cached ? 0 : q->attempts);
  st |= tl_buf_puts(m, cached ? ",\"cached\":true" : ",\"cached\":false");
  const long long lat_us = (long long)floor(1e6 * latency + 0.5);
  if (!cached) st |= tl_json_key(m, "latency_ms", 0) | tl_json_milli(m, lat_us);
  if (ep >= 0) st |= tl_json_key(m, "endpoint", 0) | tl_json_cstr(m, o->ep[ep].base);
  tl_buf raw;
  tl_buf_init(&raw);
  const int has_raw = v->reasoning || stripped;
  if (has_raw) {
    if (v->reasoning) {
      st |= tl_buf_puts(&raw, "<think>") | tl_buf_puts(&raw, v->reasoning) | tl_buf_puts(&raw, "</think>\n\n");
    }
    st |= tl_buf_puts(&raw, ctext);
    st |= tl_json_key(m, "raw", 0) | tl_json_str(m, raw.data, raw.len);
  }
  st |= tl_buf_append(m, "}", 1);
  r.meta = st ? NULL : tl_strndup(m->data, m->len);
  scrub_str(o, r.text); /* a server that echoes the key: never stored */
  scrub_str(o, r.meta);
  if (has_raw) scrub(o, raw.data, raw.len);
  /* the same evidence as fields, for the item tables (tl_evidence: what the meta says) */
  r.ev = tl_evidence_new(v->finish_reason, v->model, v->id,
                         ep >= 0 ? o->ep[ep].base : NULL, has_raw ? raw.data : NULL);
  tl_buf_release(&raw);
  if (!r.text || !r.meta || !r.ev) {
    tl_eng_reply_release(&r);
    return TL_ENOMEM;
  }
  r.ev->prompt_tokens = v->prompt_tokens;
  r.ev->completion_tokens = v->completion_tokens;
  r.ev->latency_ms = cached ? NAN : (double)lat_us / 1e3;
  r.ev->attempts = cached ? 0 : q->attempts;
  r.ev->cached = cached;
  if (cached) o->st.cache_hits++;
  else o->st.replies++;
  return push_reply(o, &r);
}

/* ---- transfers ---- */
static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  req *q = ud;
  if ((double)(q->resp.len + sz * n) > q->max_bytes) { /* stops the transfer: CURLE_WRITE_ERROR */
    q->too_big = 1;
    return 0;
  }
  return tl_buf_append(&q->resp, p, sz * n) == TL_OK ? sz * n : 0;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
  req *q = ud;
  size_t len = sz * n;
  if (len > 13 && !strncasecmp(p, "x-request-id:", 13)) {
    const char *v = p + 13;
    while (*v == ' ') v++;
    size_t k = (size_t)(p + len - v);
    while (k && (v[k - 1] == '\r' || v[k - 1] == '\n' || v[k - 1] == ' ')) k--;
    if (k >= sizeof q->reqid) k = sizeof q->reqid - 1;
    memcpy(q->reqid, v, k);
    q->reqid[k] = 0;
  } else if (len > 12 && !strncasecmp(p, "retry-after:", 12)) {
    q->retry_after = atof(p + 12); /* seconds (an HTTP date reads as 0: the backoff applies) */
  }
  return len;
}

/* The endpoint with the most room now, or -1. */
static int pick_endpoint(const tl_openai *o, double t) {
  int best = -1;
  double room = 0;
  for (int e = 0; e < o->nep; e++) {
    const endpoint *p = &o->ep[e];
    if (p->paused_until > t || p->dead) continue;
    double r = floor(p->limit) - p->in_flight;
    if (r >= 1 && r > room) {
      room = r;
      best = e;
    }
  }
  return best;
}

/* A new easy handle with the options every transfer shares; start() sets the rest. Handles
 * are kept for reuse (o->idle) with these options in place: libcurl keeps an option until it is
 * set again. */
static CURL *new_handle(tl_openai *o) {
  CURL *h = curl_easy_init();
  if (!h) return NULL;
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(1e3 * o->cfg.connect_timeout_s));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(1e3 * o->cfg.request_timeout_s));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, o);
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
  curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, o);
  if (o->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
  if (o->ca_dir) curl_easy_setopt(h, CURLOPT_CAPATH, o->ca_dir);
  if (!o->proxy_env) { /* what libcurl would find: no proxy, so no_proxy is moot */
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_NOPROXY, "");
  }
  return h;
}

static char HDR_JSON[] = "Content-Type: application/json";
static char HDR_NO_EXPECT[] = "Expect:"; /* no 100-continue round trip */

static tl_status start(tl_openai *o, req *q, int e) {
  CURL *h = o->nidle ? o->idle[--o->nidle] : new_handle(o);
  if (!h) return TL_ENOMEM;
  q->h = h;
  q->ep = e;
  q->attempts++;
  q->t_sent = now_s();
  if (q->attempts == 1) q->t_first = q->t_sent;
  q->retry_after = 0;
  q->too_big = 0;
  q->max_bytes = o->cfg.max_reply_bytes > 0 ? o->cfg.max_reply_bytes : 1e18;
  q->reqid[0] = 0;
  tl_buf_reset(&q->resp);
  tl_buf_reserve(&q->resp, 2048); /* most replies fit: no regrowth while they arrive */
  if (!q->hdrs[0].data) {
    char *v[4] = {HDR_JSON, HDR_NO_EXPECT, o->cfg.key_header ? q->key_hdr : NULL, o->api_key_hdr};
    int k = 0;
    for (int i = 0; i < 4; i++)
      if (v[i]) {
        q->hdrs[k].data = v[i];
        q->hdrs[k].next = NULL;
        if (k) q->hdrs[k - 1].next = &q->hdrs[k];
        k++;
      }
  }
  curl_easy_setopt(h, CURLOPT_CURLU, o->ep[e].uh);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, q->hdrs);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, q);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, q);
  curl_easy_setopt(h, CURLOPT_PRIVATE, q);
  if (curl_multi_add_handle(o->multi, h) != CURLM_OK) return TL_ENGINE;
  q->aprev = NULL;
  q->anext = o->active;
  if (o->active) o->active->aprev = q;
  o->active = q;
  o->ep[e].in_flight++;
  o->nactive++;
  o->st.sent++;
  if (q->attempts > 1) o->st.retries++;
  return TL_OK;
}

/* The reason of the last endpoint to die when every endpoint is dead, else NULL. */
static const char *all_dead(const tl_openai *o) {
  const char *why = NULL;
  for (int e = 0; e < o->nep; e++) {
    if (!o->ep[e].dead) return NULL;
    why = o->ep[e].dead;
  }
  return why;
}

/* Moves due retries to the front of the FIFO (all of them when every endpoint is dead), then
 * starts requests while an endpoint has room. */
/* Takes the first request of the FIFO (there is one). */
static req *pop_waiting(tl_openai *o) {
  req *q = o->q_head;
  o->q_head = q->next;
  if (!o->q_head) o->q_tail = NULL;
  q->next = NULL;
  o->nwait--;
  return q;
}

static tl_status start_ready(tl_openai *o) {
  double t = now_s();
  const char *dead = all_dead(o);
  for (req **pp = &o->retry; *pp;) {
    req *q = *pp;
    if (q->not_before <= t || dead) {
      *pp = q->next;
      q->next = o->q_head; /* retries go first: they are the oldest */
      o->q_head = q;
      if (!o->q_tail) o->q_tail = q;
    } else {
      pp = &q->next;
    }
  }
  while (dead && o->q_head) { /* nothing will ever serve them: each fails now, with the reason */
    tl_status st = give_up(o, pop_waiting(o), dead);
    if (st) return st;
  }
  while (o->q_head) {
    int e = pick_endpoint(o, t);
    if (e < 0) break;
    req *q = pop_waiting(o);
    tl_status st = start(o, q, e);
    if (st) {
      tl_status s2 = give_up(o, q, "cannot start the HTTP transfer");
      return s2 ? s2 : st;
    }
  }
  return TL_OK;
}

/* Seconds until the next retry or pause end (<= cap). */
static double next_event(const tl_openai *o, double cap) {
  double t = now_s(), w = cap;
  for (const req *q = o->retry; q; q = q->next)
    if (q->not_before - t < w) w = q->not_before - t;
  if (o->q_head)
    for (int e = 0; e < o->nep; e++)
      if (o->ep[e].paused_until > t && o->ep[e].paused_until - t < w) w = o->ep[e].paused_until - t;
  return w < 0 ? 0 : w;
}

/* One finished transfer. */
static tl_status finish(tl_openai *o, req *q, CURLcode rc) {
  double t = now_s(), lat = t - q->t_sent;
  int e = q->ep;
  endpoint *p = &o->ep[e];
  long code = 0;
  curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &code);
  if (q->aprev) q->aprev->anext = q->anext;
  else o->active = q->anext;
  if (q->anext) q->anext->aprev = q->aprev;
  q->aprev = q->anext = NULL;
  curl_multi_remove_handle(o->multi, q->h);
  if (o->nidle < o->capidle) o->idle[o->nidle++] = q->h;
  else curl_easy_cleanup(q->h);
  q->h = NULL;
  p->in_flight--;
  o->nactive--;
  char why[512];
  int retry = 1;
  if (rc != CURLE_OK && q->too_big) {
    retry = 0; /* the same request gets the same reply */
    o->st.malformed++;
    snprintf(why, sizeof why, "%s: the reply is over max_reply_bytes (%.0f bytes): refused", p->base, q->max_bytes);
  } else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM ||
             rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CRL_BADFILE || rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH) {
    retry = 0; /* a certificate does not change between attempts */
    o->st.conn_errors++;
    snprintf(why, sizeof why, "%s: %s (a private CA: \"tls\": {\"ca_bundle\": FILE} or CURL_CA_BUNDLE)", p->base,
             curl_easy_strerror(rc));
  } else if (rc != CURLE_OK) {
    if (rc == CURLE_OPERATION_TIMEDOUT) o->st.timeouts++;
    else o->st.conn_errors++;
    snprintf(why, sizeof why, "%s: %s", p->base, curl_easy_strerror(rc));
  } else if (code == 200) {
    /* the fields by the one-pass scan, or from cJSON's tree when it declines (the same fields);
     * a reply that is not valid UTF-8, holds a NUL, is nested past cJSON's limit or has no
     * content is malformed: retried, then engine_error (never scored as an empty answer) */
    reply_view v;
    cJSON *j = NULL;
    size_t bad = 0;
    int ok = 0;
    if (!tl_utf8_valid(q->resp.data, q->resp.len, &bad)) {
      snprintf(why, sizeof why, "%s: the reply is not valid UTF-8 (at byte %zu)", p->base, bad);
    } else if (has_nul_escape(q->resp.data, q->resp.len)) {
      snprintf(why, sizeof why, "%s: the reply holds a NUL character (\\u0000), which would cut its text", p->base);
    } else {
      ok = tl_oai_reply_scan(q->resp.data, q->resp.len, o->cfg.completions, &v, &o->rstr);
      if (!ok) {
        j = cJSON_ParseWithLength(q->resp.data, q->resp.len);
        ok = tl_oai_reply_json(j, q->resp.len, o->cfg.completions, &v, why, sizeof why) == 0;
        if (!ok && !j && json_depth(q->resp.data, q->resp.len) > CJSON_NESTING_LIMIT)
          snprintf(why, sizeof why, "%s: the reply is nested deeper than %d levels", p->base, CJSON_NESTING_LIMIT);
      }
      if (ok && !v.content) {
        ok = 0;
        snprintf(why, sizeof why, "%s: the reply has no content (null or absent): the server gave no answer", p->base);
      } else if (ok && !tl_utf8_valid(v.content, strlen(v.content), NULL)) {
        ok = 0; /* an escaped lone surrogate decodes to no valid UTF-8 */
        snprintf(why, sizeof why, "%s: the reply's content is not valid UTF-8 (an unpaired surrogate escape)", p->base);
      }
    }
    if (ok && memmem(q->resp.data, q->resp.len, "\"timings\"", 9)) {
      /* llama.cpp's own times of the request (prompt and generation): against the latency tally
       * saw, they say how long the request queued (summed in the stats, per role) */
      cJSON *tj = j ? j : cJSON_ParseWithLength(q->resp.data, q->resp.len);
      const cJSON *tm = tj ? cJSON_GetObjectItemCaseSensitive(tj, "timings") : NULL;
      const cJSON *pm = tm ? cJSON_GetObjectItemCaseSensitive(tm, "prompt_ms") : NULL;
      const cJSON *dm = tm ? cJSON_GetObjectItemCaseSensitive(tm, "predicted_ms") : NULL;
      if (cJSON_IsNumber(pm) && cJSON_IsNumber(dm) && pm->valuedouble >= 0 && dm->valuedouble >= 0) {
        o->st.server_timed++;
        o->st.server_us += (uint64_t)(1e3 * (pm->valuedouble + dm->valuedouble));
        o->st.latency_timed_us += (uint64_t)(1e6 * lat);
      }
      if (tj != j) cJSON_Delete(tj);
    }
    if (ok) {
      if (q->reqid[0]) v.id = q->reqid;
      /* grow while fast and in use; the fastest reply is the endpoint's floor */
      if (p->lat_min == 0 || lat < p->lat_min) p->lat_min = lat;
      if (lat <= 2 * p->lat_min && p->in_flight + 1 >= (int)p->limit)
        set_limit(o, e, p->limit + (p->backed_off ? 1.0 / p->limit : 1.0), 'g');
      if (o->cache_dir && q->hash[0]) {
        tl_buf rj;
        tl_buf_init(&rj);
        if (view_json(&rj, &v) == TL_OK) {
          scrub(o, rj.data, rj.len); /* the cache is stored: no key in it either */
          cache_put(o, q, rj.data);
        }
        tl_buf_release(&rj);
      }
      tl_status st = emit(o, q, &v, 0, t - q->t_first, e);
      cJSON_Delete(j);
      req_free(o, q);
      return st;
    }
    cJSON_Delete(j);
    o->st.malformed++;
  } else if (code == 429) {
    o->st.http_429++;
    p->backed_off = 1;
    set_limit(o, e, p->limit / 2, 's');
    if (q->retry_after > 0) p->paused_until = t + (q->retry_after < 600 ? q->retry_after : 600);
    snprintf(why, sizeof why, "%s: HTTP 429 (rate limited)", p->base);
  } else if (code == 408 || code >= 500) {
    o->st.http_5xx += code >= 500;
    /* the server's own words, bounded; the same words twice is a request it can never serve */
    cJSON *j = cJSON_ParseWithLength(q->resp.data, q->resp.len);
    const cJSON *er = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
    const cJSON *msg = cJSON_IsObject(er) ? cJSON_GetObjectItemCaseSensitive(er, "message") : er;
    if (cJSON_IsString(msg) && msg->valuestring[0])
      snprintf(why, sizeof why, "%s: HTTP %ld: %.300s", p->base, code, msg->valuestring);
    else if (q->resp.len && tl_utf8_valid(q->resp.data, q->resp.len < 300 ? q->resp.len : 300, NULL))
      snprintf(why, sizeof why, "%s: HTTP %ld: %.*s", p->base, code, (int)(q->resp.len < 300 ? q->resp.len : 300),
               q->resp.data);
    else
      snprintf(why, sizeof why, "%s: HTTP %ld", p->base, code);
    scrub(o, why, strlen(why));
    if (code >= 500 && strlen(why) > strlen(p->base) + 12 && q->last_err && strcmp(q->last_err, why) == 0)
      retry = 0;
    cJSON_Delete(j);
  } else {
    /* refused: a retry would get the same answer */
    retry = 0;
    cJSON *j = cJSON_ParseWithLength(q->resp.data, q->resp.len);
    const cJSON *er = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
    const cJSON *msg = cJSON_IsObject(er) ? cJSON_GetObjectItemCaseSensitive(er, "message") : er;
    snprintf(why, sizeof why, "%s: HTTP %ld: %.300s", p->base, code,
             cJSON_IsString(msg) ? msg->valuestring : q->resp.len ? q->resp.data : "(no body)");
    cJSON_Delete(j);
    if ((code == 401 || code == 403) && !p->dead) {
      /* the key or the account: every later request would get the same; the endpoint is done */
      size_t n = strlen(why);
      snprintf(why + n, sizeof why - n, " (the endpoint refused the credentials: no more requests go there)");
      p->dead = tl_strdup(why);
      o->st.dead_endpoints++;
    }
  }
  scrub(o, why, strlen(why));
  free(q->last_err);
  q->last_err = tl_strdup(why);
  if (!retry || q->attempts > o->cfg.max_retries) return give_up(o, q, why);
  /* backoff: base * 2^(k-1), capped, times a jitter in [0.5, 1); never before Retry-After */
  double d = o->cfg.backoff_s * pow(2.0, q->attempts - 1);
  if (d > o->cfg.backoff_max_s) d = o->cfg.backoff_max_s;
  d *= 0.5 + 0.5 * (double)(splitmix(&o->rng) >> 11) / 9007199254740992.0;
  if (q->retry_after > d) d = q->retry_after;
  q->not_before = t + d;
  q->next = o->retry;
  o->retry = q;
  if (++o->nwait > o->st.max_waiting) o->st.max_waiting = o->nwait;
  return TL_OK;
}

static tl_status drain(tl_openai *o) {
  CURLMsg *m;
  int left;
  tl_status st = TL_OK;
  while ((m = curl_multi_info_read(o->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    req *q = NULL;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q);
    CURLcode rc = m->data.result;
    tl_status s2 = q ? finish(o, q, rc) : TL_OK;
    if (!st) st = s2;
  }
  return st;
}

/* ---- the engine interface ---- */
/* A dry run's line for q: role, unit key (as in the X-Tally-Key header), URL, cached, body. */
static void dry_line(tl_openai *o, const req *q, int cached) {
  fprintf(o->dry, "{\"role\":\"%s\",\"key\":\"%s\",\"url\":\"%s\",\"cached\":%s,\"body\":%s}\n",
          tl_role_name(o->role), q->key_hdr + strlen("X-Tally-Key: "), o->nep ? o->ep[0].url : "",
          cached ? "true" : "false", q->body);
}

static tl_status submit(tl_engine *eng, const tl_eng_request *rq) {
  tl_openai *o = (tl_openai *)eng;
  req *q = calloc(1, sizeof *q);
  if (!q) return TL_ENOMEM;
  q->tag = rq->tag;
  q->ep = -1;
  tl_buf_init(&q->resp);
  q->stage = rq->key.stage;
  if (o->cfg.key_header || o->dry) { /* the key, for the header or the dry run's line */
    tl_buf kb;
    tl_buf_init(&kb);
    tl_buf_puts(&kb, "X-Tally-Key: ");
    const char *parts[4] = {rq->key.bench, rq->key.id, rq->key.model, rq->key.variant};
    for (int i = 0; i < 4; i++) {
      hdr_put(&kb, parts[i]);
      tl_buf_puts(&kb, "/");
    }
    tl_json_num(&kb, rq->key.seed); /* integers: their decimal digits */
    tl_buf_append(&kb, "/", 1);
    tl_json_num(&kb, rq->key.sub);
    tl_buf_append(&kb, "/", 1);
    tl_json_num(&kb, rq->key.stage);
    if (!(q->key_hdr = tl_buf_detach(&kb))) {
      req_free(o, q);
      return TL_ENOMEM;
    }
  }
  char why[512];
  if (build_body(o, rq, q, why, sizeof why) != 0) {
    if (!strcmp(why, "out of memory")) {
      req_free(o, q);
      return TL_ENOMEM;
    }
    if (o->dry) { /* the dry run shows the request that cannot be built, and why */
      cJSON *w = cJSON_CreateString(why);
      char *ws = w ? cJSON_PrintUnformatted(w) : NULL;
      fprintf(o->dry, "{\"role\":\"%s\",\"key\":\"%s\",\"error\":%s}\n", tl_role_name(o->role), q->key_hdr + strlen("X-Tally-Key: "),
              ws ? ws : "\"?\"");
      free(ws);
      cJSON_Delete(w);
    }
    return give_up(o, q, why);
  }
  if (o->cache_dir && q->hash[0] && q->cache_read) {
    cJSON *j = cache_get(o, q);
    if (j) {
      tl_status st = TL_OK;
      if (o->dry) dry_line(o, q, 1);
      reply_view v;
      view_of_cached(cJSON_GetObjectItemCaseSensitive(j, "reply"), &v);
      st = emit(o, q, &v, 1, 0, -1);
      cJSON_Delete(j);
      req_free(o, q);
      return st;
    }
  }
  if (o->dry) {
    dry_line(o, q, 0);
    tl_eng_reply r;
    memset(&r, 0, sizeof r);
    r.tag = q->tag;
    r.error = tl_strdup("dry run: not sent");
    req_free(o, q);
    return push_reply(o, &r);
  }
  if (o->q_tail) o->q_tail->next = q;
  else o->q_head = q;
  o->q_tail = q;
  if (++o->nwait > o->st.max_waiting) o->st.max_waiting = o->nwait;
  return TL_OK;
}

/* Socket bookkeeping. libcurl says, per socket, what it waits for (CURLMOPT_SOCKETFUNCTION):
 * after every reply on a kept-alive connection it says "nothing" (CURL_POLL_REMOVE) and at the
 * next request on it "readable" again. Taking the socket out of the epoll set and putting it
 * back each time cost two epoll_ctl calls a request. A socket tally opened itself (FD_OURS:
 * CURLOPT_OPENSOCKETFUNCTION; libcurl closes it through CURLOPT_CLOSESOCKETFUNCTION, so tally
 * sees its end) therefore stays in the set while libcurl waits for nothing on it (FD_WANT
 * clear); an event on such a socket takes it out then (an idle connection the server closed),
 * and the event is dropped: libcurl checks a connection before it reuses it. Any other socket
 * (libcurl's own, e.g. its resolver's) follows libcurl's word at once. */
enum { FD_IN = 1, FD_OUT = 2, FD_WANT = 4, FD_OURS = 8 };

/* The state of socket s, the table grown to hold it; NULL when out of memory. */
static unsigned char *fd_state(tl_openai *o, curl_socket_t s) {
  if (s < 0) return NULL;
  if (s >= o->fdcap) {
    int cap = o->fdcap ? o->fdcap : 256;
    while (cap <= s) cap *= 2;
    unsigned char *t = realloc(o->fdst, (size_t)cap);
    if (!t) return NULL;
    memset(t + o->fdcap, 0, (size_t)(cap - o->fdcap));
    o->fdst = t;
    o->fdcap = cap;
  }
  return &o->fdst[s];
}

static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a) {
  (void)purpose;
  tl_openai *o = ud;
  curl_socket_t s = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  if (s < 0) return CURL_SOCKET_BAD;
  unsigned char *st = fd_state(o, s);
  if (!st) {
    close(s);
    return CURL_SOCKET_BAD;
  }
  *st = FD_OURS; /* a new descriptor: in no epoll set, whatever an earlier one of its number was */
  return s;
}

static int on_close_socket(void *ud, curl_socket_t s) {
  tl_openai *o = ud;
  if (s >= 0 && s < o->fdcap) o->fdst[s] = 0; /* closing it takes it out of the epoll set */
  return close(s);
}

/* libcurl's socket callback: the epoll set holds every socket libcurl waits on, with the events
 * it waits for (and, lazily, tally's own sockets it waits on no more; see above). */
static int on_socket(CURL *e, curl_socket_t s, int what, void *ud, void *socketp) {
  (void)e;
  (void)socketp;
  tl_openai *o = ud;
  unsigned char *st = fd_state(o, s);
  if (!st) return -1; /* out of memory: libcurl fails the transfers on this socket */
  unsigned char reg = *st & (FD_IN | FD_OUT);
  if (what == CURL_POLL_REMOVE) {
    if (*st & FD_OURS) {
      *st &= (unsigned char)~FD_WANT;
    } else {
      if (reg) epoll_ctl(o->epfd, EPOLL_CTL_DEL, s, NULL);
      *st = 0;
    }
    return 0;
  }
  unsigned char want = (unsigned char)((what & CURL_POLL_IN ? FD_IN : 0) | (what & CURL_POLL_OUT ? FD_OUT : 0));
  if (want != reg || !want) {
    struct epoll_event ev = {0};
    ev.events = (want & FD_IN ? EPOLLIN : 0u) | (want & FD_OUT ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (epoll_ctl(o->epfd, reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0)
      epoll_ctl(o->epfd, reg ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev); /* our state was stale */
  }
  *st = (unsigned char)((*st & FD_OURS) | want | FD_WANT);
  return 0;
}

/* An event on socket s: 1 to hand it to libcurl; 0 when libcurl waits for nothing on it (one of
 * tally's sockets left in the set), which takes it out of the set now. */
static int fd_event_wanted(tl_openai *o, int s) {
  if (s < 0 || s >= o->fdcap || (o->fdst[s] & FD_WANT)) return 1;
  if (o->fdst[s] & (FD_IN | FD_OUT)) epoll_ctl(o->epfd, EPOLL_CTL_DEL, s, NULL);
  o->fdst[s] &= FD_OURS;
  return 0;
}

/* libcurl's timer callback: when to call curl_multi_socket_action(CURL_SOCKET_TIMEOUT). */
static int on_timer(CURLM *m, long timeout_ms, void *ud) {
  (void)m;
  tl_openai *o = ud;
  o->timer_due = timeout_ms < 0 ? -1 : now_s() + timeout_ms / 1e3;
  return 0;
}

static void socket_timeout(tl_openai *o) {
  int running = 0;
  o->timer_due = -1; /* the call sets the next one */
  curl_multi_socket_action(o->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

static int poll_(tl_engine *eng, tl_eng_reply *out, int max, int timeout_ms) {
  tl_openai *o = (tl_openai *)eng;
  double deadline = now_s() + timeout_ms / 1e3;
  struct epoll_event evs[64];
  for (;;) {
    if (start_ready(o)) break;
    if (o->timer_due >= 0 && o->timer_due <= now_s()) socket_timeout(o);
    if (drain(o)) break;
    if (o->nready > o->rhead) break;
    double t = now_s(), left = deadline - t;
    if (left <= 0 || (o->nactive == 0 && o->nwait == 0)) break;
    double w = next_event(o, left);
    if (o->timer_due >= 0 && o->timer_due - t < w) w = o->timer_due - t;
    if (w < 0) w = 0;
    int ms = (int)(w * 1e3) + (w > 0 ? 1 : 0);
    int n = epoll_wait(o->epfd, evs, (int)(sizeof evs / sizeof *evs), ms);
    for (int i = 0; i < n; i++) {
      if (!fd_event_wanted(o, evs[i].data.fd)) continue;
      int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                 (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
      int running = 0;
      curl_multi_socket_action(o->multi, evs[i].data.fd, mask, &running);
    }
    if (n == 0 && o->timer_due >= 0 && o->timer_due <= now_s()) socket_timeout(o);
  }
  start_ready(o); /* the slots just freed start at once, while the caller works */
  int k = 0;
  while (k < max && o->rhead < o->nready) out[k++] = o->ready[o->rhead++];
  if (o->rhead == o->nready) o->rhead = o->nready = 0;
  return k;
}

static size_t in_flight(const tl_engine *eng) {
  const tl_openai *o = (const tl_openai *)eng;
  return o->nactive + o->nwait + (o->nready - o->rhead);
}

static void free_(tl_engine *eng) {
  tl_openai *o = (tl_openai *)eng;
  if (!o) return;
  /* transfers in flight: their handles are removed and freed with them */
  for (req *q = o->active, *n; q; q = n) {
    n = q->anext;
    req_free(o, q);
  }
  for (req *q = o->q_head, *n; q; q = n) {
    n = q->next;
    req_free(o, q);
  }
  for (req *q = o->retry, *n; q; q = n) {
    n = q->next;
    req_free(o, q);
  }
  for (size_t i = o->rhead; i < o->nready; i++) tl_eng_reply_release(&o->ready[i]);
  free(o->ready);
  for (int i = 0; i < o->nidle; i++) curl_easy_cleanup(o->idle[i]);
  free(o->idle);
  if (o->multi) curl_multi_cleanup(o->multi); /* closes the kept connections: on_close_socket */
  if (o->epfd >= 0) close(o->epfd);
  free(o->fdst);
  for (int e = 0; e < o->nep; e++) {
    free(o->ep[e].base);
    free(o->ep[e].dead);
    free(o->ep[e].root);
    free(o->ep[e].served);
    free(o->ep[e].url);
    curl_url_cleanup(o->ep[e].uh);
    free(o->ep[e].health);
  }
  free(o->ep);
  free(o->model);
  free(o->api_key_hdr);
  if (o->key) memset(o->key, 0, strlen(o->key));
  free(o->key);
  free(o->health_path);
  free(o->ca_file);
  free(o->ca_dir);
  free(o->cache_err);
  tl_http_body_free(&o->tpl);
  free(o->cache_dir);
  free(o->hist);
  tl_buf_release(&o->tmp);
  tl_buf_release(&o->rstr);
  free(o);
}

static const tl_engine_vtbl VT = {"openai", submit, poll_, in_flight, free_};

tl_engine *tl_openai_engine(tl_openai *o) { return &o->base; }

static tl_status add_endpoint(tl_openai *o, const char *tmpl, int local_rank, tl_err *err) {
  char lr[16], port[16];
  snprintf(lr, sizeof lr, "%d", local_rank);
  snprintf(port, sizeof port, "%d", o->cfg.port_base + local_rank);
  char *a = subst(tmpl, "{local_rank}", lr);
  char *base = a ? subst(a, "{port}", port) : NULL;
  free(a);
  if (!base) return TL_ENOMEM;
  size_t n = strlen(base);
  while (n && base[n - 1] == '/') base[--n] = 0;
  endpoint *p = &o->ep[o->nep++];
  memset(p, 0, sizeof *p);
  p->base = base;
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_printf(&b, "%s%s", base, o->cfg.completions ? "/completions" : "/chat/completions");
  p->url = tl_buf_detach(&b);
  size_t rootlen = n >= 3 && !strcmp(base + n - 3, "/v1") ? n - 3 : n;
  p->root = tl_strndup(base, rootlen);
  tl_buf_init(&b);
  tl_buf_append(&b, base, rootlen);
  tl_buf_puts(&b, o->health_path ? o->health_path : "/health");
  p->health = tl_buf_detach(&b);
  p->limit = o->cfg.conc_initial;
  if (!p->url || !p->health || !p->root || !(p->uh = curl_url())) return tl_err_set(err, TL_ENOMEM, "out of memory");
  /* as libcurl reads CURLOPT_URL: a URL without a scheme is taken as http:// */
  CURLUcode uc = curl_url_set(p->uh, CURLUPART_URL, p->url, CURLU_GUESS_SCHEME);
  if (uc != CURLUE_OK)
    return tl_err_set(err, uc == CURLUE_OUT_OF_MEMORY ? TL_ENOMEM : TL_EJOB, "endpoint URL '%s': %s", p->url, curl_url_strerror(uc));
  note_limit(o, o->nep - 1, 'i');
  return TL_OK;
}

tl_status tl_openai_open(const tl_openai_opts *op, tl_openai **out, tl_err *err) {
  *out = NULL;
  static int curl_ready = 0;
  if (!curl_ready) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return tl_err_set(err, TL_ENGINE, "libcurl cannot start");
    curl_ready = 1;
  }
  const tl_http_cfg *c = op->cfg;
  tl_openai *o = calloc(1, sizeof *o);
  if (!o) return tl_err_set(err, TL_ENOMEM, "out of memory");
  o->base.vt = &VT;
  o->epfd = -1;
  o->timer_due = -1;
  o->cfg = *c;
  o->cfg.urls = NULL;
  o->cfg.stop = NULL;
  o->cfg.model = o->cfg.api_key_env = o->cfg.extra_json = NULL;
  o->cfg.health_path = NULL; /* the engine's own copies below */
  o->cfg.ca_bundle = NULL;
  o->health_path = tl_strdup(c->health_path ? c->health_path : "/health");
  { /* slurm/serve.sh picks its ports per job and says where: {port} follows it */
    const char *pb = getenv("TALLY_PORT_BASE");
    char *end = NULL;
    long v = pb && *pb ? strtol(pb, &end, 10) : 0;
    if (pb && *pb) {
      if (*end || v < 1 || v > 65535) {
        free(o->health_path);
        free(o);
        return tl_err_set(err, TL_EJOB, "TALLY_PORT_BASE='%s' is not a port number", pb);
      }
      o->cfg.port_base = (int)v;
    }
  }
  o->stop = op->stop;
  o->log = op->log;
  o->role = op->role;
  o->dry = op->dry;
  o->t0 = now_s();
  o->rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(o->t0 * 1e9);
  tl_buf_init(&o->tmp);
  tl_buf_init(&o->rstr);
  tl_status st = TL_OK;
  o->model = c->model ? tl_strdup(c->model) : NULL;
  /* the variables libcurl (7.x, 8.x) reads for a proxy; no_proxy matters only with one of them */
  static const char *const PROXY_ENV[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL};
  for (const char *const *v = PROXY_ENV; *v; v++) {
    const char *x = getenv(*v);
    if (x && *x) o->proxy_env = 1;
  }
  {
    cJSON *extra = c->extra_json ? cJSON_Parse(c->extra_json) : NULL;
    st = (c->extra_json && !extra) ? TL_ENOMEM : tl_http_body_prepare(&o->tpl, c, extra);
    cJSON_Delete(extra);
  }
  if (op->cache_dir) o->cache_dir = tl_strdup(op->cache_dir);
  /* --cache: a folder tally can write, made now; a cache that cannot be written would only fail
   * entry by entry */
  if (!st && op->cache_dir && !op->dry) {
    struct stat sb;
    if (mkdir(op->cache_dir, 0777) != 0 && errno != EEXIST) {
      int e = errno;
      free_(&o->base);
      return tl_err_set(err, TL_EJOB, "cannot create the cache folder '%s': %s", op->cache_dir, strerror(e));
    }
    if (stat(op->cache_dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(op->cache_dir, W_OK | X_OK) != 0) {
      free_(&o->base);
      return tl_err_set(err, TL_EJOB, "the cache '%s' is not a folder tally can write", op->cache_dir);
    }
  }
  /* certificate authorities: the job's, else the variables curl's and OpenSSL's tools read */
  {
    const char *ca = c->ca_bundle, *cd = getenv("SSL_CERT_DIR");
    if (!ca && getenv("CURL_CA_BUNDLE") && *getenv("CURL_CA_BUNDLE")) ca = getenv("CURL_CA_BUNDLE");
    if (!ca && getenv("SSL_CERT_FILE") && *getenv("SSL_CERT_FILE")) ca = getenv("SSL_CERT_FILE");
    if (ca && access(ca, R_OK) != 0) {
      int e = errno;
      free_(&o->base);
      return tl_err_set(err, TL_EJOB, "the certificate authorities file '%s' cannot be read: %s", ca, strerror(e));
    }
    if (ca) o->ca_file = tl_strdup(ca);
    if (cd && *cd) o->ca_dir = tl_strdup(cd);
  }
  if (c->api_key_env) {
    const char *k = getenv(c->api_key_env);
    if (!k || !*k) {
      free_(&o->base);
      return tl_err_set(err, TL_EJOB, "engines.%s.api_key_env names '%s', which is not set in the environment",
                        tl_role_name(op->role), c->api_key_env);
    }
    tl_buf b;
    tl_buf_init(&b);
    tl_buf_printf(&b, "Authorization: Bearer %s", k);
    o->api_key_hdr = tl_buf_detach(&b);
    o->key = tl_strdup(k);
  }
  /* this rank's endpoints */
  int ls = op->local_size > 0 ? op->local_size : 1, lr = op->local_rank >= 0 ? op->local_rank : 0;
  o->ep = calloc((size_t)(c->nurls > 0 ? c->nurls : 1), sizeof *o->ep);
  o->capidle = c->conc_max * (c->nurls > 0 ? c->nurls : 1) + 16;
  o->idle = calloc((size_t)o->capidle, sizeof *o->idle);
  o->multi = curl_multi_init();
  o->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (o->epfd < 0 && !st) {
    free_(&o->base);
    return tl_err_set(err, TL_ENGINE, "epoll_create1: %s", strerror(errno));
  }
  if (!st && (!o->ep || !o->idle || !o->multi || (op->cache_dir && !o->cache_dir))) st = TL_ENOMEM;
  if (st) {
    free_(&o->base);
    return tl_err_set(err, st, "out of memory");
  }
  if (c->nurls == 1) {
    st = add_endpoint(o, c->urls[0], lr, err);
  } else {
    for (int i = 0; i < c->nurls && !st; i++)
      if (c->nurls >= ls ? i % ls == lr : i == lr % c->nurls) st = add_endpoint(o, c->urls[i], lr, err);
  }
  if (st) {
    free_(&o->base);
    return st;
  }
  curl_multi_setopt(o->multi, CURLMOPT_MAXCONNECTS, (long)o->capidle);
  curl_multi_setopt(o->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(o->multi, CURLMOPT_SOCKETDATA, o);
  curl_multi_setopt(o->multi, CURLMOPT_TIMERFUNCTION, on_timer);
  curl_multi_setopt(o->multi, CURLMOPT_TIMERDATA, o);
  *out = o;
  return TL_OK;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud) {
  (void)p;
  (void)ud;
  return sz * n;
}

static size_t keep_small(char *p, size_t sz, size_t n, void *ud) { /* at most 1 MiB */
  tl_buf *b = ud;
  if (b->len + sz * n > (1u << 20)) return 0;
  return tl_buf_append(b, p, sz * n) == TL_OK ? sz * n : 0;
}

/* GET url on h with the engine's key and CAs (2 s to connect, 5 s in all): the body into *body
 * (at most 1 MiB; NULL: dropped), the HTTP status into *code. */
static CURLcode get_url(const tl_openai *o, CURL *h, const char *url, tl_buf *body, long *code) {
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body ? keep_small : discard);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  if (o->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
  if (o->ca_dir) curl_easy_setopt(h, CURLOPT_CAPATH, o->ca_dir);
  struct curl_slist *l = o->api_key_hdr ? curl_slist_append(NULL, o->api_key_hdr) : NULL;
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(l);
  *code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
  return rc;
}

/* GET url: the parsed JSON of a 200, else NULL. */
static cJSON *get_json(tl_openai *o, CURL *h, const char *url) {
  tl_buf b;
  tl_buf_init(&b);
  long code;
  CURLcode rc = get_url(o, h, url, &b, &code);
  cJSON *j = rc == CURLE_OK && code == 200 ? cJSON_ParseWithLength(b.data, b.len) : NULL;
  tl_buf_release(&b);
  return j;
}

/* What a healthy endpoint says of itself: llama.cpp's GET /props (total_slots caps the limit)
 * and GET {base}/models (the ids served; the job's model not among them is said once on log).
 * Servers without them (404) are left as they are. */
static void probe(tl_openai *o, CURL *h, int e, FILE *log) {
  endpoint *p = &o->ep[e];
  tl_buf u;
  tl_buf_init(&u);
  tl_buf_printf(&u, "%s/props", p->root);
  cJSON *j = u.data ? get_json(o, h, u.data) : NULL;
  const cJSON *ts = j ? cJSON_GetObjectItemCaseSensitive(j, "total_slots") : NULL;
  if (cJSON_IsNumber(ts) && ts->valuedouble >= 1 && ts->valuedouble <= 65536) {
    p->slots = (int)ts->valuedouble;
    if (p->limit > p->slots) set_limit(o, e, p->slots, 'p');
  }
  cJSON_Delete(j);
  tl_buf_reset(&u);
  tl_buf_printf(&u, "%s/models", p->base);
  j = u.data ? get_json(o, h, u.data) : NULL;
  const cJSON *data = j ? cJSON_GetObjectItemCaseSensitive(j, "data") : NULL;
  tl_buf ids;
  tl_buf_init(&ids);
  int found = 0, any = 0;
  for (const cJSON *m = cJSON_IsArray(data) ? data->child : NULL; m; m = m->next) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    if (!cJSON_IsString(id)) continue;
    tl_buf_printf(&ids, "%s%s", any++ ? ", " : "", id->valuestring);
    found |= o->model && strcmp(o->model, id->valuestring) == 0;
  }
  if (any) {
    free(p->served);
    p->served = tl_buf_detach(&ids);
    if (o->model && !found && log)
      fprintf(log, "tally: warning: the %s endpoint %s serves %s, not the job's model '%s' (llama-server answers "
                   "any name; other servers refuse it)\n",
              tl_role_name(o->role), p->base, p->served ? p->served : "?", o->model);
  }
  tl_buf_release(&ids);
  tl_buf_release(&u);
  cJSON_Delete(j);
}

tl_status tl_openai_wait_healthy(tl_openai *o, tl_err *err) {
  if (o->dry) return TL_OK;
  double deadline = now_s() + o->cfg.health_wait_s;
  CURL *h = curl_easy_init();
  if (!h) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st = TL_OK;
  for (int e = 0; e < o->nep && !st; e++) {
    char last[256] = "no answer";
    for (;;) {
      long code = 0;
      CURLcode rc = get_url(o, h, o->ep[e].health, NULL, &code);
      if (rc == CURLE_OK && code == 200) {
        probe(o, h, e, o->log);
        break;
      }
      if (rc != CURLE_OK) snprintf(last, sizeof last, "%s", curl_easy_strerror(rc));
      else snprintf(last, sizeof last, "HTTP %ld", code);
      if (o->stop && *o->stop) {
        st = tl_err_set(err, TL_ENGINE, "interrupted by signal %d while waiting for the %s endpoint %s to come up",
                        (int)*o->stop, tl_role_name(o->role), o->ep[e].base);
        break;
      }
      if (now_s() >= deadline) {
        st = tl_err_set(err, TL_ENGINE, "the %s endpoint %s did not come up within %.0f s (GET %s: %s)",
                        tl_role_name(o->role), o->ep[e].base, o->cfg.health_wait_s, o->ep[e].health, last);
        break;
      }
      struct timespec ts = {0, 500000000L};
      nanosleep(&ts, NULL);
    }
  }
  curl_easy_cleanup(h);
  return st;
}

void tl_openai_stats_get(const tl_openai *o, tl_openai_stats *st) { *st = o->st; }
const char *tl_openai_cache_error(const tl_openai *o) { return o->cache_err; }
const char *tl_openai_served(const tl_openai *o, int i) { return i >= 0 && i < o->nep ? o->ep[i].served : NULL; }
int tl_openai_slots(const tl_openai *o, int i) { return i >= 0 && i < o->nep ? o->ep[i].slots : 0; }
const tl_openai_change *tl_openai_history(const tl_openai *o, size_t *n) {
  *n = o->nhist;
  return o->hist;
}
int tl_openai_n_endpoints(const tl_openai *o) { return o->nep; }
size_t tl_openai_capacity(const tl_openai *o) {
  size_t n = 0;
  for (int e = 0; e < o->nep; e++) n += o->ep[e].limit >= 1 ? (size_t)o->ep[e].limit : 1;
  return n;
}
const char *tl_openai_endpoint(const tl_openai *o, int i) { return i >= 0 && i < o->nep ? o->ep[i].base : NULL; }
