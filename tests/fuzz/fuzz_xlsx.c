/* fuzz_xlsx.c - libFuzzer target for the xlsx worksheet reader (src/import/xlsx.c): the XML
 * parts are what an attacker controls once the zip is sound (the zip reader has its own target,
 * fuzz_zip), so the input is the parts' texts and this target packs them into a stored zip.
 *
 * Input: up to four parts separated by NUL bytes, in this order: xl/worksheets/sheet1.xml,
 * xl/sharedStrings.xml, xl/workbook.xml, xl/_rels/workbook.xml.rels (a part not reached is left
 * out of the archive: a missing part). They are written as a zip of stored entries (method 0,
 * CRC-32 from libdeflate) and read with tl_xlsx_read. The reader must return TL_OK, TL_EINPUT,
 * TL_EIO or TL_ENOMEM; on TL_OK the table has a path, its rows as many cells as it has columns,
 * every cell and column name a string, and lines from 1 to 1,048,576 in increasing order. */
#include "fuzz_util.h"

#include <libdeflate.h>

#include "tally/tabin.h"
#include "xlsx.h"

static const char *const PARTS[4] = {"xl/worksheets/sheet1.xml", "xl/sharedStrings.xml", "xl/workbook.xml",
                                     "xl/_rels/workbook.xml.rels"};

static void put16(uint8_t **p, unsigned v) { *(*p)++ = (uint8_t)v, *(*p)++ = (uint8_t)(v >> 8); }
static void put32(uint8_t **p, uint32_t v) { put16(p, v & 0xFFFF), put16(p, v >> 16); }

/* A stored zip of parts[0..n) with texts (data, len); returns its size in out (malloc'd). */
static size_t pack(const uint8_t *const *data, const size_t *len, int n, uint8_t **out) {
  size_t cap = 22;
  for (int i = 0; i < n; i++) cap += 30 + 46 + 2 * strlen(PARTS[i]) + len[i];
  uint8_t *z = malloc(cap), *p = z;
  FZ_CHECK(z != NULL);
  uint32_t off[4], crc[4];
  for (int i = 0; i < n; i++) { /* local headers and data */
    off[i] = (uint32_t)(p - z);
    crc[i] = libdeflate_crc32(0, data[i], len[i]);
    put32(&p, 0x04034b50), put16(&p, 20), put16(&p, 0), put16(&p, 0), put16(&p, 0), put16(&p, 0);
    put32(&p, crc[i]), put32(&p, (uint32_t)len[i]), put32(&p, (uint32_t)len[i]);
    put16(&p, (unsigned)strlen(PARTS[i])), put16(&p, 0);
    memcpy(p, PARTS[i], strlen(PARTS[i])), p += strlen(PARTS[i]);
    if (len[i]) memcpy(p, data[i], len[i]), p += len[i];
  }
  uint32_t cd = (uint32_t)(p - z);
  for (int i = 0; i < n; i++) { /* central directory */
    put32(&p, 0x02014b50), put16(&p, 20), put16(&p, 20), put16(&p, 0), put16(&p, 0), put16(&p, 0), put16(&p, 0);
    put32(&p, crc[i]), put32(&p, (uint32_t)len[i]), put32(&p, (uint32_t)len[i]);
    put16(&p, (unsigned)strlen(PARTS[i])), put16(&p, 0), put16(&p, 0), put16(&p, 0), put16(&p, 0);
    put32(&p, 0), put32(&p, off[i]);
    memcpy(p, PARTS[i], strlen(PARTS[i])), p += strlen(PARTS[i]);
  }
  uint32_t cdlen = (uint32_t)(p - z) - cd;
  put32(&p, 0x06054b50), put16(&p, 0), put16(&p, 0), put16(&p, (unsigned)n), put16(&p, (unsigned)n);
  put32(&p, cdlen), put32(&p, cd), put16(&p, 0);
  *out = z;
  return (size_t)(p - z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  const uint8_t *part[4];
  size_t len[4];
  int n = 0;
  for (size_t at = 0; n < 4 && at <= size;) {
    const uint8_t *e = memchr(data + at, 0, size - at);
    size_t l = e ? (size_t)(e - (data + at)) : size - at;
    part[n] = data + at, len[n] = l, n++;
    if (!e) break;
    at += l + 1;
  }
  uint8_t *zip = NULL;
  size_t zn = pack(part, len, n, &zip);
  const char *path = fz_path("book.xlsx");
  fz_write(path, zip, zn);
  free(zip);
  tl_tabin t;
  tl_err err = {{0}};
  tl_status st = tl_xlsx_read(path, &t, &err);
  FZ_CHECK(st == TL_OK || st == TL_EINPUT || st == TL_EIO || st == TL_ENOMEM);
  if (st != TL_OK) {
    FZ_CHECK(err.msg[0] != '\0');
    return 0;
  }
  FZ_CHECK(t.path && t.ncols >= 0);
  long last = 0;
  for (int c = 0; c < t.ncols; c++) FZ_CHECK(t.colnames[c] != NULL);
  for (size_t r = 0; r < t.nrows; r++) {
    FZ_CHECK(t.line[r] > last && t.line[r] <= 1048576);
    last = t.line[r];
    for (int c = 0; c < t.ncols; c++) FZ_CHECK(t.cells[r][c] != NULL && strlen(t.cells[r][c]) < (1u << 30));
  }
  tl_tabin_release(&t);
  return 0;
}
