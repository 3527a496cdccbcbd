/*
 * tally-testserver: an OpenAI-compatible HTTP/1.1 server for tests and
 * benchmarks of tally's HTTP engine.
 *
 * Single process, single thread, one epoll loop over non-blocking sockets.
 * HTTP/1.1 keep-alive (pipelining is handled in order), Content-Length
 * request bodies only.  Delayed replies wait in a min-heap of deadlines; the
 * epoll_wait timeout is the nearest deadline, so nothing ever sleeps.
 *
 * See tools/testserver/README.md for flags, endpoints and the stats format.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <cjson/cJSON.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PROG "tally-testserver"

#define MAX_HEAD (64u * 1024u)            /* request line + headers */
#define MAX_BODY (64u * 1024u * 1024u)    /* request body */
#define OUT_HIGH (1u * 1024u * 1024u)     /* stop parsing above this much unsent output */
#define MAX_CHOICES 128
#define MAX_FAIL_MATCH 16
#define CREATED 1700000000
#define NOIDX SIZE_MAX

#define FNV_OFF 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* ------------------------------------------------------------------ */
/* small utilities                                                      */
/* ------------------------------------------------------------------ */

static void die_oom(void)
{
    fputs(PROG ": out of memory\n", stderr);
    abort();
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die_oom();
    return p;
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) die_oom();
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) die_oom();
    return q;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

static uint64_t fnv1a_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    return fnv1a(h, b, 8);
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int is_ws(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static size_t count_words(const char *s, size_t n)
{
    size_t w = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_ws((unsigned char)s[i])) {
            in = 0;
        } else if (!in) {
            in = 1;
            w++;
        }
    }
    return w;
}

/* Byte length of the prefix of s that holds its first maxw words. */
static size_t prefix_words(const char *s, size_t n, size_t maxw)
{
    size_t w = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_ws((unsigned char)s[i])) {
            if (in && w == maxw) return i;
            in = 0;
        } else if (!in) {
            if (w == maxw) return i; /* only reached when maxw == 0 */
            in = 1;
            w++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* growable byte buffer                                                 */
/* ------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static void buf_reserve(buf_t *b, size_t extra)
{
    if (b->len + extra <= b->cap) return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra) nc *= 2;
    b->p = xrealloc(b->p, nc);
    b->cap = nc;
}

static void buf_add(buf_t *b, const void *s, size_t n)
{
    if (!n) return;
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_adds(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_addc(buf_t *b, char ch)
{
    buf_reserve(b, 1);
    b->p[b->len++] = ch;
}

static void buf_u64(buf_t *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    buf_add(b, tmp + i, sizeof tmp - i);
}

static void buf_json_str(buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    buf_reserve(b, n + 2);
    buf_addc(b, '"');
    size_t run = 0; /* start of the current run of plain bytes */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        char u[6];
        switch (ch) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (ch < 0x20 || ch == 0x7f) {
                u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0';
                u[4] = hex[ch >> 4]; u[5] = hex[ch & 15];
                buf_add(b, s + run, i - run);
                buf_add(b, u, 6);
                run = i + 1;
            }
            continue;
        }
        buf_add(b, s + run, i - run);
        buf_adds(b, esc);
        run = i + 1;
    }
    buf_add(b, s + run, n - run);
    buf_addc(b, '"');
}

static void buf_free(buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------ */
/* string arena and open-addressing string map                          */
/* ------------------------------------------------------------------ */

typedef struct arena_chunk {
    struct arena_chunk *next;
} arena_chunk_t;

static arena_chunk_t *g_arena_chunks;
static char *g_arena_cur;
static size_t g_arena_left;

static char *arena_strdup(const char *s, size_t n)
{
    if (n + 1 > g_arena_left) {
        size_t sz = (n + 1 > (1u << 20)) ? n + 1 : (1u << 20);
        arena_chunk_t *ch = xmalloc(sizeof *ch + sz);
        ch->next = g_arena_chunks;
        g_arena_chunks = ch;
        g_arena_cur = (char *)(ch + 1);
        g_arena_left = sz;
    }
    char *r = g_arena_cur;
    memcpy(r, s, n);
    r[n] = '\0';
    g_arena_cur += n + 1;
    g_arena_left -= n + 1;
    return r;
}

typedef struct {
    uint32_t idx1; /* index + 1; 0 = empty */
    uint32_t tag;  /* high 32 bits of the key hash */
} slot_t;

typedef struct {
    slot_t *slots;
    size_t cap; /* power of two, or 0 */
    uint32_t n;
    char **keys;
    size_t keys_cap;
} strmap_t;

#define MAP_NONE UINT32_MAX

static uint64_t key_hash(const char *k, size_t n) { return fnv1a(FNV_OFF, k, n); }

static void strmap_place(strmap_t *m, uint32_t idx, uint64_t h)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)splitmix64(h) & mask;
    while (m->slots[i].idx1) i = (i + 1) & mask;
    m->slots[i].idx1 = idx + 1;
    m->slots[i].tag = (uint32_t)(h >> 32);
}

static void strmap_grow(strmap_t *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    free(m->slots);
    m->slots = xcalloc(nc, sizeof *m->slots);
    m->cap = nc;
    for (uint32_t i = 0; i < m->n; i++)
        strmap_place(m, i, key_hash(m->keys[i], strlen(m->keys[i])));
}

static uint32_t strmap_find(const strmap_t *m, const char *k, size_t n, uint64_t h)
{
    if (!m->cap) return MAP_NONE;
    size_t mask = m->cap - 1;
    size_t i = (size_t)splitmix64(h) & mask;
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        slot_t s = m->slots[i];
        if (!s.idx1) return MAP_NONE;
        if (s.tag == tag) {
            const char *kk = m->keys[s.idx1 - 1];
            if (strncmp(kk, k, n) == 0 && kk[n] == '\0') return s.idx1 - 1;
        }
        i = (i + 1) & mask;
    }
}

/* The key must not be present already. */
static uint32_t strmap_insert(strmap_t *m, const char *k, size_t n, uint64_t h)
{
    if (m->n == UINT32_MAX - 1) die_oom();
    if (((size_t)m->n + 1) * 2 > m->cap) strmap_grow(m);
    if (m->n >= m->keys_cap) {
        m->keys_cap = m->keys_cap ? m->keys_cap * 2 : 1024;
        m->keys = xrealloc(m->keys, m->keys_cap * sizeof *m->keys);
    }
    uint32_t idx = m->n++;
    m->keys[idx] = arena_strdup(k, n);
    strmap_place(m, idx, h);
    return idx;
}

/* ------------------------------------------------------------------ */
/* options and global state                                             */
/* ------------------------------------------------------------------ */

enum { F_429, F_500, F_STALL, F_MALFORMED, F_DROP, F_TRUNCATE, F_NULL, F_COUNT };
static const char *const fault_names[F_COUNT] = {"429", "500", "stall", "malformed", "drop", "truncate", "null"};

enum { R_NONE, R_THINK, R_FIELD };

static struct {
    const char *host;
    const char *port;
    double latency_ms, jitter_ms, fault_rate, stall_ms, ready_after_ms, idle_close_ms;
    int kinds[F_COUNT];
    int nkinds;
    long retry_after;
    uint64_t seed;
    const char *replies_path;
    const char *fail_match[MAX_FAIL_MATCH];
    int nfail;
    int fail_status;
    const char *model;
    int reasoning;
    const char *stats_path;
    const char *log_path;
} opt;

