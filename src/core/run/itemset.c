/* itemset.c - a module's items read from JSONL files (tally/itemset.h). */
#include "tally/itemset.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"

#define AT(s, i) ((char *)(s)->items + (size_t)(i) * (s)->ty->size)

static const char *id_of(const tl_itemset *s, const void *item) {
  const char *p;
  memcpy(&p, (const char *)item + s->ty->id_off, sizeof p);
  return p;
}
static char *task_of(const tl_itemset *s, const void *item) {
  char *p;
  memcpy(&p, (const char *)item + s->ty->task_off, sizeof p);
  return p;
}

typedef struct {
  tl_itemset *s;
  void *tmp; /* one item */
  tl_inlog *log;
  tl_err *err;
} load_ctx;

static tl_status item_line(void *vctx, const cJSON *o, const tl_jsonl *r) {
  load_ctx *c = vctx;
  tl_itemset *s = c->s;
  char msg[256];
  tl_status st = s->ty->from_json(o, c->tmp, msg, sizeof msg);
  if (st == TL_ENOMEM) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  if (st) {
    tl_in_kind k = strstr(msg, "missing field") ? TL_IN_MISSING_FIELD : TL_IN_BAD_FIELD;
    return tl_inlog_report(c->log, k, r->path, r->line_no, "%s%s", strncmp(msg, "item '", 6) ? "item " : "", msg)
               ? TL_EINPUT
               : TL_OK;
  }
  bool inserted;
  size_t prev;
  if (tl_strmap_put(&s->by_id, id_of(s, c->tmp), s->n, &inserted, &prev) != TL_OK) {
    s->ty->release(c->tmp);
    return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  }
  if (!inserted) {
    s->ty->release(c->tmp);
    return tl_inlog_report(c->log, TL_IN_DUPLICATE, r->path, r->line_no, "duplicate item id '%s' (the first one is kept)",
                           id_of(s, AT(s, prev))) ? TL_EINPUT : TL_OK;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 256;
    void *p = realloc(s->items, cap * s->ty->size);
    if (!p) {
      s->ty->release(c->tmp);
      return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    s->items = p;
    s->cap = cap;
  }
  memcpy(AT(s, s->n), c->tmp, s->ty->size);
  s->n++;
  return TL_OK;
}

typedef struct {
  const char *id;
  size_t i;
} id_ix;
static int id_ix_cmp(const void *x, const void *y) { return strcmp(((const id_ix *)x)->id, ((const id_ix *)y)->id); }
static int str_cmp(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* The items in id order (ids are distinct here), the index rebuilt. */
static tl_status sort_items(tl_itemset *s, tl_err *err) {
  const size_t n = s->n, sz = s->ty->size;
  id_ix *o = malloc((n ? n : 1) * sizeof *o);
  char *sorted = malloc((n ? n : 1) * sz);
  if (!o || !sorted) {
    free(o), free(sorted);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) o[i] = (id_ix){id_of(s, AT(s, i)), i};
  if (n > 1) qsort(o, n, sizeof *o, id_ix_cmp);
  for (size_t i = 0; i < n; i++) memcpy(sorted + i * sz, AT(s, o[i].i), sz);
  free(o);
  free(s->items);
  s->items = sorted;
  s->cap = n ? n : 1;
  tl_strmap_release(&s->by_id);
  tl_strmap_init(&s->by_id);
  for (size_t i = 0; i < n; i++)
    if (tl_strmap_put(&s->by_id, id_of(s, AT(s, i)), i, NULL, NULL)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  return TL_OK;
}

/* The distinct tasks, sorted; each item's index among them. */
static tl_status index_tasks(tl_itemset *s, tl_err *err) {
  const size_t n = s->n;
  if (n && !(s->tasks = malloc(n * sizeof *s->tasks))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) s->tasks[i] = task_of(s, AT(s, i));
  if (n > 1) qsort(s->tasks, n, sizeof *s->tasks, str_cmp);
  for (size_t i = 0; i < n; i++)
    if (s->ntasks == 0 || strcmp(s->tasks[s->ntasks - 1], s->tasks[i])) s->tasks[s->ntasks++] = s->tasks[i];
  for (size_t i = 0; i < n; i++) {
    char *t = task_of(s, AT(s, i));
    char **hit = bsearch(&t, s->tasks, (size_t)s->ntasks, sizeof *s->tasks, str_cmp);
    const int ix = (int)(hit - s->tasks);
    memcpy(AT(s, i) + s->ty->task_ix_off, &ix, sizeof ix);
  }
  return TL_OK;
}

tl_status tl_itemset_load(tl_itemset *s, const tl_itemset_type *ty, char *const *files, int nfiles, size_t max_line,
                          tl_inlog *log, tl_err *err) {
  memset(s, 0, sizeof *s);
  s->ty = ty;
  tl_strmap_init(&s->by_id);
  s->map_live = 1;
  load_ctx c = {s, malloc(ty->size), log, err};
  if (!c.tmp) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st = TL_OK;
  for (int f = 0; f < nfiles && !st; f++) {
    tl_jsonl r;
    if ((st = tl_jsonl_open(&r, files[f], max_line, err))) break;
    st = tl_inlog_each(log, &r, "items", item_line, &c, err);
    tl_jsonl_close(&r);
  }
  free(c.tmp);
  if (!st) st = sort_items(s, err);
  if (!st) st = index_tasks(s, err);
  return st;
}

void tl_itemset_release(tl_itemset *s) {
  if (!s->ty) return;
  for (size_t i = 0; i < s->n; i++) s->ty->release(AT(s, i));
  free(s->items);
  free(s->tasks); /* the names are the items' */
  if (s->map_live) tl_strmap_release(&s->by_id);
  memset(s, 0, sizeof *s);
}

int tl_itemset_find(const tl_itemset *s, const char *id, size_t *i) { return tl_strmap_get(&s->by_id, id, i); }
