#!/usr/bin/env bash
# The generic multiple-choice module end to end: the fixture job (tests/fixtures/mcq: items with
# letter, index and text golds; replies in each harness's typical shapes; log-likelihood lines)
# on 1 and 2 ranks gives identical datasets (h5diff) and summaries; bad items and answers are
# named file:line; chosen cells of the item table and the summary hold what the rules say; and
# `tally parse --parser mcq-*` agrees with the run. Then the real inspect_ai ARC log's samples,
# converted by hand, score under inspect-choice exactly as the log's own per-sample C/I verdicts
# and the real HELM MMLU run's instances score under helm-mapping as its exact_match (those parts
# exit 77 when ../shared/data is absent).
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
command -v h5dump >/dev/null || { echo "skipped: no h5dump"; exit 77; }
FIX="$TALLY_SRC/tests/fixtures/mcq"

for n in 1 2; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$FIX/job.json" --out "$WORK/r$n.h5" > "$WORK/o$n.txt" 2> "$WORK/e$n.txt" \
    || { cat "$WORK/e$n.txt"; fail "mpirun -n $n failed"; }
  sed -i "s#$WORK/r$n.h5#OUT#; /^tally: [0-9]* units/d" "$WORK/o$n.txt"
done
for obj in /items /metrics /audit /input_problems; do
  h5diff "$WORK/r1.h5" "$WORK/r2.h5" "$obj" || fail "$obj differs between 1 and 2 ranks"
done
cmp "$WORK/o1.txt" "$WORK/o2.txt" || fail "the summary differs between 1 and 2 ranks"

# bad items and answers, each named with its file and line
for want in "items.jsonl:9: item missing field 'choices'" \
            "items.jsonl:10: item 'bad2': field 'answer' is index 5, outside 0..1" \
            "items.jsonl:11: item 'bad3': field 'answer' \"bird\" is neither a letter A-B nor a choice's text" \
            "items.jsonl:12: duplicate item id 'q01'" \
            "answers.jsonl:23: field 'loglik': element 1 is not a number" \
            "answers.jsonl:24: answer for unknown item 'nosuch'" \
            "answers.jsonl:25: missing field 'response'"; do
  grep -qF "$want" "$WORK/e1.txt" || { cat "$WORK/e1.txt"; fail "not reported: $want"; }
done

# a column of the item table as one value per line (units in key order: model, seed, item id)
col() {
  h5dump -y -w 0 -d "/items/mcq/$1" "$WORK/r1.h5" | sed -n '/DATA {/,/^ *}/{p;/^ *}/q}' | sed '1d;$d' | "$PY" -c '
import re, sys
for m in re.finditer(r"\"((?:[^\"\\]|\\.)*)\"|(-?[0-9][0-9.e+-]*)", sys.stdin.read()):
    print(m.group(1).replace("\\000", "") if m.group(1) is not None else m.group(2))'
}
# the row of (model, seed, id): ids sort "7" < "q01" < ... < "q08"; 8 items per cfg
row() { # model seed id -> 1-based row
  local base=0 ids=(7 q01 q02 q03 q04 q05 q06 q08) i
  case "$1/$2" in m-gen/0) base=0 ;; m-gen/1) base=8 ;; m-ll/0) base=16 ;; esac
  for i in "${!ids[@]}"; do [ "${ids[$i]}" = "$3" ] && echo $((base + i + 1)); done
}
cell() { col "$1" | sed -n "$(row "$2" "$3" "$4")p"; }
check() { # column model seed id want
  local got; got=$(cell "$1" "$2" "$3" "$4")
  [ "$got" = "$5" ] || fail "$1 of ($2, $3, $4): got '$got', want '$5'"
}
check gold m-gen 0 q03 B                            # a gold given as the choice text "90"
check gold m-gen 0 7 B                              # an integer id, a 0-based index gold
check rule_strict m-gen 0 q03 first_sentence_text   # "A right angle has 90 degrees."
check correct_strict m-gen 0 q03 1
check answer_vlmeval-heuristic m-gen 0 q03 A        # VLMEvalKit reads the article "A"
check correct_vlmeval-heuristic m-gen 0 q03 0
check rule_helm-mapping m-gen 0 q04 mapped_key      # " B"
check correct_helm-mapping m-gen 0 q04 1
check rule_lmeval-regex m-gen 0 q06 no_match        # "answer: C": lm-eval's pattern is case-sensitive
check rule_inspect-choice m-gen 0 q06 answer_line
check correct_inspect-choice m-gen 0 q06 1
check answer_inspect-choice m-gen 0 q08 B           # the first ANSWER:, inside <think>
check answer_strict m-gen 0 q08 A                   # strict drops the think block
check status_strict m-gen 0 7 ambiguous             # "Answer: A or B, probably B"
check status_strict m-gen 1 q06 missing             # a null response
check rule_strict m-ll 0 q01 loglik_acc
check answer_strict m-ll 0 q06 A                    # acc: the largest loglik
check answer_acc_norm m-ll 0 q06 C                  # acc_norm: per character
check correct_acc_norm m-ll 0 q06 1
check rule_strict m-ll 0 7 loglik_count_mismatch    # 2 logliks for 4 choices
check status_strict m-ll 0 q08 missing              # its line was rejected
# the raw logliks stay the evidence (the response text blob: its bytes as numbers)
h5dump -y -w 0 -d /items/mcq/response.bytes "$WORK/r1.h5" | sed -n '/DATA {/,/^ *}/{p;/^ *}/q}' | sed '1d;$d' \
  | "$PY" -c 'import re, sys; sys.stdout.buffer.write(bytes(int(x) for x in re.findall(r"-?[0-9]+", sys.stdin.read())))' \
  | grep -qF -- "tally-loglik⟧[-2,-3.5,-2.5,-9]" || fail "the raw logliks are not kept"

