#!/usr/bin/python3
"""Writes src/core/bench/mtbench101/mtb_strings.c: the MT-Bench-101 judge system prompts.

usage: /usr/bin/python3 tools/gen_mtb_strings.py [--check] [JSON]

JSON defaults to ../shared/data/mtbench101/opencompass_prompt_strings.json (beside the repository):
the constants of OpenCompass's opencompass/datasets/subjective/mtbench101.py at sefira/opencompass
da7b1c3, Apache-2.0. The output is a C file with the 13 system prompts of each text mode composed
at generation time, so the program never reads the JSON and needs no initialisation at run time:

  verbatim: judge + eval_<TASK> + score_format, plain concatenation as OpenCompass does;
  clean:    our rewrite (CLEAN_EDITS and the normalisation rules below), the three pieces joined
            with a blank line.

--check compares the file that would be written with the one in the tree: exit 0 when equal,
1 (with a message) when not. The output depends only on the JSON: no dates, no paths of this
machine, the same bytes on every run.
"""
import hashlib
import json
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(ROOT, "..", "shared", "data", "mtbench101",
                            "opencompass_prompt_strings.json")
OUT = os.path.join(ROOT, "src", "core", "bench", "mtbench101", "mtb_strings.c")

# The paper's column order; the index is tl_mtb_task (mtb_data.h).
TASKS = ["CM", "SI", "AR", "TS", "CC", "CR", "FR", "SC", "SA", "MR", "GR", "IC", "PI"]

# Clean mode, part 1: wording fixes, applied to the upstream pieces before the normalisation.
# (piece, old, new, expected count); every edit must match exactly that many times.
CLEAN_EDITS = [
    ("judge", "impartial judge follow this instructions:",
     "impartial judge and follow these instructions:", 1),
    ("judge", "the previous conversations is the groud truth history which do NOT need",
     "the previous conversations are the ground truth history and do NOT need", 1),
    ("score_format", "The DIALGUE need to be judged is in this format: \n *** \n DIALGUE \n ***",
     "The DIALOGUE to be judged is in this format:\n***\nDIALOGUE\n***", 1),
    ("eval_SI", "ta///sk", "task", 1),
    ("eval_SI", "answer the task.2. Starting", "answer the task.\n2. Starting", 1),
    ("eval_SI", "related to the task.- 4-6 points", "related to the task.\n- 4-6 points", 1),
    ("eval_SI", "specific or relevant.- 7-9 points", "specific or relevant.\n- 7-9 points", 1),
    ("eval_SI", "minor oversights.- 10 points", "minor oversights.\n- 10 points", 1),
    ("eval_CM", "\n1.Analyze", "\n1. Analyze", 1),
    ("eval_CM", "\n2.Assess", "\n2. Assess", 1),
    ("eval_CM", "\n3.Examine", "\n3. Examine", 1),
    ("eval_CM", "\n4.Evaluate", "\n4. Evaluate", 1),
    ("eval_IC", "The AI assistant\u2019s ability", "The AI assistant's ability", 1),
    ("eval_IC", "to use a counter-questions for", "to use a counter-question for", 1),
    ("eval_SC", "'Human's'", "'Human's", 2),
    ("eval_SA", "'Human's'", "'Human's", 4),
    ("eval_GR", "in format \u2018### reference solution ###\u2018 for",
     "in the format '### reference solution ###' for", 1),
]

# Clean mode, part 2: the normalisation of every piece after the edits.
CLEAN_RULES = [
    "each line loses its leading and trailing spaces (the upstream indentation of backslash "
    "continuations and the \" \\n \" around line breaks)",
    "runs of spaces inside a line become one space (\"evaluated.  Please\", "
    "\"criteria.    Note\", \"###'  for\")",
    "runs of blank lines become one blank line; the piece loses leading and trailing newlines",
    "judge, rubric and score format are joined with a blank line (\"\\n\\n\"), where upstream "
    "concatenates them with no separator (\"evaluated.The capacity\")",
]

C_LIMIT = 4095  # C11 5.2.4.1: characters in a string literal (after concatenation), NUL included


