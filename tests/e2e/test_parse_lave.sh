#!/usr/bin/env bash
# `tally parse --parser lave-rating` (lave.h tl_lave_rate): fixed judge replies checked byte for
# byte with and without --lave-compat; bad lines answered in place; --strict-input; a typo'd
# parser name and a misplaced --lave-compat exit 2; then a differential run: 5,000 generated
# judge replies against a Python model of the rules in docs/LAVE.md, written for this test.
. "$(dirname "$0")/common.sh"

cat > "$WORK/in.jsonl" <<'EOF'
{"response": "The candidate answer is correct because the plane is white and red. So rating=3"}
{"response": "So rating=2."}
{"response": "Earlier rating=1, but on reflection: rating = 3\n"}
{"response": "So rating=4"}
{"response": "Rating: 2"}
{"response": "There are 13"}
{"response": "<think>rating=1?</think>So rating=2"}
{"response": "<think>never closed rating=3"}
{"response": ""}
{"response": null}
{"response": "So rating=3", "item": {"anything": 1}, "model": "judge"}
EOF

check() { # OPTIONS... -- expected output lines on stdin
  "$TALLY_BIN" parse --parser lave-rating "$@" --input "$WORK/in.jsonl" > "$WORK/got.jsonl" \
    2> "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "lave-rating $*: exit $?"; }
  cat > "$WORK/want.jsonl"
  diff -u "$WORK/want.jsonl" "$WORK/got.jsonl" || fail "lave-rating $*: output differs"
}

check <<'EOF'
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"rating_eq"}
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
{"answer":null,"rating":null,"score":null,"status":"out_of_range","rule":"out_of_range"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"last_char"}
{"answer":null,"rating":null,"score":null,"status":"no_answer","rule":"no_rating"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"rating_eq"}
{"answer":null,"rating":null,"score":null,"status":"unterminated_think","rule":"unterminated_think"}
{"answer":null,"rating":null,"score":null,"status":"no_answer","rule":"no_rating"}
{"answer":null,"rating":null,"score":null,"status":"missing","rule":""}
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
EOF
check --lave-compat <<'EOF'
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"rating_eq"}
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
{"answer":null,"rating":2,"score":0.5,"status":"ok","rule":"compat_fallback_2"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"last_char"}
{"answer":null,"rating":2,"score":0.5,"status":"ok","rule":"compat_fallback_2"}
{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"rating_eq"}
{"answer":null,"rating":2,"score":0.5,"status":"ok","rule":"compat_fallback_2"}
{"answer":null,"rating":2,"score":0.5,"status":"ok","rule":"compat_fallback_2"}
{"answer":null,"rating":null,"score":null,"status":"missing","rule":""}
{"answer":"3","rating":3,"score":1,"status":"ok","rule":"rating_eq"}
EOF

# ---- bad lines answered in place; --strict-input stops with exit 3 ----
printf '%s\n' '{"response": "So rating=1"}' '{"resp": "x"}' '{"response": 3}' 'not json' \
  '{"response": "rating=3", "model": 7}' '{"response": "2"}' > "$WORK/bad.jsonl"
rc=0
"$TALLY_BIN" parse --parser lave-rating --input "$WORK/bad.jsonl" --output "$WORK/bad.out" \
  2> "$WORK/err.txt" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/err.txt"; fail "bad lines: exit $rc"; }
[ "$(wc -l < "$WORK/bad.out")" = 6 ] || fail "bad lines: not one output line per input line"
sed -n 1p "$WORK/bad.out" | grep -qx '{"answer":"1","rating":1,"score":0,"status":"ok","rule":"rating_eq"}' \
  || fail "bad lines: line 1"
sed -n 2p "$WORK/bad.out" | grep -q '"error":.*missing field .response.' || fail "bad lines: line 2"
sed -n 3p "$WORK/bad.out" | grep -q '"error":.*not a string or null' || fail "bad lines: line 3"
sed -n 4p "$WORK/bad.out" | grep -q '"error"' || fail "bad lines: line 4"
sed -n 5p "$WORK/bad.out" | grep -q '"error":.*model' || fail "bad lines: line 5"
sed -n 6p "$WORK/bad.out" | grep -qx '{"answer":"2","rating":2,"score":0.5,"status":"ok","rule":"last_char"}' \
  || fail "bad lines: line 6"
grep -q 'bad.jsonl:2:' "$WORK/err.txt" && grep -q '4 bad input lines' "$WORK/err.txt" \
  || { cat "$WORK/err.txt"; fail "bad lines: messages"; }
rc=0
"$TALLY_BIN" parse --parser lave-rating --lave-compat --input "$WORK/bad.jsonl" \
  --output "$WORK/strict.out" --strict-input 2> /dev/null || rc=$?
[ "$rc" = 3 ] || fail "--strict-input: exit $rc, want 3"
[ ! -e "$WORK/strict.out" ] || fail "--strict-input: the output was written"

