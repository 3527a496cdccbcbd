/* itemset.h - a module's items read from JSONL files (the mcq and gen modules): one loader for
 * every item type whose struct has a `char *id`, a `char *task` and an `int task_ix`.
 *
 * Each line goes through the type's from_json; a line it refuses is reported to the inlog
 * (file:line, missing or bad field) and left out; a second item with an id already read is
 * reported as a duplicate (the first one is kept). Once every file is read the items are sorted
 * by id (strcmp), the id index rebuilt, and the distinct tasks sorted, each item's task_ix set to
 * its task's index among them. The set owns its items (released by tl_itemset_release through
 * the type's release); the tasks' names are the items'. */
#ifndef TALLY_ITEMSET_H
#define TALLY_ITEMSET_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "tally/err.h"
#include "tally/inlog.h"
#include "tally/strmap.h"

typedef struct {
  size_t size;                          /* bytes of one item */
  size_t id_off, task_off, task_ix_off; /* offsetof its char *id, char *task, int task_ix */
  /* Reads one item into *item; TL_EINPUT with msg naming the field when the line is not one,
   * TL_ENOMEM. On failure *item holds nothing to release. */
  tl_status (*from_json)(const cJSON *o, void *item, char *msg, size_t msz);
  void (*release)(void *item);
} tl_itemset_type;

typedef struct {
  const tl_itemset_type *ty;
  void *items;    /* [n] items of ty->size bytes, sorted by id once loaded */
  size_t n, cap;
  tl_strmap by_id;
  int map_live;   /* by_id initialised */
  char **tasks;   /* [ntasks] sorted, borrowed from the items */
  int ntasks;
} tl_itemset;

/* Reads files[0..nfiles) (lines of at most max_line bytes). TL_EINPUT when the log is strict
 * and reported something; TL_EIO / TL_ENOMEM with err set. The set must be released whatever
 * the result. */
tl_status tl_itemset_load(tl_itemset *s, const tl_itemset_type *ty, char *const *files, int nfiles, size_t max_line,
                          tl_inlog *log, tl_err *err);
void tl_itemset_release(tl_itemset *s);
/* 1 and *i set when an item has this id. */
int tl_itemset_find(const tl_itemset *s, const char *id, size_t *i);

#endif
