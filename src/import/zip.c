/* zip.c - the ZIP central-directory reader of zip.h (why it is hand-written: see zip.h).
 *
 * Layout read (APPNOTE 6.3): the end of central directory record (EOCD, 22 bytes + comment) at
 * the end; before it, for ZIP64, a locator (20 bytes) pointing at the ZIP64 EOCD record (56+
 * bytes) which holds the 64-bit entry count, directory size and offset; the central directory:
 * one 46-byte header + name + extra + comment per entry (sizes and offset 0xFFFFFFFF: the 64-bit
 * value is in the ZIP64 extra field 0x0001, in the order usize, csize, offset, only those that
 * overflowed); each entry's data follows its 30-byte local header + name + extra. Sizes and CRC
 * are taken from the central directory, so entries written with a data descriptor (bit 3: zeros
 * in the local header, the values after the data) read like any other. */
#define _POSIX_C_SOURCE 200809L
#include "zip.h"

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u

/* Deflate cannot expand more than 1032:1 (a 258-byte match in about 2 bits): a header that
 * claims more is lying. */
#define DEFLATE_MAX_RATIO 1032u

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32); }

int tl_zip_magic(const unsigned char *data, size_t n) {
  return n >= 4 && (le32(data) == SIG_LOCAL || le32(data) == SIG_EOCD);
}

