#!/usr/bin/env bash
# MT-Bench-101's judge prompts against OpenCompass's golden vectors (../shared/data/mtbench101):
# the judge prompts the module sends (a dry run with an openai judge, every answer the literal
# "{prediction}"), reference "opencompass" and prompt text "verbatim", equal all 3,615 of
# OpenCompass's composed prompts byte for byte. Skipped (77) when the data is absent; the rest of
# MT-Bench-101 end to end is e2e_test_mtbench101.
. "$(dirname "$0")/common.sh"
DATA="$TALLY_SHARED_DATA/mtbench101"
for f in mtbench101.jsonl opencompass_judge_prompts.jsonl.gz; do
  [ -f "$DATA/$f" ] || { echo "skipped: $DATA/$f is absent (set TALLY_SHARED_DATA)"; exit 77; }
done
[ -x "$PY" ] || { echo "skipped: $PY is absent"; exit 77; }
"$PY" - "$DATA/mtbench101.jsonl" "$WORK/pred.jsonl" <<'PY'
import json, sys
skip = {"FR", "CR", "AR", "SA", "SC", "CM"}
with open(sys.argv[2], "w") as a:
    for l in open(sys.argv[1]):
        d = json.loads(l)
        for j in range(len(d["history"]) - (d["task"] in skip)):
            a.write(json.dumps({"id": str(d["id"]), "turn": j, "response": "{prediction}"}) + "\n")
PY
cat > "$WORK/prompts.json" <<JOB
{"name": "mtb-prompts", "output": "$WORK/prompts.h5",
 "engines": {"judge": {"type": "openai", "url": "http://127.0.0.1:9/v1", "model": "judge"}},
 "benchmarks": [{"benchmark": "mtbench101", "items": "$DATA/mtbench101.jsonl",
   "answers": {"path": "$WORK/pred.jsonl", "model": "m"}, "reference": "opencompass", "prompt_text": "verbatim"}]}
JOB
"$TALLY_BIN" run "$WORK/prompts.json" --dry-run="$WORK/req.jsonl" > /dev/null 2> "$WORK/dry.err" ||
  { cat "$WORK/dry.err"; fail "the dry run failed"; }
"$PY" - "$DATA" "$WORK/req.jsonl" <<'PY' || fail "the judge prompts differ from OpenCompass's"
import gzip, json, sys
skip = {"FR", "CR", "AR", "SA", "SC", "CM"}
task = {str(json.loads(l)["id"]): json.loads(l)["task"] for l in open(sys.argv[1] + "/mtbench101.jsonl")}
gold = {}
for l in gzip.open(sys.argv[1] + "/opencompass_judge_prompts.jsonl.gz", "rt", encoding="utf-8"):
    g = json.loads(l)
    gold[(str(g["multi_id"]), str(g["turn_id"]))] = g
seen = set()
for n, l in enumerate(open(sys.argv[2], encoding="utf-8"), 1):
    r = json.loads(l)
    if r["role"] != "judge":
        continue
    k = r["key"].split("/")
    did, turn = k[1], (1 if task[k[1]] in skip else 0) + int(k[5]) + 1
    g = gold[(did, str(turn))]
    m = r["body"]["messages"]
    for got, want, what in ((m[0]["content"], g["system_prompt"], "system"), (m[1]["content"], g["user_prompt_template"], "user")):
        if got != want:
            i = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
            sys.exit("line %d (dialogue %s turn %d): %s prompt differs at offset %d: %r vs %r"
                     % (n, did, turn, what, i, got[max(0, i - 30):i + 30], want[max(0, i - 30):i + 30]))
    seen.add((did, str(turn)))
assert len(seen) == len(gold) == 3615, (len(seen), len(gold))
print("judge prompts: all %d equal OpenCompass's" % len(seen))
PY
echo "e2e mtbench101 prompts: ok"
