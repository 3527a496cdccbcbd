/* zip.h - a read-only ZIP reader for inspect_ai's .eval logs: the central directory (ZIP64
 * included), entries stored (method 0), deflated (8, libdeflate) or zstd-compressed (93, libzstd),
 * each checked against its CRC-32 and held to its declared size.
 *
 * Why hand-written: Debian 12's libzip (1.7.3) predates zstd (method 93, libzip 1.8), and inspect
 * writes zstd entries by default since 0.3.206; minizip and libarchive in Debian 12 have the same
 * gap or bring a whole archive framework for one directory walk. The format part is small (three
 * fixed records); the decompression is libdeflate's and libzstd's.
 *
 * Untrusted input: every offset and size is checked against the file before it is used; an entry
 * whose data inflates past its declared size, whose declared size is over the caller's bound or
 * impossible for its compressed size (a zip bomb, a lying header), whose CRC-32 differs, that is
 * encrypted or uses another method is refused with a message naming the file and the entry. */
#ifndef TALLY_IMPORT_ZIP_H
#define TALLY_IMPORT_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

typedef struct {
  char *name;          /* NUL-terminated (owned) */
  uint64_t csize;      /* compressed size (central directory; ZIP64 extra when 0xFFFFFFFF) */
  uint64_t usize;      /* uncompressed size */
  uint64_t local;      /* offset of its local header */
  uint32_t crc;        /* CRC-32 of the uncompressed data */
  uint16_t method;     /* 0 stored, 8 deflate, 93 zstd; anything else is refused on reading */
  uint16_t flags;      /* general purpose bits (bit 0: encrypted; bit 3: data descriptor) */
} tl_zip_entry;

typedef struct {
  const char *label;   /* the file, for messages (borrowed) */
  int fd;              /* the file (tl_zip_open), or -1 */
  const unsigned char *mem; /* the bytes (tl_zip_open_mem), or NULL (borrowed) */
  uint64_t size;       /* of the whole archive */
  uint64_t cd_off;     /* where the central directory starts: entries' data lie before it */
  tl_zip_entry *e;     /* [n], in central directory order (owned) */
  size_t n;
} tl_zip;

/* Whether data starts like a ZIP archive (a local file header, or the end record of an empty
 * one). */
int tl_zip_magic(const unsigned char *data, size_t n);

/* Opens path and reads its central directory. TL_EIO when it cannot be read; TL_EINPUT with the
 * file named and what is wrong ("no end of central directory record: not a zip, or cut short")
 * when the directory is not sound. tl_zip_close frees it either way. */
tl_status tl_zip_open(tl_zip *z, const char *path, tl_err *err);
/* The same on n bytes in memory (borrowed until tl_zip_close); label names it in messages. */
tl_status tl_zip_open_mem(tl_zip *z, const char *label, const void *data, size_t n, tl_err *err);
void tl_zip_close(tl_zip *z);

/* The first entry named name, or NULL. */
const tl_zip_entry *tl_zip_find(const tl_zip *z, const char *name);

/* Reads entry e into *out (malloc'd, NUL-terminated after its *n bytes; the caller frees it),
 * refusing one whose declared size is over max bytes. TL_EINPUT with "'FILE': entry 'NAME': ..."
 * in err for a bad entry (the archive stays usable), TL_EIO for a read error, TL_ENOMEM. */
tl_status tl_zip_read(const tl_zip *z, const tl_zip_entry *e, uint64_t max, unsigned char **out, size_t *n,
                      tl_err *err);

#endif
