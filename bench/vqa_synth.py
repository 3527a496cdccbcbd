#!/usr/bin/python3
"""Writes a synthetic VQA v2-shaped set for bench/vqa_load.sh.

usage: bench/vqa_synth.py SAMPLE_DIR OUT_DIR [N] [SEED]

SAMPLE_DIR holds the real 589-question sample in the official format
(vqav2_smallval_questions.json, vqav2_smallval_annotations.json). Written to OUT_DIR:
  questions.json    {"info", "license", ..., "questions": [{"image_id", "question", "question_id"}]}
  annotations.json  {"info", "license", ..., "annotations": [{"question_id", "image_id",
                     "question_type", "answer_type",
                     "answers": [{"answer", "answer_confidence", "answer_id"} x 10]}]}
                    (one line each, as the official files are)
  answers.jsonl     the replay file of one model: {"id": "vqa:QID", "model", "seed", "response"}
  results.json      the same predictions in the official results form, for `tally score vqa`
  job.json          a `tally run` job over these files (no studies)

Question i copies the question text, types and answers of a real question drawn at random;
with some probability each of its 10 answers is replaced by another word of the sample's answer
vocabulary or rewritten (capitals, a trailing period, a number word, a contraction without its
apostrophe, an article), so the official normalization has punctuation, numbers, articles and
contractions to do. The prediction is one of the references or of the vocabulary, rewritten the
same way. Everything comes from numpy's Generator(PCG64(SEED)): the same N and SEED give the
same bytes.
"""
import json
import os
import sys

import numpy as np

NUMBER_WORDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five",
                "6": "six", "7": "seven", "8": "eight", "9": "nine", "10": "ten"}
# phrases whose apostrophe-less spelling is a key of the official contractions table
CONTRACTED = ["dont know", "cant tell", "its not", "isnt", "doesnt", "wont", "thats it",
              "im not sure", "theyre", "whats that", "yall", "shouldnt", "didnt", "hes"]


def rewrite(rng, a):
    """One of a few spellings of answer a that the official normalization maps back (or not)."""
    r = rng.random()
    if r < 0.55:
        return a
    if r < 0.65:
        return a.capitalize()
    if r < 0.73:
        return a + "."
    if r < 0.80 and a in NUMBER_WORDS:
        return NUMBER_WORDS[a]
    if r < 0.86:
        return "the " + a
    if r < 0.90:
        return CONTRACTED[int(rng.integers(len(CONTRACTED)))]
    if r < 0.94:
        return a + "!"
    if r < 0.97:
        return " " + a + " "
    return a.replace(" ", ", ")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 214354
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rng = np.random.Generator(np.random.PCG64(seed))
    with open(os.path.join(src, "vqav2_smallval_annotations.json"), encoding="utf-8") as f:
        ann = json.load(f)
    with open(os.path.join(src, "vqav2_smallval_questions.json"), encoding="utf-8") as f:
        qs = json.load(f)
    qtext = {q["question_id"]: q["question"] for q in qs["questions"]}
    real = ann["annotations"]
    vocab = sorted({a["answer"] for x in real for a in x["answers"]})
    os.makedirs(out, exist_ok=True)
    head = {k: ann[k] for k in ("info", "license", "data_type", "data_subtype")}
    pick = rng.integers(len(real), size=n)
    questions, annotations, preds = [], [], []
    for i in range(n):
        t = real[int(pick[i])]
        image_id = 100000 + i // 3
        qid = image_id * 1000 + i % 3
        answers = []
        for k, a in enumerate(t["answers"]):
            text = a["answer"]
            if rng.random() < 0.15:
                text = vocab[int(rng.integers(len(vocab)))]
            answers.append({"answer": rewrite(rng, text), "answer_confidence": a["answer_confidence"],
                            "answer_id": k + 1})
        annotations.append({"answer_type": t["answer_type"], "answers": answers, "image_id": image_id,
                            "question_id": qid,
                            "question_type": t["question_type"]})
        questions.append({"image_id": image_id, "question": qtext.get(t["question_id"], "What is it?"),
                          "question_id": qid})
        if rng.random() < 0.7:
            p = t["answers"][int(rng.integers(len(t["answers"])))]["answer"]
        else:
            p = vocab[int(rng.integers(len(vocab)))]
        preds.append((qid, rewrite(rng, p)))
    dump = dict(separators=(",", ":"), ensure_ascii=False)
    with open(os.path.join(out, "questions.json"), "w", encoding="utf-8") as f:
        json.dump(dict(head, task_type="Open-Ended", questions=questions), f, **dump)
    with open(os.path.join(out, "annotations.json"), "w", encoding="utf-8") as f:
        json.dump(dict(head, annotations=annotations), f, **dump)
    with open(os.path.join(out, "answers.jsonl"), "w", encoding="utf-8") as f:
        for qid, p in preds:
            f.write(json.dumps({"id": "vqa:%d" % qid, "model": "synth-vlm", "seed": 0, "response": p},
                               ensure_ascii=False) + "\n")
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump([{"question_id": qid, "answer": p} for qid, p in preds], f, **dump)
    job = {"name": "vqa-load", "output": "vqa-load.h5",
           "benchmarks": [{"benchmark": "vqa", "dataset": "vqa",
                           "questions": os.path.join(out, "questions.json"),
                           "annotations": os.path.join(out, "annotations.json"),
                           "answers": os.path.join(out, "answers.jsonl")}]}
    with open(os.path.join(out, "job.json"), "w", encoding="utf-8") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
