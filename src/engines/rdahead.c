/* rdahead.c - see rdahead.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "rdahead.h"

void tl_rdahead_init(tl_rdahead *r) {
  r->buf = NULL;
  r->cap = r->len = 0;
  r->key = -1;
  r->off = 0;
}

void tl_rdahead_release(tl_rdahead *r) {
  free(r->buf);
  tl_rdahead_init(r);
}

void tl_rdahead_shrink(tl_rdahead *r, size_t most) {
  if (r->cap > most) tl_rdahead_release(r);
}

int tl_pread_full(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n) {
    ssize_t k = pread(fd, p, n, (off_t)off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
    off += (uint64_t)k;
  }
  return 0;
}

int tl_rdahead_holds(const tl_rdahead *r, long key, uint64_t off, size_t n) {
  return r->key == key && off >= r->off && off - r->off <= r->len && n <= r->len - (off - r->off);
}

const char *tl_rdahead_at(tl_rdahead *r, long key, int fd, uint64_t off, size_t n, int *nomem) {
  *nomem = 0;
  if (tl_rdahead_holds(r, key, off, n)) return r->buf + (off - r->off);
  const size_t want = n > TL_RDAHEAD_BYTES ? n : TL_RDAHEAD_BYTES;
  if (want > r->cap) {
    char *b = realloc(r->buf, want);
    if (!b) {
      *nomem = 1;
      return NULL;
    }
    r->buf = b;
    r->cap = want;
  }
  r->key = -1;
  size_t got = 0;
  while (got < want) { /* up to want bytes: at least the n asked, unless the file ends first */
    ssize_t k = pread(fd, r->buf + got, want - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  if (got < n) return NULL;
  r->key = key;
  r->off = off;
  r->len = got;
  return r->buf;
}