static struct {
    uint64_t requests, ok, bad_request, faults[F_COUNT], fail_match, abandoned, idle_closed;
    uint64_t in_flight, max_in_flight;
    uint64_t reqid;
} st;

static strmap_t g_keys;     /* per-key stats */
static uint32_t *g_kreq, *g_kok;
static size_t g_kcap;

static strmap_t g_replies;  /* canned replies */
static char **g_rep_text;   /* NULL = JSON null */
static size_t *g_rep_len;
static size_t g_rep_cap;

static FILE *g_log;
static uint64_t g_now;       /* cached monotonic microseconds */
static uint64_t g_ready_at;  /* monotonic us when /health turns ready */
static uint64_t g_lat_us, g_jit_us, g_stall_us;
static uint64_t g_idle_us; /* --idle-close-ms: 0 = keep idle connections open */
static uint64_t g_rng;       /* jitter PRNG state */
static int g_epfd = -1;
static int g_lfd = -1;
static int g_accept_paused;
static uint64_t g_accept_resume;
static buf_t g_scratch;      /* reused for bodies */
static buf_t g_scratch2;
static buf_t g_scratch3;     /* logprobs of a reply */

static char g_listen_tag, g_signal_tag;

static uint32_t keystat_get(const char *k, size_t n)
{
    uint64_t h = key_hash(k, n);
    uint32_t i = strmap_find(&g_keys, k, n, h);
    if (i != MAP_NONE) return i;
    i = strmap_insert(&g_keys, k, n, h);
    if (i >= g_kcap) {
        g_kcap = g_kcap ? g_kcap * 2 : 1024;
        g_kreq = xrealloc(g_kreq, g_kcap * sizeof *g_kreq);
        g_kok = xrealloc(g_kok, g_kcap * sizeof *g_kok);
    }
    g_kreq[i] = 0;
    g_kok[i] = 0;
    return i;
}

/* ------------------------------------------------------------------ */
/* connections and the deadline heap                                    */
/* ------------------------------------------------------------------ */

enum { P_NONE, P_SEND, P_TRUNC, P_STALL };
enum { M_OTHER, M_GET, M_POST };

typedef struct {
    size_t head_len, body_len;
    int method;
    size_t path_off, path_len;
    size_t key_off, key_len;
    int has_key;
    int keepalive;
    int expect100;
} reqhead_t;

typedef struct conn {
    int fd;
    uint32_t events;
    buf_t in;
    size_t in_start;
    buf_t out;
    size_t out_off;
    int head_done, sent_continue, eof, close_after;
    reqhead_t h;
    /* the pending (delayed) action of the current request */
    int pending;
    buf_t pend;
    size_t pend_send;   /* P_TRUNC: bytes of pend to send */
    int pend_ok;        /* counts as ok when sent */
    int pend_close;     /* close after it is sent */
    uint32_t pend_key;
    uint64_t deadline;
    size_t heap_idx;
    uint64_t last_us;   /* the last event on it, or its last reply (for --idle-close-ms) */
    struct conn *prev, *next;
} conn_t;

static conn_t *g_conns;
static conn_t **g_heap;
static size_t g_heap_n, g_heap_cap;

static void heap_swap(size_t a, size_t b)
{
    conn_t *t = g_heap[a];
    g_heap[a] = g_heap[b];
    g_heap[b] = t;
    g_heap[a]->heap_idx = a;
    g_heap[b]->heap_idx = b;
}

static void heap_up(size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (g_heap[p]->deadline <= g_heap[i]->deadline) break;
        heap_swap(p, i);
        i = p;
    }
}

static void heap_down(size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < g_heap_n && g_heap[l]->deadline < g_heap[m]->deadline) m = l;
        if (r < g_heap_n && g_heap[r]->deadline < g_heap[m]->deadline) m = r;
        if (m == i) return;
        heap_swap(i, m);
        i = m;
    }
}

static void heap_push(conn_t *c)
{
    if (g_heap_n == g_heap_cap) {
        g_heap_cap = g_heap_cap ? g_heap_cap * 2 : 1024;
        g_heap = xrealloc(g_heap, g_heap_cap * sizeof *g_heap);
    }
    g_heap[g_heap_n] = c;
    c->heap_idx = g_heap_n++;
    heap_up(c->heap_idx);
}

static void heap_remove(conn_t *c)
{
    size_t i = c->heap_idx;
    c->heap_idx = NOIDX;
    g_heap_n--;
    if (i != g_heap_n) {
        g_heap[i] = g_heap[g_heap_n];
        g_heap[i]->heap_idx = i;
        heap_up(i);
        heap_down(g_heap[i]->heap_idx);
    }
}

static void close_conn(conn_t *c, int graceful)
{
    if (c->pending) {
        if (c->heap_idx != NOIDX) heap_remove(c);
        st.in_flight--;
        if (c->pending == P_SEND && c->pend_ok) st.abandoned++;
        c->pending = P_NONE;
    }
    if (graceful) {
        /* Send FIN first and drain what the peer already sent, so that
         * the close does not turn into a reset that eats our last bytes. */
        shutdown(c->fd, SHUT_WR);
        char tmp[4096];
        for (int k = 0; k < 16; k++) {
            ssize_t n = recv(c->fd, tmp, sizeof tmp, 0);
            if (n <= 0) break;
        }
    }
    close(c->fd);
    if (c->prev) c->prev->next = c->next;
    else g_conns = c->next;
    if (c->next) c->next->prev = c->prev;
    buf_free(&c->in);
    buf_free(&c->out);
    buf_free(&c->pend);
    free(c);
}

