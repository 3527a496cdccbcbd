#!/usr/bin/env bash
# `tally parse` with the MT-Bench-101 judge-rating parsers (mtb_rating.h): fixed lines through
# each of mtbench101-rating, mtbench101-opencompass, fastchat and judgearena, checked byte for
# byte; the input contract ("item" ignored, "response" required, bad lines, --strict-input, the
# output file); then a differential run: 6,000 generated judge outputs through each parser,
# compared with the references' own Python (OpenCompass's re.search + int(), FastChat's re +
# ast.literal_eval, JudgeArena's strip_thinking_tags + MTBench101ScoreParser) and with a
# Python model of our strict mode.
. "$(dirname "$0")/common.sh"

cat > "$WORK/in.jsonl" <<'EOF'
{"response": "See section [3] for details...\nRating: [[6]]"}
{"response": "As instructed ('Rating: [[score]]', for example 'Rating: [[6]]'), my verdict is Rating: [[3]]"}
{"response": "<think>Perhaps [[2]]...</think> Rating: [[9]]"}
{"response": "Rating: [[7]]\n\nNote: earlier draft said [[4]]."}
{"response": "<think>unterminated reasoning with [[2]]"}
{"response": "Rating: [[07]]", "item": {"anything": [1, 2]}, "model": "m"}
{"response": "Rating: [[ 7 ]]"}
{"response": "Rating: [[8.5]]"}
{"response": "Rating: [[0]] and [11]"}
{"response": "**Rating:** [[10]] [[5]]"}
{"response": "[99999999999999999999] [[12345678901234567]]"}
{"response": null}
{"response": ""}
EOF

check() { # PARSER -- expected output lines on stdin
  "$TALLY_BIN" parse --parser "$1" --input "$WORK/in.jsonl" > "$WORK/got.jsonl" 2> "$WORK/err.txt" \
    || { cat "$WORK/err.txt"; fail "$1: exit $?"; }
  cat > "$WORK/want.jsonl"
  diff -u "$WORK/want.jsonl" "$WORK/got.jsonl" || fail "$1: output differs"
}