# the summary: the per-task rows and the audit
grep -qE '^m-gen +all +2 +16 +14 +2 +3 +0 +0\.688 ' "$WORK/o1.txt" || { cat "$WORK/o1.txt"; fail "m-gen's overall row"; }
grep -qE '^m-ll +all +1 +8 +7 +1 +1 +0 +0\.125 .* 0\.250 \[' "$WORK/o1.txt" || { cat "$WORK/o1.txt"; fail "m-ll's overall row (acc 0.125, acc_norm 0.250)"; }
grep -qE '^all +vlmeval-heuristic +21 ' "$WORK/o1.txt" || fail "the mode audit"

# tally parse gives the run's cells
printf '%s\n' '{"item": {"id": "x", "question": "q", "choices": ["0", "90", "180", "45"], "answer": "90"}, "response": "The answer is 90"}' \
  | "$TALLY_BIN" parse --parser mcq-vlmeval-heuristic > "$WORK/p.jsonl"
grep -q '"status":"ambiguous","rule":"judge_needed","gold":"B"' "$WORK/p.jsonl" || { cat "$WORK/p.jsonl"; fail "parse mcq-vlmeval-heuristic"; }

# ---- the real inspect_ai logs: ARC-Easy by a Claude model, PubMedQA by gpt-4o-mini ----
for LOG in data_arc_sonnet.json data_pubmedqa_gpt4o_mini.json; do
  ARC="$TALLY_SHARED_DATA/harness-outputs/inspect/$LOG"
  [ -f "$ARC" ] || { echo "skipped: $ARC absent (fixture part passed)"; exit 77; }
  "$PY" - "$ARC" "$WORK" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))
with open(sys.argv[2] + "/arc_parse.jsonl", "w") as p, open(sys.argv[2] + "/arc_verdicts.txt", "w") as v:
    for s in log["samples"]:
        q = s["input"] if isinstance(s["input"], str) else "\n".join(str(m.get("content")) for m in s["input"])
        item = {"id": str(s["id"]), "question": q, "choices": s["choices"], "answer": s["target"]}
        out = s["output"]
        resp = out.get("completion")
        if resp is None:  # older logs: the first choice's message (a string or text parts)
            c = out["choices"][0]["message"]["content"]
            resp = c if isinstance(c, str) else "".join(x.get("text", "") for x in c if x.get("type") == "text")
        p.write(json.dumps({"item": item, "response": resp, "model": log["eval"]["model"]}) + "\n")
        sc = s["scores"]["choice"]
        v.write("%d %s\n" % (1 if sc["value"] == "C" else 0, sc["answer"]))
EOF
  "$TALLY_BIN" parse --parser mcq-inspect-choice --input "$WORK/arc_parse.jsonl" > "$WORK/arc_out.jsonl"
  "$PY" - "$WORK" "$LOG" <<'EOF'
import json, sys
w = sys.argv[1]
got = [json.loads(l) for l in open(w + "/arc_out.jsonl")]
want = [l.split() for l in open(w + "/arc_verdicts.txt")]
assert len(got) == len(want) > 0, (len(got), len(want))
agree = sum(1 for g, (c, a) in zip(got, want) if g["correct"] == int(c) and g["answer"] == a)
print("inspect %s: %d of %d samples agree with the log's C/I verdict and parsed letter" % (sys.argv[2], agree, len(want)))
sys.exit(0 if agree == len(want) else 1)
EOF
done

# ---- the real HELM run: MMLU philosophy, GPT-2, joint multiple choice ----
HELM="$TALLY_SHARED_DATA/harness-outputs/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
[ -f "$HELM/scenario_state.json" ] || { echo "skipped: $HELM absent (fixture and inspect parts passed)"; exit 77; }
"$PY" - "$HELM" "$WORK" <<'EOF'
import json, sys
ss = json.load(open(sys.argv[1] + "/scenario_state.json"))
em = {}
for p in json.load(open(sys.argv[1] + "/per_instance_stats.json")):
    for s in p["stats"]:
        if s["name"]["name"] == "exact_match":
            em[(p["instance_id"], p["train_trial_index"])] = int(s["mean"])
with open(sys.argv[2] + "/helm_parse.jsonl", "w") as p, open(sys.argv[2] + "/helm_verdicts.txt", "w") as v:
    for rs in ss["request_states"]:
        inst, om = rs["instance"], rs["output_mapping"]
        keys = sorted(om)
        right = [r["output"]["text"] for r in inst["references"] if "correct" in r["tags"]]
        item = {"id": "%s.%d" % (inst["id"], rs["train_trial_index"]), "question": inst["input"]["text"],
                "choices": [om[k] for k in keys], "answer": [k for k in keys if om[k] in right][0]}
        p.write(json.dumps({"item": item, "response": rs["result"]["completions"][0]["text"]}) + "\n")
        v.write("%d\n" % em[(inst["id"], rs["train_trial_index"])])
EOF
"$TALLY_BIN" parse --parser mcq-helm-mapping --input "$WORK/helm_parse.jsonl" > "$WORK/helm_out.jsonl"
"$PY" - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
got = [json.loads(l)["correct"] for l in open(w + "/helm_out.jsonl")]
want = [int(l) for l in open(w + "/helm_verdicts.txt")]
assert len(got) == len(want) > 0
agree = sum(g == x for g, x in zip(got, want))
print("HELM MMLU: %d of %d instances agree with the run's exact_match" % (agree, len(want)))
sys.exit(0 if agree == len(want) else 1)
EOF
echo "e2e mcq: 1 and 2 ranks identical; rules, bad lines, summary, parse, inspect ARC and HELM MMLU verdicts"
