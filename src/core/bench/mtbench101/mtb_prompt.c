/* mtb_prompt.c - MT-Bench-101 judge prompts and Python repr() (mtb_prompt.h).
 *
 * The user-prompt pieces below are OpenCompass's (opencompass/datasets/subjective/mtbench101.py,
 * eval_prompt_construct and the loader; Apache-2.0), as the spec's section 3 gives them and as
 * the 3615 golden vectors of ../shared/data/mtbench101/opencompass_judge_prompts.jsonl.gz check
 * byte for byte (tests/unit/test_mtb_prompt.c). The system prompts are in mtb_strings.c. */
#include "mtb_prompt.h"

#include <string.h>

/* VERBATIM pieces (upstream spacing and wording) */
#define V_HEAD "The dialogue need to be judged is: \n *** \n "
#define V_HUMAN "\n\n Human: "
#define V_ASSISTANT "\n\nAssistant: "
#define V_TAIL " \n ***"
/* OpenCompass: a backslash continuation leaves the next line's 20 spaces of indentation */
#define V_REF_OC "\n\n                    The reference solution is: \n ### \n "
/* JudgeArena PR #120 (judgearena/benchmarks/mt_bench_101): the same without the 20 spaces */
#define V_REF_GOLDEN "\n\nThe reference solution is: \n ### \n "
#define V_REF_END " \n ###\n\n"

/* CLEAN pieces (ours) */
#define C_HEAD "The dialogue to be judged is:\n***\n"
#define C_HUMAN "Human: "
#define C_ASSISTANT "\n\nAssistant: "
#define C_SEP "\n\n"
#define C_TAIL "\n***"
#define C_REF "\n\nThe reference solution is:\n###\n"
#define C_REF_END "\n###"

const char *tl_mtb_ref_name(tl_mtb_ref ref) {
  switch (ref) {
    case TL_MTB_REF_GOLDEN: return "golden";
    case TL_MTB_REF_OPENCOMPASS: return "opencompass";
  }
  return NULL;
}

int tl_mtb_ref_from_name(const char *name) {
  if (!name) return -1;
  if (strcmp(name, "golden") == 0) return TL_MTB_REF_GOLDEN;
  if (strcmp(name, "opencompass") == 0) return TL_MTB_REF_OPENCOMPASS;
  return -1;
}

const char *tl_mtb_text_name(tl_mtb_text text) {
  switch (text) {
    case TL_MTB_TEXT_VERBATIM: return "verbatim";
    case TL_MTB_TEXT_CLEAN: return "clean";
    case TL_MTB__NTEXTS: break;
  }
  return NULL;
}

int tl_mtb_text_from_name(const char *name) {
  if (!name) return -1;
  if (strcmp(name, "verbatim") == 0) return TL_MTB_TEXT_VERBATIM;
  if (strcmp(name, "clean") == 0) return TL_MTB_TEXT_CLEAN;
  return -1;
}

static bool sys_ok(int task, tl_mtb_text text) {
  return task >= 0 && task < TL_MTB__NTASKS && (int)text >= 0 && (int)text < TL_MTB__NTEXTS;
}

const char *tl_mtb_judge_system(int task, tl_mtb_text text) {
  return sys_ok(task, text) ? tl_mtb_system_prompts[text][task] : NULL;
}

size_t tl_mtb_judge_system_len(int task, tl_mtb_text text) {
  return sys_ok(task, text) ? tl_mtb_system_prompt_lens[text][task] : 0;
}

/* ---- Python repr -------------------------------------------------------------------- */

/* Non-printable code points from U+0080 up (below it: < U+0020 and U+007F), as inclusive
 * ranges, sorted. Cc, Cf, Cs, Co, Zl, Zp and Zs of Unicode 15.0 (U+2065, U+13439..U+1343F and
 * the code points between the Cc and Zs of U+0080..U+00A0 need no special case: each is either
 * in those categories or unassigned, and an unassigned one is non-printable for Python too),
 * plus the noncharacters U+FDD0..U+FDEF and U+FFFE/U+FFFF (the other planes' xxFFFE/xxFFFF are
 * tested arithmetically). */
