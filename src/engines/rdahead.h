/* rdahead.h - positioned reads of files that are mostly read in order, through one read-ahead
 * buffer: a miss reads TL_RDAHEAD_BYTES (or the bytes asked, when more) from where it is, so
 * the next requests for the bytes that follow are served from memory. The replay engine reads
 * answer lines back with it, the driver its spilled item-table rows. The buffer holds one file
 * at a time, named by the caller's number (`key`). Not thread-safe: one reader per thread. */
#ifndef TALLY_RDAHEAD_H
#define TALLY_RDAHEAD_H

#include <stddef.h>
#include <stdint.h>

#define TL_RDAHEAD_BYTES ((size_t)1 << 20)

typedef struct {
  char *buf;       /* owned, cap bytes; NULL until the first miss */
  size_t cap, len; /* len: the bytes of buf that hold the file */
  long key;        /* whose bytes: the caller's file number, -1 none */
  uint64_t off;    /* where they start in that file */
} tl_rdahead;

void tl_rdahead_init(tl_rdahead *r);
void tl_rdahead_release(tl_rdahead *r);
/* Frees the buffer when it grew past `most` bytes (it held a long record). */
void tl_rdahead_shrink(tl_rdahead *r, size_t most);

/* 1 when the buffer holds the n bytes at offset off of file `key`. */
int tl_rdahead_holds(const tl_rdahead *r, long key, uint64_t off, size_t n);

/* The n bytes at offset off of file `key` (descriptor fd): a pointer into the buffer, valid
 * until the next call on r. NULL when they cannot be read (a read error, or the file ends
 * first) or, with *nomem = 1, when the buffer could not grow. */
const char *tl_rdahead_at(tl_rdahead *r, long key, int fd, uint64_t off, size_t n, int *nomem);

/* pread of exactly n bytes at off (retried on EINTR and short reads). 0, or -1 on a read error
 * or end of file. */
int tl_pread_full(int fd, void *buf, size_t n, uint64_t off);

#endif