static void update_events(conn_t *c)
{
    uint32_t want = 0;
    size_t unsent = c->out.len - c->out_off;
    if (unsent) want |= EPOLLOUT;
    if (!c->pending && !c->close_after && !c->eof && unsent < OUT_HIGH) want |= EPOLLIN;
    if (want != c->events) {
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = want;
        ev.data.ptr = c;
        if (epoll_ctl(g_epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0) c->events = want;
    }
}

/* Returns -1 when the connection was closed. */
static int flush_out(conn_t *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        close_conn(c, 0);
        return -1;
    }
    c->out.len = c->out_off = 0;
    if (c->out.cap > OUT_HIGH) buf_free(&c->out);
    if (c->close_after) {
        close_conn(c, 1);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* responses                                                            */
/* ------------------------------------------------------------------ */

static const char *reason_phrase(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Status";
    }
}

static void put_head(buf_t *b, int status, size_t clen, int keepalive, uint64_t reqid, long retry_after)
{
    buf_adds(b, "HTTP/1.1 ");
    buf_u64(b, (uint64_t)status);
    buf_addc(b, ' ');
    buf_adds(b, reason_phrase(status));
    buf_adds(b, "\r\nContent-Type: application/json\r\nContent-Length: ");
    buf_u64(b, clen);
    buf_adds(b, "\r\n");
    if (reqid) {
        buf_adds(b, "x-request-id: req-");
        buf_u64(b, reqid);
        buf_adds(b, "\r\n");
    }
    if (retry_after >= 0) {
        buf_adds(b, "Retry-After: ");
        buf_u64(b, (uint64_t)retry_after);
        buf_adds(b, "\r\n");
    }
    buf_adds(b, keepalive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
}

static void error_body(buf_t *b, const char *msg, const char *type)
{
    buf_adds(b, "{\"error\":{\"message\":");
    buf_json_str(b, msg, strlen(msg));
    buf_adds(b, ",\"type\":");
    buf_json_str(b, type, strlen(type));
    buf_adds(b, "}}");
}

/* Queue a complete response on the connection's output now. */
static void reply_now(conn_t *c, int status, const char *body, size_t blen, uint64_t reqid, long retry_after,
                      int keepalive)
{
    put_head(&c->out, status, blen, keepalive, reqid, retry_after);
    buf_add(&c->out, body, blen);
    if (!keepalive) c->close_after = 1;
}

static void reply_error_now(conn_t *c, int status, const char *msg, const char *type, uint64_t reqid, int keepalive)
{
    g_scratch.len = 0;
    error_body(&g_scratch, msg, type);
    reply_now(c, status, g_scratch.p, g_scratch.len, reqid, -1, keepalive);
}

static void stats_json(buf_t *b)
{
    buf_adds(b, "{\"requests\":");
    buf_u64(b, st.requests);
    buf_adds(b, ",\"ok\":");
    buf_u64(b, st.ok);
    buf_adds(b, ",\"bad_request\":");
    buf_u64(b, st.bad_request);
    buf_adds(b, ",\"faults\":{");
    for (int k = 0; k < F_COUNT; k++) {
        if (k) buf_addc(b, ',');
        buf_addc(b, '"');
        buf_adds(b, fault_names[k]);
        buf_adds(b, "\":");
        buf_u64(b, st.faults[k]);
    }
    buf_adds(b, "},\"fail_match\":");
    buf_u64(b, st.fail_match);
    buf_adds(b, ",\"max_in_flight\":");
    buf_u64(b, st.max_in_flight);
    buf_adds(b, ",\"abandoned\":");
    buf_u64(b, st.abandoned);
    buf_adds(b, ",\"idle_closed\":");
    buf_u64(b, st.idle_closed);
    buf_adds(b, ",\"keys\":{");
    for (uint32_t i = 0; i < g_keys.n; i++) {
        if (i) buf_addc(b, ',');
        const char *k = g_keys.keys[i];
        buf_json_str(b, k, strlen(k));
        buf_adds(b, ":{\"requests\":");
        buf_u64(b, g_kreq[i]);
        buf_adds(b, ",\"ok\":");
        buf_u64(b, g_kok[i]);
        buf_addc(b, '}');
    }
    buf_adds(b, "}}\n");
}

static void write_stats_file(void)
{
    if (!opt.stats_path) return;
    buf_t b = {0};
    stats_json(&b);
    size_t plen = strlen(opt.stats_path);
    char *tmp = xmalloc(plen + 5);
    memcpy(tmp, opt.stats_path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", tmp, strerror(errno));
    } else {
        int bad = fwrite(b.p, 1, b.len, f) != b.len;
        if (fclose(f) != 0) bad = 1;
        if (bad) fprintf(stderr, PROG ": cannot write %s: %s\n", tmp, strerror(errno));
        else if (rename(tmp, opt.stats_path) != 0)
            fprintf(stderr, PROG ": cannot rename %s to %s: %s\n", tmp, opt.stats_path, strerror(errno));
    }
    free(tmp);
    buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* completions                                                          */
/* ------------------------------------------------------------------ */

static const char THINK_PREFIX[] = "<think>\nsome reasoning\n</think>\n\n";
static const char REASONING[] = "some reasoning";

static size_t prompt_words_chat(const cJSON *messages)
{
    size_t p = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, messages) {
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (cJSON_IsString(content)) {
            p += count_words(content->valuestring, strlen(content->valuestring));
        } else if (cJSON_IsArray(content)) {
            const cJSON *part;
            cJSON_ArrayForEach(part, content) {
                const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
                if (!cJSON_IsString(type)) continue;
                if (strcmp(type->valuestring, "text") == 0) {
                    const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
                    if (cJSON_IsString(t)) p += count_words(t->valuestring, strlen(t->valuestring));
                } else if (strcmp(type->valuestring, "image_url") == 0) {
                    p += 1;
                }
            }
        }
    }
    return p;
}

static void log_request(const char *key, size_t klen, const char *path, size_t plen, const cJSON *body)
{
    g_scratch2.len = 0;
    buf_adds(&g_scratch2, "{\"key\":");
    if (key) buf_json_str(&g_scratch2, key, klen);
    else buf_adds(&g_scratch2, "null");
    buf_adds(&g_scratch2, ",\"path\":");
    buf_json_str(&g_scratch2, path, plen);
    buf_adds(&g_scratch2, ",\"body\":");
    char *s = body ? cJSON_PrintUnformatted(body) : NULL;
    buf_adds(&g_scratch2, s ? s : "null");
    free(s);
    buf_adds(&g_scratch2, "}\n");
    fwrite(g_scratch2.p, 1, g_scratch2.len, g_log);
    fflush(g_log);
}

static cJSON *parse_json_body(const char *body, size_t blen)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(body, blen, &end, 0);
    if (!j) return NULL;
    if (end) {
        for (const char *p = end; p < body + blen; p++) {
            if (!is_ws((unsigned char)*p)) {
                cJSON_Delete(j);
                return NULL;
            }
        }
    }
    return j;
}

static void schedule(conn_t *c, int kind, uint64_t delay_us)
{
    c->pending = kind;
    c->deadline = g_now + delay_us;
    if (delay_us > 0) heap_push(c);
}

static uint64_t reply_delay(void)
{
    uint64_t d = g_lat_us;
    if (g_jit_us) {
        g_rng = splitmix64(g_rng);
        d += g_rng % (g_jit_us + 1);
    }
    return d;
}

/* Build the full normal (or null-content) reply into c->pend.
 * *body_len gets the body size (for truncate). */
static void build_completion(conn_t *c, const cJSON *j, int chat, uint64_t reqid, const char *text, size_t tlen,
                             int text_null, int keepalive, size_t *head_len, size_t *body_len)
{
    const char *model = opt.model;
    if (!model) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "model");
        model = cJSON_IsString(m) ? m->valuestring : "test-model";
    }
    size_t P;
    if (chat) {
        P = prompt_words_chat(cJSON_GetObjectItemCaseSensitive(j, "messages"));
    } else {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "prompt");
        P = count_words(pr->valuestring, strlen(pr->valuestring));
    }

    const char *finish = "stop";
    size_t C = 0;
    if (!text_null) {
        /* stop strings: cut before the earliest occurrence */
        const cJSON *stop = cJSON_GetObjectItemCaseSensitive(j, "stop");
        size_t cut = tlen;
        if (cJSON_IsString(stop) && stop->valuestring[0]) {
            const char *f = memmem(text, tlen, stop->valuestring, strlen(stop->valuestring));
            if (f && (size_t)(f - text) < cut) cut = (size_t)(f - text);
        } else if (cJSON_IsArray(stop)) {
            const cJSON *s;
            cJSON_ArrayForEach(s, stop) {
                if (!cJSON_IsString(s) || !s->valuestring[0]) continue;
                const char *f = memmem(text, tlen, s->valuestring, strlen(s->valuestring));
                if (f && (size_t)(f - text) < cut) cut = (size_t)(f - text);
            }
        }
        tlen = cut;
        /* max_tokens: truncate to that many words */
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "max_tokens");
        if (!cJSON_IsNumber(mt)) mt = cJSON_GetObjectItemCaseSensitive(j, "max_completion_tokens");
        C = count_words(text, tlen);
        if (cJSON_IsNumber(mt) && mt->valuedouble >= 0) {
            double md = mt->valuedouble;
            size_t maxw = md >= 1e15 ? (size_t)1e15 : (size_t)md;
            if (C > maxw) {
                tlen = prefix_words(text, tlen, maxw);
                C = maxw;
                finish = "length";
            }
        }
    }

    int k = 1;
    const cJSON *nj = cJSON_GetObjectItemCaseSensitive(j, "n");
    if (cJSON_IsNumber(nj) && nj->valuedouble > 1) k = nj->valuedouble >= MAX_CHOICES ? MAX_CHOICES : (int)nj->valuedouble;

    /* "logprobs": true: choices[0].logprobs.content over a toy tokenization of the text
     * (letters runs, single digits, single other bytes; whitespace joins the next token), each
     * token with logprob 0, except that a digit 1-3 gets p = 0.7 and its top_logprobs list the
     * three ratings (d: 0.7, the next: 0.2, the one after: 0.1, up to top_logprobs entries) -
     * so a client's expected rating is known: 0.7 d + 0.2 (d mod 3 + 1) + 0.1 ((d+1) mod 3 + 1). */
    buf_t *lpv = &g_scratch3;
    lpv->len = 0;
    const cJSON *lpj = cJSON_GetObjectItemCaseSensitive(j, "logprobs");
    const cJSON *tlj = cJSON_GetObjectItemCaseSensitive(j, "top_logprobs");
    int ntop = cJSON_IsNumber(tlj) ? (int)tlj->valuedouble : 0;
    if (ntop > 3) ntop = 3;
    if (cJSON_IsTrue(lpj) && chat && !text_null) {
        buf_adds(lpv, "{\"content\":[");
        size_t i = 0;
        int first = 1;
        while (i < tlen) {
            size_t b0 = i;
            while (i < tlen && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) i++;
            if (i == tlen) break;
            if (isalpha((unsigned char)text[i])) while (i < tlen && isalpha((unsigned char)text[i])) i++;
            else i++;
            if (!first) buf_addc(lpv, ',');
            first = 0;
            buf_adds(lpv, "{\"token\":");
            buf_json_str(lpv, text + b0, i - b0);
            int d = i - b0 >= 1 && text[i - 1] >= '1' && text[i - 1] <= '3' && (i - b0 == 1 || text[i - 2] == ' ') ? text[i - 1] - '0' : 0;
            static const char *const LN[3] = {"-0.35667494393873245", "-1.6094379124341003", "-2.3025850929940455"};
            buf_adds(lpv, ",\"logprob\":");
            buf_adds(lpv, d ? LN[0] : "0");
            buf_adds(lpv, ",\"top_logprobs\":[");
            for (int t = 0; t < ntop && (d || t == 0); t++) {
                char tok[2] = {d ? (char)('0' + (d - 1 + t) % 3 + 1) : 0, 0};
                if (t) buf_addc(lpv, ',');
                buf_adds(lpv, "{\"token\":");
                if (d) buf_json_str(lpv, tok, 1);
                else buf_json_str(lpv, text + b0, i - b0);
                buf_adds(lpv, ",\"logprob\":");
                buf_adds(lpv, d ? LN[t] : "0");
                buf_addc(lpv, '}');
            }
            buf_adds(lpv, "]}");
        }
        buf_adds(lpv, "]}");
    }

    /* the content value, rendered once */
    buf_t *cv = &g_scratch2;
    cv->len = 0;
    if (text_null) {
        buf_adds(cv, "null");
    } else if (opt.reasoning == R_THINK) {
        g_scratch.len = 0;
        buf_adds(&g_scratch, THINK_PREFIX);
        buf_add(&g_scratch, text, tlen);
        buf_json_str(cv, g_scratch.p, g_scratch.len);
    } else {
        buf_json_str(cv, text, tlen);
    }

    buf_t *b = &g_scratch;
    b->len = 0;
    buf_adds(b, chat ? "{\"id\":\"chatcmpl-" : "{\"id\":\"cmpl-");
    buf_u64(b, reqid);
    buf_adds(b, chat ? "\",\"object\":\"chat.completion\",\"created\":" : "\",\"object\":\"text_completion\",\"created\":");
    buf_u64(b, CREATED);
    buf_adds(b, ",\"model\":");
    buf_json_str(b, model, strlen(model));
    buf_adds(b, ",\"choices\":[");
    for (int i = 0; i < k; i++) {
        if (i) buf_addc(b, ',');
        buf_adds(b, "{\"index\":");
        buf_u64(b, (uint64_t)i);
        if (chat) {
            buf_adds(b, ",\"message\":{\"role\":\"assistant\",\"content\":");
            buf_add(b, cv->p, cv->len);
            if (opt.reasoning == R_FIELD) {
                buf_adds(b, ",\"reasoning_content\":");
                buf_json_str(b, REASONING, strlen(REASONING));
            }
            buf_addc(b, '}');
        } else {
            buf_adds(b, ",\"text\":");
            buf_add(b, cv->p, cv->len);
        }
        buf_adds(b, ",\"logprobs\":");
        if (lpv->len) buf_add(b, lpv->p, lpv->len);
        else buf_adds(b, "null");
        buf_adds(b, ",\"finish_reason\":\"");
        buf_adds(b, finish);
        buf_adds(b, "\"}");
    }
    buf_adds(b, "],\"usage\":{\"prompt_tokens\":");
    buf_u64(b, P);
    buf_adds(b, ",\"completion_tokens\":");
    buf_u64(b, C);
    buf_adds(b, ",\"total_tokens\":");
    buf_u64(b, P + C);
    buf_adds(b, "}}");

    c->pend.len = 0;
    put_head(&c->pend, 200, b->len, keepalive, reqid, -1);
    *head_len = c->pend.len;
    *body_len = b->len;
    buf_add(&c->pend, b->p, b->len);
}

