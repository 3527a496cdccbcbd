/* think.h - reasoning blocks (<think>...</think>) in model and judge outputs.
 *
 * Two policies, one tag scanner (think.c). Both take the text r[0..n) (valid UTF-8, not
 * necessarily NUL-terminated) and give the VISIBLE text as (*visible, *vlen): either a slice of
 * r or, when the visible text is made of several slices, their concatenation in `buf`. The
 * result is valid only while r and buf are left alone; it is not NUL-terminated when it is a
 * slice of r. `buf` must be initialized (tl_buf_init); its contents are replaced (it is reset
 * first), and the caller releases it. Time and memory are linear in n: every tag search moves
 * forward only.
 *
 * Return values: TL_THINK_OK, TL_THINK_UNTERMINATED (tl_think_strip only; *visible and *vlen
 * are then left alone) or TL_THINK_NOMEM (buf could not grow; nothing else changed). */
#ifndef TALLY_THINK_H
#define TALLY_THINK_H

#include <stddef.h>

#include "tally/str.h"

enum { TL_THINK_OK = 0, TL_THINK_UNTERMINATED = 1, TL_THINK_NOMEM = -1 };

/* OURS (SpatialEval 'strict', MT-Bench-101 'mtbench101'). Drops every <think>...</think> block
 * and everything before an orphan </think> (a </think> with no open block before it, as R1-style
 * chat templates leave it: the text before it is reasoning too, including visible text after
 * earlier blocks). A <think> that is never closed makes the whole response unusable:
 * TL_THINK_UNTERMINATED. Tags are matched byte-wise ASCII case-insensitively by OR-ing 0x20 into
 * each byte after the '<' (so "<THINK>" and "</Think>" are tags; a quirk kept for byte-identical
 * results: the control bytes 0x0F and 0x1E then also stand for '/' and '>'). Texts without a
 * tag are returned as the whole slice, with no copy. */
int tl_think_strip(const char *r, size_t n, tl_buf *buf, const char **visible, size_t *vlen);

/* JudgeArena's strip_thinking_tags (judgearena/utils: strip_thinking_tags_with_metadata), which
 * our JudgeArena-compatible MT-Bench-101 mode reproduces. Python:
 *     cleaned = re.sub(r"<think>.*?</think>", "", text, flags=re.IGNORECASE | re.DOTALL)
 *     if cleaned != text: return cleaned.lstrip()
 *     lowered = text.lower(); i = lowered.find("</think>")
 *     if i != -1 and "<think>" not in lowered[:i]: return text[i + 8:].lstrip()
 *     i = text.find(VLLM_REASONING_END_STR)      # "I have ... directly now.</think>"
 *     if i != -1: return text[i + len(...):].lstrip()
 *     return text
 * Reproduced exactly, quirks included:
 *   - step 1 removes complete blocks only (leftmost "<think>", lazily to the first "</think>"
 *     after it); an unclosed <think> and anything after it stays, and so does an orphan
 *     </think> once a block was removed. re.IGNORECASE is Unicode-aware: the 'i' of a tag may
 *     also be U+0130 or U+0131 and the 'k' U+212A (Kelvin sign);
 *   - step 2 (no complete block) finds the first "</think>" in text.lower(), where only ASCII
 *     case and U+212A (-> 'k') fold, and slices the ORIGINAL text at that index of the LOWERED
 *     text: lower() turns each U+0130 into two code points, so the cut lands one code point
 *     further right per U+0130 before the tag. Its "<think> not in lowered[:i]" test always
 *     holds when step 1 removed nothing (such a <think> would have closed a block), and step 3
 *     never runs: its marker ends in "</think>", which step 2 finds first;
 *   - lstrip() drops leading Unicode whitespace (str.isspace, tl_uni_isspace).
 * Never TL_THINK_UNTERMINATED. */
int tl_think_strip_judgearena(const char *r, size_t n, tl_buf *buf, const char **visible,
                              size_t *vlen);

#endif
