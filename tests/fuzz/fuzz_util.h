/* fuzz_util.h - helpers shared by the libFuzzer targets in tests/fuzz (header-only).
 *
 * fz_path("x.csv") -> a path in this process's private temporary folder (made on first use,
 * removed at exit); fz_write(path, data, n) replaces that file's contents. */
#ifndef TALLY_FUZZ_UTIL_H
#define TALLY_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[64];

static inline void fz_cleanup(void) {
  if (!fz_dir[0]) return;
  DIR *d = opendir(fz_dir);
  if (d) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      snprintf(p, sizeof p, "%s/%s", fz_dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(fz_dir);
}

static inline const char *fz_path(const char *name) {
  static char buf[4][512];
  static int next;
  if (!fz_dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(fz_dir, sizeof fz_dir, "%s/tally-fuzz-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(fz_dir)) {
      perror("mkdtemp");
      abort();
    }
    atexit(fz_cleanup);
  }
  char *b = buf[next++ & 3];
  snprintf(b, sizeof buf[0], "%s/%s", fz_dir, name);
  return b;
}

static inline void fz_write(const char *path, const uint8_t *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}

/* A fuzz-found property violation: report and abort (libFuzzer saves the input). */
#define FZ_CHECK(cond)                                                                     \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);       \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

#endif