/* Returns 1, or -1 when the connection was closed. */
static int handle_completion(conn_t *c, int chat, const char *path, size_t plen, const char *body, size_t blen)
{
    reqhead_t *h = &c->h;
    int ka = h->keepalive;
    uint64_t reqid = ++st.reqid;
    st.requests++;

    uint64_t bh = fnv1a(FNV_OFF, body, blen);
    char kbuf[32];
    const char *key;
    size_t klen;
    const char *hkey = h->has_key ? body - h->head_len + h->key_off : NULL;
    if (hkey) {
        key = hkey;
        klen = h->key_len;
    } else {
        snprintf(kbuf, sizeof kbuf, "body:%016" PRIx64, bh);
        key = kbuf;
        klen = strlen(kbuf);
    }
    uint32_t ki = keystat_get(key, klen);
    uint64_t ordinal = g_kreq[ki];
    if (g_kreq[ki] < UINT32_MAX) g_kreq[ki]++;
    st.in_flight++;
    if (st.in_flight > st.max_in_flight) st.max_in_flight = st.in_flight;

    cJSON *j = parse_json_body(body, blen);
    if (g_log) log_request(hkey, klen, path, plen, j);

    const char *err = NULL;
    if (!j || !cJSON_IsObject(j)) err = "request body is not a JSON object";
    else if (chat && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "messages")))
        err = "'messages' must be an array";
    else if (!chat && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "prompt")))
        err = "'prompt' must be a string";
    if (err) {
        st.bad_request++;
        st.in_flight--;
        reply_error_now(c, 400, err, "invalid_request_error", reqid, ka);
        cJSON_Delete(j);
        return 1;
    }

    c->pend_ok = 0;
    c->pend_close = !ka;
    c->pend_key = ki;

    /* --fail-match */
    for (int i = 0; i < opt.nfail; i++) {
        if (memmem(key, klen, opt.fail_match[i], strlen(opt.fail_match[i]))) {
            st.fail_match++;
            int s = opt.fail_status;
            const char *type = s == 429 ? "rate_limit_error" : (s >= 500 ? "server_error" : "invalid_request_error");
            g_scratch.len = 0;
            error_body(&g_scratch, "request matched --fail-match", type);
            c->pend.len = 0;
            put_head(&c->pend, s, g_scratch.len, ka, reqid, s == 429 ? opt.retry_after : -1);
            buf_add(&c->pend, g_scratch.p, g_scratch.len);
            schedule(c, P_SEND, reply_delay());
            cJSON_Delete(j);
            return 1;
        }
    }

    /* fault draw */
    int fault = -1;
    if (opt.fault_rate > 0 && opt.nkinds > 0) {
        uint64_t hh = fnv1a_u64(FNV_OFF, opt.seed);
        hh = fnv1a(hh, key, klen);
        hh = fnv1a(hh, "", 1);
        hh = fnv1a_u64(hh, ordinal);
        uint64_t r1 = splitmix64(hh);
        double u = (double)(r1 >> 11) * (1.0 / 9007199254740992.0);
        if (u < opt.fault_rate) {
            uint64_t r2 = splitmix64(r1 ^ 0x5851f42d4c957f2dULL);
            fault = opt.kinds[r2 % (uint64_t)opt.nkinds];
            st.faults[fault]++;
        }
    }

    /* the answer text */
    const char *text;
    size_t tlen;
    int text_null = 0;
    char defbuf[16];
    uint32_t ri = g_replies.n ? strmap_find(&g_replies, key, klen, key_hash(key, klen)) : MAP_NONE;
    if (ri != MAP_NONE) {
        text = g_rep_text[ri];
        tlen = g_rep_len[ri];
        if (!text) {
            text = "";
            text_null = 1;
        }
    } else {
        snprintf(defbuf, sizeof defbuf, "Answer: %c.", "ABCD"[bh % 4]);
        text = defbuf;
        tlen = strlen(defbuf);
    }

    size_t head_len = 0, body_len = 0;
    switch (fault) {
    case F_DROP:
        cJSON_Delete(j);
        st.in_flight--;
        close_conn(c, 0);
        return -1;
    case F_STALL:
        c->pend.len = 0;
        schedule(c, P_STALL, g_stall_us);
        break;
    case F_429:
        g_scratch.len = 0;
        error_body(&g_scratch, "rate limited", "rate_limit_error");
        c->pend.len = 0;
        put_head(&c->pend, 429, g_scratch.len, ka, reqid, opt.retry_after);
        buf_add(&c->pend, g_scratch.p, g_scratch.len);
        schedule(c, P_SEND, reply_delay());
        break;
    case F_500: {
        /* a transient error names its request, as servers' do: the same words twice would
         * mean a request the server can never serve, which clients may stop retrying */
        char m[64];
        snprintf(m, sizeof m, "injected server error (request %llu)", (unsigned long long)reqid);
        g_scratch.len = 0;
        error_body(&g_scratch, m, "server_error");
        c->pend.len = 0;
        put_head(&c->pend, 500, g_scratch.len, ka, reqid, -1);
        buf_add(&c->pend, g_scratch.p, g_scratch.len);
        schedule(c, P_SEND, reply_delay());
        break;
    }
    case F_MALFORMED:
        g_scratch.len = 0;
        buf_adds(&g_scratch, chat ? "{\"id\": \"chatcmpl-" : "{\"id\": \"cmpl-");
        buf_u64(&g_scratch, reqid);
        buf_adds(&g_scratch, "\", \"choices\": [");
        c->pend.len = 0;
        put_head(&c->pend, 200, g_scratch.len, ka, reqid, -1);
        buf_add(&c->pend, g_scratch.p, g_scratch.len);
        schedule(c, P_SEND, reply_delay());
        break;
    case F_TRUNCATE:
        build_completion(c, j, chat, reqid, text, tlen, text_null, ka, &head_len, &body_len);
        c->pend_send = head_len + body_len / 2;
        schedule(c, P_TRUNC, reply_delay());
        break;
    case F_NULL:
        /* content null: no answer (a client retries it), so not counted as one */
        build_completion(c, j, chat, reqid, "", 0, 1, ka, &head_len, &body_len);
        c->pend_ok = 0;
        schedule(c, P_SEND, reply_delay());
        break;
    default:
        build_completion(c, j, chat, reqid, text, tlen, text_null, ka, &head_len, &body_len);
        c->pend_ok = 1;
        schedule(c, P_SEND, reply_delay());
        break;
    }
    cJSON_Delete(j);
    return 1;
}

