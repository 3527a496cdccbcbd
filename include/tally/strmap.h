/* strmap.h - string -> size_t hash map (open addressing, FNV-1a). Keys are copied and owned by
 * the map. Not thread-safe for writers; concurrent readers are fine. */
#ifndef TALLY_STRMAP_H
#define TALLY_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "tally/err.h"

typedef struct {
  char **keys;   /* [cap], NULL = empty slot */
  size_t *vals;  /* [cap] */
  size_t cap;    /* power of two */
  size_t n;
} tl_strmap;

void tl_strmap_init(tl_strmap *m);
void tl_strmap_release(tl_strmap *m);
/* Inserts key -> val. When the key exists, leaves it, sets *existing (if non-NULL) to the old
 * value and returns TL_OK with *inserted = false. */
tl_status tl_strmap_put(tl_strmap *m, const char *key, size_t val, bool *inserted, size_t *existing);
/* The map's own copy of `key` (stable until the map is released), or NULL when absent. Useful
 * as a string pool: put the string, then keep the pointer this returns. */
const char *tl_strmap_stored_key(const tl_strmap *m, const char *key);

/* Counting: adds d to key's value (a new key starts at 0, then gets d); *now (if non-NULL) is
 * the new value. TL_ENOMEM when the key cannot be stored. */
tl_status tl_strmap_add(tl_strmap *m, const char *key, size_t d, size_t *now);

/* Looks a key up: true and *val when present. */
bool tl_strmap_get(const tl_strmap *m, const char *key, size_t *val);

#endif
