/* http_floor.c - the floor under tally's HTTP engine: the least a libcurl client does per request.
 *
 * usage: http_floor URL N IN_FLIGHT BODY_FILE
 *
 * POSTs BODY_FILE (a chat request as tally sends it) N times to URL (parsed once and handed to
 * each transfer as a CURLU handle, as tally does), keeping IN_FLIGHT requests outstanding on
 * reused keep-alive connections, with the event loop tally uses (libcurl's socket
 * interface over epoll: CURLMOPT_SOCKETFUNCTION / CURLMOPT_TIMERFUNCTION; as in tally, a socket
 * this program opened stays in the epoll set between requests, so a kept-alive connection costs
 * no epoll_ctl per request; src/engines/openai.c says why that is safe). Each reply body is
 * kept in a buffer and dropped: no JSON, no journal, no scoring, no tables. Prints the wall time,
 * requests/s and the process's CPU (user+sys, getrusage) per request; bench/http_engine.sh
 * runs it beside `tally run` against the same test server, so tally's CPU per request reads
 * against this floor (libcurl + the kernel's loopback TCP) measured in the same run. */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { FD_CAP = 65536 }; /* descriptors this program can track; more fail the transfer */

typedef struct {
  CURLM *multi;
  int epfd;
  double due; /* when libcurl wants CURL_SOCKET_TIMEOUT (now_s clock); < 0: never */
  unsigned char reg[FD_CAP]; /* per socket: 1 in, 2 out (in the epoll set), 4 libcurl waits, 8 ours */
} loop;

typedef struct {
  char *data;
  size_t len, cap;
} sink;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  sink *k = ud;
  size_t m = sz * n;
  if (k->len + m > k->cap) {
    size_t cap = (k->len + m) * 2;
    char *d = realloc(k->data, cap);
    if (!d) return 0;
    k->data = d;
    k->cap = cap;
  }
  memcpy(k->data + k->len, p, m);
  k->len += m;
  return m;
}

static curl_socket_t on_open(void *ud, curlsocktype purpose, struct curl_sockaddr *a) {
  (void)purpose;
  loop *l = ud;
  curl_socket_t s = socket(a->family, a->socktype, a->protocol);
  if (s < 0 || s >= FD_CAP) {
    if (s >= 0) close(s);
    return CURL_SOCKET_BAD;
  }
  l->reg[s] = 8;
  return s;
}

