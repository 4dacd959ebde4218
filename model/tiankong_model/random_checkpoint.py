"""`scripts/make-random-checkpoint`: a seeded, randomly initialised BERT-MLM checkpoint in
Hugging Face's exact layout, for pipeline tests and benchmarks without trained weights."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from .bert import BertConfig, BertForMaskedLM
from .checkpoint import save_checkpoint
from .data_paths import fixture_path
from .tiny_vocab import tiny_vocab
from .vocab import read_vocab

# The full bert-base-chinese vocab is committed with the test fixtures (no raw data needed).
BERT_BASE_CHINESE_VOCAB = fixture_path("vocab/bert-base-chinese/vocab.txt")
ARCHITECTURES = {
    "bert-base-chinese": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072),
    "tiny": dict(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128, max_position_embeddings=128
    ),
}


def architecture_vocab(arch: str, vocab_path: Path = BERT_BASE_CHINESE_VOCAB) -> list[str]:
    """The vocab of an architecture; bert-base-chinese's comes from the shared data directory."""
    if arch == "tiny":
        return tiny_vocab()
    if not vocab_path.is_file():
        raise FileNotFoundError(
            f"{vocab_path} is missing: the bert-base-chinese architecture copies its vocab "
            f"from there (scripts/make-test-fixtures writes it), or use --arch tiny"
        )
    return read_vocab(vocab_path)


def random_model(arch: str, vocab_size: int, seed: int) -> BertForMaskedLM:
    """A BertForMaskedLM with HF's initialisation (normal(0, 0.02)), deterministic for a seed."""
    torch.manual_seed(seed)
    return BertForMaskedLM(BertConfig(vocab_size=vocab_size, **ARCHITECTURES[arch])).eval()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make-random-checkpoint", description=__doc__)
    parser.add_argument("--arch", choices=sorted(ARCHITECTURES), default="bert-base-chinese")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=["bin", "safetensors", "both"], default="safetensors")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        vocab = architecture_vocab(args.arch)
    except FileNotFoundError as err:
        print(f"make-random-checkpoint: {err}", file=sys.stderr)
        return 1
    model = random_model(args.arch, len(vocab), args.seed)
    formats = ("bin", "safetensors") if args.format == "both" else (args.format,)
    save_checkpoint(model, vocab, args.out_dir, formats=formats)
    params = sum(p.numel() for p in model.parameters())
    print(
        f"make-random-checkpoint: {args.arch} ({params / 1e6:.1f} M parameters, vocab {len(vocab)}, "
        f"seed {args.seed}) -> {args.out_dir} [{', '.join(formats)}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
