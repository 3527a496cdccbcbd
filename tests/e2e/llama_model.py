#!/usr/bin/python3
"""Writes a tiny random-weight llama model (GGUF, F32, 0.95 MB, 985 tokens) for the llama-server tests.

    /usr/bin/python3 tests/e2e/llama_model.py OUT.gguf [GGUF_PY_DIR]

GGUF_PY_DIR: llama.cpp's gguf-py (default: <repo>/build-llama/src/gguf-py, made by
tools/llama-build.sh). Needs numpy (Debian's python3-numpy) and yaml (python3-yaml, imported by
gguf-py); `sentencepiece`, which gguf-py imports but nothing here calls, is stubbed when absent.

The model (the recipe of ../shared/spec/real-servers.md):
  - architecture llama: 2 layers, embedding 64, 4 heads (4 KV heads), feed-forward 192,
    context 4096, RMS-norm eps 1e-5, weights N(0, 0.02) drawn from numpy's default_rng(SEED):
    the same file, byte for byte, on every run;
  - tokenizer `llama` (SentencePiece): <unk> <s> </s> <|im_start|> <|im_end|> (CONTROL; <|im_end|>
    is the end of a turn), the 256 byte tokens <0x00>..<0xFF> (BYTE), printable ASCII but the
    space, the space piece U+2581, then a few hundred merged pieces (the prefixes of a fixed word
    list, with and without the space piece; none holds a digit, so a digit is always a token of
    its own, which LAVE's rating position needs), each with a score (longer pieces merge first);
  - a ChatML template in tokenizer.chat_template (llama-server recognises it without --jinja).

The output is gibberish; tests shape it with llama-server's request-level `grammar`. But
log-probabilities are computed before the grammar, so for LAVE's expected rating (and top
alternatives that are ratings) the digit tokens must be likely on their own: every token
embedding carries a constant 1.0 in dimension 0, which dominates the residual stream (the
blocks add ~0.03), so after the final RMS norm dimension 0 is ~sqrt(64) = 8 for every position;
the output rows of the digits get +1.0 (1, 2, 3) or +0.8 (the other digits) in that dimension:
a logit bias of ~8 (6.4), which puts ~95% of the probability on the digits.
"""
import os
import sys
import types

SEED = 28
N_EMBD, N_HEAD, N_FF, N_LAYER, N_CTX = 64, 4, 192, 2, 4096

WORDS = """answer reason rating the a of and to in is it that this with for on are as be by not
from or but what which left right above below up down top bottom north south east west between
near far object image map maze grid path turn start end count number yes no correct wrong good
bad score judge question options option so because there here one two three four five six seven
eight nine ten helpful accurate response assistant user system color red blue green shape circle
square triangle""".split()
CAPITALISED = {"answer", "reason", "rating", "so", "yes", "no", "the", "options"}


def vocab():
    """(pieces, scores, types), the ids in order."""
    import gguf
    T = gguf.TokenType
    toks = [("<unk>", 0.0, T.UNKNOWN), ("<s>", 0.0, T.CONTROL), ("</s>", 0.0, T.CONTROL),
            ("<|im_start|>", 0.0, T.CONTROL), ("<|im_end|>", 0.0, T.CONTROL)]
    toks += [("<0x%02X>" % b, 0.0, T.BYTE) for b in range(256)]
    seen = set()
    def add(piece, score):
        if piece not in seen:
            seen.add(piece)
            toks.append((piece, score, T.NORMAL))
    add("\u2581", -1.0)
    for c in range(33, 127):
        add(chr(c), -2.0)
    # merged pieces: every prefix (length >= 2) of each word (and of a few capitalised), with and without the
    # space piece; a longer piece scores higher so that SentencePiece merges it first
    for w in WORDS:
        for form in (w, w.capitalize()) if w in CAPITALISED else (w,):
            for sp in ("\u2581", ""):
                s = sp + form
                for n in range(2, len(s) + 1):
                    add(s[:n], float(n))
    return toks


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    out = argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    gp = argv[2] if len(argv) > 2 else os.path.join(here, "..", "..", "build-llama", "src", "gguf-py")
    if not os.path.isdir(os.path.join(gp, "gguf")):
        print("llama_model: no gguf-py at %s (tools/llama-build.sh makes it)" % gp, file=sys.stderr)
        return 77
    sys.path.insert(0, gp)
    try:
        import sentencepiece  # noqa: F401
    except ImportError:  # imported by gguf.vocab at import time, never called here
        stub = types.ModuleType("sentencepiece")
        stub.SentencePieceProcessor = None
        sys.modules["sentencepiece"] = stub
    import numpy as np
    import gguf

    toks = vocab()
    n_vocab = len(toks)
    rng = np.random.default_rng(SEED)
    def w(*shape):  # numpy shape = ggml's ne reversed
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    tmp = out + ".tmp"
    gw = gguf.GGUFWriter(tmp, "llama")
    gw.add_name("tally-tiny-llama")
    gw.add_context_length(N_CTX)
    gw.add_embedding_length(N_EMBD)
    gw.add_block_count(N_LAYER)
    gw.add_feed_forward_length(N_FF)
    gw.add_head_count(N_HEAD)
    gw.add_head_count_kv(N_HEAD)
    gw.add_rope_dimension_count(N_EMBD // N_HEAD)
    gw.add_rope_freq_base(10000.0)
    gw.add_layer_norm_rms_eps(1e-5)
    gw.add_file_type(0)  # all F32
    gw.add_tokenizer_model("llama")
    gw.add_token_list([t[0] for t in toks])
    gw.add_token_scores([t[1] for t in toks])
    gw.add_token_types([int(t[2]) for t in toks])
    gw.add_unk_token_id(0)
    gw.add_bos_token_id(1)
    gw.add_eos_token_id(2)
    gw.add_eot_token_id(4)
    gw.add_add_bos_token(True)
    gw.add_add_eos_token(False)
    gw.add_chat_template(
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
        " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

    emb = w(n_vocab, N_EMBD)
    emb[:, 0] = 1.0
    gw.add_tensor("token_embd.weight", emb)
    for i in range(N_LAYER):
        p = "blk.%d." % i
        gw.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, np.float32))
        gw.add_tensor(p + "attn_q.weight", w(N_EMBD, N_EMBD))
        gw.add_tensor(p + "attn_k.weight", w(N_EMBD, N_EMBD))
        gw.add_tensor(p + "attn_v.weight", w(N_EMBD, N_EMBD))
        gw.add_tensor(p + "attn_output.weight", w(N_EMBD, N_EMBD))
        gw.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, np.float32))
        gw.add_tensor(p + "ffn_gate.weight", w(N_FF, N_EMBD))
        gw.add_tensor(p + "ffn_up.weight", w(N_FF, N_EMBD))
        gw.add_tensor(p + "ffn_down.weight", w(N_EMBD, N_FF))
    gw.add_tensor("output_norm.weight", np.ones(N_EMBD, np.float32))
    outw = w(n_vocab, N_EMBD)
    for i, t in enumerate(toks):
        if len(t[0]) == 1 and t[0].isdigit():
            outw[i, 0] = 1.0 if t[0] in "123" else 0.8
    gw.add_tensor("output.weight", outw)
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    os.replace(tmp, out)
    print("llama_model: wrote %s (%d tokens, %d bytes)" % (out, n_vocab, os.path.getsize(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