def clean_piece(s):
    lines = [re.sub(" {2,}", " ", ln.strip(" ")) for ln in s.split("\n")]
    out = "\n".join(lines)
    out = re.sub("\n{3,}", "\n\n", out)
    return out.strip("\n")


def c_tokens(s):
    """The C escape tokens of s's UTF-8 bytes (octal escapes never swallow a following digit)."""
    toks, prev = [], b""
    for byte in s.encode("utf-8"):
        c = bytes([byte])
        if c == b"\\":
            t = "\\\\"
        elif c == b'"':
            t = '\\"'
        elif c == b"\n":
            t = "\\n"
        elif c == b"\t":
            t = "\\t"
        elif c == b"?" and prev == b"?":
            t = "\\?"  # no trigraphs (ISO C modes enable them)
        elif byte < 0x20 or byte >= 0x7F:
            t = "\\%03o" % byte
        else:
            t = c.decode("ascii")
        toks.append(t)
        prev = c
    return toks


def c_literal(s, indent="    ", width=100):
    """s as adjacent string literals, one per line, each line at most `width` columns; lines end
    after a newline, else at the last space that fits."""
    room = width - len(indent) - 2
    lines, cur = [], []

    def flush(upto):
        lines.append("".join(cur[:upto]))
        del cur[:upto]

    for t in c_tokens(s):
        if cur and sum(map(len, cur)) + len(t) > room:
            sp = max((i for i, x in enumerate(cur) if x == " "), default=-1)
            flush(sp + 1 if sp >= 0 else len(cur))
        cur.append(t)
        if t == "\\n":
            flush(len(cur))
    if cur or not lines:
        flush(len(cur))
    return "\n".join('%s"%s"' % (indent, ln) for ln in lines)


def c_list(items, width=100):
    """ "{a, b, ...}," packed greedily into lines of at most `width` columns."""
    lines, cur = [], "    {"
    for i, it in enumerate(items):
        tok = it + ("}," if i == len(items) - 1 else ",")
        if len(cur) + 1 + len(tok) > width and cur.strip() != "{":
            lines.append(cur)
            cur = "     " + tok
        else:
            cur += ("" if cur.endswith("{") else " ") + tok
    lines.append(cur)
    return "\n".join(lines)


def comment_text(s):
    return s.replace("*/", "* /")