/* The pending action is due.  Returns -1 when the connection was closed. */
static int complete_pending(conn_t *c)
{
    int kind = c->pending;
    c->last_us = g_now;
    c->pending = P_NONE;
    st.in_flight--;
    switch (kind) {
    case P_SEND:
        buf_add(&c->out, c->pend.p, c->pend.len);
        if (c->pend_ok) {
            st.ok++;
            if (g_kok[c->pend_key] < UINT32_MAX) g_kok[c->pend_key]++;
        }
        if (c->pend_close) c->close_after = 1;
        break;
    case P_TRUNC:
        buf_add(&c->out, c->pend.p, c->pend_send);
        c->close_after = 1;
        break;
    case P_STALL:
    default:
        close_conn(c, 0);
        return -1;
    }
    c->pend.len = 0;
    if (c->pend.cap > OUT_HIGH) buf_free(&c->pend);
    return 0;
}

/* ------------------------------------------------------------------ */
/* HTTP parsing and routing                                             */
/* ------------------------------------------------------------------ */

static int token_eq(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && strncasecmp(s, lit, l) == 0;
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t')) (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t')) (*e)--;
}

/* Parse the head [base, base+hl) into c->h.  Returns 0 or an HTTP status. */
static int parse_head(conn_t *c, const char *base, size_t hl, const char **msg)
{
    reqhead_t *h = &c->h;
    size_t keep_hl = h->head_len;
    memset(h, 0, sizeof *h);
    h->head_len = keep_hl;
    *msg = "bad request";
    if (memchr(base, '\0', hl)) return 400;

    const char *end = base + hl - 2; /* the empty line's CRLF */
    const char *le = memmem(base, (size_t)(end - base), "\r\n", 2);
    if (!le || le == base) return 400;
    const char *sp1 = memchr(base, ' ', (size_t)(le - base));
    if (!sp1) return 400;
    const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(le - sp1 - 1));
    if (!sp2 || sp2 == sp1 + 1) return 400;
    size_t mlen = (size_t)(sp1 - base);
    if (mlen == 3 && memcmp(base, "GET", 3) == 0) h->method = M_GET;
    else if (mlen == 4 && memcmp(base, "POST", 4) == 0) h->method = M_POST;
    else h->method = M_OTHER;
    const char *path = sp1 + 1;
    const char *q = memchr(path, '?', (size_t)(sp2 - path));
    h->path_off = (size_t)(path - base);
    h->path_len = (size_t)((q ? q : sp2) - path);
    const char *ver = sp2 + 1;
    size_t vlen = (size_t)(le - ver);
    if (vlen == 8 && memcmp(ver, "HTTP/1.1", 8) == 0) h->keepalive = 1;
    else if (vlen == 8 && memcmp(ver, "HTTP/1.0", 8) == 0) h->keepalive = 0;
    else {
        *msg = "unsupported HTTP version";
        return 400;
    }

    int has_clen = 0, te = 0;
    uint64_t clen = 0;
    const char *p = le + 2;
    while (p < end) {
        le = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!le) le = end;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (!colon || colon == p || *p == ' ' || *p == '\t') {
            *msg = "malformed header line";
            return 400;
        }
        const char *ns = p, *ne = colon, *vs = colon + 1, *ve = le;
        trim(&ns, &ne);
        trim(&vs, &ve);
        size_t nl = (size_t)(ne - ns), vl = (size_t)(ve - vs);
        if (token_eq(ns, nl, "content-length")) {
            uint64_t v = 0;
            if (vl == 0 || vl > 18) {
                *msg = "bad Content-Length";
                return 400;
            }
            for (size_t i = 0; i < vl; i++) {
                if (vs[i] < '0' || vs[i] > '9') {
                    *msg = "bad Content-Length";
                    return 400;
                }
                v = v * 10 + (uint64_t)(vs[i] - '0');
            }
            if (has_clen && v != clen) {
                *msg = "conflicting Content-Length";
                return 400;
            }
            has_clen = 1;
            clen = v;
        } else if (token_eq(ns, nl, "transfer-encoding")) {
            te = 1;
        } else if (token_eq(ns, nl, "connection")) {
            const char *t = vs;
            while (t < ve) {
                const char *comma = memchr(t, ',', (size_t)(ve - t));
                const char *ts = t, *tend = comma ? comma : ve;
                trim(&ts, &tend);
                if (token_eq(ts, (size_t)(tend - ts), "close")) h->keepalive = 0;
                else if (token_eq(ts, (size_t)(tend - ts), "keep-alive")) h->keepalive = 1;
                t = comma ? comma + 1 : ve;
            }
        } else if (token_eq(ns, nl, "expect")) {
            if (token_eq(vs, vl, "100-continue")) h->expect100 = 1;
        } else if (token_eq(ns, nl, "x-tally-key")) {
            h->has_key = 1;
            h->key_off = (size_t)(vs - base);
            h->key_len = vl;
        }
        p = le + 2;
    }
    if (te) {
        *msg = "chunked request bodies are not supported; send Content-Length";
        return 411;
    }
    if (h->method == M_POST && !has_clen) {
        *msg = "POST requires Content-Length";
        return 411;
    }
    if (clen > MAX_BODY) {
        *msg = "request body too large";
        return 413;
    }
    h->body_len = (size_t)clen;
    return 0;
}