# ---- usage errors: exit 2 ----
rc=0
"$TALLY_BIN" parse --parser lave-ratings < /dev/null > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "lave-rating" "$WORK/err.txt" || fail "a typo'd parser name: exit $rc"
rc=0
"$TALLY_BIN" parse --parser fastchat --lave-compat < /dev/null > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "lave-compat applies to --parser lave-rating" "$WORK/err.txt" \
  || fail "--lave-compat with another parser: exit $rc"
"$TALLY_BIN" parse --help | grep -q 'lave-compat' || fail "--help does not name --lave-compat"

# ---- differential: generated replies against a Python model of docs/LAVE.md ----
[ -x "$PY" ] || { echo "skipped: $PY is absent (the fixed checks passed)"; exit 77; }
"$PY" - "$WORK" <<'PY'
import json, random, sys
rnd = random.Random(20250101)
TOK = ["rating", "Rating", "RATING", "rat", "ing", "sub", "=", " = ", "==", " ", "\n", "\t",
       "\u00a0", "\u3000", "\x1c", "1", "2", "3", "4", "0", "10", "03", ".", ".5", ",", "2.5",
       "So ", "So rating=", "rating=3", "rating=1", "rating=7", "x", "\u00e9", "_", "\u0663",
       "<think>", "</think>", "<THINK>", "</Think>", "(", ")", ":", "'", "*", "ok", "v"]
with open(f"{sys.argv[1]}/diff.jsonl", "w") as f:
    for _ in range(5000):
        f.write(json.dumps({"response": "".join(rnd.choice(TOK) for _ in range(rnd.randint(0, 14)))}) + "\n")
PY
"$TALLY_BIN" parse --parser lave-rating --input "$WORK/diff.jsonl" --output "$WORK/diff.out" \
  || fail "the differential input failed"
"$TALLY_BIN" parse --parser lave-rating --lave-compat --input "$WORK/diff.jsonl" \
  --output "$WORK/diff.compat" || fail "the differential input failed (compat)"
"$PY" - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]

# think blocks as tally/think.h (ours): tags folded by OR-ing 0x20 into each byte, so \x0f and
# \x1e also stand for '/' and '>' (none are generated here); every block and everything before
# an orphan </think> goes; an unclosed <think> -> None
def strip_think(text):
    low = "".join(chr(ord(c) | 0x20) if c.isascii() and c.isupper() else c for c in text)
    pos, segs = 0, []
    while True:
        o, c = low.find("<think>", pos), low.find("</think>", pos)
        if c != -1 and (o == -1 or c < o):
            segs, pos = [], c + 8
            continue
        segs.append(text[pos:(o if o != -1 else len(text))])
        if o == -1:
            return "".join(segs)
        c2 = low.find("</think>", o + 7)
        if c2 == -1:
            return None
        pos = c2 + 8

RATING_EQ = re.compile(r"(?<!\w)[Rr][Aa][Tt][Ii][Nn][Gg]\s*=\s*([0-9]+(?:\.[0-9]+)?)")

def rate(text, compat):
    v = strip_think(text)
    if v is None:
        res = ("unterminated_think", "unterminated_think", None)
    else:
        ms = list(RATING_EQ.finditer(v))
        s = v.rstrip()
        if ms:
            g = ms[-1].group(1)
            res = ("ok", "rating_eq", int(g)) if g in ("1", "2", "3") else ("out_of_range", "out_of_range", None)
        elif s and s[-1] in "123" and (len(s) == 1 or not (s[-2].isalnum() or s[-2] in "_.,")):
            res = ("ok", "last_char", int(s[-1]))
        else:
            res = ("no_answer", "no_rating", None)
    if compat and res[0] != "ok":
        res = ("ok", "compat_fallback_2", 2)
    return res

texts = [json.loads(l)["response"] for l in open(f"{work}/diff.jsonl")]
bad, seen = 0, set()
for name, compat in (("diff.out", 0), ("diff.compat", 1)):
    lines = open(f"{work}/{name}").read().splitlines()
    assert len(lines) == len(texts), (name, len(lines))
    for text, line in zip(texts, lines):
        o = json.loads(line)
        st, rule, r = rate(text, compat)
        want = {"answer": str(r) if r and rule != "compat_fallback_2" else None, "rating": r,
                "score": (r - 1) / 2 if r else None, "status": st, "rule": rule}
        seen.add((compat, rule))
        if o != want:
            bad += 1
            if bad <= 10:
                print(f"MISMATCH compat={compat}: {text!r}\n  tally  {o}\n  python {want}")
print(f"{len(texts)} replies x 2 modes, rules seen: {sorted(seen)}")
if bad:
    sys.exit(f"FAIL: {bad} differences")
PY
echo "ok: test_parse_lave"