/* Reads n bytes at off into buf: TL_EINPUT when they are not all in the archive. */
static tl_status read_at(const tl_zip *z, uint64_t off, void *buf, size_t n, const char *what, tl_err *err) {
  if (off > z->size || n > z->size - off)
    return tl_err_set(err, TL_EINPUT, "'%s': %s lies past the end of the file (%llu bytes): cut short?", z->label,
                      what, (unsigned long long)z->size);
  if (z->mem) {
    memcpy(buf, z->mem + off, n);
    return TL_OK;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(z->fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return tl_err_set(err, TL_EIO, "cannot read '%s': %s", z->label, strerror(errno));
    if (r == 0)
      return tl_err_set(err, TL_EIO, "cannot read '%s': it shrank while being read", z->label);
    got += (size_t)r;
  }
  return TL_OK;
}

/* Finds the EOCD: the last signature in the final 22 + 65535 bytes whose comment fits. */
static tl_status find_eocd(const tl_zip *z, uint64_t *at, unsigned char rec[22], tl_err *err) {
  if (z->size < 22)
    return tl_err_set(err, TL_EINPUT, "'%s': no end of central directory record: not a zip, or cut short (%llu bytes)",
                      z->label, (unsigned long long)z->size);
  uint64_t span = z->size < 22 + 65535 ? z->size : 22 + 65535;
  unsigned char *tail = malloc((size_t)span);
  if (!tail) return TL_ENOMEM;
  tl_status st = read_at(z, z->size - span, tail, (size_t)span, "the end record", err);
  if (st != TL_OK) {
    free(tail);
    return st;
  }
  for (uint64_t i = span - 22 + 1; i-- > 0;) {
    if (le32(tail + i) != SIG_EOCD) continue;
    uint16_t clen = le16(tail + i + 20);
    if (i + 22 + clen > span) continue;
    memcpy(rec, tail + i, 22);
    *at = z->size - span + i;
    free(tail);
    return TL_OK;
  }
  free(tail);
  return tl_err_set(err, TL_EINPUT, "'%s': no end of central directory record: not a zip, or cut short", z->label);
}

/* ZIP64: when a locator lies right before the EOCD (at *eocd_at), the entry count, directory
 * size and offset from the ZIP64 end record it points at, and *eocd_at moved to that record (the
 * directory ends before it); nothing changed when there is no locator. */
static tl_status read_zip64_end(const tl_zip *z, uint64_t *eocd_at, uint64_t *count, uint64_t *cd_size,
                                uint64_t *cd_off, tl_err *err) {
  if (*eocd_at < 20) return TL_OK;
  unsigned char loc[20] = {0};
  tl_status st = read_at(z, *eocd_at - 20, loc, 20, "the ZIP64 locator", err);
  if (st != TL_OK || le32(loc) != SIG_LOC64) return st;
  uint64_t rec_off = le64(loc + 8);
  unsigned char r64[56] = {0};
  if ((st = read_at(z, rec_off, r64, 56, "the ZIP64 end record", err)) != TL_OK) return st;
  if (le32(r64) != SIG_EOCD64 || rec_off + 56 > *eocd_at - 20)
    return tl_err_set(err, TL_EINPUT, "'%s': the ZIP64 locator points at no ZIP64 end record (offset %llu)", z->label,
                      (unsigned long long)rec_off);
  if (le32(r64 + 16) != 0 || le32(r64 + 20) != 0 || le64(r64 + 24) != le64(r64 + 32))
    return tl_err_set(err, TL_EINPUT, "'%s': a multi-part (spanned) zip: not supported", z->label);
  *count = le64(r64 + 32);
  *cd_size = le64(r64 + 40);
  *cd_off = le64(r64 + 48);
  *eocd_at = rec_off;
  return TL_OK;
}

/* Central directory entry i (of count) at cd[*p] into z->e[z->n] (z->n counted once its name is
 * set, so tl_zip_close frees it), its ZIP64 extra field applied; *p moved past it. A damaged
 * entry: TL_EINPUT, err set. */
static tl_status read_entry(tl_zip *z, const unsigned char *cd, uint64_t cd_size, uint64_t cd_off, uint64_t *p,
                            uint64_t i, uint64_t count, tl_err *err) {
  if (cd_size - *p < 46 || le32(cd + *p) != SIG_CENTRAL)
    return tl_err_set(err, TL_EINPUT, "'%s': central directory entry %llu of %llu is damaged (no header at %llu)",
                      z->label, (unsigned long long)i + 1, (unsigned long long)count,
                      (unsigned long long)(cd_off + *p));
  const unsigned char *h = cd + *p;
  uint16_t nlen = le16(h + 28), xlen = le16(h + 30), clen = le16(h + 32);
  if (cd_size - *p - 46 < (uint64_t)nlen + xlen + clen)
    return tl_err_set(err, TL_EINPUT, "'%s': central directory entry %llu runs past the directory", z->label,
                      (unsigned long long)i + 1);
  tl_zip_entry *e = &z->e[z->n];
  e->flags = le16(h + 8);
  e->method = le16(h + 10);
  e->crc = le32(h + 16);
  e->csize = le32(h + 20);
  e->usize = le32(h + 24);
  e->local = le32(h + 42);
  if (memchr(h + 46, 0, nlen))
    return tl_err_set(err, TL_EINPUT, "'%s': central directory entry %llu has a NUL byte in its name", z->label,
                      (unsigned long long)i + 1);
  e->name = malloc((size_t)nlen + 1);
  if (!e->name) return TL_ENOMEM;
  memcpy(e->name, h + 46, nlen);
  e->name[nlen] = '\0';
  z->n++;
  /* ZIP64 extra: the overflowed fields, in order usize, csize, offset */
  const unsigned char *x = h + 46 + nlen, *xend = x + xlen;
  int need_u = e->usize == 0xFFFFFFFFu, need_c = e->csize == 0xFFFFFFFFu, need_o = e->local == 0xFFFFFFFFu;
  while (xend - x >= 4 && (need_u || need_c || need_o)) {
    uint16_t id = le16(x), len = le16(x + 2);
    if (len > xend - x - 4) break;
    if (id == 0x0001) {
      const unsigned char *v = x + 4, *vend = v + len;
      if (need_u && vend - v >= 8) e->usize = le64(v), v += 8, need_u = 0;
      if (need_c && vend - v >= 8) e->csize = le64(v), v += 8, need_c = 0;
      if (need_o && vend - v >= 8) e->local = le64(v), v += 8, need_o = 0;
      break;
    }
    x += 4 + len;
  }
  if (need_u || need_c || need_o)
    return tl_err_set(err, TL_EINPUT,
                      "'%s': entry '%s': sizes or offset marked ZIP64 but no ZIP64 extra field holds them", z->label,
                      e->name);
  *p += 46 + (uint64_t)nlen + xlen + clen;
  return TL_OK;
}

/* Reads the directory (z->size, z->fd or z->mem set). */
static tl_status read_directory(tl_zip *z, tl_err *err) {
  unsigned char eocd[22] = {0};
  uint64_t eocd_at = 0;
  tl_status st = find_eocd(z, &eocd_at, eocd, err);
  if (st != TL_OK) return st;
  uint64_t count = le16(eocd + 10), cd_size = le32(eocd + 12), cd_off = le32(eocd + 16);
  if (le16(eocd + 4) != 0 || le16(eocd + 6) != 0 || le16(eocd + 8) != le16(eocd + 10))
    return tl_err_set(err, TL_EINPUT, "'%s': a multi-part (spanned) zip: not supported", z->label);
  if ((st = read_zip64_end(z, &eocd_at, &count, &cd_size, &cd_off, err)) != TL_OK) return st;
  if (cd_off > eocd_at || cd_size > eocd_at - cd_off)
    return tl_err_set(err, TL_EINPUT,
                      "'%s': the central directory (%llu bytes at %llu) does not fit before its end record: "
                      "cut short or damaged",
                      z->label, (unsigned long long)cd_size, (unsigned long long)cd_off);
  if (count > cd_size / 46)
    return tl_err_set(err, TL_EINPUT, "'%s': the end record claims %llu entries in a %llu-byte directory", z->label,
                      (unsigned long long)count, (unsigned long long)cd_size);
  z->cd_off = cd_off;
  unsigned char *cd = malloc(cd_size ? (size_t)cd_size : 1);
  if (!cd) return TL_ENOMEM;
  if ((st = read_at(z, cd_off, cd, (size_t)cd_size, "the central directory", err)) != TL_OK) {
    free(cd);
    return st;
  }
  z->e = calloc(count ? (size_t)count : 1, sizeof *z->e);
  if (!z->e) {
    free(cd);
    return TL_ENOMEM;
  }
  uint64_t p = 0;
  for (uint64_t i = 0; i < count && st == TL_OK; i++) st = read_entry(z, cd, cd_size, cd_off, &p, i, count, err);
  free(cd);
  return st;
}

static tl_status open_common(tl_zip *z, tl_err *err) {
  tl_status st = read_directory(z, err);
  return st;
}

tl_status tl_zip_open(tl_zip *z, const char *path, tl_err *err) {
  memset(z, 0, sizeof *z);
  z->fd = -1;
  z->label = path;
  z->fd = open(path, O_RDONLY);
  if (z->fd < 0) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(z->fd, &sb) != 0) return tl_err_set(err, TL_EIO, "cannot read '%s': %s", path, strerror(errno));
  z->size = (uint64_t)sb.st_size;
  return open_common(z, err);
}

