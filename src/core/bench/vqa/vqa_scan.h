/* vqa_scan.h - the validating JSON scanner of the official VQA files, the in-place reading of
 * plain elements, and the string arena of a question set (internal to src/core/bench/vqa).
 *
 * Why a scanner of our own next to cJSON: the official files are single JSON documents of
 * 100+ MB; cJSON can only parse a document whole (a tree of ~80 allocations per annotation,
 * then a second walk, tl_json_check, for what cJSON accepts silently). The scanner validates
 * the document's syntax in one pass and hands each element of the named array to the loader
 * (vqa_sc_document); the loader reads a *plain* element's few fields in place (vqa_obj_members
 * and the vqa_plain_* readers, no tree, no allocation but the kept strings) and gives every
 * other element to cJSON, whose reading and messages stay the reference (vqa_data.c,
 * parse_elem). docs/VQA.md, "Loading", says which elements are plain.
 *
 * Core tier: no MPI/HDF5/curl. Not thread-safe per object (each scan, arena has one owner). */
#ifndef TALLY_VQA_SCAN_H
#define TALLY_VQA_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

typedef struct {
  char *s;        /* the file's text, NUL-terminated (mutable: see parse_elem) */
  size_t n, i;    /* length, position */
  long line;      /* 1-based line at position i */
  char what[200]; /* why the scan stopped, "" while it goes on */
} vqa_jscan;

/* Called for each element of the array: its bytes s[b..e) and starting line. */
typedef tl_status (*vqa_elem_fn)(void *ctx, vqa_jscan *c, size_t b, size_t e, long line);
/* The validating scanner (JSON text of RFC 8259; strings are not decoded). Each call leaves
 * c->i after what it read; on malformed text it returns 0 with c->what set (the first reason
 * kept). */
void vqa_sc_fail(vqa_jscan *c, const char *what);
void vqa_sc_ws(vqa_jscan *c);       /* skips blanks, counting lines */
int vqa_sc_string(vqa_jscan *c);    /* a string at c->i (which holds '"') */
int vqa_sc_value(vqa_jscan *c);     /* one value of any depth (at most 1000 levels) */

/* Walks the whole text: key == NULL: the top level must be an array, whose elements go to fn;
 * else the top level must be an object, and the elements of its first member `key` (an array)
 * go to fn. *found: 0 no such member, 1 found as an array, 2 found but not an array. TL_OK
 * (c->what set when the text is malformed) or the first status fn returned. */
tl_status vqa_sc_document(vqa_jscan *c, const char *key, vqa_elem_fn fn, void *ctx, int *found);

/* ---- in-place reading of an element the scanner validated ---------------------------------- */

/* One member of an object: its key's bytes (no escape in them) and its value's bytes
 * s[vb..ve). */
typedef struct {
  const char *key;
  size_t klen, vb, ve;
} vqa_member;

/* 1 when s[b..e) is plain enough to be read in place: valid UTF-8 and no backslash anywhere
 * (so no string holds an escape: every string's bytes are its value, and no \u0000 or bad
 * surrogate can be there). */
int vqa_plain_elem(const char *s, size_t b, size_t e);

/* Tests only: nonzero makes vqa_plain_elem say no to every element, so that every element goes
 * to cJSON (the reference reading) and a test can load the same file both ways. tally never
 * sets it. */
extern int vqa_plain_off;

/* Reads the value of a member in place (vqa_obj_members' `inner`): called with c->i at the
 * value's first byte; returns 0 when the value is not what it reads (the element is then not
 * plain), else 1 with c->i after the value. */
typedef int (*vqa_inner_fn)(void *ctx, vqa_jscan *c);

/* The members of the object at c->i (which holds '{'), in text order, into m[cap]; c->i after
 * the '}'. The value of the member named `inner` (when not NULL) is read by fn(ctx, c) as the
 * members are walked (one pass over it), every other value is skipped. -1 when there are more
 * than cap members, when fn returned 0, or when two keys are equal (the caller leaves the
 * element to cJSON and tl_json_check, which report a duplicate). The text must have been
 * validated by vqa_sc_value and be plain (vqa_plain_elem). */
int vqa_obj_members(vqa_jscan *c, vqa_member *m, int cap, const char *inner, vqa_inner_fn fn, void *ctx);

/* The member named key, or NULL. */
const vqa_member *vqa_member_get(const vqa_member *m, int n, const char *key);

/* 1 when the value s[vb..ve) is a string: *str its bytes (no quotes), *len their count. */
int vqa_plain_string(const char *s, const vqa_member *v, const char **str, size_t *len);

/* 1 when the value is a number written as an integer of at most 15 digits (-?[0-9]+: exact in
 * a double, inside +-2^53, so cJSON reads the same integer): *v its value ("-0" gives 0). */
int vqa_plain_int(const char *s, const vqa_member *v, int64_t *out);

/* 1 when the value is a scalar cJSON reads as the scanner validated it: a string, true, false,
 * null, or a number of at most 63 bytes (cJSON's reading of longer numbers has changed across
 * its versions: such an element is left to cJSON). 0 for an object or an array (the caller
 * leaves those to cJSON and tl_json_check, which look inside them). */
int vqa_plain_scalar(const char *s, const vqa_member *v);

/* The canonical decimal text of v ("%lld") into buf[24]; returns buf. */
char *vqa_i64_text(int64_t v, char buf[24]);

/* ---- an integer map ------------------------------------------------------------------------ */

/* int64 -> size_t (the questions file's ids -> their records): open addressing with linear
 * probing in one array of (key, value + 1) slots, 0 marking an empty one; the capacity a power
 * of two at least twice the count. One cache line per lookup where a string map needs the
 * key's bytes too. */
typedef struct {
  struct vqa_islot {
    int64_t key;
    size_t val1; /* value + 1; 0: empty */
  } *slot;
  size_t cap, n;
} vqa_imap;

void vqa_imap_init(vqa_imap *m);
void vqa_imap_release(vqa_imap *m);
/* 1 inserted; 0 the key was there (*existing its value, the map unchanged); -1 out of memory. */
int vqa_imap_put(vqa_imap *m, int64_t key, size_t val, size_t *existing);
/* 1 found (*val set), 0 not. */
int vqa_imap_get(const vqa_imap *m, int64_t key, size_t *val);

/* ---- the string arena ---------------------------------------------------------------------- */

/* Blocks of memory that live as long as their owner (a tl_vqa_set): one free for every string
 * of 214,354 questions instead of 3 million. Allocation is 8-byte aligned. */
typedef struct vqa_arena vqa_arena;

/* n bytes from *a (a new block when needed; *a may be NULL at first). NULL: out of memory. */
void *vqa_arena_alloc(vqa_arena **a, size_t n);
/* A NUL-terminated copy of s[0..n). */
char *vqa_arena_strndup(vqa_arena **a, const char *s, size_t n);
/* Frees every block; *a becomes NULL. */
void vqa_arena_free(vqa_arena **a);

#endif
