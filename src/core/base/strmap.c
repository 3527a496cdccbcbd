/* strmap.c - open-addressing string hash map (see strmap.h). Load factor kept <= 1/2. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "tally/strmap.h"

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void tl_strmap_init(tl_strmap *m) { memset(m, 0, sizeof *m); }

void tl_strmap_release(tl_strmap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  tl_strmap_init(m);
}

static size_t slot_of(const tl_strmap *m, const char *key) {
  size_t i = (size_t)fnv1a(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

static tl_status grow(tl_strmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  char **keys = calloc(cap, sizeof *keys);
  size_t *vals = calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return TL_ENOMEM;
  }
  tl_strmap old = *m;
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  for (size_t i = 0; i < old.cap; i++) {
    if (!old.keys[i]) continue;
    size_t s = slot_of(m, old.keys[i]);
    m->keys[s] = old.keys[i];
    m->vals[s] = old.vals[i];
  }
  free(old.keys);
  free(old.vals);
  return TL_OK;
}

tl_status tl_strmap_put(tl_strmap *m, const char *key, size_t val, bool *inserted, size_t *existing) {
  if ((m->n + 1) * 2 > m->cap && grow(m) != TL_OK) return TL_ENOMEM;
  size_t s = slot_of(m, key);
  if (m->keys[s]) {
    if (inserted) *inserted = false;
    if (existing) *existing = m->vals[s];
    return TL_OK;
  }
  m->keys[s] = tl_strdup(key);
  if (!m->keys[s]) return TL_ENOMEM;
  m->vals[s] = val;
  m->n++;
  if (inserted) *inserted = true;
  return TL_OK;
}

tl_status tl_strmap_add(tl_strmap *m, const char *key, size_t d, size_t *now) {
  if ((m->n + 1) * 2 > m->cap && grow(m) != TL_OK) return TL_ENOMEM;
  size_t s = slot_of(m, key);
  if (!m->keys[s]) {
    if (!(m->keys[s] = tl_strdup(key))) return TL_ENOMEM;
    m->vals[s] = 0;
    m->n++;
  }
  m->vals[s] += d;
  if (now) *now = m->vals[s];
  return TL_OK;
}

bool tl_strmap_get(const tl_strmap *m, const char *key, size_t *val) {
  if (!m->cap) return false;
  size_t s = slot_of(m, key);
  if (!m->keys[s]) return false;
  if (val) *val = m->vals[s];
  return true;
}

const char *tl_strmap_stored_key(const tl_strmap *m, const char *key) {
  if (!m->cap) return NULL;
  size_t s = slot_of(m, key);
  return m->keys[s];
}
