/* oai_reply.h - the fields tally keeps from an OpenAI-compatible completion reply (the body of a
 * 200 to POST /chat/completions or /completions), read two ways that agree.
 *
 * tl_oai_reply_json reads them from the reply parsed by cJSON. tl_oai_reply_scan reads them from
 * the text in one pass, building no tree and allocating nothing but its string buffer; it takes
 * only replies it is sure of - strict JSON whose members it needs have the plain types (see
 * oai_reply.c) - and declines the rest, which the caller then parses with cJSON. The contract:
 * whenever the scan accepts a text, cJSON parses that text and tl_oai_reply_json gives the same
 * fields, byte for byte. tests/unit/test_oai_reply.c holds it on a table of replies and
 * tests/fuzz/fuzz_oai_reply.c on arbitrary bytes.
 *
 * The fields: choices[0].message.content (chat) or choices[0].text (completions); the chat
 * message's reasoning_content, else its reasoning, when a string; choices[0].finish_reason, the
 * reply's model and id when strings; usage.prompt_tokens and usage.completion_tokens when
 * numbers; the number of choices; and choices[0].logprobs.content when an array (the cJSON way
 * only: the scan declines a reply with logprobs). A reply that is not a completion (no
 * choices[0] holding a message object, or a text string, or content neither a string nor null)
 * is an error of tl_oai_reply_json, and the scan declines it. */
#ifndef TALLY_OAI_REPLY_H
#define TALLY_OAI_REPLY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "tally/str.h"

typedef struct {
  const char *content;       /* NULL: content null or absent */
  const char *reasoning;     /* NULL when none */
  const char *finish_reason; /* NULL when absent or not a string */
  const char *model;         /* the model name the server reports; NULL likewise */
  const char *id;            /* the completion's id; NULL likewise */
  double prompt_tokens, completion_tokens; /* NAN when absent or not numbers */
  int n_choices;
  const cJSON *logprobs;     /* choices[0].logprobs.content, NULL when not an array */
} tl_oai_reply;

/* Reads j (the parsed reply, NULL when it did not parse; n: its length in bytes, for the
 * message) into v, whose pointers then point into j. 0, or -1 with why set when it is not a
 * completion. */
int tl_oai_reply_json(const cJSON *j, size_t n, int completions, tl_oai_reply *v, char *why, size_t whysz);

/* Reads s[0..n) into v: 1 when it takes the text, v's strings then lying in *strings (reset
 * first, and grown at most once; valid until strings changes) and v->logprobs NULL; 0 when it
 * declines (out of memory too), v then unset. */
int tl_oai_reply_scan(const char *s, size_t n, int completions, tl_oai_reply *v, tl_buf *strings);

#endif
