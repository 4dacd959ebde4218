"""word_lm: the sunpinyin dump parser and the backoff sampler, on a hand-made model."""

import struct

import numpy as np
from tiankong_model.word_lm import BOUNDARY, WordTrigramModel, collocation_weight, collocations, read_words

DUMP = """\\0-gram\\1
  0.000005   0.0000001 (0,0)
\\1-gram\\3
        0   0.5   1.0 (0,0)
       70   0.25   1.0 (0,0)
       71   0.25   1.0 (0,0)
\\2-gram\\3
        0        70   0.9   1.0 (1,1)
       70        71   1.0   1.0 (1,2)
       71         0   1.0   1.0 (1,3)
\\3-gram\\1
        0        70        71   1.0 (1,0)
"""


def test_read_words(tmp_path):
    words = ["", "好", "今天"]
    table = b"".join(w.encode("utf-32-le") + b"\0\0\0\0" for w in words)
    path = tmp_path / "pydict.bin"
    path.write_bytes(struct.pack("<III", len(words), 0, 12) + table)
    assert read_words(path) == words


def test_parse_and_sample():
    model = WordTrigramModel(DUMP.splitlines())
    assert list(model.unigram[0]) == [0, 70, 71]
    assert list(model.bigram[70][0]) == [71]
    assert list(model.trigram[(0, 70)][0]) == [71]
    rng = np.random.default_rng(0)
    # After the boundary, 70 has probability 0.9 (bigram) and the rest backs off to the unigram.
    firsts = [model.next_word(BOUNDARY, BOUNDARY, rng) for _ in range(2000)]
    share = firsts.count(70) / len(firsts)
    assert 0.9 < share < 0.96  # 0.9 + 0.1 x 0.25
    # The trigram (0, 70) -> 71 has all the mass; 71 -> boundary ends the sentence.
    assert model.next_word(BOUNDARY, 70, rng) == 71
    sentences = [model.sentence(rng) for _ in range(200)]
    assert [70, 71] in sentences
    assert all(len(s) <= 40 for s in sentences)


def test_collocations_weigh_expected_counts_and_keep_han_words_only():
    dump = DUMP.replace("\\3-gram\\1\n", "\\3-gram\\2\n       70        71        72   0.5 (1,0)\n").replace(
        "\\2-gram\\3\n", "\\2-gram\\4\n       71        72   0.1   1.0 (1,2)\n"
    )
    words = [""] * 70 + ["今天", "好", "abc"]
    found = dict(collocations(dump.splitlines(), words, corpus_words=8))
    # 今天好: 8 x P(今天)=0.25 x P(好|今天)=1.0 = 2; the boundary (0) and the non-Han "abc" never enter.
    assert found == {"今天好": 2.0}
    words[72] = "啊"
    found = dict(collocations(dump.splitlines(), words, corpus_words=80))
    # 好啊: 80 x 0.25 x 0.1 = 2; 今天好啊: 80 x 0.25 x 1.0 x 0.5 = 10.
    assert found == {"今天好": 20.0, "好啊": 2.0, "今天好啊": 10.0}
    assert [collocation_weight(c) for c in (1, 2, 20, 1e200)] == [1, 2, 3, 255]
