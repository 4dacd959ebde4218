"""BERT vocab.txt reading/writing and special-token lookup."""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}


def read_vocab(path: str | Path) -> list[str]:
    """Tokens of a vocab.txt in id order. Splits on '\\n' only: bert-base-chinese has
    entries such as U+2028 that `str.splitlines()` would split."""
    text = Path(path).read_text(encoding="utf-8")
    tokens = text.split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    return tokens


def write_vocab(tokens: list[str], path: str | Path) -> None:
    """Writes one token per line, '\\n'-terminated (the layout HF writes)."""
    for token in tokens:
        if "\n" in token:
            raise ValueError(f"vocab token {token!r} contains a newline and cannot be written to vocab.txt")
    Path(path).write_text("".join(token + "\n" for token in tokens), encoding="utf-8")


def special_token_ids(tokens: list[str]) -> dict[str, int]:
    """{"pad": id, "unk": id, "cls": id, "sep": id, "mask": id}; raises ValueError naming
    the missing special tokens."""
    index = {token: i for i, token in enumerate(tokens)}
    missing = [t for t in SPECIAL_TOKENS.values() if t not in index]
    if missing:
        raise ValueError(f"vocab lacks special tokens {missing}")
    return {role: index[token] for role, token in SPECIAL_TOKENS.items()}