/* An HTTP-level error: reply and close.  Not counted in the stats. */
static int proto_error(conn_t *c, int status, const char *msg)
{
    reply_error_now(c, status, msg, "invalid_request_error", 0, 0);
    c->close_after = 1;
    c->in.len = c->in_start = 0;
    c->head_done = 0;
    return 1;
}

static int path_is(const char *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && memcmp(p, lit, l) == 0;
}

static int dispatch(conn_t *c, const char *base)
{
    reqhead_t *h = &c->h;
    const char *path = base + h->path_off;
    size_t plen = h->path_len;
    const char *body = base + h->head_len;
    int ka = h->keepalive;

    /* the absolute form a client sends to a proxy (RFC 9112 3.2.2: a server accepts it), so the
     * server can stand in for an HTTP proxy: "http://host[:port]/path" is served as "/path" */
    if (plen > 7 && memcmp(path, "http://", 7) == 0) {
        const char *slash = memchr(path + 7, '/', plen - 7);
        if (slash) {
            plen -= (size_t)(slash - path);
            path = slash;
        }
    }

    if (h->method == M_POST) {
        if (path_is(path, plen, "/v1/chat/completions")) return handle_completion(c, 1, path, plen, body, h->body_len);
        if (path_is(path, plen, "/v1/completions")) return handle_completion(c, 0, path, plen, body, h->body_len);
    } else if (h->method == M_GET) {
        int ready = g_now >= g_ready_at;
        if (path_is(path, plen, "/health")) {
            if (ready) reply_now(c, 200, "{\"status\":\"ok\"}", 15, 0, -1, ka);
            else reply_now(c, 503, "{\"status\":\"loading\"}", 20, 0, -1, ka);
            return 1;
        }
        if (path_is(path, plen, "/v1/models")) {
            if (!ready) {
                reply_error_now(c, 503, "model is loading", "server_error", 0, ka);
                return 1;
            }
            const char *model = opt.model ? opt.model : "test-model";
            g_scratch.len = 0;
            buf_adds(&g_scratch, "{\"object\":\"list\",\"data\":[{\"id\":");
            buf_json_str(&g_scratch, model, strlen(model));
            buf_adds(&g_scratch, ",\"object\":\"model\",\"owned_by\":\"tally-testserver\"}]}");
            reply_now(c, 200, g_scratch.p, g_scratch.len, 0, -1, ka);
            return 1;
        }
        if (path_is(path, plen, "/stats")) {
            buf_t b = {0};
            stats_json(&b);
            reply_now(c, 200, b.p, b.len, 0, -1, ka);
            buf_free(&b);
            return 1;
        }
    }
    reply_error_now(c, 404, "not found", "invalid_request_error", 0, ka);
    return 1;
}

/* Returns 0 when more input is needed, 1 when a request was handled,
 * -1 when the connection was closed. */
static int try_parse(conn_t *c)
{
    /* tolerate stray CRLFs between requests */
    while (!c->head_done && c->in.len - c->in_start >= 2 && c->in.p[c->in_start] == '\r' &&
           c->in.p[c->in_start + 1] == '\n')
        c->in_start += 2;
    char *base = c->in.p + c->in_start;
    size_t avail = c->in.len - c->in_start;
    if (!c->head_done) {
        if (avail < 4) return 0;
        char *e = memmem(base, avail, "\r\n\r\n", 4);
        if (!e) {
            if (avail > MAX_HEAD) return proto_error(c, 431, "request header too large");
            return 0;
        }
        c->h.head_len = (size_t)(e - base) + 4;
        if (c->h.head_len > MAX_HEAD) return proto_error(c, 431, "request header too large");
        const char *msg;
        int rc = parse_head(c, base, c->h.head_len, &msg);
        if (rc) return proto_error(c, rc, msg);
        c->head_done = 1;
    }
    size_t total = c->h.head_len + c->h.body_len;
    if (avail < total) {
        if (c->h.expect100 && !c->sent_continue) {
            buf_adds(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
            c->sent_continue = 1;
        }
        if (c->in.cap < c->in_start + total) {
            if (c->in_start) {
                memmove(c->in.p, c->in.p + c->in_start, avail);
                c->in.len = avail;
                c->in_start = 0;
            }
            buf_reserve(&c->in, total - c->in.len);
        }
        return 0;
    }
    /* Consume the request before handling it; the bytes stay in place
     * (nothing touches c->in until the next read). */
    c->in_start += total;
    c->head_done = 0;
    c->sent_continue = 0;
    if (c->in_start == c->in.len) c->in_start = c->in.len = 0;
    return dispatch(c, base);
}

static void process(conn_t *c)
{
    int need_more = 0;
    while (!c->pending && !c->close_after && c->out.len - c->out_off < OUT_HIGH) {
        int r = try_parse(c);
        if (r < 0) return;
        if (r == 0) {
            need_more = 1;
            break;
        }
        if (c->pending && c->heap_idx == NOIDX) {
            if (complete_pending(c) < 0) return;
        }
    }
    if (flush_out(c) < 0) return;
    if (c->eof && need_more && !c->pending && c->out.len == 0) {
        close_conn(c, 0);
        return;
    }
    update_events(c);
}

static int conn_read(conn_t *c)
{
    if (c->in_start && c->in_start == c->in.len) c->in_start = c->in.len = 0;
    if (c->in.cap - c->in.len < 4096) {
        if (c->in_start) {
            memmove(c->in.p, c->in.p + c->in_start, c->in.len - c->in_start);
            c->in.len -= c->in_start;
            c->in_start = 0;
        }
        if (c->in.cap - c->in.len < 4096) buf_reserve(&c->in, 8192);
    }
    ssize_t n = recv(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len, 0);
    if (n > 0) {
        c->in.len += (size_t)n;
    } else if (n == 0) {
        c->eof = 1;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        close_conn(c, 0);
        return -1;
    }
    return 0;
}

static void on_conn_event(conn_t *c, uint32_t ev)
{
    c->last_us = g_now;
    if (ev & (EPOLLERR | EPOLLHUP)) {
        close_conn(c, 0);
        return;
    }
    if (ev & EPOLLIN) {
        if (conn_read(c) < 0) return;
    }
    process(c);
}

static void pause_accept(void)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.ptr = &g_listen_tag;
    ev.events = 0;
    epoll_ctl(g_epfd, EPOLL_CTL_MOD, g_lfd, &ev);
    g_accept_paused = 1;
    g_accept_resume = g_now + 100000;
}

