"""`tally parse` on every real answer in ../shared/data, the way a user would run it, checked
against the reference implementations:
  legacy - the original evaluator's own extraction and verdict, recorded in
           vlm_outputs_313.jsonl (`extracted`, `substring`), and the Python oracle
           tools/oracle/legacy_oracle.py (Python `re` on the original rules) for all answers;
  pr3    - the Python oracle tools/oracle/pr3_oracle.py (the published regexes run by Python
           `re`), with the options read from the prompt of each variant;
  strict - marks none of the seed complaints correct, where legacy does.
usage: real_parse_check.py TALLY_BIN SRC_DIR SHARED_DATA_DIR"""
import json
import subprocess
import sys

tally, src, data = sys.argv[1:4]
SE = data + "/spatialeval/"
REASON = ("\nFirst, provide a concise answer in one sentence. Then, elaborate on the reasoning "
          "behind your answer in a detailed, step-by-step explanation.")
LETTER = ("\nFirst, provide a single letter response that selects the option which best answers "
          "the question. Then, elaborate on the reasoning behind your answer in a detailed, "
          "step-by-step explanation. Please strictly format the final response as follows -- "
          "Answer: <A single letter option that best answers the question>.\nReason: <reasoning "
          "behind the answer>\nRead the question again:\n")

items = {}
for line in open(SE + "spatialmap_tqa.jsonl"):
    it = json.loads(line)
    items[it["id"]] = it


def item_for(sample_id, oracle_answer, oracle_option):
    tid = sample_id.replace(".vqa.", ".tqa.")
    if tid in items:
        return items[tid]
    # the one Spatial-Grid line: its rows are not in the data; same oracle, options written here
    opts = ["3", "4", "5", "6"]
    text = ("How many blocks contain dog? Available options:\n" +
            "\n".join("%s. %s" % (chr(65 + i), o) for i, o in enumerate(opts)) + ".")
    return {"id": tid, "text": text, "oracle_answer": oracle_answer,
            "oracle_option": oracle_option,
            "oracle_full_answer": "%s. %s" % (oracle_option, oracle_answer)}


inputs, ref313 = [], []
for line in open(SE + "outputs/vlm_outputs_313.jsonl"):
    d = json.loads(line)
    inputs.append({"item": item_for(d["sample_id"], d["oracle_answer"], d["oracle_option"]),
                   "response": d["raw_answer"], "model": d["model"]})
    ref313.append(d)
for line in open(SE + "outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl"):
    d = json.loads(line)
    inputs.append({"item": items[d["id"]], "response": d["response"],
                   "model": "deepseek-r1-distill-qwen-1.5b"})


def run(cmd, lines):
    text = "".join(json.dumps(x) + "\n" for x in lines)
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (cmd, p.returncode, p.stderr[-2000:]))
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(out) == len(lines), (cmd, len(out), len(lines))
    return out


def tparse(mode, lines):
    return run([tally, "parse", "--parser", "spatialeval-" + mode], lines)


py = sys.executable
failures = 0

# legacy: against the original evaluator's recorded extraction and verdict
leg = tparse("legacy", inputs)
for i, d in enumerate(ref313):
    got = leg[i]
    want = d["extracted"]
    if (got["answer"] or "") != want or got["correct"] != int(d["substring"]):
        failures += 1
        print("legacy mismatch %s (%s): got %r/%d want %r/%d" % (
            d["sample_id"], d["model"], got["answer"], got["correct"], want, d["substring"]))
print("legacy vs the original evaluator's recorded output: %d/%d agree" % (
    len(ref313) - failures, len(ref313)))
oracle = run([py, src + "/tools/oracle/legacy_oracle.py"], inputs)
bad = sum(1 for a, b in zip(leg, oracle)
          if (a["answer"] or "") != (b["answer"] or "") or a["correct"] != b["correct"])
print("legacy vs Python oracle: %d/%d agree" % (len(inputs) - bad, len(inputs)))
failures += bad

# pr3: options from the prompt; no prompt, reason prompt (VLM and LM style), letter prompt
bad = total = 0
for variant in [None, "reason", "reason_lm", "letter"]:
    lines = []
    for x in inputs:
        y = dict(x)
        t = x["item"]["text"]
        if variant == "reason":
            y["prompt"] = t + REASON
        elif variant == "reason_lm":
            y["prompt"] = t + " " + REASON[1:]
        elif variant == "letter":
            y["prompt"] = t + LETTER + t
        lines.append(y)
    a, b = tparse("pr3", lines), run([py, src + "/tools/oracle/pr3_oracle.py"], lines)
    total += len(lines)
    for x, y, inp in zip(a, b, lines):
        if x["answer"] != y["answer"] or x["correct"] != y["correct"]:
            bad += 1
            print("pr3 mismatch (%s) %s: tally %r oracle %r" % (variant, inp["item"]["id"],
                                                               x["answer"], y["answer"]))
print("pr3 vs Python oracle (4 prompt forms): %d/%d agree" % (total - bad, total))
failures += bad

# strict: none of the seed complaints is correct; legacy marks them correct.
yes_no = {"id": "mazenav.tqa.3.2", "text": "Is the exit (E) directly below the starting point (S)? "
          "Available options:\nA. Yes\nB. No.", "oracle_answer": "No", "oracle_option": "B",
          "oracle_full_answer": "B. No"}
count = {"id": "spatialmap.tqa.2001.2", "text": "How many objects are in the Southeast of X? "
         "Available options:\nA. 3\nB. 0\nC. 90\nD. 1.", "oracle_answer": "0",
         "oracle_option": "B", "oracle_full_answer": "B. 0"}
complaints = [
    {"item": yes_no, "response": "None of the paths reach the exit.", "model": "m"},
    {"item": yes_no, "response": "I cannot determine where the exit is.", "model": "m"},
    {"item": count, "response": "90", "model": "m"},
    {"item": count, "response": "There are 90 objects in the Southeast of X.", "model": "m"},
    {"item": count, "response": "There are 10 objects in the Southeast.", "model": "m"},
]
st, lg = tparse("strict", complaints), tparse("legacy", complaints)
for c, s, l in zip(complaints, st, lg):
    print("complaint %-45r strict=%d (%s) legacy=%d" % (c["response"][:45], s["correct"], s["status"],
                                                      l["correct"]))
    if s["correct"]:
        failures += 1
        print("FAIL: strict marks a seed complaint correct")
assert sum(l["correct"] for l in lg) >= 3, "legacy should show the inflation on these"

strict_real = tparse("strict", inputs)
n_ok = sum(1 for x in strict_real if x["status"] == "ok")
n_cor = sum(x["correct"] for x in strict_real)
n_leg = sum(x["correct"] for x in leg)
print("real answers: strict correct %d, ok %d; legacy correct %d; of %d" % (n_cor, n_ok, n_leg, len(inputs)))
if failures:
    sys.exit("FAIL: %d mismatches" % failures)
print("real_parse_check: ok")
