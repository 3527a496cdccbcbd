#!/usr/bin/env bash
# MT-Bench-101 from OpenCompass's saved outputs (src/import/imp_opencompass.c, docs/IMPORT.md):
# the demo's answers and judgments (seed 0 of both models) are written as OpenCompass writes a
# judged MT-Bench-101 run - predictions/<model>/mtbench101.json and
# results/<model>_judged-by--<judge>/mtbench101.json, keyed "0", "1", ... with gold {task,
# multi_id: the dialogue's integer id, turn_id: its 1-based turn as text}, the turns of one model
# spread over a split (mtbench101_0.json, mtbench101_1.json) for the second model - then
#  1. `tally import` turns them into answer and judgment lines (no bad record, every turn);
#  2. a run on the imported lines gives the same summary as the run on the demo's own lines;
#  3. a results file whose multi_id names no dialogue is reported with file and key.
# Skipped (77) while `tally import` is absent.
. "$(dirname "$0")/common.sh"
"$TALLY_BIN" import --list > "$WORK/formats.txt" 2>&1 || { echo "skipped: no tally import"; exit 77; }
grep -q '^opencompass ' "$WORK/formats.txt" || { echo "skipped: tally import has no opencompass reader"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
command -v "$PY" >/dev/null || { echo "skipped: no python"; exit 77; }
D="$TALLY_SRC/demo/mtbench101"
OC="$WORK/outputs/demo/20250101_000000"
"$PY" - "$D" "$WORK" "$OC" <<'PY' || fail "cannot write the OpenCompass files"
import json, os, sys
D, W, OC = sys.argv[1:4]
skip = {"FR", "CR", "AR", "SA", "SC", "CM"}
dia = {str(json.loads(l)["id"]): json.loads(l) for l in open(D + "/dialogues.jsonl")}
for f in ("answers", "judgments"):
    rows = [json.loads(l) for l in open("%s/%s.jsonl" % (D, f))]
    with open("%s/ref_%s.jsonl" % (W, f), "w") as o:
        for r in rows:
            if r.get("seed", 0) == 0:
                o.write(json.dumps(r) + "\n")
def records(f, model):
    out = []
    for r in (json.loads(l) for l in open("%s/%s.jsonl" % (D, f))):
        if r["model"] != model or r.get("seed", 0) != 0:
            continue
        d = dia[r["id"]]
        t = r.get("turn", 0) + 1 + (d["task"] in skip)  # the dialogue's 1-based turn
        prompt = []
        for h in d["history"][:t - 1]:
            prompt += [{"role": "HUMAN", "prompt": h["user"]}, {"role": "BOT", "prompt": h["bot"]}]
        prompt.append({"role": "HUMAN", "prompt": d["history"][t - 1]["user"]})
        out.append({"origin_prompt": prompt if f == "answers" else "The dialogue need to be judged is: ...",
                    "prediction": r["response"],
                    "gold": {"task": d["task"], "multi_id": int(r["id"]), "turn_id": str(t)}})
    return out
def keyed(recs):
    return {str(i): r for i, r in enumerate(recs)}
for model in ("demo-chat-a", "demo-chat-b"):
    p = "%s/predictions/%s" % (OC, model)
    j = "%s/results/%s_judged-by--demo-judge" % (OC, model)
    os.makedirs(p); os.makedirs(j)
    ans, jud = records("answers", model), records("judgments", model)
    if model == "demo-chat-a":
        json.dump(keyed(ans), open(p + "/mtbench101.json", "w"), indent=4, ensure_ascii=False)
    else:  # a split task: each split keyed from "0"
        h = len(ans) // 2
        json.dump(keyed(ans[:h]), open(p + "/mtbench101_0.json", "w"), indent=4, ensure_ascii=False)
        json.dump(keyed(ans[h:]), open(p + "/mtbench101_1.json", "w"), indent=4, ensure_ascii=False)
    json.dump({"avg": 7.0, "details": keyed(jud)}, open(j + "/mtbench101.json", "w"), indent=4, ensure_ascii=False)
    open("%s/n.%s" % (W, model), "w").write("%d %d\n" % (len(ans), len(jud)))
# a results file with a dialogue id that names no dialogue, and one that is no id
bad = keyed(records("judgments", "demo-chat-a")[:3])
bad["1"]["gold"]["multi_id"] = "x7"
os.makedirs(OC + "/results/demo-chat-a_judged-by--bad")
json.dump({"details": bad}, open(OC + "/results/demo-chat-a_judged-by--bad/mtbench101.json", "w"))
PY
: > "$WORK/imp_answers.jsonl"
: > "$WORK/imp_judgments.jsonl"
for m in demo-chat-a demo-chat-b; do
  read -r na nj < "$WORK/n.$m" # the demo's lines of that model at seed 0
  f="$OC/predictions/$m/mtbench101.json"
  [ -f "$f" ] || f="$OC/predictions/$m/mtbench101_0.json" # the first split names the rest
  "$TALLY_BIN" import "$f" -o "$WORK/a.$m.jsonl" 2> "$WORK/a.$m.err" || { cat "$WORK/a.$m.err"; fail "$m: import of the predictions failed"; }
  grep -q "(opencompass): $na answers" "$WORK/a.$m.err" || { cat "$WORK/a.$m.err"; fail "$m: not $na answers"; }
  ! grep -q "bad input" "$WORK/a.$m.err" || { cat "$WORK/a.$m.err"; fail "$m: bad records in the predictions"; }
  "$TALLY_BIN" import "$OC/results/${m}_judged-by--demo-judge/mtbench101.json" -o "$WORK/none.$m.jsonl" \
    --judgments "$WORK/j.$m.jsonl" 2> "$WORK/j.$m.err" || { cat "$WORK/j.$m.err"; fail "$m: import of the judged results failed"; }
  grep -q " $nj judgments" "$WORK/j.$m.err" || { cat "$WORK/j.$m.err"; fail "$m: not $nj judgments"; }
  [ ! -s "$WORK/none.$m.jsonl" ] || fail "$m: answers from a judged results file"
  cat "$WORK/a.$m.jsonl" >> "$WORK/imp_answers.jsonl"
  cat "$WORK/j.$m.jsonl" >> "$WORK/imp_judgments.jsonl"
done
grep -q '"turn_id":2,' "$WORK/imp_answers.jsonl" || fail "no turn_id on the imported answers"
grep -q '"judge":"demo-judge"' "$WORK/imp_judgments.jsonl" || fail "the judge is not kept"
job() { # job NAME ANSWERS JUDGMENTS
  sed "s#\"../demo/mtbench101/answers.jsonl\"#\"$2\"#; s#\"../demo/mtbench101/judgments.jsonl\"#\"$3\"#; s#\"\\.\\./demo#\"$TALLY_SRC/demo#" \
    "$TALLY_SRC/jobs/mtbench101-demo.json" > "$WORK/$1.json"
}
job ref "$WORK/ref_answers.jsonl" "$WORK/ref_judgments.jsonl"
job imp "$WORK/imp_answers.jsonl" "$WORK/imp_judgments.jsonl"
for v in ref imp; do
  mpirun -n 1 --oversubscribe "$TALLY_BIN" run "$WORK/$v.json" --out "$WORK/$v.h5" --quiet > "$WORK/$v.txt" 2> "$WORK/$v.err" ||
    { cat "$WORK/$v.err"; fail "$v: the run failed"; }
  sed -i "s#$WORK/$v.h5#OUT#" "$WORK/$v.txt"
  grep -q "^bad input lines: 0" "$WORK/$v.txt" || { cat "$WORK/$v.txt" "$WORK/$v.err"; fail "$v: bad input lines"; }
done
grep -q "94 judged turns" "$WORK/ref.txt" || { cat "$WORK/ref.txt"; fail "ref: not every turn of seed 0 judged"; }
# OpenCompass saves no per-item verdict of the model's answers: the audit says so, once
grep -q "^audit mtbench101: the imported answers (opencompass) carry no per-item verdict of the harness" "$WORK/imp.txt" ||
  { cat "$WORK/imp.txt"; fail "the audit does not say the harness saved no verdict"; }
grep -v '^audit ' "$WORK/imp.txt" > "$WORK/imp.noaudit"
cmp -s "$WORK/ref.txt" "$WORK/imp.noaudit" || { diff "$WORK/ref.txt" "$WORK/imp.noaudit"; fail "the imported run's summary differs"; }
# a record whose multi_id is no dialogue id: reported with its file and key, the rest converted
"$TALLY_BIN" import "$OC/results/demo-chat-a_judged-by--bad/mtbench101.json" -o "$WORK/none.jsonl" \
  --judgments "$WORK/bad.jsonl" 2> "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "the bad file stopped the import"; }
grep -q "judged-by--bad/mtbench101.json:2: details '1': gold.multi_id \"x7\" is not a dialogue id" "$WORK/bad.err" ||
  { cat "$WORK/bad.err"; fail "the bad record is not named"; }
[ "$(wc -l < "$WORK/bad.jsonl")" = 2 ] || fail "not the 2 good judgments"
echo "ok: OpenCompass MT-Bench-101 import"
