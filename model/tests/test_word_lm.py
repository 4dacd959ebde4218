"""word_lm: the sunpinyin dump parser and the backoff sampler, on a hand-made model."""

import struct

import numpy as np
from tiankong_model.word_lm import BOUNDARY, WordTrigramModel, read_words

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
