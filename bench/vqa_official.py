#!/usr/bin/python3
"""The official VQA evaluator's algorithm, in Python 3, as the reference `tally score vqa` is
timed against (issue 34, item 5).

The official code (GT-Vision-Lab/VQA, PythonEvaluationTools/vqaEvaluation/vqaEval.py @ a013f00,
Python 2) is not in ../shared, so this file does what it does, step for step, as
../shared/spec/vqa-lave-statistics.md section 1 describes it (read and executed there): the whole
annotations and questions files loaded with `json.load` and indexed by question id; the results
checked to cover exactly the annotated questions; then one Python loop over the questions doing,
per question, the answer clean-up, processPunctuation and processDigitArticle on the 10 human
answers and the prediction (only when the answers differ), the leave-one-out min(1, #/3) average,
and the per-type lists; round(100 x mean, 2) at the end. The punctuation, number, article and
contraction tables are the spec's verbatim data. It does not print the official progress bar.

Two modes:
  vqa_official.py --check DATA_VQA
      compares this code with the outputs of the official code itself, kept in
      DATA_VQA/vqa_eval_vectors.json (43 normalizations, 18 accuracies, their mean) and
      DATA_VQA/vqa_eval_smallval_results.json (the 589-question sample, 4 prediction sets:
      overall, per answer type, the first 10 questions); exit 1 on any difference.
  vqa_official.py ANNOTATIONS QUESTIONS RESULTS OUT.json
      evaluates and writes {"overall", "perQuestionType", "perAnswerType", "perQuestion"} (the
      layout `tally score vqa` prints; perQuestion keys are the question ids as strings).
"""
import json
import re
import sys

PUNCT = [';', r"/", '[', ']', '"', '{', '}', '(', ')', '=', '+', '\\', '_', '-', '>', '<', '@',
         '`', ',', '?', '!']
COMMA_STRIP = re.compile(r"(\d)(,)(\d)")
PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")  # the official lookahead typo, kept
MANUAL_MAP = {'none': '0', 'zero': '0', 'one': '1', 'two': '2', 'three': '3', 'four': '4',
              'five': '5', 'six': '6', 'seven': '7', 'eight': '8', 'nine': '9', 'ten': '10'}
ARTICLES = ['a', 'an', 'the']
CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've",
    "couldnt": "couldn't", "couldn'tve": "couldn't've", "couldnt've": "couldn't've",
    "didnt": "didn't", "doesnt": "doesn't", "dont": "don't", "hadnt": "hadn't",
    "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't", "havent": "haven't",
    "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd",
    "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm",
    "Ive": "I've", "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've",
    "itll": "it'll", "let's": "let's", "maam": "ma'am", "mightnt": "mightn't",
    "mightnt've": "mightn't've", "mightn'tve": "mightn't've", "mightve": "might've",
    "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't", "notve": "not've",
    "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at",
    "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've", "she'dve": "she'd've",
    "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've",
    "somebodyll": "somebody'll", "somebodys": "somebody's", "someoned": "someone'd",
    "someoned've": "someone'd've", "someone'dve": "someone'd've", "someonell": "someone'll",
    "someones": "someone's", "somethingd": "something'd", "somethingd've": "something'd've",
    "something'dve": "something'd've", "somethingll": "something'll", "thats": "that's",
    "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've",
    "therere": "there're", "theres": "there's", "theyd": "they'd", "theyd've": "they'd've",
    "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're", "theyve": "they've",
    "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've",
    "weve": "we've", "werent": "weren't", "whatll": "what'll", "whatre": "what're",
    "whats": "what's", "whatve": "what've", "whens": "when's", "whered": "where'd",
    "wheres": "where's", "whereve": "where've", "whod": "who'd", "whod've": "who'd've",
    "who'dve": "who'd've", "wholl": "who'll", "whos": "who's", "whove": "who've",
    "whyll": "why'll", "whyre": "why're", "whys": "why's", "wont": "won't",
    "wouldve": "would've", "wouldnt": "wouldn't", "wouldnt've": "wouldn't've",
    "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've",
    "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've",
    "youll": "you'll", "youre": "you're", "youve": "you've"}
assert len(CONTRACTIONS) == 120


def process_punctuation(in_text):
    # the conditions read the original text, the replacements the running one (spec 1.2)
    out = in_text
    for p in PUNCT:
        if (p + ' ' in in_text or ' ' + p in in_text) or COMMA_STRIP.search(in_text) is not None:
            out = out.replace(p, '')
        else:
            out = out.replace(p, ' ')
    return PERIOD_STRIP.sub("", out, re.UNICODE)  # the third argument is count = 32, as there


def process_digit_article(in_text):
    words = []
    for word in in_text.lower().split():
        word = MANUAL_MAP.setdefault(word, word)
        if word not in ARTICLES:
            words.append(word)
    for i, word in enumerate(words):
        if word in CONTRACTIONS:
            words[i] = CONTRACTIONS[word]
    return ' '.join(words)


def clean(s):
    return s.replace('\n', ' ').replace('\t', ' ').strip()


