/* workshare.c - tasks of a tables hook shared by the ranks (tally/workshare.h).
 *
 * A record, as kept and gathered: u64 task index, u32 kind, u32 length, u64 key, then the
 * result's bytes (native byte order: the ranks of one job run one build on one architecture). */
#include "tally/workshare.h"

#include <stdlib.h>
#include <string.h>

#include "tally/str.h"

#define REC_HEAD 24

static struct {
  tl_ws_mode mode;
  int rank, size;
  uint64_t next;         /* the index of the next task asked for */
  int pending;           /* COMPUTE: a TL_WS_RUN task whose result is awaited */
  tl_buf kept;           /* COMPUTE: this rank's records */
  const unsigned char **at; /* REPLAY: [ntask] each task's record, NULL if none */
  unsigned char *used;   /* REPLAY: [ntask] replayed */
  uint64_t ntask;
} g_ws;

tl_ws_mode tl_ws_mode_now(void) { return g_ws.mode; }
int tl_ws_replaying(void) { return g_ws.mode == TL_WS_REPLAY; }
int tl_ws_parts(void) { return g_ws.mode == TL_WS_OFF ? 1 : g_ws.size; }

static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void reset(void) {
  tl_buf_release(&g_ws.kept);
  free(g_ws.at);
  free(g_ws.used);
  memset(&g_ws, 0, sizeof g_ws);
}

tl_status tl_ws_begin(tl_ws_mode mode, int rank, int size, const unsigned char *recs, size_t nrecs) {
  reset();
  tl_buf_init(&g_ws.kept);
  g_ws.rank = rank;
  g_ws.size = size < 1 ? 1 : size;
  if (mode != TL_WS_REPLAY) {
    g_ws.mode = mode;
    return TL_OK;
  }
  /* the index: one pass for the largest task index, one to place each record */
  uint64_t ntask = 0;
  for (size_t off = 0; off < nrecs;) {
    if (nrecs - off < REC_HEAD || nrecs - off - REC_HEAD < rd32(recs + off + 12)) return TL_EINTERNAL;
    uint64_t i = rd64(recs + off);
    if (i >= ntask) ntask = i + 1;
    off += REC_HEAD + rd32(recs + off + 12);
  }
  g_ws.at = calloc(ntask ? ntask : 1, sizeof *g_ws.at);
  g_ws.used = calloc(ntask ? ntask : 1, 1);
  if (!g_ws.at || !g_ws.used) {
    reset();
    return TL_ENOMEM;
  }
  for (size_t off = 0; off < nrecs; off += REC_HEAD + rd32(recs + off + 12)) {
    uint64_t i = rd64(recs + off);
    if (g_ws.at[i]) { /* computed twice: the passes disagree */
      reset();
      return TL_EINTERNAL;
    }
    g_ws.at[i] = recs + off;
  }
  g_ws.ntask = ntask;
  g_ws.mode = TL_WS_REPLAY;
  return TL_OK;
}

tl_status tl_ws_end(unsigned char **kept, size_t *nkept) {
  tl_status st = TL_OK;
  if (kept) *kept = NULL;
  if (nkept) *nkept = 0;
  if (g_ws.mode == TL_WS_COMPUTE && kept && g_ws.kept.len) {
    *nkept = g_ws.kept.len;
    *kept = (unsigned char *)tl_buf_detach(&g_ws.kept);
  }
  if (g_ws.mode == TL_WS_REPLAY)
    for (uint64_t i = 0; i < g_ws.ntask; i++)
      if (g_ws.at[i] && !g_ws.used[i]) st = TL_EINTERNAL; /* computed, never asked for again */
  if (g_ws.pending) st = TL_EINTERNAL;
  reset();
  return st;
}

int tl_ws_task(uint32_t kind, uint64_t key, void *out, size_t len) {
  if (g_ws.mode == TL_WS_OFF) return TL_WS_RUN;
  if (g_ws.pending || len > UINT32_MAX) return -(int)TL_EINTERNAL;
  const uint64_t i = g_ws.next++;
  if (g_ws.mode == TL_WS_COMPUTE) {
    if ((int)(i % (uint64_t)g_ws.size) != g_ws.rank) return TL_WS_SKIP;
    unsigned char head[REC_HEAD];
    uint32_t l32 = (uint32_t)len;
    memcpy(head, &i, 8);
    memcpy(head + 8, &kind, 4);
    memcpy(head + 12, &l32, 4);
    memcpy(head + 16, &key, 8);
    if (tl_buf_append(&g_ws.kept, (const char *)head, REC_HEAD)) return -(int)TL_ENOMEM;
    g_ws.pending = 1;
    return TL_WS_RUN;
  }
  /* REPLAY */
  const unsigned char *r = i < g_ws.ntask ? g_ws.at[i] : NULL;
  if (!r || rd32(r + 8) != kind || rd32(r + 12) != len || rd64(r + 16) != key) return -(int)TL_EINTERNAL;
  memcpy(out, r + REC_HEAD, len);
  g_ws.used[i] = 1;
  return TL_WS_HAVE;
}

tl_status tl_ws_done(const void *out, size_t len) {
  if (g_ws.mode != TL_WS_COMPUTE) return TL_OK;
  if (!g_ws.pending) return TL_EINTERNAL;
  g_ws.pending = 0;
  return tl_buf_append(&g_ws.kept, (const char *)out, len) ? TL_ENOMEM : TL_OK;
}
