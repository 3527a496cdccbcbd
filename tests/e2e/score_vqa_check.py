"""Helper of tests/e2e/test_score_vqa.sh (tally score vqa).

  score_vqa_check.py make DATA_DIR OUT_DIR
      writes OUT_DIR/{first,majority,yes,upper,mixed}.json (results files built from the smallval
      annotations as ../shared/data/PROVENANCE.md describes, plus a mixed set of our own) and
      OUT_DIR/items.jsonl (the same questions in tally's JSONL item form)
  score_vqa_check.py reference GOT.json REFERENCE.json SET
      GOT's overall, perAnswerType and the first ten perQuestion values equal the reference's SET
  score_vqa_check.py model ANNOTATIONS RESULTS VERSION GOT.json
      GOT equals, key order included, what a model of the evaluator gives: our own Python
      rendering of docs/VQA.md for the three versions (written from the spec, not copied)
"""
import collections
import json
import re
import sys

PUNCT = [';', '/', '[', ']', '"', '{', '}', '(', ')', '=', '+', '\\', '_', '-', '>', '<', '@',
         '`', ',', '?', '!']
DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
LONE_PERIOD = re.compile(r"\.(?!\d)")
NUMBERS = {'none': '0', 'zero': '0', 'one': '1', 'two': '2', 'three': '3', 'four': '4',
           'five': '5', 'six': '6', 'seven': '7', 'eight': '8', 'nine': '9', 'ten': '10'}
ARTICLES = {'a', 'an', 'the'}
# the contractions a lower-cased word can hit (the four keys with capitals never match)
CONTRACTIONS = dict(p.split('=') for p in (
    "aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't couldn'tve=couldn't've "
    "couldnt've=couldn't've didnt=didn't doesnt=doesn't dont=don't hadnt=hadn't hadnt've=hadn't've "
    "hadn'tve=hadn't've hasnt=hasn't havent=haven't hed=he'd hed've=he'd've he'dve=he'd've hes=he's "
    "howd=how'd howll=how'll hows=how's isnt=isn't itd=it'd itd've=it'd've it'dve=it'd've itll=it'll "
    "let's=let's maam=ma'am mightnt=mightn't mightnt've=mightn't've mightn'tve=mightn't've "
    "mightve=might've mustnt=mustn't mustve=must've neednt=needn't notve=not've oclock=o'clock "
    "oughtnt=oughtn't ow's'at='ow's'at 'ows'at='ow's'at 'ow'sat='ow's'at shant=shan't "
    "shed've=she'd've she'dve=she'd've she's=she's shouldve=should've shouldnt=shouldn't "
    "shouldnt've=shouldn't've shouldn'tve=shouldn't've somebody'd=somebodyd "
    "somebodyd've=somebody'd've somebody'dve=somebody'd've somebodyll=somebody'll "
    "somebodys=somebody's someoned=someone'd someoned've=someone'd've someone'dve=someone'd've "
    "someonell=someone'll someones=someone's somethingd=something'd somethingd've=something'd've "
    "something'dve=something'd've somethingll=something'll thats=that's thered=there'd "
    "thered've=there'd've there'dve=there'd've therere=there're theres=there's theyd=they'd "
    "theyd've=they'd've they'dve=they'd've theyll=they'll theyre=they're theyve=they've "
    "twas='twas wasnt=wasn't wed've=we'd've we'dve=we'd've weve=we've werent=weren't "
    "whatll=what'll whatre=what're whats=what's whatve=what've whens=when's whered=where'd "
    "wheres=where's whereve=where've whod=who'd whod've=who'd've who'dve=who'd've wholl=who'll "
    "whos=who's whove=who've whyll=why'll whyre=why're whys=why's wont=won't wouldve=would've "
    "wouldnt=wouldn't wouldnt've=wouldn't've wouldn'tve=wouldn't've yall=y'all yall'll=y'all'll "
    "y'allll=y'all'll yall'd've=y'all'd've y'alld've=y'all'd've y'all'dve=y'all'd've youd=you'd "
    "youd've=you'd've you'dve=you'd've youll=you'll youre=you're youve=you've").split())


def punctuation(text):
    drop_all = DIGIT_COMMA_DIGIT.search(text) is not None
    out = []
    for ch in text:
        if ch in PUNCT:
            if drop_all or (ch + ' ') in text or (' ' + ch) in text:
                continue
            out.append(' ')
        else:
            out.append(ch)
    return LONE_PERIOD.sub('', ''.join(out), count=32)


def digit_article(text):
    words = [NUMBERS.get(w, w) for w in text.lower().split()]
    return ' '.join(CONTRACTIONS.get(w, w) for w in words if w not in ARTICLES)


