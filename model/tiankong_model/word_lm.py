"""Sunpinyin's word trigram model of modern Chinese (Debian package sunpinyin-data, CC-BY-SA-3.0;
read with sunpinyin-utils' tslminfo) for the corpus memory's n-gram counts (scripts/sample-word-lm),
two ways:

- collocations (--collocations): every word bigram and trigram of the model, made of Han words, as
  a line of its own ("吸烟有害", "过期了") weighing what it would have been counted in a corpus of
  --corpus-words words (expected count c = N·P(w1)·P(w2|w1)[·P(w3|w1,w2)], lines with c < 1 left
  out), log-compressed as build-memory weighs dictionary words: 1 + log2(c)/2. Each line is written
  twice, so that its n-grams pass build-memory's --min-count 2 on their own. scripts/build-memory
  adds them by default (whole-word evidence with its left and right neighbours).
- sampled text (default): sentences drawn from the model. Its words are real and its collocations
  those of a large modern corpus, but its sentences are only locally fluent (the trigrams back off
  to bigrams most of the time); measured, it helped less than the collocations.

    python3 -m tiankong_model.word_lm --collocations --out .cache/corpus/word-collocations.tsv
    python3 -m tiankong_model.word_lm --chars 3e6 --out .cache/corpus/word-lm.txt

Format read (tslminfo -v -p lm_sc.t3g): sections "\\N-gram\\COUNT"; unigram lines "id p backoff",
bigram lines "h w p backoff", trigram lines "h1 h2 w p"; each followed by "(…)". Word ids index
pydict_sc.bin's table of NUL-terminated UTF-32LE strings (header: u32 count, u32, u32 table
offset); ids below 70 are special, 0 is the sentence boundary.
"""

from __future__ import annotations

import argparse
import math
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

DATA = Path("/usr/lib/x86_64-linux-gnu/sunpinyin/data")
BOUNDARY = 0
FIRST_WORD = 70
MAX_WORDS = 40


def read_words(path: Path) -> list[str]:
    """Word strings by id from pydict_sc.bin."""
    data = path.read_bytes()
    count, _, offset = struct.unpack_from("<III", data, 0)
    words, i = [], offset
    while len(words) < count and i + 4 <= len(data):
        j = i
        while j + 4 <= len(data) and data[j : j + 4] != b"\0\0\0\0":
            j += 4
        words.append(data[i:j].decode("utf-32-le", errors="replace"))
        i = j + 4
    return words


def dump_entries(lines):
    """(order, fields) of each entry line of a tslminfo dump: the order is that of the section
    ("\\N-gram\\COUNT") the line is in."""
    order = 0
    for raw in lines:
        line = raw.strip()
        if line.startswith("\\"):
            order = int(line[1])
            continue
        yield order, line.split()


class WordTrigramModel:
    """The model's trigram and bigram tables as per-history arrays of (next word, probability)."""

    def __init__(self, lines):
        self.unigram: tuple[np.ndarray, np.ndarray] | None = None
        bigram: dict[int, list] = {}
        trigram: dict[tuple[int, int], list] = {}
        uni_ids, uni_p = [], []
        for order, fields in dump_entries(lines):
            if order == 1 and len(fields) >= 3:
                uni_ids.append(int(fields[0]))
                uni_p.append(float(fields[1]))
            elif order == 2 and len(fields) >= 4:
                bigram.setdefault(int(fields[0]), [[], []])
                entry = bigram[int(fields[0])]
                entry[0].append(int(fields[1]))
                entry[1].append(float(fields[2]))
            elif order == 3 and len(fields) >= 4:
                key = (int(fields[0]), int(fields[1]))
                trigram.setdefault(key, [[], []])
                trigram[key][0].append(int(fields[2]))
                trigram[key][1].append(float(fields[3]))
        # Cumulative probabilities, computed once: a frequent history (，) has tens of thousands of
        # successors, and sampling draws millions of words.
        self.unigram = (np.array(uni_ids), np.cumsum(uni_p))
        self.bigram = {h: (np.array(w), np.cumsum(p)) for h, (w, p) in bigram.items()}
        self.trigram = {h: (np.array(w), np.cumsum(p)) for h, (w, p) in trigram.items()}

    @staticmethod
    def _pick(table: tuple[np.ndarray, np.ndarray], rng: np.random.Generator, scale: float) -> int | None:
        """A word of `table` (words, cumulative probabilities) with its probability; the rest of
        `scale` of the mass gives None (back off)."""
        words, cumulative = table
        r = rng.random() * max(scale, cumulative[-1])
        index = int(np.searchsorted(cumulative, r, side="right"))
        return int(words[index]) if index < len(words) else None

    def next_word(self, h1: int, h2: int, rng: np.random.Generator) -> int:
        """One word after (h1, h2): the trigram's seen words with their probabilities, else the
        bigram's, else the unigram (backoff sampling; the backoff weights' exclusions are ignored)."""
        if (h1, h2) in self.trigram:
            word = self._pick(self.trigram[(h1, h2)], rng, 1.0)
            if word is not None:
                return word
        if h2 in self.bigram:
            word = self._pick(self.bigram[h2], rng, 1.0)
            if word is not None:
                return word
        return self._pick(self.unigram, rng, 0.0)

    def sentence(self, rng: np.random.Generator) -> list[int]:
        words, h1, h2 = [], BOUNDARY, BOUNDARY
        while len(words) < MAX_WORDS:
            word = self.next_word(h1, h2, rng)
            if word == BOUNDARY:
                break
            words.append(word)
            h1, h2 = h2, word
        return words


