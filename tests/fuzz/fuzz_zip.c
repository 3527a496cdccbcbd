/* fuzz_zip.c - libFuzzer target for the ZIP reader of inspect_ai's .eval logs (src/import/zip.c):
 * the input is the archive, read from memory (tl_zip_open_mem); every entry of its central
 * directory (the first 256) is read with a bound of 1 MiB. Properties: an open archive's entries
 * have names and lie before its directory's end; a read entry has exactly its declared size, a
 * NUL after it, and a CRC-32 that matched (so reading it again gives the same bytes); a refused
 * one names the archive and the entry. */
#include "fuzz_util.h"

#include "zip.h"

#define FZ_MAX_ENTRY ((uint64_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tl_zip z;
  tl_err err;
  tl_status st = tl_zip_open_mem(&z, "fuzz.eval", data, size, &err);
  if (st != TL_OK) {
    FZ_CHECK(st == TL_EINPUT || st == TL_ENOMEM);
    if (st == TL_EINPUT) FZ_CHECK(strstr(err.msg, "fuzz.eval") != NULL);
    tl_zip_close(&z);
    return 0;
  }
  FZ_CHECK(z.cd_off <= size);
  for (size_t i = 0; i < z.n && i < 256; i++) {
    const tl_zip_entry *e = &z.e[i];
    FZ_CHECK(e->name != NULL);
    FZ_CHECK(tl_zip_find(&z, e->name) != NULL);
    unsigned char *out = NULL;
    size_t n = 0;
    st = tl_zip_read(&z, e, FZ_MAX_ENTRY, &out, &n, &err);
    if (st == TL_OK) {
      FZ_CHECK(out != NULL && n == e->usize && n <= FZ_MAX_ENTRY && out[n] == '\0');
      FZ_CHECK(e->method == 0 || e->method == 8 || e->method == 93);
      unsigned char *again = NULL;
      size_t m = 0;
      FZ_CHECK(tl_zip_read(&z, e, FZ_MAX_ENTRY, &again, &m, &err) == TL_OK);
      FZ_CHECK(m == n && memcmp(out, again, n) == 0);
      free(again);
    } else {
      FZ_CHECK(out == NULL);
      FZ_CHECK(st == TL_EINPUT || st == TL_ENOMEM);
      if (st == TL_EINPUT) FZ_CHECK(strstr(err.msg, "'fuzz.eval': ") == err.msg);
    }
    free(out);
  }
  tl_zip_close(&z);
  return 0;
}
