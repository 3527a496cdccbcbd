/* testutil.h - helpers shared by the cmocka tests (header-only, static functions).
 *
 * tu_shared_path("spatialeval/x.jsonl") -> path under ../shared/data (TALLY_SHARED_DATA), or
 * NULL when the folder is absent; tests that need it print why and skip (exit code 77). */
#ifndef TALLY_TESTUTIL_H
#define TALLY_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/jsonl.h"
#include "tally/spatialeval.h"

static inline const char *tu_shared_path(const char *rel) {
  /* four rotating buffers: a few paths can be held at once */
  static char bufs[4][4096];
  static int next;
  char *buf = bufs[next++ & 3];
  const char *root = getenv("TALLY_SHARED_DATA");
  if (!root || !*root) root = TALLY_SHARED_DATA;
  snprintf(buf, sizeof bufs[0], "%s/%s", root, rel);
  struct stat st;
  if (stat(buf, &st) != 0) return NULL;
  return buf;
}

/* Skips the current test (cmocka skip) with a message when the shared file is absent. */
#define TU_NEED_SHARED(var, rel)                                                       \
  const char *var = tu_shared_path(rel);                                               \
  if (!var) {                                                                          \
    print_message("skipped: ../shared/data/%s is absent (set TALLY_SHARED_DATA)\n", rel); \
    skip();                                                                            \
  }

/* Loads every item of a benchmark JSONL into a malloc'd array; returns the count. */
static inline int tu_load_items(const char *path, tl_se_item **out) {
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
  int n = 0, cap = 0;
  tl_se_item *items = NULL;
  cJSON *obj;
  tl_jl_result res;
  while ((res = tl_jsonl_next(&r, &obj, &err)) != TL_JL_EOF) {
    assert_int_equal(res, TL_JL_RECORD);
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      items = realloc(items, (size_t)cap * sizeof *items);
      assert_non_null(items);
    }
    if (tl_se_item_from_json(obj, &items[n], &err) != TL_OK) fail_msg("%s", err.msg);
    n++;
    cJSON_Delete(obj);
  }
  tl_jsonl_close(&r);
  *out = items;
  return n;
}

/* Builds an item from inline JSON (aborts the test on error). */
static inline void tu_item(tl_se_item *it, const char *json) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_err err;
  if (tl_se_item_from_json(o, it, &err) != TL_OK) fail_msg("%s", err.msg);
  cJSON_Delete(o);
}

#endif
