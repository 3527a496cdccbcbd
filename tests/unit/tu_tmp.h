/* tu_tmp.h - temporary input files for the cmocka tests (header-only, static functions).
 *
 * Include it after defining _POSIX_C_SOURCE 200809L (or _GNU_SOURCE) and including testutil.h:
 * it uses mkstemp and mkdtemp. tu_write_tmp's files are left in /tmp (the tests name them in
 * their failures, so they can be looked at); tu_tmp_clean removes tu_tmp_file's folder. */
#ifndef TALLY_TU_TMP_H
#define TALLY_TU_TMP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new file /tmp/tally-test-XXXXXX holding content[0..n): its path (malloc'd, the caller
 * frees it). */
static inline char *tu_write_tmp_n(const char *content, size_t n) {
  char *path = strdup("/tmp/tally-test-XXXXXX");
  assert_non_null(path);
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, content, n), (ssize_t)n);
  close(fd);
  return path;
}

/* The same for a NUL-terminated text. */
static inline char *tu_write_tmp(const char *content) { return tu_write_tmp_n(content, strlen(content)); }

/* The temporary folder of tu_tmp_file ("" until its first call). */
static inline char *tu_tmp_dir(void) {
  static char dir[64];
  return dir;
}

/* Removes the files tu_tmp_file made and its folder. */
static inline void tu_tmp_clean(void) {
  char *dir = tu_tmp_dir();
  if (!dir[0]) return;
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  dir[0] = 0;
}

/* `name` in one temporary folder of this process (made at the first call), holding text: its
 * path, in one of 8 rotating buffers (a test holds a few at once). */
static inline const char *tu_tmp_file(const char *name, const char *text) {
  static char paths[8][128];
  static int next;
  char *dir = tu_tmp_dir();
  if (!dir[0]) {
    snprintf(dir, 64, "/tmp/tally-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
  }
  char *p = paths[next++ & 7];
  snprintf(p, sizeof paths[0], "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
  return p;
}

#endif
