#!/usr/bin/python3
"""pr3_oracle.py - reference for tally's 'pr3' SpatialEval mode (src/core/bench/spatialeval/se_pr3.c).

An independent re-implementation of the answer extraction and scoring of the published generic
parser (CerebrasResearch/SpatialEval evals/evaluation_llava.py, content commit 00557775),
written from its documented behaviour and using the exact published regular expressions, so
that Python `re` decides every match. See docs/parser-pr3.md.

stdin:  JSONL, one object per line: {"item": {...benchmark row...}, "prompt": optional str,
        "response": str, "model": optional str}. Without "prompt" the item's "text" is used
        (tally's dispatcher does the same).
stdout: one JSON line per input: {"answer": "B" | null, "correct": 0 | 1, "status": ...,
        "rule": ...}. answer is the extracted letter with ASCII a-z upper-cased; status/rule use
        tally's names (ok, no_answer, no_options, skipped).
"""
import json
import re
import sys

# The published patterns, verbatim.
BLOCK = r"Available options:\n((?:\s*[A-Z]\s*\.\s*.*\n?\s*)+)"
CHOICE = r'([A-Z])\s*\.\s*(.*)\s*'
NORM = r'[^\w\s]|[\s]+$'
DIRECT = r"\**Answer\**\s*:\**\s*(?!<A single letter option)([^.\s$]+)"
TAG = r"\**Answer\**\s*:\**\s*(?!.*<A single letter option that best answers the question>).*"
PHRASE = "the correct answer is"


def no_tag_pattern(lo, hi):
    return fr'(?:\b{PHRASE}\b)*\s*\**([{lo}-{hi}])\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?'


def tag_letter_pattern(lo, hi):
    return fr'\**Answer\**\s*:\**\s*([{lo}-{hi}])\**\s*\.?\s*(.*?)(?=\**Reason\**\b|\n|\.|$)\.?'


def options(prompt):
    """[(letter, text)] of the first options block; [] when there is none."""
    m = re.search(BLOCK, prompt)
    return re.findall(CHOICE, m.group(1)) if m else []


def extract(response, opts):
    """(letter or None, rule). Raises ValueError (min of an empty list) without options."""
    letters = [o[0] for o in opts]
    norm = [re.sub(NORM, '', o[1]).lower() for o in opts]
    lo, hi = min(letters), max(letters)
    m = re.search(DIRECT, response, re.IGNORECASE)
    if m:
        token = re.sub(NORM, '', m.group(1)).lower()
        if token in norm:
            return letters[norm.index(token)], "direct_choice_text"
    tagged = re.search(TAG, response, re.IGNORECASE) is not None
    pat = tag_letter_pattern(lo, hi) if tagged else no_tag_pattern(lo, hi)
    m = re.search(pat, response, re.IGNORECASE | re.DOTALL)
    if m:
        return m.group(1), ("answer_tag_letter" if tagged else "no_tag_first_letter")
    return None, ("answer_tag_no_letter" if tagged else "no_tag_no_letter")


def ascii_upper(s):
    return ''.join(c.upper() if 'a' <= c <= 'z' else c for c in s)


def score(rec):
    item = rec["item"]
    prompt = rec.get("prompt")
    if prompt is None:
        prompt = item["text"]
    response = rec.get("response")
    if not isinstance(response, str):
        return {"answer": None, "correct": 0, "status": "skipped", "rule": "no_response"}
    try:
        opts = options(prompt)
        letter, rule = extract(response, opts)
    except ValueError:
        return {"answer": None, "correct": 0, "status": "no_options", "rule": "no_options"}
    if letter is None:
        return {"answer": None, "correct": 0, "status": "no_answer", "rule": rule}
    ref = str(item["oracle_option"]).lower()
    return {"answer": ascii_upper(letter), "correct": int(ref == letter.lower()),
            "status": "ok", "rule": rule}


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        out.write(json.dumps(score(json.loads(line)), ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