tl_status tl_zip_open_mem(tl_zip *z, const char *label, const void *data, size_t n, tl_err *err) {
  memset(z, 0, sizeof *z);
  z->fd = -1;
  z->label = label;
  z->mem = data;
  z->size = n;
  return open_common(z, err);
}

void tl_zip_close(tl_zip *z) {
  for (size_t i = 0; i < z->n; i++) free(z->e[i].name);
  free(z->e);
  if (z->fd >= 0) close(z->fd);
  memset(z, 0, sizeof *z);
  z->fd = -1;
}

const tl_zip_entry *tl_zip_find(const tl_zip *z, const char *name) {
  for (size_t i = 0; i < z->n; i++)
    if (strcmp(z->e[i].name, name) == 0) return &z->e[i];
  return NULL;
}

#define ENTRY_ERR(...) tl_err_set(err, TL_EINPUT, __VA_ARGS__)

/* Decompresses entry e's data in[csize] into res[usize] (stored, deflate or zstd), *got the bytes
 * written; data that is damaged or expands past usize: TL_EINPUT, err set. */
static tl_status decompress(const tl_zip *z, const tl_zip_entry *e, const unsigned char *in, unsigned char *res,
                            size_t *got, tl_err *err) {
  const char *L = z->label, *N = e->name;
  if (e->method == 0) {
    memcpy(res, in, (size_t)e->usize);
    *got = (size_t)e->usize;
    return TL_OK;
  }
  if (e->method == 8) {
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d) return TL_ENOMEM;
    enum libdeflate_result r = libdeflate_deflate_decompress(d, in, (size_t)e->csize, res, (size_t)e->usize, got);
    libdeflate_free_decompressor(d);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
      return ENTRY_ERR("'%s': entry '%s' inflates past its declared %llu bytes: refused (a zip bomb or a lying header)",
                       L, N, (unsigned long long)e->usize);
    if (r != LIBDEFLATE_SUCCESS) return ENTRY_ERR("'%s': entry '%s': its deflate data is damaged", L, N);
    return TL_OK;
  }
  unsigned long long fcs = ZSTD_getFrameContentSize(in, (size_t)e->csize);
  if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != ZSTD_CONTENTSIZE_ERROR && fcs > e->usize)
    return ENTRY_ERR("'%s': entry '%s': its zstd frame holds %llu bytes, past its declared %llu: refused (a zip bomb "
                     "or a lying header)",
                     L, N, fcs, (unsigned long long)e->usize);
  size_t r = ZSTD_decompress(res, (size_t)e->usize, in, (size_t)e->csize);
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
      return ENTRY_ERR("'%s': entry '%s' expands past its declared %llu bytes: refused (a zip bomb or a lying header)",
                       L, N, (unsigned long long)e->usize);
    return ENTRY_ERR("'%s': entry '%s': its zstd data is damaged (%s)", L, N, ZSTD_getErrorName(r));
  }
  *got = r;
  return TL_OK;
}