def _is_han(word: str) -> bool:
    return bool(word) and all("\u4e00" <= c <= "\u9fff" for c in word)


def collocations(lines, words: list[str], corpus_words: float = 1e8):
    """(text, expected count) of each bigram and trigram of a tslminfo dump whose words are all Han
    words of `words` (ids of 70 and above) and whose expected count in a corpus of `corpus_words`
    words is at least 1. A trigram's P(w2|w1) is its bigram's; a trigram whose bigram the model
    does not list is left out (the dump lists every bigram before the trigrams)."""
    unigram: dict[int, float] = {}
    bigram: dict[tuple[int, int], float] = {}

    def han(i: int) -> bool:
        return FIRST_WORD <= i < len(words) and _is_han(words[i])

    for order, fields in dump_entries(lines):
        if order == 1 and len(fields) >= 3:
            unigram[int(fields[0])] = float(fields[1])
        elif order == 2 and len(fields) >= 4:
            a, b, p = int(fields[0]), int(fields[1]), float(fields[2])
            bigram[(a, b)] = p
            count = corpus_words * unigram.get(a, 0.0) * p
            if count >= 1 and han(a) and han(b):
                yield words[a] + words[b], count
        elif order == 3 and len(fields) >= 4:
            a, b, c, p = int(fields[0]), int(fields[1]), int(fields[2]), float(fields[3])
            if (a, b) not in bigram or not (han(a) and han(b) and han(c)):
                continue
            count = corpus_words * unigram.get(a, 0.0) * bigram[(a, b)] * p
            if count >= 1:
                yield words[a] + words[b] + words[c], count


def collocation_weight(count: float) -> int:
    """build-memory's weight of a dictionary word of this count: 1 + log2(count)/2, 1..255."""
    return max(1, min(255, round(1 + math.log2(count) / 2)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chars", type=float, default=3e6, help="characters to sample (default 3e6)")
    p.add_argument("--collocations", action="store_true", help="write the weighted word collocations, not text")
    p.add_argument("--corpus-words", type=float, default=1e8, help="collocations: N of the expected counts")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--data", type=Path, default=DATA, help=f"sunpinyin's data folder (default {DATA})")
    args = p.parse_args(argv)
    lm, dictionary = args.data / "lm_sc.t3g", args.data / "pydict_sc.bin"
    if not lm.exists() or not dictionary.exists() or shutil.which("tslminfo") is None:
        print(
            f"word_lm: {lm} or tslminfo is absent (Debian packages sunpinyin-data and sunpinyin-utils; "
            "scripts/setup installs them)",
            file=sys.stderr,
        )
        return 2
    words = read_words(dictionary)
    dump = subprocess.run(["tslminfo", "-v", "-p", str(lm)], check=True, capture_output=True, text=True).stdout
    if args.collocations:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with args.out.open("w", encoding="utf-8") as out:
            for text, count in collocations(dump.splitlines(), words, args.corpus_words):
                line = f"{text}\t{collocation_weight(count)}\n"
                out.write(line + line)
                written += 1
        print(f"word_lm: {written} collocations (each written twice) -> {args.out}", file=sys.stderr)
        return 0
    model = WordTrigramModel(dump.splitlines())
    del dump
    rng = np.random.default_rng(args.seed)
    total, sentences = 0, []
    while total < args.chars:
        ids = [w for w in model.sentence(rng) if w >= FIRST_WORD or w in (70, 71)]
        text = "".join(words[w] for w in ids if w < len(words))
        if sum(1 for c in text if "\u4e00" <= c <= "\u9fff") >= 4:
            sentences.append(text)
            total += len(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    print(f"word_lm: {len(sentences)} sentences, {total} characters -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