static const struct {
  uint32_t lo, hi;
} NONPRINT[] = {
    {0x0080, 0x00A0},   /* C1 controls (Cc), NO-BREAK SPACE (Zs) */
    {0x00AD, 0x00AD},   /* SOFT HYPHEN (Cf) */
    {0x0600, 0x0605},   /* Arabic number signs (Cf) */
    {0x061C, 0x061C},   /* ARABIC LETTER MARK (Cf) */
    {0x06DD, 0x06DD},   /* ARABIC END OF AYAH (Cf) */
    {0x070F, 0x070F},   /* SYRIAC ABBREVIATION MARK (Cf) */
    {0x0890, 0x0891},   /* Arabic pound/piastre mark above (Cf) */
    {0x08E2, 0x08E2},   /* ARABIC DISPUTED END OF AYAH (Cf) */
    {0x1680, 0x1680},   /* OGHAM SPACE MARK (Zs) */
    {0x180E, 0x180E},   /* MONGOLIAN VOWEL SEPARATOR (Cf) */
    {0x2000, 0x200F},   /* EN QUAD..HAIR SPACE (Zs), ZWSP, ZWNJ, ZWJ, LRM, RLM (Cf) */
    {0x2028, 0x202F},   /* LINE/PARAGRAPH SEPARATOR (Zl, Zp), bidi embeddings (Cf), NNBSP (Zs) */
    {0x205F, 0x206F},   /* MMSP (Zs), WORD JOINER..NOMINAL DIGIT SHAPES (Cf; U+2065 Cn) */
    {0x3000, 0x3000},   /* IDEOGRAPHIC SPACE (Zs) */
    {0xD800, 0xF8FF},   /* surrogates (Cs), private use (Co) */
    {0xFDD0, 0xFDEF},   /* noncharacters (Cn) */
    {0xFEFF, 0xFEFF},   /* ZERO WIDTH NO-BREAK SPACE / BOM (Cf) */
    {0xFFF9, 0xFFFB},   /* interlinear annotation (Cf) */
    {0x110BD, 0x110BD}, /* KAITHI NUMBER SIGN (Cf) */
    {0x110CD, 0x110CD}, /* KAITHI NUMBER SIGN ABOVE (Cf) */
    {0x13430, 0x1343F}, /* Egyptian hieroglyph format controls (Cf) */
    {0x1BCA0, 0x1BCA3}, /* shorthand format controls (Cf) */
    {0x1D173, 0x1D17A}, /* musical symbol format controls (Cf) */
    {0xE0001, 0xE0001}, /* LANGUAGE TAG (Cf) */
    {0xE0020, 0xE007F}, /* tag characters (Cf) */
    {0xF0000, 0x10FFFF}, /* supplementary private use areas A and B (Co), their noncharacters */
};

