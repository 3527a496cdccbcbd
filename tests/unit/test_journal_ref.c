/* test_journal_ref.c - replies the replay engine serves from answers lines are journaled as
 * references (journal.h "ref"), not copied, and read back as the texts they were: through the
 * journal reader (resume), by offset (tl_jfiles_read: merge) and through the engine
 * (tl_replay_ref_text: the spilled rows). A changed answers line is never read as another text:
 * the record is stale, tl_jfiles_read refuses naming the file. Replies with escapes (parsed by
 * cJSON) and without (their bytes) alike. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "journal.h"
#include "replay.h"

enum { N = 5 };
static const char *const TEXT[N] = {"A. Plain reply, no escapes.", "B. With \"quotes\",\na newline and \xc3\xa9.",
                                    NULL, "C. Another plain one", "D. tab\there"};
static const char *const LINE[N] = {
    "{\"id\": \"q0\", \"model\": \"m\", \"response\": \"A. Plain reply, no escapes.\"}",
    "{\"id\": \"q1\", \"model\": \"m\", \"response\": \"B. With \\\"quotes\\\",\\na newline and \\u00e9.\"}",
    "{\"id\": \"q2\", \"model\": \"m\", \"response\": null}",
    "{\"id\": \"q3\", \"model\": \"m\", \"response\": \"C. Another plain one\"}",
    "{\"id\": \"q4\", \"model\": \"m\", \"response\": \"D. tab\\there\"}"};

typedef struct {
  char *text[N], *source[N];
  int stale[N], ref[N], n;
} seen;

static tl_status on_rec(void *ctx, const tl_journal_rec *rec) {
  seen *s = ctx;
  int i = rec->key.id[1] - '0';
  assert_true(i >= 0 && i < N);
  s->text[i] = rec->text ? strdup(rec->text) : NULL;
  s->source[i] = rec->source ? strdup(rec->source) : NULL;
  s->stale[i] = rec->stale;
  s->ref[i] = rec->has_ref;
  s->n++;
  return TL_OK;
}

static void seen_release(seen *s) {
  for (int i = 0; i < N; i++) free(s->text[i]), free(s->source[i]);
  memset(s, 0, sizeof *s);
}

static void write_answers(const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int i = 0; i < N; i++) fprintf(f, "%s\n", LINE[i]);
  fclose(f);
}

static void test_refs_round_trip(void **state) {
  (void)state;
  char dir[] = "/tmp/tally-jref-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char apath[96], jdir[96], hash[TL_JOB_HASH_LEN];
  snprintf(apath, sizeof apath, "%s/answers.jsonl", dir);
  snprintf(jdir, sizeof jdir, "%s/out.h5.journal", dir);
  write_answers(apath);
  tl_journal_job_hash("{\"name\": \"jref\"}", hash);

  tl_replay_source src = {apath, "spatialeval", 0, NULL, 0, "reason", NULL};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, NULL, NULL, &r, &err), TL_OK);
  tl_engine *e = tl_replay_engine(r);
  char id[N][4];
  for (int i = 0; i < N; i++) {
    snprintf(id[i], sizeof id[i], "q%d", i);
    tl_eng_request q;
    memset(&q, 0, sizeof q);
    q.tag = (uint64_t)i;
    q.key = (tl_unit_key){"spatialeval", id[i], "m", "reason", 0, 0, 0};
    assert_int_equal(e->vt->submit(e, &q), TL_OK);
  }
  tl_eng_reply rep[N];
  assert_int_equal(e->vt->poll(e, rep, N, 0), N);

  tl_journal j;
  assert_int_equal(tl_journal_open(&j, jdir, "a1", 0, hash, &err), TL_OK);
  uint64_t off[N];
  char *source[N];
  tl_reply_ref ref[N];
  for (int i = 0; i < N; i++) {
    const int k = (int)rep[i].tag;
    assert_int_equal(k, i);
    if (TEXT[i]) {
      assert_non_null(rep[i].text);
      assert_string_equal(rep[i].text, TEXT[i]);
      assert_int_equal(rep[i].ref.src, 1); /* a string member, no prompt: referenced */
      assert_int_equal(rep[i].ref.line, i + 1);
      assert_int_equal(rep[i].ref.tlen, strlen(TEXT[i]));
    } else {
      assert_null(rep[i].text);
      assert_int_equal(rep[i].ref.src, 0); /* no text: nothing to reference */
    }
    source[i] = strdup(rep[i].source);
    ref[i] = rep[i].ref;
    tl_unit_key key = {"spatialeval", id[i], "m", "reason", 0, 0, 0};
    assert_int_equal(tl_journal_add(&j, &key, &rep[i], &off[i], &err), TL_OK);
  }
  assert_int_equal(tl_journal_sync(&j, &err), TL_OK);
  char *jpath = strdup(j.path);
  tl_journal_close(&j);

  /* the journal names the answers file once and copies no text */
  FILE *f = fopen(jpath, "r");
  char all[8192];
  size_t got = fread(all, 1, sizeof all - 1, f);
  all[got] = 0;
  fclose(f);
  assert_non_null(strstr(all, "\"tally_replay_file\":"));
  assert_null(strstr(strstr(all, "\"tally_replay_file\":") + 1, "\"tally_replay_file\":"));
  assert_null(strstr(all, "Plain reply"));
  assert_null(strstr(all, "Another plain"));

  /* read back: the reader (resume) */
  seen s;
  memset(&s, 0, sizeof s);
  long nf, nrec, nskip;
  assert_int_equal(tl_journal_read_all(jdir, hash, on_rec, &s, &nf, &nrec, &nskip, &err), TL_OK);
  assert_int_equal(nrec, N);
  assert_int_equal(nskip, 0);
  for (int i = 0; i < N; i++) {
    assert_int_equal(s.stale[i], 0);
    assert_int_equal(s.ref[i], TEXT[i] != NULL);
    if (TEXT[i]) assert_string_equal(s.text[i], TEXT[i]);
    else assert_null(s.text[i]);
    assert_string_equal(s.source[i], source[i]);
  }
  seen_release(&s);
  /* by offset (merge) */
  tl_jfiles jf;
  tl_jfiles_init(&jf);
  int fi;
  assert_int_equal(tl_jfiles_add(&jf, jpath, &fi), TL_OK);
  for (int i = N - 1; i >= 0; i--) {
    tl_journal_rec rec;
    cJSON *o = NULL;
    assert_int_equal(tl_jfiles_read(&jf, fi, off[i], &rec, &o, &err), TL_OK);
    if (TEXT[i]) assert_string_equal(rec.text, TEXT[i]);
    assert_string_equal(rec.source, source[i]);
    cJSON_Delete(o);
  }
  /* through the engine (the spilled rows) */
  tl_buf out;
  tl_buf_init(&out);
  for (int i = 0; i < N; i++) {
    if (!TEXT[i]) continue;
    tl_buf_reset(&out);
    assert_int_equal(tl_replay_ref_text(r, &ref[i], &out), TL_REPLAY_REF_OK);
    assert_int_equal(out.len, strlen(TEXT[i]) + 1);
    assert_memory_equal(out.data, TEXT[i], out.len);
  }

  /* the answers file changes: one byte of reply 0 (same length) and of reply 1 (an escape
   * made another character) */
  FILE *w = fopen(apath, "r+");
  assert_non_null(w);
  fseek(w, (long)(strstr(LINE[0], "Plain") - LINE[0]), SEEK_SET);
  fputc('p', w);
  fseek(w, (long)(strlen(LINE[0]) + 1 + (size_t)(strstr(LINE[1], "u00e9") - LINE[1]) + 4), SEEK_SET);
  fputc('8', w);
  fclose(w);
  memset(&s, 0, sizeof s);
  assert_int_equal(tl_journal_read_all(jdir, hash, on_rec, &s, &nf, &nrec, &nskip, &err), TL_OK);
  assert_int_equal(nrec, N);
  for (int i = 0; i < N; i++) {
    assert_int_equal(s.stale[i], i < 2); /* never the changed text */
    if (i < 2) assert_null(s.text[i]);
    else if (TEXT[i]) assert_string_equal(s.text[i], TEXT[i]);
    assert_string_equal(s.source[i], source[i]);
  }
  seen_release(&s);
  tl_jfiles_release(&jf); /* (its read-aheads may hold the answers' old bytes: a merge reads once) */
  tl_jfiles_init(&jf);
  assert_int_equal(tl_jfiles_add(&jf, jpath, &fi), TL_OK);
  for (int i = 0; i < 2; i++) {
    tl_journal_rec rec;
    cJSON *o = NULL;
    assert_int_equal(tl_jfiles_read(&jf, fi, off[i], &rec, &o, &err), TL_EIO);
    assert_null(o);
    assert_non_null(strstr(err.msg, "answers.jsonl:"));
    /* the engine may still hold the line's old bytes in its read-ahead: then it gives the text
     * that was answered (the checksum vouches for it), else it says the line changed; never
     * the new text */
    tl_buf_reset(&out);
    int rb = tl_replay_ref_text(r, &ref[i], &out);
    if (rb == TL_REPLAY_REF_OK) assert_memory_equal(out.data, TEXT[i], strlen(TEXT[i]) + 1);
    else assert_int_equal(rb, TL_REPLAY_REF_CHANGED);
  }
  tl_replay *r2; /* a fresh engine over the changed file: the old references are stale */
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, NULL, NULL, &r2, &err), TL_OK);
  for (int i = 0; i < 2; i++) {
    tl_buf_reset(&out);
    assert_int_equal(tl_replay_ref_text(r2, &ref[i], &out), TL_REPLAY_REF_CHANGED);
  }
  tl_buf_reset(&out);
  assert_int_equal(tl_replay_ref_text(r2, &ref[3], &out), TL_REPLAY_REF_OK);
  assert_string_equal(out.data, TEXT[3]);
  tl_replay_engine(r2)->vt->free(tl_replay_engine(r2));
  tl_buf_release(&out);
  tl_jfiles_release(&jf);
  for (int i = 0; i < N; i++) {
    tl_eng_reply_release(&rep[i]);
    free(source[i]);
  }
  e->vt->free(e);
  tl_inlog_release(&log);
  assert_int_equal(tl_journal_remove(jdir, &err), TL_OK);
  unlink(apath);
  rmdir(dir);
  free(jpath);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_refs_round_trip)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
