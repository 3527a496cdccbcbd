#!/usr/bin/env bash
# compare_legacy.sh - C 'legacy' SpatialEval parser vs. the Python oracle, line by line.
#
# usage: tools/oracle/compare_legacy.sh [BUILD_DIR] [INPUT.jsonl]
#   BUILD_DIR   a build folder holding tests/test_se_legacy (default: build-legacy)
#   INPUT       JSON lines {"item": {...benchmark row...}, "response": "...", "model": "..."};
#               default: built from ../shared/data (the 313 real VLM answers on their
#               Spatial-Map TQA items, and the 10 long DeepSeek answers on their items).
# Prints the number of lines compared and every difference (at most 20); exit 1 if any.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-legacy}
py=${TALLY_PYTHON:-/usr/bin/python3}
bin=$build/tests/test_se_legacy
[ -x "$bin" ] || { echo "compare_legacy: $bin not built" >&2; exit 2; }
[ -x "$py" ] || { echo "compare_legacy: $py missing" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -ge 2 ]; then
  input=$2
else
  data=${TALLY_SHARED_DATA:-$root/../shared/data}/spatialeval
  [ -d "$data" ] || { echo "compare_legacy: $data absent; give an input file" >&2; exit 2; }
  input=$tmp/in.jsonl
  "$py" - "$data" > "$input" <<'EOF'
import json, sys
d = sys.argv[1]
items = {}
for line in open(d + "/spatialmap_tqa.jsonl"):
    it = json.loads(line)
    items[it["id"]] = it
for line in open(d + "/outputs/vlm_outputs_313.jsonl"):
    r = json.loads(line)
    tid = r["sample_id"].replace(".vqa.", ".tqa.")
    it = items.get(tid) or {"id": tid, "text": "Q? Available options:\nA. a\nB. b\nC. c\nD. d.",
                            "oracle_answer": r["oracle_answer"], "oracle_option": r["oracle_option"],
                            "oracle_full_answer": r["oracle_option"] + ". " + r["oracle_answer"]}
    print(json.dumps({"item": it, "response": r["raw_answer"], "model": r["model"]}))
for line in open(d + "/outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl"):
    r = json.loads(line)
    base = r["id"].rsplit(".", 1)[0]
    for q in range(3):
        print(json.dumps({"item": items[base + "." + str(q)], "response": r["response"], "model": ""}))
EOF
fi

"$bin" --dump "$input" > "$tmp/c.jsonl"
"$py" "$here/legacy_oracle.py" < "$input" > "$tmp/py.jsonl"
"$py" - "$tmp/c.jsonl" "$tmp/py.jsonl" <<'EOF'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
p = [json.loads(l) for l in open(sys.argv[2])]
if len(c) != len(p):
    print("line counts differ: C %d, Python %d" % (len(c), len(p)))
    sys.exit(1)
bad = [i for i in range(len(c)) if c[i] != p[i]]
for i in bad[:20]:
    print("line %d: C %s | Python %s" % (i + 1, json.dumps(c[i]), json.dumps(p[i])))
print("%d lines compared, %d differ; correct: C %d, Python %d"
      % (len(c), len(bad), sum(x["correct"] for x in c), sum(x["correct"] for x in p)))
sys.exit(1 if bad else 0)
EOF