tl_status tl_zip_read(const tl_zip *z, const tl_zip_entry *e, uint64_t max, unsigned char **out, size_t *n,
                      tl_err *err) {
  *out = NULL;
  *n = 0;
  const char *L = z->label, *N = e->name;
  if ((e->flags & 0x41) || e->method == 99)
    return ENTRY_ERR("'%s': entry '%s' is encrypted: not supported", L, N);
  if (e->method != 0 && e->method != 8 && e->method != 93)
    return ENTRY_ERR("'%s': entry '%s': compression method %u is not supported (stored 0, deflate 8, zstd 93)", L, N,
                     e->method);
  if (e->usize > max || e->usize > SIZE_MAX - 1)
    return ENTRY_ERR("'%s': entry '%s' declares %llu bytes, over the bound of %llu: refused", L, N,
                     (unsigned long long)e->usize, (unsigned long long)max);
  if (e->method == 0 && e->csize != e->usize)
    return ENTRY_ERR("'%s': entry '%s' is stored but its sizes differ (%llu compressed, %llu not)", L, N,
                     (unsigned long long)e->csize, (unsigned long long)e->usize);
  if (e->method == 8 && e->usize / DEFLATE_MAX_RATIO > e->csize + 1)
    return ENTRY_ERR("'%s': entry '%s' declares %llu bytes from %llu deflated ones, more than deflate can give: a lying "
                     "header",
                     L, N, (unsigned long long)e->usize, (unsigned long long)e->csize);
  unsigned char lh[30] = {0};
  tl_status st;
  tl_err sub;
  if (e->local > z->cd_off || z->cd_off - e->local < 30 || read_at(z, e->local, lh, 30, "a local header", &sub) != TL_OK ||
      le32(lh) != SIG_LOCAL)
    return ENTRY_ERR("'%s': entry '%s': no local header at offset %llu: cut short or damaged", L, N,
                     (unsigned long long)e->local);
  uint64_t data = e->local + 30 + le16(lh + 26) + le16(lh + 28);
  if (data > z->cd_off || e->csize > z->cd_off - data)
    return ENTRY_ERR("'%s': entry '%s': its %llu bytes of data run past the end of the entries: cut short or damaged", L,
                     N, (unsigned long long)e->csize);
  unsigned char *in = malloc(e->csize ? (size_t)e->csize : 1);
  unsigned char *res = malloc((size_t)e->usize + 1);
  if (!in || !res) {
    free(in);
    free(res);
    return TL_ENOMEM;
  }
  if ((st = read_at(z, data, in, (size_t)e->csize, "entry data", err)) != TL_OK) goto fail;
  size_t got = 0;
  if ((st = decompress(z, e, in, res, &got, err)) != TL_OK) goto fail;
  if (got != e->usize) {
    st = ENTRY_ERR("'%s': entry '%s' holds %zu bytes, not the %llu its header declares", L, N, got,
                   (unsigned long long)e->usize);
    goto fail;
  }
  uint32_t crc = libdeflate_crc32(0, res, got);
  if (crc != e->crc) {
    st = ENTRY_ERR("'%s': entry '%s': CRC-32 mismatch (stored %08x, data %08x): damaged", L, N, (unsigned)e->crc,
                   (unsigned)crc);
    goto fail;
  }
  free(in);
  res[got] = '\0';
  *out = res;
  *n = got;
  return TL_OK;
fail:
  free(in);
  free(res);
  return st;
}