check mtbench101-rating <<'EOF'
{"answer":"6","rating":6,"status":"ok","rule":"rating_label"}
{"answer":"3","rating":3,"status":"ok","rule":"rating_label"}
{"answer":"9","rating":9,"status":"ok","rule":"rating_label"}
{"answer":"7","rating":7,"status":"ok","rule":"rating_label"}
{"answer":null,"rating":null,"status":"unterminated_think","rule":"unterminated_think"}
{"answer":"07","rating":7,"status":"ok","rule":"rating_label"}
{"answer":"7","rating":7,"status":"ok","rule":"rating_label"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":"0","rating":null,"status":"out_of_range","rule":"out_of_range"}
{"answer":"10","rating":10,"status":"ok","rule":"rating_label"}
{"answer":"12345678901234567","rating":null,"status":"out_of_range","rule":"out_of_range"}
{"answer":null,"rating":null,"status":"missing","rule":""}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
EOF
check mtbench101-opencompass <<'EOF'
{"answer":"3","rating":3,"status":"ok","rule":"single_bracket"}
{"answer":"6","rating":6,"status":"ok","rule":"single_bracket"}
{"answer":"2","rating":2,"status":"ok","rule":"single_bracket"}
{"answer":"7","rating":7,"status":"ok","rule":"single_bracket"}
{"answer":"2","rating":2,"status":"ok","rule":"single_bracket"}
{"answer":"07","rating":7,"status":"ok","rule":"single_bracket"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":"0","rating":0,"status":"ok","rule":"single_bracket"}
{"answer":"10","rating":10,"status":"ok","rule":"single_bracket"}
{"answer":"99999999999999999999","rating":null,"status":"out_of_range","rule":"too_large"}
{"answer":null,"rating":null,"status":"missing","rule":""}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
EOF
check fastchat <<'EOF'
{"answer":"6","rating":6,"status":"ok","rule":"double_bracket"}
{"answer":"6","rating":6,"status":"ok","rule":"double_bracket"}
{"answer":"2","rating":2,"status":"ok","rule":"double_bracket"}
{"answer":"7","rating":7,"status":"ok","rule":"double_bracket"}
{"answer":"2","rating":2,"status":"ok","rule":"double_bracket"}
{"answer":"07","rating":null,"status":"skipped","rule":"literal_eval_error"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":"8.5","rating":8.5,"status":"ok","rule":"double_bracket"}
{"answer":"0","rating":0,"status":"ok","rule":"double_bracket"}
{"answer":"10","rating":10,"status":"ok","rule":"double_bracket"}
{"answer":"12345678901234567","rating":null,"status":"out_of_range","rule":"too_large"}
{"answer":null,"rating":null,"status":"missing","rule":""}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
EOF
check judgearena <<'EOF'
{"answer":"6","rating":6,"status":"ok","rule":"double_bracket"}
{"answer":"3","rating":3,"status":"ok","rule":"double_bracket"}
{"answer":"9","rating":9,"status":"ok","rule":"double_bracket"}
{"answer":"4","rating":4,"status":"ok","rule":"double_bracket"}
{"answer":"2","rating":2,"status":"ok","rule":"double_bracket"}
{"answer":"07","rating":7,"status":"ok","rule":"double_bracket"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":"5","rating":5,"status":"ok","rule":"double_bracket"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
{"answer":null,"rating":null,"status":"missing","rule":""}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
EOF

# ---- the input contract: bad lines answered in place, --strict-input stops with exit 3 ----
printf '%s\n' '{"response": "Rating: [[7]]"}' '{"item": {}}' '{"response": 7}' 'not json' \
  '{"response": "[[2]]", "model": 3}' '{"response": "[[8]]", "prompt": null}' > "$WORK/bad.jsonl"
rc=0
"$TALLY_BIN" parse --parser mtbench101-rating --input "$WORK/bad.jsonl" --output "$WORK/bad.out" \
  2> "$WORK/err.txt" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/err.txt"; fail "bad lines without --strict-input: exit $rc"; }
[ "$(wc -l < "$WORK/bad.out")" = 6 ] || fail "bad lines: not one output line per input line"
sed -n 1p "$WORK/bad.out" | grep -qx '{"answer":"7","rating":7,"status":"ok","rule":"rating_label"}' \
  || fail "bad lines: line 1"
sed -n 2p "$WORK/bad.out" | grep -q '"error":.*missing field .response.' || fail "bad lines: line 2"
sed -n 3p "$WORK/bad.out" | grep -q '"error":.*not a string or null' || fail "bad lines: line 3"
sed -n 4p "$WORK/bad.out" | grep -q '"error"' || fail "bad lines: line 4"
sed -n 5p "$WORK/bad.out" | grep -q '"error":.*model' || fail "bad lines: line 5"
sed -n 6p "$WORK/bad.out" | grep -qx '{"answer":"8","rating":8,"status":"ok","rule":"double_bracket"}' \
  || fail "bad lines: line 6"
grep -q '4 bad input lines' "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "bad lines: no count"; }
rc=0
"$TALLY_BIN" parse --parser judgearena --input "$WORK/bad.jsonl" --output "$WORK/strict.out" \
  --strict-input 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 3 ] || fail "--strict-input: exit $rc, want 3"
[ ! -e "$WORK/strict.out" ] || fail "--strict-input: the output was written"
rc=0
"$TALLY_BIN" parse --parser mtbench101 < /dev/null > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -q 'mtbench101-rating' "$WORK/err.txt" || fail "an unknown parser name: exit $rc"
rc=0
"$TALLY_BIN" parse < /dev/null > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -q 'fastchat or judgearena' "$WORK/err.txt" || fail "no --parser: exit $rc"

# ---- differential: generated judge outputs against the references' Python ----
[ -x "$PY" ] || { echo "skipped: $PY is absent (the fixed checks passed)"; exit 77; }
"$PY" - "$WORK" gen <<'PY'
import json, random, sys
work = sys.argv[1]
rnd = random.Random(20240611)
TOK = ["[", "]", "[[", "]]", "0", "1", "7", "10", "11", "07", "00", "007", "0000", "8.5", "7.",
       "1.5.3", "07.50", "\u0663", "1\u0663", "99999999999999999999", "9223372036854775",
       "9223372036854776", "0.0005", "8.1235", "8.1245", "8.12351", " ", "  ", "\t", "\n",
       "\u00a0", "Rating:", "rating: ", "RATING:", "**Rating:**", "Rating**:", "Rating", ":",
       "*", "_", "My rating:", "Subrating:", "<think>", "</think>", "<THINK>", "</Think>",
       "<th\u0130nk>", "</th\u0130nk>", "<th\u0131nk>", "<thin\u212a>", "</thin\u212a>",
       "\u0130", "x", "score", ".", "Note", "\x0f", "\x1e", "<", "/", ">", "think",
       "I have to give the solution based on the thinking directly now.</think>",
       "[[7]]", "[[10]]", "[[1]]", "[[0]]", "[[11]]", "[[ 7 ]]", "[7]", "[[07]]", "[[8.5]]",
       "[[\u0663]]", "Rating: [[6]]", "[[0007]]", "[3]", "[[7.]]"]
LONG = ["1" * 4301, "0" * 4300 + "7", "0" * 5000, "5" * 4300]
with open(f"{work}/diff.jsonl", "w") as f:
    for i in range(6000):
        k = rnd.randint(0, 24)
        toks = [rnd.choice(TOK) for _ in range(k)]
        if rnd.random() < 0.02:
            toks.insert(rnd.randint(0, len(toks)), "[[" + rnd.choice(LONG) + "]]")
        if rnd.random() < 0.02:
            toks.insert(rnd.randint(0, len(toks)), "[" + rnd.choice(LONG) + "]")
        f.write(json.dumps({"response": "".join(toks)}) + "\n")
PY
for p in mtbench101-rating mtbench101-opencompass fastchat judgearena; do
  "$TALLY_BIN" parse --parser "$p" --input "$WORK/diff.jsonl" --output "$WORK/diff.$p.jsonl" \
    || fail "$p: the differential input failed"
done
"$PY" - "$WORK" <<'PY'
import ast, json, re, sys
from decimal import Decimal, ROUND_HALF_EVEN
work = sys.argv[1]
INT64_MAX = 2**63 - 1

def res(st, rule, ans=None, t=None):
    return (st, rule, ans, t)

def opencompass(text):  # post_process_mtbench101
    m = re.search(r'\[([0-9]+)\]', text)
    if not m:
        return res("no_answer", "no_rating")
    g = m.group(1)
    try:
        v = int(g)
    except ValueError:  # more than 4300 digits
        return res("skipped", "int_digit_limit", g)
    if v * 1000 > INT64_MAX:
        return res("out_of_range", "too_large", g)
    return res("ok", "single_bracket", g, v * 1000)

def fastchat(text):  # run_judge_single, judgment_format "[[rating]]"
    for pat, rule in ((r"\[\[(\d+\.?\d*)\]\]", "double_bracket"), (r"\[(\d+\.?\d*)\]", "single_bracket")):
        m = re.search(pat, text)
        if not m:
            continue
        g = m.group(1)
        try:
            v = ast.literal_eval(g)
        except SyntaxError:
            return res("skipped", "literal_eval_error", g)
        t = v * 1000 if isinstance(v, int) else \
            int(Decimal(g).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN) * 1000)
        if t > INT64_MAX:
            return res("out_of_range", "too_large", g)
        return res("ok", rule, g, t)
    return res("no_answer", "no_rating")

_THINK_BLOCK_RE = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
VLLM_REASONING_END_STR = "I have to give the solution based on the thinking directly now.</think>"
def strip_thinking_tags(text):  # judgearena.utils, strip_thinking_tags_with_metadata()[0]
    cleaned = _THINK_BLOCK_RE.sub("", text)
    if cleaned != text:
        return cleaned.lstrip()
    lowered = text.lower()
    closing_tag = "</think>"
    closing_idx = lowered.find(closing_tag)
    if closing_idx != -1 and "<think>" not in lowered[:closing_idx]:
        return text[closing_idx + len(closing_tag):].lstrip()
    forced_end_idx = text.find(VLLM_REASONING_END_STR)
    if forced_end_idx != -1:
        return text[forced_end_idx + len(VLLM_REASONING_END_STR):].lstrip()
    return text

DOUBLE_BRACKET_PATTERN = re.compile(r"\[\[(\d+)\]\]")
def judgearena(text):  # MTBench101ScoreParser.parse_result after strip_thinking_tags
    for match in reversed(list(DOUBLE_BRACKET_PATTERN.finditer(strip_thinking_tags(text)))):
        g = match.group(1)
        try:
            score = int(g)
        except ValueError:
            return res("skipped", "int_digit_limit", g)
        if 1 <= score <= 10:
            return res("ok", "double_bracket", g, score * 1000)
    return res("no_answer", "no_rating")

# ours (mtb_rating.h), modelled independently: tags folded byte-wise with OR 0x20 (so \x0f is
# '/' and \x1e is '>' in a tag), every block and everything before an orphan close dropped.
FOLD = {c: c + 32 for c in range(65, 91)}
FOLD.update({0x0F: 0x2F, 0x1E: 0x3E})
def our_strip(text):
    low = text.translate(FOLD)
    pos, segs = 0, []
    while True:
        o, c = low.find("<think>", pos), low.find("</think>", pos)
        if c != -1 and (o == -1 or c < o):
            segs, pos = [], c + 8
            continue
        stop = o if o != -1 else len(text)
        if stop > pos:
            segs.append(text[pos:stop])
        if o == -1:
            return "".join(segs)
        c2 = low.find("</think>", o + 7)
        if c2 == -1:
            return None
        pos = c2 + 8

# \s as PCRE2 has it: Python's \s also takes U+001C..U+001F
S = r"[^\S\x1c-\x1f]"
STRICT = re.compile(r"(\brating[*_ \t]*:(?:S|[*_])*)?\[\[S*(\d+)S*\]\]".replace("S", S),
                    re.IGNORECASE)
def strict(text):
    v = our_strip(text)
    if v is None:
        return res("unterminated_think", "unterminated_think")
    last = last_label = None
    for m in STRICT.finditer(v):
        last = m
        if m.group(1) is not None:
            last_label = m
    m, rule = (last_label, "rating_label") if last_label else (last, "double_bracket")
    if m is None:
        return res("no_answer", "no_rating")
    g = m.group(2)
    z = g.lstrip("0") or "0"  # our value has no digit limit
    n = int(z) if len(z) <= 4300 else 11
    if 1 <= n <= 10:
        return res("ok", rule, g, n * 1000)
    return res("out_of_range", "out_of_range", g)

texts = [json.loads(l)["response"] for l in open(f"{work}/diff.jsonl")]
bad = 0
seen = {}
for name, fn in (("mtbench101-rating", strict), ("mtbench101-opencompass", opencompass),
                 ("fastchat", fastchat), ("judgearena", judgearena)):
    lines = open(f"{work}/diff.{name}.jsonl").read().splitlines()
    assert len(lines) == len(texts), (name, len(lines))
    for text, line in zip(texts, lines):
        o = json.loads(line, parse_float=Decimal, parse_int=Decimal)
        got = (o["status"], o["rule"], o["answer"],
               None if o["rating"] is None else int(o["rating"] * 1000))
        want = fn(text)
        seen.setdefault(name, set()).add(want[:2])
        if got != want:
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {name}: {text[:200]!r}\n  tally  {str(got)[:200]}\n  python {str(want)[:200]}")
for name, s in seen.items():
    print(f"{name}: {len(texts)} texts, outcomes {sorted(s)}")
if bad:
    sys.exit(f"FAIL: {bad} differences")
PY
echo "ok: test_parse_mtbench101"