def generate(path):
    raw = open(path, "rb").read()
    d = json.loads(raw.decode("utf-8"))
    sha = hashlib.sha256(raw).hexdigest()
    assert d["skip_first_tasks"] == ["FR", "CR", "AR", "SA", "SC", "CM"], d["skip_first_tasks"]
    assert d["need_ref_tasks"] == ["MR", "GR"], d["need_ref_tasks"]
    assert "da7b1c3" in d["provenance"] and "Apache-2.0" in d["provenance"], d["provenance"]

    clean = {k: v for k, v in d.items() if isinstance(v, str)}
    for piece, old, new, n in CLEAN_EDITS:
        got = clean[piece].count(old)
        if got != n:
            sys.exit("gen_mtb_strings: edit %r of %s matches %d times, not %d"
                     % (old, piece, got, n))
        clean[piece] = clean[piece].replace(old, new)
    clean = {k: clean_piece(v) for k, v in clean.items()}

    systems = {"verbatim": [], "clean": []}
    for t in TASKS:
        systems["verbatim"].append(d["judge"] + d["eval_" + t] + d["score_format"])
        systems["clean"].append(clean["judge"] + "\n\n" + clean["eval_" + t] + "\n\n" +
                                clean["score_format"])
    for mode, lst in systems.items():
        for t, s in zip(TASKS, lst):
            n = len(s.encode("utf-8"))
            if n + 1 > C_LIMIT:
                sys.exit("gen_mtb_strings: %s %s is %d bytes: over the C11 literal limit"
                         % (mode, t, n))
            if "'Rating: [[score]]'" not in s:
                sys.exit("gen_mtb_strings: %s %s lost 'Rating: [[score]]'" % (mode, t))
    clean_sys = systems["clean"]
    for s in clean_sys:
        for bad in ("groud", "DIALGUE", "ta///sk", "follow this instructions", "  ", " \n", "\n ",
                    "\u2018", "\u2019"):
            if bad in s:
                sys.exit("gen_mtb_strings: clean prompt still holds %r" % bad)

    o = []
    w = o.append
    w("/* mtb_strings.c - the MT-Bench-101 judge system prompts. GENERATED by "
      "tools/gen_mtb_strings.py:")
    w(" * do not edit; change the generator and rerun it (`--check` tells whether this file is "
      "current).")
    w(" *")
    w(" * Source: ../shared/data/mtbench101/opencompass_prompt_strings.json (sha256")
    w(" * %s)," % sha)
    w(" * the constants of OpenCompass opencompass/datasets/subjective/mtbench101.py, "
      "sefira/opencompass")
    w(" * revision da7b1c3 (identical at open-compass/opencompass a5acc4bb). Those strings are")
    w(" * Copyright the OpenCompass authors, licensed under the Apache License, Version 2.0")
    w(" * (http://www.apache.org/licenses/LICENSE-2.0); the clean rewrite below is derived from "
      "them.")
    w(" *")
    w(" * [TL_MTB_TEXT_VERBATIM][task]: judge + eval_<TASK> + score_format, concatenated with no")
    w(" * separator, typos and spacing as upstream (byte-exact with OpenCompass's judge prompts).")
    w(" * [TL_MTB_TEXT_CLEAN][task]: our cleaned rewrite. Every change from the upstream text:")
    for piece, old, new, n in CLEAN_EDITS:
        w(" *   - %s%s:" % (piece, " (%d times)" % n if n > 1 else ""))
        w(" *         %s" % comment_text(json.dumps(old)))
        w(" *      -> %s" % comment_text(json.dumps(new)))
    w(" * then, in every piece:")
    for r in CLEAN_RULES:
        for i, part in enumerate(textwrap.wrap(comment_text(r) + ";", width=92)):
            w((" *   - " if i == 0 else " *     ") + part)
    w(" * nothing else: the rubrics, the score bands and the 'Rating: [[score]]' format are kept.")
    w(" * Both modes are composed here, at generation time: no initialisation at run time, and the")
    w(" * longest (%d bytes) fits the %d characters C11 guarantees for a string literal. */" %
      (max(len(s.encode("utf-8")) for lst in systems.values() for s in lst), C_LIMIT))
    w('#include "mtb_prompt.h"')
    w("")
    w("const char tl_mtb_strings_source[] =")
    w(c_literal("opencompass_prompt_strings.json sha256 %s; %s" % (sha, d["provenance"])) + ";")
    for mode, enum in (("verbatim", "TL_MTB_TEXT_VERBATIM"), ("clean", "TL_MTB_TEXT_CLEAN")):
        w("")
        for t, s in zip(TASKS, systems[mode]):
            w("static const char sys_%s_%s[] = /* %d bytes, %d characters */" %
              (mode, t, len(s.encode("utf-8")), len(s)))
            w(c_literal(s) + ";")
    w("")
    for decl, fmt in (("const char *const tl_mtb_system_prompts", "sys_%s_%s"),
                      ("const size_t tl_mtb_system_prompt_lens", "sizeof sys_%s_%s - 1")):
        w(decl + "[TL_MTB__NTEXTS][TL_MTB__NTASKS] = {")
        for mode in ("verbatim", "clean"):
            w(c_list([fmt % (mode, t) for t in TASKS]))
        w("};")
    text = "\n".join(o) + "\n"
    for ln in text.split("\n"):
        assert len(ln) <= 100, ln
    return text


def main(argv):
    args = argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) > 1:
        sys.exit(__doc__)
    text = generate(args[0] if args else DEFAULT_JSON)
    if check:
        try:
            cur = open(OUT, encoding="utf-8").read()
        except OSError as e:
            print("gen_mtb_strings: cannot read %s: %s" % (OUT, e))
            return 1
        if cur != text:
            print("gen_mtb_strings: %s is not what the generator writes: rerun it" % OUT)
            return 1
        print("gen_mtb_strings: %s is current" % OUT)
        return 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
