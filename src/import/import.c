/* import.c - the registry of foreign-format readers (tally/import.h): lookup by name and
 * detection from a file's first bytes. Each reader is one file here and one X() line below. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/import.h"
#include "tally/str.h"

/* Every reader: X(symbol) declares `extern const tl_importer symbol;` and lists it (this order
 * is the order of `tally import --list` and of detection). */
#define IMPORTERS_LIST(X) \
  X(tl_imp_lmeval) \
  X(tl_imp_lmmseval) \
  X(tl_imp_inspect) \
  X(tl_imp_helm) \
  X(tl_imp_opencompass) \
  X(tl_imp_vlmevalkit)

#define X_DECL(sym) extern const tl_importer sym;
IMPORTERS_LIST(X_DECL)
#define X_ITEM(sym) &sym,
static const tl_importer *const all[] = {IMPORTERS_LIST(X_ITEM) NULL};

const tl_importer *const *tl_importers(int *n) {
  *n = (int)(sizeof all / sizeof *all) - 1;
  return all;
}

const tl_importer *tl_importer_find(const char *name) {
  for (int i = 0; all[i]; i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

/* "lm-eval, lmms-eval, ..." into b. */
static void names(tl_buf *b) {
  for (int i = 0; all[i]; i++) tl_buf_printf(b, "%s%s", i ? ", " : "", all[i]->name);
  if (!all[0]) tl_buf_puts(b, "none");
}

const tl_importer *tl_importer_detect(const char *path, tl_err *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  const int is_dir = S_ISDIR(sb.st_mode);
  static unsigned char head[TL_IMPORT_HEAD];
  size_t n = 0;
  if (!is_dir) {
    FILE *f = fopen(path, "rb");
    if (!f) {
      tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
      return NULL;
    }
    n = fread(head, 1, sizeof head, f);
    fclose(f);
  }
  for (int i = 0; all[i]; i++)
    if (all[i]->detect(path, is_dir, head, n)) return all[i];
  tl_buf b;
  tl_buf_init(&b);
  names(&b);
  tl_err_set(err, TL_EINPUT, "'%s' is not %s of a known format (known: %s): give its \"format\"", path,
             is_dir ? "a folder" : "a file", b.data ? b.data : "");
  tl_buf_release(&b);
  return NULL;
}
