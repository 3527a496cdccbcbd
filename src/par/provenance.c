/* provenance.c - SHA-256 of input files (contracts in provenance.h). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include "provenance.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tl_status tl_sha256_file(const char *path, char hex[65], tl_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return tl_err_set(err, TL_EIO, "cannot open '%s' to hash it: %s", path, strerror(errno));
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned char *buf = malloc(1u << 20);
  tl_status st = TL_OK;
  if (!ctx || !buf || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
    st = tl_err_set(err, TL_ENOMEM, "cannot set up SHA-256");
  } else {
    size_t n;
    while ((n = fread(buf, 1, 1u << 20, f)) > 0)
      if (EVP_DigestUpdate(ctx, buf, n) != 1) break;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (ferror(f)) st = tl_err_set(err, TL_EIO, "cannot read '%s' to hash it: %s", path, strerror(errno));
    else if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32) st = tl_err_set(err, TL_EINTERNAL, "SHA-256 failed");
    else
      for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  }
  free(buf);
  EVP_MD_CTX_free(ctx);
  fclose(f);
  return st;
}

tl_status tl_sha256_files_json(const char *const *paths, const char *const *whats, int n, tl_buf *json,
                               tl_buf *files, tl_err *err) {
  cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
  tl_status st = o && a ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int i = 0; i < n && !st; i++) {
    if (!paths[i] || cJSON_GetObjectItemCaseSensitive(o, paths[i])) continue;
    char hex[65];
    if ((st = tl_sha256_file(paths[i], hex, err))) break;
    if (!cJSON_AddStringToObject(o, paths[i], hex)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (st || !files) continue;
    char *abs = realpath(paths[i], NULL);
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(a, e) || !cJSON_AddStringToObject(e, "path", abs ? abs : paths[i]) ||
        !cJSON_AddStringToObject(e, "what", whats && whats[i] ? whats[i] : "") ||
        !cJSON_AddStringToObject(e, "sha256", hex))
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
    free(abs);
  }
  char *s = st ? NULL : cJSON_PrintUnformatted(o);
  if (!st && (!s || tl_buf_puts(json, s))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  free(s);
  s = st || !files ? NULL : cJSON_PrintUnformatted(a);
  if (!st && files && (!s || tl_buf_puts(files, s))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  free(s);
  cJSON_Delete(o);
  cJSON_Delete(a);
  return st;
}
