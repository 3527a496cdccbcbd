#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets, tests/fuzz/corpus/<target>/, from the
project's own fixtures: demo/, jobs/ and the fixture strings of tests/unit/*.c. Never from
../shared. Files are named by the SHA-1 of their contents, as libFuzzer names them; run again
after a fixture changes (files are only added: remove the folder first for a clean set).

usage: python3 tests/fuzz/make_corpus.py"""
import hashlib
import json
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")

# the fixed items of fuzz_se_parse.c, by index
FIXED = ["spatialmap.tqa.2000.0", "spatialmap.tqa.2000.1", "spatialmap.tqa.2000.2",
         "mazenav.tqa.0.0", "mazenav.tqa.0.2", "spatialgrid.tqa.0.1",
         "spatialreal.tqa.sa_1001.0", "spatialmap.vqa.2003.1"]


def fixed_index(item_id):
    if item_id in FIXED:
        return FIXED.index(item_id)
    task, mode, _inst, qid = item_id.split(".")
    if task == "spatialmap":
        return 7 if (mode != "tqa" and qid == "1") else min(int(qid), 2)
    if task == "mazenav":
        return 4 if qid == "2" else 3
    if task == "spatialgrid":
        return 5
    return 6


def put(target, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def c_literals(src, start):
    """Decodes the C string literal(s) (adjacent ones concatenated) at src[start:]."""
    out = bytearray()
    i = start
    while True:
        while i < len(src) and src[i] in " \t\n":
            i += 1
        if i >= len(src) or src[i] != '"':
            return bytes(out), i
        i += 1
        while src[i] != '"':
            c = src[i]
            if c == "\\":
                e = src[i + 1]
                i += 2
                if e == "x":
                    m = re.match(r"[0-9a-fA-F]+", src[i:])
                    out.append(int(m.group(0), 16) & 0xFF)
                    i += len(m.group(0))
                elif e == "u":
                    out += chr(int(src[i:i + 4], 16)).encode()
                    i += 4
                elif e in "01234567":
                    m = re.match(r"[0-7]{1,3}", src[i - 1:])
                    out.append(int(m.group(0), 8) & 0xFF)
                    i += len(m.group(0)) - 1
                else:
                    out += {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "\\": b"\\",
                            "'": b"'", "?": b"?", "a": b"\a", "f": b"\f", "v": b"\v"}[e]
            else:
                out += c.encode()
                i += 1
        i += 1


def read(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


def parser_corpus():
    t = "fuzz_se_parse"
    items = {}
    for line in read("demo/spatialeval/items.jsonl").splitlines():
        items[json.loads(line)["id"]] = line
    seen = set()
    for line in read("demo/spatialeval/answers.jsonl").splitlines():
        a = json.loads(line)
        r = a.get("response")
        if not isinstance(r, str) or (a["id"], r) in seen:
            continue
        seen.add((a["id"], r))
        ctl = fixed_index(a["id"]) | (len(seen) % 4) << 4 | (64 if a.get("prompt_variant") == "letter" else 0)
        ctl |= 128 if a.get("prompt_variant") == "letter" else 0
        put(t, bytes([ctl]) + r.encode())
    for line in read("demo/spatialeval/reference_eval_output.jsonl").splitlines():
        a = json.loads(line)
        if a["id"] in items:  # the item itself, as a fuzzed item line
            put(t, bytes([8 | 64]) + items[a["id"]] + b"\n" + a["answer"].encode())
    # fixture responses of the unit tests
    strict = read("tests/unit/test_se_strict.c").decode()
    smap = {"DIR": 0, "OBJ": 1, "SUB": 1, "CNT": 2, "CNT10": 2, "YN": 4, "WORDS": 1, "TURNS": 3,
            "UNI": 6, "NEGW": 1, "NOOPT": 6}
    for m in re.finditer(r"\b(?:OK_|NO_)\((\w+),\s*", strict):
        s, _ = c_literals(strict, m.end())
        put(t, bytes([smap.get(m.group(1), 0)]) + s)
    pr3 = read("tests/unit/test_se_pr3.c").decode()
    pmap = {"I_MAP0": 0, "I_MAP1": 1, "I_MAZE2": 4, "I_COUNT": 2, "I_ACCENT": 6,
            "I_NOBLOCK": 6, "I_NINE": 3, "I_ODD": 5}
    for m in re.finditer(r"\{(I_\w+),\s*(P_\w+),\s*", pr3):
        s, _ = c_literals(pr3, m.end())
        prompt = {"P_NONE": 0, "P_REASON": 64, "P_REASON_LM": 64, "P_LETTER": 64 | 128}[m.group(2)]
        put(t, bytes([pmap.get(m.group(1), 0) | prompt]) + s)
    for m in re.finditer(r"\[(I_\w+)\]\s*=\s*", pr3):  # pr3's synthetic items, as item lines
        s, _ = c_literals(pr3, m.end())
        put(t, bytes([8 | 64]) + s + b"\nAnswer: B\nReason: it is.")
    legacy = read("tests/unit/test_se_legacy.c").decode()
    ids = dict(re.findall(r'#define (\w\d) "([^"]+)"', legacy))
    models = {"": 0, "claude": 1, "geminiv": 2, "gpt4o": 3}
    for m in re.finditer(r'\{(\w\d|"[^"]+"),\s*"[^"]*",\s*"[^"]*",\s*"([^"]*)",\s*', legacy):
        item_id = ids.get(m.group(1), m.group(1).strip('"'))
        s, _ = c_literals(legacy, m.end())
        model = next((v for k, v in models.items() if k and k in m.group(2).lower()), 0)
        put(t, bytes([fixed_index(item_id) | model << 4]) + s)
    # a think block, a long answer, an empty one
    put(t, b"\x00<think>Southeast? No, wait.</think>\nAnswer: C")
    put(t, b"\x00<think>never closed")
    put(t, b"\x00")
    put(t, b"\x02" + b"The answer is " + b"3, " * 300 + b"so B.")


def jsonl_corpus():
    t = "fuzz_jsonl"
    for rel in ("demo/spatialeval/answers_bad.jsonl", "demo/spatialeval/reference_eval_output.jsonl"):
        put(t, b"\x00" + read(rel))
    lines = read("demo/spatialeval/answers.jsonl").splitlines(keepends=True)
    put(t, b"\x00" + b"".join(lines[:6]))
    put(t, b"\x03" + b"".join(lines[:3]))
    items = read("demo/spatialeval/items.jsonl").splitlines(keepends=True)
    put(t, b"\x02" + b"".join(items[:2]))
    # test_inputs.c: malformed, blank, invalid UTF-8, too long, CRLF, NUL byte, no final \n
    put(t, b'\x02{"a":1}\n{"a":\n   \n"\xff\xfe"\n"' + b"x" * 120 + b'"\n{"a":2}\r\n{"a":\x00}\n[3]')
    put(t, b'\x04{"id":"a","id":"b"}\n{"r":"x\\u0000y"}\n{"o":{"k":1,"k":2}}\n{"\\u0000":1}\n')
    put(t, b'\x00{"s":"\\ud83d\\ude00 \\u00e9"}\n  \t\n[1,2,{"a":[null,true,false,1e308]}]\n')


def job_corpus():
    t = "fuzz_job"
    put(t, read("jobs/demo.json"))
    src = read("tests/unit/test_inputs.c").decode()
    body = src[src.index("static void test_job_validation"):]
    body = body[:body.index("for (size_t i")]
    for m in re.finditer(r"\{\s*(?=\")", body):
        s, _ = c_literals(body, m.end())
        put(t, s)
    put(t, b'{"output":"o.h5","benchmarks":[{"benchmark":"spatialeval","items":"i","items":"j",'
           b'"answers":"a"}],"limits":{"max_line":1024}}')
    put(t, b'{"output":"o\\u0000.h5","benchmarks":[]}')


def tabin_corpus():
    t = "fuzz_tabin"
    csv = read("demo/stats/vqa_judgments.csv").splitlines(keepends=True)
    put(t, b"".join(csv[:12]))
    put(t, b'a,b,"c ""q"""\r\n1,2,3\r\n"x\ny",4,5\r\n,,\r\n7,8,"9')
    put(t, b'h,m\n1,"2"x\n3,4"\n5,6,7\n8\n1e308,-inf\nnan,0x10\n')
    put(t, b"h\tm1\tm2\n1\t0.5\t2\n0\t\t3\n")
    put(t, b'{"h":1,"m":0.5,"g":"a"}\n{"h":0,"m":null,"g":"b"}\n{"h":true,"m":"2"}\n{"h":1,"h":2}\n')


