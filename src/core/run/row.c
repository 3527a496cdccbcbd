/* row.c - unit rows: init, release, packing between ranks (tally/bench.h). */
#include <stdlib.h>
#include <string.h>

#include "tally/bench.h"

void tl_row_init(tl_row *r) {
  memset(r, 0, sizeof *r);
  for (int s = 0; s < TL_MAX_STAGES; s++) r->ref[s] = TL_REF_NONE;
  for (int m = 0; m < TL_MAX_MODES; m++) tl_parsed_init(&r->res[m]);
}

void tl_row_release(tl_row *r) {
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    free(r->text[s]);
    free(r->prompt[s]);
    free(r->source[s]);
    free(r->meta[s]);
    free(r->ev[s]);
    free(r->error[s]);
  }
  for (int m = 0; m < TL_MAX_MODES; m++) tl_parsed_release(&r->res[m]);
  for (int i = 0; i < r->nextra; i++) tl_parsed_release(&r->extra[i]);
  free(r->extra);
  tl_row_init(r);
}

/* A byte string: u32 length (UINT32_MAX = absent), then the bytes. */
static tl_status put_bytes(tl_buf *b, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
  tl_status st = tl_buf_append(b, (const char *)&n, sizeof n);
  if (!st && s) st = tl_buf_append(b, s, n);
  return st;
}

static int get_bytes(const char **p, const char *end, char **out) {
  uint32_t n;
  if ((size_t)(end - *p) < sizeof n) return -1;
  memcpy(&n, *p, sizeof n);
  *p += sizeof n;
  if (n == UINT32_MAX) {
    *out = NULL;
    return 0;
  }
  if ((size_t)(end - *p) < n) return -1;
  *out = tl_strndup(*p, n);
  *p += n;
  return *out ? 0 : -1;
}

tl_status tl_row_pack(const tl_row *r, uint64_t unit, int nstages, int nmodes, tl_buf *out) {
  tl_status st = tl_buf_append(out, (const char *)&unit, sizeof unit);
  unsigned char d = r->done;
  if (!st) st = tl_buf_append(out, (const char *)&d, 1);
  for (int s = 0; s < nstages && !st; s++) {
    st = tl_buf_append(out, (const char *)&r->ref[s], sizeof r->ref[s]);
    if (!st) st = put_bytes(out, r->text[s]);
    if (!st) st = put_bytes(out, r->prompt[s]);
    if (!st) st = put_bytes(out, r->source[s]);
  }
  for (int m = 0; m < nmodes && !st; m++) {
    const tl_parsed *p = &r->res[m];
    unsigned char sc[2] = {(unsigned char)p->status, (unsigned char)p->correct};
    st = tl_buf_append(out, (const char *)sc, 2);
    if (!st) st = tl_buf_append(out, (const char *)&p->value, sizeof p->value);
    if (!st) st = put_bytes(out, p->answer);
    if (!st) st = put_bytes(out, p->rule);
  }
  return st;
}

tl_status tl_row_unpack(const char **p, const char *end, int nstages, int nmodes, tl_strmap *rules,
                        tl_row *r, uint64_t *unit) {
  tl_row_init(r);
  if ((size_t)(end - *p) < sizeof *unit + 1) return TL_EINPUT;
  memcpy(unit, *p, sizeof *unit);
  *p += sizeof *unit;
  r->done = (uint8_t)(unsigned char)**p;
  *p += 1;
  for (int s = 0; s < nstages; s++) {
    if ((size_t)(end - *p) < sizeof r->ref[s]) goto bad;
    memcpy(&r->ref[s], *p, sizeof r->ref[s]);
    *p += sizeof r->ref[s];
    if (get_bytes(p, end, &r->text[s]) || get_bytes(p, end, &r->prompt[s]) || get_bytes(p, end, &r->source[s]))
      goto bad;
  }
  for (int m = 0; m < nmodes; m++) {
    tl_parsed *q = &r->res[m];
    if ((size_t)(end - *p) < 2 + sizeof q->value) goto bad;
    q->status = (tl_pstatus)(unsigned char)(*p)[0];
    q->correct = (unsigned char)(*p)[1];
    memcpy(&q->value, *p + 2, sizeof q->value);
    *p += 2 + sizeof q->value;
    char *rule = NULL;
    if (get_bytes(p, end, &q->answer) || get_bytes(p, end, &rule) || q->status >= TL_PS__COUNT) {
      free(rule);
      goto bad;
    }
    if (tl_strmap_put(rules, rule ? rule : "", 0, NULL, NULL) != TL_OK) {
      free(rule);
      goto bad;
    }
    q->rule = tl_strmap_stored_key(rules, rule ? rule : "");
    free(rule);
  }
  return TL_OK;
bad:
  tl_row_release(r);
  return TL_EINPUT;
}