def question_accuracy(answers, pred):
    """answers: the question's answer dicts (changed in place, as the official code does);
    pred: the raw prediction. Returns the unrounded accuracy."""
    for a in answers:
        a['answer'] = clean(a['answer'])
    res = clean(pred)
    if len(set(a['answer'] for a in answers)) > 1:
        for a in answers:
            a['answer'] = process_digit_article(process_punctuation(a['answer']))
        res = process_digit_article(process_punctuation(res))
    accs = []
    for gt in answers:
        others = [o for o in answers if o is not gt]
        accs.append(min(1, float(len([o for o in others if o['answer'] == res])) / 3))
    return float(sum(accs)) / len(accs)


def evaluate(ann_path, ques_path, res_path):
    with open(ann_path) as f:
        ann = json.load(f)
    with open(ques_path) as f:
        ques = json.load(f)
    qa = {a['question_id']: a for a in ann['annotations']}
    qqa = {q['question_id']: q for q in ques['questions']}
    assert set(qa) == set(qqa), 'questions and annotations name different questions'
    with open(res_path) as f:
        results = json.load(f)
    res = {}
    for r in results:
        res[r['question_id']] = r
    assert set(res) == set(qa), 'the results do not cover exactly the annotated questions'
    acc_qa, per_q, by_qtype, by_atype = [], {}, {}, {}
    for qid in [a['question_id'] for a in ann['annotations']]:
        gt = qa[qid]
        acc = question_accuracy(gt['answers'], res[qid]['answer'])
        acc_qa.append(acc)
        by_qtype.setdefault(gt['question_type'], []).append(acc)
        by_atype.setdefault(gt['answer_type'], []).append(acc)
        per_q[str(qid)] = round(100 * acc, 2)
    return {
        'overall': round(100 * float(sum(acc_qa)) / len(acc_qa), 2),
        'perQuestionType': {k: round(100 * float(sum(v)) / len(v), 2) for k, v in by_qtype.items()},
        'perAnswerType': {k: round(100 * float(sum(v)) / len(v), 2) for k, v in by_atype.items()},
        'perQuestion': per_q,
    }


def check(data):
    bad = 0
    with open(data + '/vqa_eval_vectors.json') as f:
        vec = json.load(f)
    for p in vec['normalization_probes']:
        got_p = process_punctuation(p['input'])
        got_n = process_digit_article(got_p)
        if got_p != p['after_punct'] or got_n != p['normalized']:
            print('probe %r: %r %r, the official code %r %r' % (p['input'], got_p, got_n,
                                                                 p['after_punct'], p['normalized']))
            bad += 1
    accs = []
    for c in vec['accuracy_cases']:
        acc = question_accuracy([{'answer': a} for a in c['answers']], c['prediction'])
        accs.append(acc)
        if round(100 * acc, 2) != c['official_acc_percent_rounded2']:
            print('case %r: %r, the official code %r' % (c['prediction'], round(100 * acc, 2),
                                                         c['official_acc_percent_rounded2']))
            bad += 1
    if round(100 * sum(accs) / len(accs), 2) != vec['overall']:
        print('mean of the cases: %r, the official code %r' % (round(100 * sum(accs) / len(accs), 2),
                                                                vec['overall']))
        bad += 1
    with open(data + '/vqa_eval_smallval_results.json') as f:
        want = json.load(f)
    with open(data + '/vqav2_smallval_annotations.json') as f:
        anns = json.load(f)['annotations']

    def first(a):
        return a['answers'][0]['answer']

    def majority(a):  # the most frequent raw answer, the first one among equals
        counts = {}
        for x in a['answers']:
            counts[x['answer']] = counts.get(x['answer'], 0) + 1
        top = max(counts.values())
        return next(x['answer'] for x in a['answers'] if counts[x['answer']] == top)

    preds = {'pred_first_annotator_answer': first,
             'pred_majority_raw_answer_first_max': majority,
             'pred_constant_yes': lambda a: 'yes',
             'pred_first_answer_uppercased_with_period': lambda a: first(a).upper() + '.'}
    for name, fn in preds.items():
        a_fresh = json.loads(json.dumps(anns))
        by_a, all_, per_q = {}, [], {}
        for a in a_fresh:
            acc = question_accuracy(a['answers'], fn(a))
            all_.append(acc)
            by_a.setdefault(a['answer_type'], []).append(acc)
            per_q[str(a['question_id'])] = round(100 * acc, 2)
        got = {'overall': round(100 * sum(all_) / len(all_), 2),
               'perAnswerType': {k: round(100 * sum(v) / len(v), 2) for k, v in by_a.items()}}
        w = want[name]
        if got['overall'] != w['overall'] or got['perAnswerType'] != w['perAnswerType'] or \
                any(per_q[k] != v for k, v in w['first10_perQuestion'].items()):
            print('%s: %r, the official code %r' % (name, got, w))
            bad += 1
    n = len(vec['normalization_probes']) + len(vec['accuracy_cases']) + 1 + len(preds)
    print('vqa_official.py against the official code\'s outputs: %d of %d checks equal' % (n - bad, n))
    return 1 if bad else 0


def main(argv):
    if len(argv) == 3 and argv[1] == '--check':
        return check(argv[2])
    if len(argv) != 5:
        print(__doc__.strip().split('\n\n')[-1], file=sys.stderr)
        return 2
    out = evaluate(argv[1], argv[2], argv[3])
    with open(argv[4], 'w') as f:
        json.dump(out, f)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
