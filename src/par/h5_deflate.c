/* h5_deflate.c - zlib's compress2 done by libdeflate, for HDF5's deflate filter (h5_common.h).
 *
 * HDF5's deflate filter (H5Pset_deflate) compresses each chunk with one call of zlib's compress2.
 * HDF5 1.10 refuses to replace the class of a predefined filter (H5Zregister: "unable to modify
 * predefined filters"), and a filter of our own id would need a plugin in every reader. So this
 * file defines compress2 itself, with zlib's contract, and the executable's definition is the one
 * the dynamic linker gives libhdf5 (the executable comes first in the lookup scope; libhdf5 is not
 * linked -Bsymbolic). The chunks are the same format, one zlib stream (RFC 1950) at the level the
 * dataset names, so files read with any HDF5 (h5py, h5dump) and reading does not change (HDF5
 * inflates with zlib). Only the speed and the exact bytes change: libdeflate compresses a whole
 * buffer at once, without zlib's streaming state. On the 150,000-unit SpatialEval job's 86 MB of
 * responses in 1 MiB chunks (this project's 2-core machine): zlib level 3 took 0.45 s for
 * 9.86 MB, libdeflate level 1 0.18 s for 9.44 MB, level 3 0.29 s for 8.83 MB.
 *
 * Nothing else in tally calls compress2 (libcurl, Open MPI and OpenSSL do not). The compressors,
 * one per level and thread, live as long as the thread. */
#include <dlfcn.h>
#include <libdeflate.h>
#include <string.h>
#include <zlib.h>

#include "h5_common.h"

/* zlib's contract (zlib.h): level Z_DEFAULT_COMPRESSION or 0-9, else Z_STREAM_ERROR; Z_BUF_ERROR
 * when the stream does not fit in *destLen bytes; Z_MEM_ERROR without memory; on Z_OK *destLen is
 * the stream's length. */
int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level) {
  static _Thread_local struct libdeflate_compressor *comp[10];
  if (level == Z_DEFAULT_COMPRESSION) level = 6;
  if (level < 0 || level > 9) return Z_STREAM_ERROR;
  if (!comp[level] && !(comp[level] = libdeflate_alloc_compressor(level))) return Z_MEM_ERROR;
  size_t n = libdeflate_zlib_compress(comp[level], source, sourceLen, dest, *destLen);
  if (n == 0) return Z_BUF_ERROR;
  *destLen = (uLongf)n;
  return Z_OK;
}

const char *tl_h5_deflate_name(void) {
  /* what the dynamic linker gives any library that asks for compress2: this file's, or zlib's */
  void *p = dlsym(RTLD_DEFAULT, "compress2");
  int (*f)(Bytef *, uLongf *, const Bytef *, uLong, int) = NULL;
  if (p) memcpy(&f, &p, sizeof f);
  if (f == compress2) return "libdeflate " LIBDEFLATE_VERSION_STRING;
  static char z[48];
  strcpy(z, "zlib ");
  strncat(z, zlibVersion(), sizeof z - 6);
  return z;
}