static void resume_accept(void)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.ptr = &g_listen_tag;
    ev.events = EPOLLIN;
    epoll_ctl(g_epfd, EPOLL_CTL_MOD, g_lfd, &ev);
    g_accept_paused = 0;
}

static void on_accept(void)
{
    for (int k = 0; k < 256; k++) {
        int fd = accept4(g_lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                fprintf(stderr, PROG ": accept: %s (pausing accepts for 100 ms)\n", strerror(errno));
                pause_accept();
            }
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = xcalloc(1, sizeof *c);
        c->fd = fd;
        c->heap_idx = NOIDX;
        c->last_us = g_now;
        c->events = EPOLLIN;
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.ptr = c;
        if (epoll_ctl(g_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            free(c);
            continue;
        }
        c->next = g_conns;
        if (g_conns) g_conns->prev = c;
        g_conns = c;
    }
}

/* ------------------------------------------------------------------ */
/* startup                                                              */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fputs("usage: " PROG " [--host 127.0.0.1] [--port N] [--latency-ms L] [--jitter-ms J]\n"
          "         [--faults RATE] [--fault-kinds 429,500,stall,malformed,drop,truncate,null]\n"
          "         [--retry-after S] [--stall-ms MS] [--seed S] [--replies FILE]\n"
          "         [--fail-match STR]... [--fail-status CODE] [--ready-after-ms MS] [--idle-close-ms MS]\n"
          "         [--model NAME] [--reasoning none|think|field] [--stats FILE]\n"
          "         [--log-requests FILE]\n",
          f);
}

static void bad_flag(const char *fmt, const char *a, const char *b)
{
    fputs(PROG ": ", stderr);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    usage(stderr);
    exit(2);
}

static double parse_nonneg(const char *flag, const char *v, double maxv)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(d) || d < 0 || d > maxv) bad_flag("bad value for --%s: '%s'", flag, v);
    return d;
}

static long parse_int(const char *flag, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi) bad_flag("bad value for --%s: '%s'", flag, v);
    return x;
}

static void parse_kinds(const char *v)
{
    memset(opt.kinds, 0, sizeof opt.kinds);
    opt.nkinds = 0;
    int seen[F_COUNT] = {0};
    const char *p = v;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *e = comma ? comma : p + strlen(p);
        const char *s = p;
        trim(&s, &e);
        int found = -1;
        for (int k = 0; k < F_COUNT; k++)
            if ((size_t)(e - s) == strlen(fault_names[k]) && strncmp(s, fault_names[k], (size_t)(e - s)) == 0) found = k;
        if (found < 0) bad_flag("bad --fault-kinds '%s' (kinds: 429,500,stall,malformed,drop,truncate,null)%s", v, "");
        if (!seen[found]) {
            seen[found] = 1;
            opt.kinds[opt.nkinds++] = found;
        }
        if (!comma) break;
        p = comma + 1;
    }
}

static void parse_args(int argc, char **argv)
{
    opt.host = "127.0.0.1";
    opt.port = "0";
    opt.retry_after = 1;
    opt.stall_ms = 60000;
    opt.seed = 1;
    opt.fail_status = 500;
    opt.reasoning = R_NONE;
    for (int k = 0; k < F_COUNT; k++) opt.kinds[k] = k;
    opt.nkinds = F_COUNT;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strncmp(a, "--", 2) != 0) bad_flag("unexpected argument '%s'%s", a, "");
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a + 2, '=');
        size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nl >= sizeof name) bad_flag("unknown flag '%s'%s", a, "");
        memcpy(name, a + 2, nl);
        name[nl] = '\0';
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc) bad_flag("flag --%s needs a value%s", name, "");
            val = argv[++i];
        }
        if (strcmp(name, "host") == 0) {
            if (!*val) bad_flag("bad value for --%s: '%s'", name, val);
            opt.host = val;
        } else if (strcmp(name, "port") == 0) {
            parse_int(name, val, 0, 65535);
            opt.port = val;
        } else if (strcmp(name, "latency-ms") == 0) {
            opt.latency_ms = parse_nonneg(name, val, 1e9);
        } else if (strcmp(name, "jitter-ms") == 0) {
            opt.jitter_ms = parse_nonneg(name, val, 1e9);
        } else if (strcmp(name, "faults") == 0) {
            opt.fault_rate = parse_nonneg(name, val, 1.0);
        } else if (strcmp(name, "fault-kinds") == 0) {
            parse_kinds(val);
        } else if (strcmp(name, "retry-after") == 0) {
            opt.retry_after = parse_int(name, val, 0, 1000000000L);
        } else if (strcmp(name, "stall-ms") == 0) {
            opt.stall_ms = parse_nonneg(name, val, 1e9);
        } else if (strcmp(name, "seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(val, &end, 0);
            if (!*val || *end || errno || val[0] == '-') bad_flag("bad value for --%s: '%s'", name, val);
            opt.seed = (uint64_t)s;
        } else if (strcmp(name, "replies") == 0) {
            opt.replies_path = val;
        } else if (strcmp(name, "fail-match") == 0) {
            if (opt.nfail >= MAX_FAIL_MATCH) bad_flag("--fail-match given more than 16 times%s%s", "", "");
            if (!*val) bad_flag("empty --%s%s", name, "");
            opt.fail_match[opt.nfail++] = val;
        } else if (strcmp(name, "fail-status") == 0) {
            opt.fail_status = (int)parse_int(name, val, 100, 599);
        } else if (strcmp(name, "ready-after-ms") == 0) {
            opt.ready_after_ms = parse_nonneg(name, val, 1e9);
        } else if (strcmp(name, "idle-close-ms") == 0) {
            opt.idle_close_ms = parse_nonneg(name, val, 1e9);
        } else if (strcmp(name, "model") == 0) {
            opt.model = val;
        } else if (strcmp(name, "reasoning") == 0) {
            if (strcmp(val, "none") == 0) opt.reasoning = R_NONE;
            else if (strcmp(val, "think") == 0) opt.reasoning = R_THINK;
            else if (strcmp(val, "field") == 0) opt.reasoning = R_FIELD;
            else bad_flag("bad value for --%s: '%s' (none, think or field)", name, val);
        } else if (strcmp(name, "stats") == 0) {
            opt.stats_path = val;
        } else if (strcmp(name, "log-requests") == 0) {
            opt.log_path = val;
        } else {
            bad_flag("unknown flag '%s'%s", a, "");
        }
    }
    g_lat_us = (uint64_t)llround(opt.latency_ms * 1000.0);
    g_jit_us = (uint64_t)llround(opt.jitter_ms * 1000.0);
    g_stall_us = (uint64_t)llround(opt.stall_ms * 1000.0);
    g_idle_us = (uint64_t)llround(opt.idle_close_ms * 1000.0);
    g_rng = opt.seed ^ 0x6a09e667f3bcc908ULL;
}