bool tl_mtb_py_isprintable(uint32_t cp) {
  if (cp < 0x80) return cp >= 0x20 && cp != 0x7F;
  if (cp > 0x10FFFF) return false;
  if ((cp & 0xFFFE) == 0xFFFE) return false; /* noncharacters U+xxFFFE, U+xxFFFF */
  size_t lo = 0, hi = sizeof NONPRINT / sizeof NONPRINT[0];
  while (lo < hi) { /* first range with hi >= cp */
    size_t mid = lo + (hi - lo) / 2;
    if (NONPRINT[mid].hi < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return !(lo < sizeof NONPRINT / sizeof NONPRINT[0] && NONPRINT[lo].lo <= cp);
}

static tl_status put(tl_buf *b, const char *s, size_t n) { return tl_buf_append(b, s, n); }
#define PUTS(b, lit) put((b), (lit), sizeof(lit) - 1)

static tl_status repr_into(const char *s, tl_buf *out) {
  size_t n = strlen(s);
  if (!tl_utf8_valid(s, n, NULL)) return TL_EINPUT;
  /* CPython's unicode_repr: ' unless the text has ' and no " */
  char q = (memchr(s, '\'', n) && !memchr(s, '"', n)) ? '"' : '\'';
  static const char hex[] = "0123456789abcdef";
  tl_status st = put(out, &q, 1);
  size_t i = 0, run = 0; /* s[run..i) is pending raw text */
  while (st == TL_OK && i < n) {
    unsigned char c = (unsigned char)s[i];
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0x80) len = tl_utf8_decode(s + i, n - i, &cp); /* valid: len >= 2 */
    char esc[10] = {'\\', 0};
    size_t elen = 0;
    char short_esc = c == (unsigned char)q || c == '\\' ? (char)c
                     : c == '\n'                       ? 'n'
                     : c == '\r'                       ? 'r'
                     : c == '\t'                       ? 't'
                                                       : 0;
    if (short_esc) {
      esc[1] = short_esc;
      elen = 2;
    } else if (!tl_mtb_py_isprintable(cp)) {
      int digits = cp <= 0xFF ? 2 : cp <= 0xFFFF ? 4 : 8;
      esc[1] = digits == 2 ? 'x' : digits == 4 ? 'u' : 'U';
      for (int k = 0; k < digits; k++) esc[2 + k] = hex[(cp >> (4 * (digits - 1 - k))) & 0xF];
      elen = (size_t)digits + 2;
    }
    if (elen) {
      if ((st = put(out, s + run, i - run)) == TL_OK) st = put(out, esc, elen);
      run = i + len;
    }
    i += len;
  }
  if (st == TL_OK) st = put(out, s + run, n - run);
  if (st == TL_OK) st = put(out, &q, 1);
  return st;
}

tl_status tl_mtb_py_repr_str(const char *s, tl_buf *out) {
  if (!s || !out) return TL_EINTERNAL;
  size_t mark = out->len;
  tl_status st = repr_into(s, out);
  if (st != TL_OK) {
    out->len = mark;
    out->data[mark] = '\0';
  }
  return st;
}

static tl_status repr_dialogue_into(const tl_mtb_dialogue *d, uint32_t turn, tl_buf *out) {
  tl_status st = PUTS(out, "[");
  for (uint32_t i = 0; st == TL_OK && i <= turn; i++) {
    if (i > 0) st = PUTS(out, ", ");
    if (st == TL_OK) st = PUTS(out, "{'role': 'user', 'content': ");
    if (st == TL_OK) st = repr_into(d->turns[i].user, out);
    if (st == TL_OK) st = PUTS(out, "}");
    if (st != TL_OK || !d->turns[i].bot[0]) continue; /* add_format: `if answer:` */
    st = PUTS(out, ", {'role': 'assistant', 'content': ");
    if (st == TL_OK) st = repr_into(d->turns[i].bot, out);
    if (st == TL_OK) st = PUTS(out, "}");
  }
  if (st == TL_OK) st = PUTS(out, "]");
  return st;
}

static bool dialogue_ok(const tl_mtb_dialogue *d) {
  if (!d || d->task < 0 || d->task >= TL_MTB__NTASKS || !d->turns) return false;
  for (uint32_t i = 0; i < d->nturns; i++)
    if (!d->turns[i].user || !d->turns[i].bot) return false;
  return true;
}

tl_status tl_mtb_py_repr_dialogue(const tl_mtb_dialogue *d, uint32_t turn, tl_buf *out) {
  if (!out || !dialogue_ok(d) || turn >= d->nturns) return TL_EINTERNAL;
  size_t mark = out->len;
  tl_status st = repr_dialogue_into(d, turn, out);
  if (st != TL_OK) {
    out->len = mark;
    out->data[mark] = '\0';
  }
  return st;
}

/* ---- the user prompt ------------------------------------------------------------------ */

static tl_status user_verbatim(const tl_mtb_dialogue *d, uint32_t turn, const char *pred,
                               tl_mtb_ref ref, tl_buf *out) {
  tl_status st = PUTS(out, V_HEAD);
  for (uint32_t i = 0; st == TL_OK && i <= turn; i++) {
    st = PUTS(out, V_HUMAN);
    if (st == TL_OK) st = tl_buf_puts(out, d->turns[i].user);
    if (st == TL_OK) st = PUTS(out, V_ASSISTANT);
    if (st == TL_OK && i < turn) st = tl_buf_puts(out, d->turns[i].bot);
  }
  /* the template's " {prediction}" after the history's "Assistant: " */
  if (st == TL_OK) st = PUTS(out, " ");
  if (st == TL_OK) st = tl_buf_puts(out, pred);
  if (st == TL_OK) st = PUTS(out, V_TAIL);
  if (st != TL_OK || !tl_mtb_need_ref(d->task)) return st;
  if (ref == TL_MTB_REF_OPENCOMPASS) {
    st = PUTS(out, V_REF_OC);
    if (st == TL_OK) st = repr_dialogue_into(d, turn, out);
  } else {
    st = PUTS(out, V_REF_GOLDEN);
    if (st == TL_OK) st = tl_buf_puts(out, d->turns[turn].bot);
  }
  if (st == TL_OK) st = PUTS(out, V_REF_END);
  return st;
}

static tl_status user_clean(const tl_mtb_dialogue *d, uint32_t turn, const char *pred,
                            tl_mtb_ref ref, tl_buf *out) {
  tl_status st = PUTS(out, C_HEAD);
  for (uint32_t i = 0; st == TL_OK && i <= turn; i++) {
    if (i > 0) st = PUTS(out, C_SEP);
    if (st == TL_OK) st = PUTS(out, C_HUMAN);
    if (st == TL_OK) st = tl_buf_puts(out, d->turns[i].user);
    if (st == TL_OK) st = PUTS(out, C_ASSISTANT);
    if (st == TL_OK) st = tl_buf_puts(out, i < turn ? d->turns[i].bot : pred);
  }
  if (st == TL_OK) st = PUTS(out, C_TAIL);
  if (st != TL_OK || !tl_mtb_need_ref(d->task)) return st;
  st = PUTS(out, C_REF);
  if (st == TL_OK)
    st = ref == TL_MTB_REF_OPENCOMPASS ? repr_dialogue_into(d, turn, out)
                                       : tl_buf_puts(out, d->turns[turn].bot);
  if (st == TL_OK) st = PUTS(out, C_REF_END);
  return st;
}

tl_status tl_mtb_judge_user(const tl_mtb_dialogue *d, uint32_t turn, const char *prediction,
                            tl_mtb_ref ref, tl_mtb_text text, tl_buf *out) {
  if (!out || !prediction || !dialogue_ok(d)) return TL_EINTERNAL;
  if (turn >= d->nturns || turn < tl_mtb_first_judged(d->task)) return TL_EINTERNAL;
  if (ref != TL_MTB_REF_GOLDEN && ref != TL_MTB_REF_OPENCOMPASS) return TL_EINTERNAL;
  size_t mark = out->len;
  tl_status st;
  switch (text) {
    case TL_MTB_TEXT_VERBATIM: st = user_verbatim(d, turn, prediction, ref, out); break;
    case TL_MTB_TEXT_CLEAN: st = user_clean(d, turn, prediction, ref, out); break;
    default: return TL_EINTERNAL;
  }
  if (st != TL_OK) {
    out->len = mark;
    out->data[mark] = '\0';
  }
  return st;
}