static int on_close(void *ud, curl_socket_t s) {
  ((loop *)ud)->reg[s] = 0;
  return close(s);
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *ud, void *sp) {
  (void)e;
  (void)sp;
  loop *l = ud;
  if (s < 0 || s >= FD_CAP) return -1;
  unsigned char *st = &l->reg[s], reg = *st & 3;
  if (what == CURL_POLL_REMOVE) {
    if (*st & 8) *st &= (unsigned char)~4;
    else {
      if (reg) epoll_ctl(l->epfd, EPOLL_CTL_DEL, s, NULL);
      *st = 0;
    }
    return 0;
  }
  unsigned char want = (unsigned char)((what & CURL_POLL_IN ? 1 : 0) | (what & CURL_POLL_OUT ? 2 : 0));
  if (want != reg) {
    struct epoll_event ev = {0};
    ev.events = (want & 1 ? EPOLLIN : 0u) | (want & 2 ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (epoll_ctl(l->epfd, reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0)
      epoll_ctl(l->epfd, reg ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev);
  }
  *st = (unsigned char)((*st & 8) | want | 4);
  return 0;
}

static double now_s(void);
static int on_timer(CURLM *m, long ms, void *ud) {
  (void)m;
  ((loop *)ud)->due = ms < 0 ? -1 : now_s() + ms / 1e3;
  return 0;
}

static void fire(loop *l) {
  int running = 0;
  l->due = -1;
  curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)sz + 1);
  if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) b[sz] = 0;
  *n = (size_t)sz;
  return b;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: http_floor URL N IN_FLIGHT BODY_FILE\n");
    return 2;
  }
  const char *url = argv[1];
  long total = atol(argv[2]), inflight = atol(argv[3]);
  size_t blen;
  char *body = slurp(argv[4], &blen);
  if (!body || total < 1 || inflight < 1) {
    fprintf(stderr, "http_floor: bad arguments or unreadable %s\n", argv[4]);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  static loop l; /* the descriptor table is large */
  l.multi = curl_multi_init();
  l.epfd = epoll_create1(EPOLL_CLOEXEC);
  l.due = -1.0;
  curl_multi_setopt(l.multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(l.multi, CURLMOPT_SOCKETDATA, &l);
  curl_multi_setopt(l.multi, CURLMOPT_TIMERFUNCTION, on_timer);
  curl_multi_setopt(l.multi, CURLMOPT_TIMERDATA, &l);
  curl_multi_setopt(l.multi, CURLMOPT_MAXCONNECTS, inflight + 16);
  CURLU *uh = curl_url();
  if (!uh || curl_url_set(uh, CURLUPART_URL, url, CURLU_GUESS_SCHEME) != CURLUE_OK) {
    fprintf(stderr, "http_floor: bad URL %s\n", url);
    return 2;
  }
  struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  hdrs = curl_slist_append(hdrs, "Expect:");
  CURL **h = calloc((size_t)inflight, sizeof *h);
  sink *sk = calloc((size_t)inflight, sizeof *sk);
  long started = 0, done = 0, failed = 0;
  double t0 = now_s();
  for (long i = 0; i < inflight && started < total; i++, started++) {
    h[i] = curl_easy_init();
    curl_easy_setopt(h[i], CURLOPT_CURLU, uh); /* as tally: the URL parsed once */
    curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h[i], CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
    curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &sk[i]);
    curl_easy_setopt(h[i], CURLOPT_PRIVATE, (char *)&sk[i]);
    curl_easy_setopt(h[i], CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h[i], CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h[i], CURLOPT_PROXY, ""); /* as tally with no proxy variable set: no lookups */
    curl_easy_setopt(h[i], CURLOPT_NOPROXY, "");
    curl_easy_setopt(h[i], CURLOPT_OPENSOCKETFUNCTION, on_open);
    curl_easy_setopt(h[i], CURLOPT_OPENSOCKETDATA, &l);
    curl_easy_setopt(h[i], CURLOPT_CLOSESOCKETFUNCTION, on_close);
    curl_easy_setopt(h[i], CURLOPT_CLOSESOCKETDATA, &l);
    curl_multi_add_handle(l.multi, h[i]);
  }
  struct epoll_event evs[64];
  int running = 0;
  while (done < total) {
    if (l.due >= 0 && l.due <= now_s()) fire(&l);
    double w = l.due < 0 ? 1.0 : l.due - now_s();
    int n = epoll_wait(l.epfd, evs, 64, w <= 0 ? 0 : (int)(w * 1e3) + 1);
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd >= 0 && fd < FD_CAP && !(l.reg[fd] & 4)) { /* libcurl waits on it no more */
        epoll_ctl(l.epfd, EPOLL_CTL_DEL, fd, NULL);
        l.reg[fd] &= 8;
        continue;
      }
      int m = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
              (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
      curl_multi_socket_action(l.multi, evs[i].data.fd, m, &running);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(l.multi, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL *e = msg->easy_handle;
      long code = 0;
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
      failed += msg->data.result != CURLE_OK || code != 200;
      done++;
      sink *k = NULL;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&k);
      k->len = 0;
      curl_multi_remove_handle(l.multi, e);
      if (started < total) { /* the same handle, its connection kept, takes the next request */
        started++;
        curl_multi_add_handle(l.multi, e);
      }
    }
  }
  double wall = now_s() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  printf("http_floor: %ld requests (%ld failed) in %.3f s = %.0f req/s; CPU %.1f us per request\n", total, failed,
         wall, total / wall, 1e6 * cpu / total);
  for (long i = 0; i < inflight; i++) {
    if (h[i]) {
      curl_multi_remove_handle(l.multi, h[i]);
      curl_easy_cleanup(h[i]);
    }
    free(sk[i].data);
  }
  free(h);
  free(sk);
  curl_slist_free_all(hdrs);
  curl_multi_cleanup(l.multi);
  close(l.epfd);
  free(body);
  curl_global_cleanup();
  return failed ? 1 : 0;
}