def prepare(text):
    return text.replace('\n', ' ').replace('\t', ' ').strip()


def compared(pred, refs, version):
    """The strings each version compares."""
    if version == '2017':
        refs = [punctuation(r) for r in refs] if len(set(refs)) > 1 else list(refs)
        return digit_article(punctuation(prepare(pred))), refs
    pred, refs = prepare(pred), [prepare(r) for r in refs]
    if version == 'normalized' or len(set(refs)) > 1:
        return digit_article(punctuation(pred)), [digit_article(punctuation(r)) for r in refs]
    return pred, refs


def accuracy(pred, refs, version):
    p, rs = compared(pred, refs, version)
    k = sum(r == p for r in rs)
    views = [min(1, float(k - (r == p)) / 3) for r in rs]
    return float(sum(views)) / len(views)


def model(annotations, results, version):
    anns = json.load(open(annotations))['annotations']
    preds = {r['question_id']: r['answer'] for r in json.load(open(results))}
    acc_all, by_q, by_a, per_q = [], collections.defaultdict(list), collections.defaultdict(list), {}
    for a in anns:
        if a['question_id'] not in preds:
            continue
        acc = accuracy(preds[a['question_id']], [x['answer'] for x in a['answers']], version)
        acc_all.append(acc)
        by_q[a['question_type']].append(acc)
        by_a[a['answer_type']].append(acc)
        per_q[str(a['question_id'])] = round(100 * acc, 2)

    def mean(v):
        return round(100 * float(sum(v)) / len(v), 2)

    return {'overall': mean(acc_all), 'perQuestionType': {k: mean(v) for k, v in by_q.items()},
            'perAnswerType': {k: mean(v) for k, v in by_a.items()}, 'perQuestion': per_q}


def majority(answers):
    counts = collections.Counter(answers)
    top = max(counts.values())
    return next(a for a in answers if counts[a] == top)


def mixed(a):
    """Ours: case, punctuation, blanks, articles, number words and contractions mixed in."""
    ans = a['answers'][-1]['answer'].title()
    return ['The %s!' % ans, '  %s\n' % ans, ans + '.', 'a ' + ans, ans + ',', 'none',
            'Dont know'][a['question_id'] % 7]


def make(data, out):
    anns = json.load(open(data + '/vqav2_smallval_annotations.json'))['annotations']
    ques = {q['question_id']: q['question']
            for q in json.load(open(data + '/vqav2_smallval_questions.json'))['questions']}
    sets = {
        'first': lambda a: a['answers'][0]['answer'],
        'majority': lambda a: majority([x['answer'] for x in a['answers']]),
        'yes': lambda a: 'yes',
        'upper': lambda a: a['answers'][0]['answer'].upper() + '.',
        'mixed': mixed,
    }
    for name, f in sets.items():
        with open('%s/%s.json' % (out, name), 'w') as fh:
            json.dump([{'question_id': a['question_id'], 'answer': f(a)} for a in anns], fh)
    with open(out + '/items.jsonl', 'w') as fh:
        for a in anns:
            fh.write(json.dumps({'id': a['question_id'], 'question': ques[a['question_id']],
                                 'answers': [x['answer'] for x in a['answers']],
                                 'question_type': a['question_type'],
                                 'answer_type': a['answer_type']}) + '\n')


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def main():
    cmd = sys.argv[1]
    if cmd == 'make':
        make(sys.argv[2], sys.argv[3])
    elif cmd == 'reference':
        got, ref = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))[sys.argv[4]]
        if got['overall'] != ref['overall']:
            fail('%s: overall %r, reference %r' % (sys.argv[4], got['overall'], ref['overall']))
        if got['perAnswerType'] != ref['perAnswerType']:
            fail('%s: perAnswerType %r, reference %r' % (sys.argv[4], got['perAnswerType'], ref['perAnswerType']))
        for q, v in ref['first10_perQuestion'].items():
            if got['perQuestion'][q] != v:
                fail('%s: perQuestion %s %r, reference %r' % (sys.argv[4], q, got['perQuestion'][q], v))
        if len(got['perQuestion']) != 589:
            fail('%s: %d perQuestion values' % (sys.argv[4], len(got['perQuestion'])))
    elif cmd == 'model':
        want = model(sys.argv[2], sys.argv[3], sys.argv[4])
        got = json.load(open(sys.argv[5]))
        if json.dumps(got) != json.dumps(want):
            for key in want:
                if json.dumps(got.get(key)) != json.dumps(want[key]):
                    fail('%s %s: %s differs' % (sys.argv[3], sys.argv[4], key))
            fail('%s %s: the keys differ' % (sys.argv[3], sys.argv[4]))
    else:
        fail('unknown command ' + cmd)


if __name__ == '__main__':
    main()