def import_corpus():
    """fuzz_imp_file.c's targets: a control byte (bits 1-3: where the file goes) and a file of
    tests/fixtures/import, or a hand-written inspect_ai log (the fixtures hold .eval zips only)."""
    fx = "tests/fixtures/import/"
    oc = fx + "opencompass/"
    for ctl, rel in [(0, "predictions/qwen2-7b/mtbench101.json"), (2, "results/qwen2-7b_judged-by--gpt-4o/mtbench101.json"),
                     (4, "predictions/qwen2-7b/gsm8k_0.json"), (6, "predictions/qwen2-7b/gsm8k_1.json"),
                     (2, "scored/results/m1_judged-by--j1/mtbench101.json"), (1, "bad/predictions/m1/mtbench101.json")]:
        put("fuzz_imp_opencompass", bytes([ctl]) + read(oc + rel))
    vk = fx + "vlmevalkit/"
    for ctl, rel in [(0, "Qwen2-VL-7B/T20250101-120000/Qwen2-VL-7B_MMBench_DEV_EN.tsv"),
                     (6, "Qwen2-VL-7B/T20250101-120000/Qwen2-VL-7B_MMBench_DEV_EN_exact_matching_result.tsv"),
                     (2, "llava_v1.5_7b/llava_v1.5_7b_AI2D_TEST.csv"), (4, "InternVL2-8B/InternVL2-8B_MMStar.json"),
                     (4, "InternVL2-8B/InternVL2-8B_SEEDBench_IMG.json"), (8, "GPT4o/GPT4o_SpatialEval.tsv"),
                     (0, "demo-vlm/T20250301-101010/demo-vlm_DemoVQA.tsv")]:
        put("fuzz_imp_vlmevalkit", bytes([ctl]) + read(vk + rel))
    for d in ["mmlu-subject=fixture,method=multiple_choice_joint,model=org_fixture-model", "no_stats", "dup_key",
              "cut_short"]:
        parts = [read(fx + "helm/" + d + "/" + n) if os.path.exists(os.path.join(ROOT, fx, "helm", d, n)) else None
                 for n in ("scenario_state.json", "run_spec.json", "per_instance_stats.json")]
        put("fuzz_imp_helm", b"\0" + b"\0".join(p for p in parts if p is not None))
    sample = {"id": 1, "epoch": 1, "input": "Which? A) x B) y", "choices": ["x", "y"], "target": "A",
              "output": {"completion": "ANSWER: A"}, "scores": {"choice": {"value": "C", "answer": "A"}},
              "metadata": {"k": "v"}}
    logs = [
        {"version": 2, "status": "success", "eval": {"task": "arc", "model": "m"}, "plan": {}, "results": {},
         "stats": {}, "samples": [sample]},
        {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
         "samples": [dict(sample, id="q2", epoch=2, input=[{"role": "user", "content": "attachment://abc"}],
                          attachments={"abc": "the long text"}, target=["A", "B"],
                          output={"choices": [{"message": {"role": "assistant",
                                                           "content": [{"type": "text", "text": "A"}]}}]},
                          scores={"model_graded_qa": {"value": "P", "explanation": "half"}, "other": {"value": 1}}),
                     dict(sample, id=3, error={"message": "timeout"}, output={}),
                     dict(sample, id=4, attachments={}, input="attachment://missing")]},
        {"version": 2, "status": "started", "eval": {"task": "t", "model": "m"}, "results": {"total_samples": 1000}},
        {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": []},
    ]
    for log in logs:
        put("fuzz_imp_inspect", b"\0" + json.dumps(log, indent=2).encode())


def gen_corpus():
    """fuzz_gen.c: a control byte (the exact_match options), the gold, a newline, the reply."""
    for ctl, gold, reply in [
            (0, "3", "so the answer is $\\boxed{3}$."), (0, "x^{2}+\\frac{1}{2}", "\\boxed{x^{2}+\\dfrac{1}{2}}"),
            (0, "90", "The answer is 0"), (0, "3", "\\boxed{3} and then \\boxed{4"),
            (0, "12", "Final Answer: 12\\text{ cm}^2"), (0, "(1,2)", "\\boxed{\\left( 1, 2 \\right)}"),
            (1, "abc", "ABC"), (2, "3", "3."), (4, "a2", "a1"), (8, "1000", "so\n#### $1,000."),
            (16, "ab", "axb"), (31, "Monday", "\\boxed{\\text{Monday}} and the answer is: 5.")]:
        put("fuzz_gen", bytes([ctl]) + gold.encode() + b"\n" + reply.encode())


if __name__ == "__main__":
    parser_corpus()
    jsonl_corpus()
    job_corpus()
    tabin_corpus()
    import_corpus()
    gen_corpus()
    for d in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, d))
        size = sum(os.path.getsize(os.path.join(OUT, d, f)) for f in files)
        print(f"{d}: {len(files)} files, {size} bytes")
