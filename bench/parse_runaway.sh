#!/usr/bin/env bash
# Wall time of `tally parse` on runaway answers: one repeated piece (the shapes a looping model
# writes) grown to SIZE bytes, for each SpatialEval parser. Every parser is linear in the answer
# (docs/parser-*.md, "Cost"/"Performance"); tests/unit/test_parse_limits.c asserts it.
# The time includes starting tally and reading the JSON line (a few ms).
# usage: bench/parse_runaway.sh [SIZE_BYTES] [BUILD_DIR]     (defaults: 1048576, build)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1048576}"
BUILD="${2:-build}"
PY="${TALLY_PYTHON:-/usr/bin/python3}"
TALLY="$BUILD/tally"
[ -x "$TALLY" ] || { echo "bench: $TALLY is absent (build first)"; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# name|prefix|unit|suffix|item id|model   (\n in the fields is a newline)
SHAPES='repeated option text|A. |Yucca Yoga ||spatialmap.tqa.9000.1|
repeated Answer: A||Answer: A ||spatialmap.tqa.9000.1|
repeated <think>||<think>||spatialmap.tqa.9000.1|
repeated </think>||</think>||spatialmap.tqa.9000.1|
one line, no newline||Yucca Yoga is northeast of Oz Oddities and ||spatialmap.tqa.9000.1|
blanks|| ||spatialmap.tqa.9000.1|
newlines||\n||spatialmap.tqa.9000.1|
A or B||A or B, ||spatialmap.tqa.9000.1|
### Answer headings||### Answer\n||spatialmap.tqa.9000.1|
the answer is ...||the answer is ||spatialmap.tqa.9000.1|
**Answer:** A on one line||**Answer:** A ||spatialmap.tqa.9000.1|
Answer + blanks + x|Answer| |x|spatialmap.tqa.9000.1|
stars||*||spatialmap.tqa.9000.1|
one token after Answer:|Answer: |x||spatialmap.tqa.9000.1|
x + blanks + x (legacy lead)|x| |x|spatialmap.tqa.9000.1|
answer is: + newlines (maze)|answer is:|\n|x|mazenav.tqa.9000.0|
Concise Answer: + blanks|Concise Answer:| |is located southeast|spatialmap.tqa.9000.1|gpt4o'

printf '%-32s %10s %10s %10s\n' "shape ($SIZE bytes)" strict pr3 legacy
while IFS='|' read -r name pre unit suf id model; do
  "$PY" - "$SIZE" "$pre" "$unit" "$suf" "$id" "$model" > "$TMP/in.jsonl" <<'EOF'
import json, sys
size, pre, unit, suf, iid, model = sys.argv[1:]
size = int(size)
pre, unit, suf = (x.replace("\\n", "\n") for x in (pre, unit, suf))
body = pre + unit * ((size - len(pre)) // len(unit)) + suf
item = {"id": iid, "text": "Which object is in the Southwest of Oz Oddities? Available options:\n"
        "A. Yucca Yoga\nB. Narwhal's Novelties\nC. Police Supply Store\nD. Ice Queen Ice Cream.",
        "oracle_answer": "Yucca Yoga", "oracle_option": "A", "oracle_full_answer": "A. Yucca Yoga"}
print(json.dumps({"item": item, "response": body, "model": model}))
EOF
  row=$(printf '%-32s' "$name")
  for p in strict pr3 legacy; do
    t0=$(date +%s.%N)
    "$TALLY" parse --parser "spatialeval-$p" --input "$TMP/in.jsonl" --output "$TMP/out.jsonl"
    t1=$(date +%s.%N)
    row+=$(printf ' %9.3fs' "$(echo "$t1 - $t0" | bc -l)")
  done
  echo "$row"
done <<< "$SHAPES"