static void load_replies(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
        exit(2);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)n;
        size_t s = 0;
        while (s < len && is_ws((unsigned char)line[s])) s++;
        if (s == len) continue; /* blank line */
        const char *why = NULL;
        cJSON *j = parse_json_body(line, len);
        const cJSON *key = NULL, *resp = NULL;
        if (!j) why = "not valid JSON";
        else if (!cJSON_IsObject(j)) why = "not a JSON object";
        else if (!cJSON_IsString(key = cJSON_GetObjectItemCaseSensitive(j, "key"))) why = "\"key\" must be a string";
        else if (!(resp = cJSON_GetObjectItemCaseSensitive(j, "response")) ||
                 !(cJSON_IsString(resp) || cJSON_IsNull(resp)))
            why = "\"response\" must be a string or null";
        if (why) {
            fprintf(stderr, PROG ": %s:%ld: bad replies line: %s\n", path, lineno, why);
            cJSON_Delete(j);
            free(line);
            fclose(f);
            exit(2);
        }
        size_t kl = strlen(key->valuestring);
        uint64_t h = key_hash(key->valuestring, kl);
        if (strmap_find(&g_replies, key->valuestring, kl, h) == MAP_NONE) {
            uint32_t idx = strmap_insert(&g_replies, key->valuestring, kl, h);
            if (idx >= g_rep_cap) {
                g_rep_cap = g_rep_cap ? g_rep_cap * 2 : 1024;
                g_rep_text = xrealloc(g_rep_text, g_rep_cap * sizeof *g_rep_text);
                g_rep_len = xrealloc(g_rep_len, g_rep_cap * sizeof *g_rep_len);
            }
            if (cJSON_IsString(resp)) {
                size_t rl = strlen(resp->valuestring);
                g_rep_text[idx] = arena_strdup(resp->valuestring, rl);
                g_rep_len[idx] = rl;
            } else {
                g_rep_text[idx] = NULL;
                g_rep_len[idx] = 0;
            }
        }
        cJSON_Delete(j);
    }
    if (ferror(f)) {
        fprintf(stderr, PROG ": error reading %s\n", path);
        exit(2);
    }
    free(line);
    fclose(f);
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur == rl.rlim_max) return;
    rlim_t want = rl.rlim_max;
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && want == RLIM_INFINITY) {
        rl.rlim_cur = 1048576;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int make_listener(void)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(opt.host, opt.port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, PROG ": cannot resolve %s: %s\n", opt.host, gai_strerror(rc));
        exit(1);
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 4096) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, PROG ": cannot listen on %s:%s: %s\n", opt.host, opt.port, strerror(err));
        exit(1);
    }
    return fd;
}

static int listen_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) return -1;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

static void shutdown_all(int code)
{
    write_stats_file();
    if (g_log) fclose(g_log);
    while (g_conns) close_conn(g_conns, 0);
    free(g_heap);
    free(g_keys.slots);
    free(g_keys.keys);
    free(g_kreq);
    free(g_kok);
    free(g_replies.slots);
    free(g_replies.keys);
    free(g_rep_text);
    free(g_rep_len);
    buf_free(&g_scratch);
    buf_free(&g_scratch2);
    while (g_arena_chunks) {
        arena_chunk_t *n = g_arena_chunks->next;
        free(g_arena_chunks);
        g_arena_chunks = n;
    }
    exit(code);
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (opt.replies_path) load_replies(opt.replies_path);
    if (opt.log_path) {
        g_log = fopen(opt.log_path, "a");
        if (!g_log) {
            fprintf(stderr, PROG ": cannot open %s: %s\n", opt.log_path, strerror(errno));
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    /* a shell may start background jobs with SIGINT ignored; ignored signals
     * are discarded even while blocked, so restore the default first */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    raise_nofile();

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
        perror(PROG ": sigprocmask");
        return 1;
    }
    int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) {
        perror(PROG ": signalfd");
        return 1;
    }

    g_lfd = make_listener();
    g_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g_epfd < 0) {
        perror(PROG ": epoll_create1");
        return 1;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.ptr = &g_listen_tag;
    epoll_ctl(g_epfd, EPOLL_CTL_ADD, g_lfd, &ev);
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.ptr = &g_signal_tag;
    epoll_ctl(g_epfd, EPOLL_CTL_ADD, sfd, &ev);

    g_now = now_us();
    g_ready_at = g_now + (uint64_t)llround(opt.ready_after_ms * 1000.0);
    printf(PROG ": listening on %s:%d\n", opt.host, listen_port(g_lfd));
    fflush(stdout);

    struct epoll_event evs[512];
    for (;;) {
        int timeout = -1;
        uint64_t next = UINT64_MAX;
        if (g_heap_n) next = g_heap[0]->deadline;
        if (g_accept_paused && g_accept_resume < next) next = g_accept_resume;
        if (g_idle_us && g_conns) { /* wake for the idle sweep below, at a tenth of the bound */
            uint64_t t = now_us() + g_idle_us / 10 + 1;
            if (t < next) next = t;
        }
        if (next != UINT64_MAX) {
            uint64_t t = now_us();
            if (next <= t) timeout = 0;
            else {
                uint64_t ms = (next - t + 999) / 1000;
                timeout = ms > 60000 ? 60000 : (int)ms;
            }
        }
        int n = epoll_wait(g_epfd, evs, (int)(sizeof evs / sizeof evs[0]), timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror(PROG ": epoll_wait");
            shutdown_all(1);
        }
        g_now = now_us();
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &g_listen_tag) {
                on_accept();
            } else if (p == &g_signal_tag) {
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) shutdown_all(0);
            } else {
                on_conn_event((conn_t *)p, evs[i].events);
            }
        }
        if (g_accept_paused && g_now >= g_accept_resume) resume_accept();
        while (g_heap_n && g_heap[0]->deadline <= g_now) {
            conn_t *c = g_heap[0];
            heap_remove(c);
            if (complete_pending(c) == 0) process(c);
        }
        /* --idle-close-ms: a keep-alive connection with no request in it, nothing buffered
         * either way, and no event for that long is closed (as uvicorn's keep-alive timeout
         * closes a vLLM server's idle connections). */
        for (conn_t *c = g_idle_us ? g_conns : NULL, *nx; c; c = nx) {
            nx = c->next;
            if (!c->pending && c->out.len == c->out_off && c->in.len == c->in_start &&
                g_now - c->last_us >= g_idle_us) {
                st.idle_closed++;
                close_conn(c, 1);
            }
        }
    }
}
