"""Which matrices the INT8 top-1 flips come from (issue 24): each matrix of a checkpoint alone
rounded to int8 (round to nearest, a scale per `block` entries: quantize_blocks, as
store_weights_int8 stores it without GPTQ), then all of them, and the top-1 answers at one random
masked position per line of the training validation split compared with fp32's. Validation
lines, not held-out ones: what this finds may choose a quantization.

    PYTHONPATH=model python3 -m tiankong_model.int8_sensitivity model/default/checkpoint .cache/corpus [--lines 1500]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from .checkpoint import load_checkpoint
from .quantize import quantize_blocks
from .train_data import Corpus


def round_int8(weight: torch.Tensor, block: int) -> torch.Tensor:
    """`weight` [out, in] (an nn.Linear's) as store_weights_int8 stores it without GPTQ:
    quantize_blocks along the reduction axis (in), restored to float."""
    q, scale = quantize_blocks(np.ascontiguousarray(weight.detach().numpy().T), block)
    restored = (q.reshape(-1, block, q.shape[1]) * scale).reshape(q.shape)
    return torch.from_numpy(np.ascontiguousarray(restored.T))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("corpus", type=Path, help="a scripts/build-corpus directory (its val split)")
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--block", type=int, default=8)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    model, vocab = load_checkpoint(args.checkpoint)
    corpus = Corpus(args.corpus, "val")
    mask, cls, sep = vocab.index("[MASK]"), vocab.index("[CLS]"), vocab.index("[SEP]")
    rng = np.random.default_rng(0)
    picked = (corpus.line(i) for i in rng.permutation(corpus.num_lines)[: args.lines * 2])
    lines = [line for line in picked if 4 <= len(line) <= 60][: args.lines]
    width = max(len(line) for line in lines) + 2
    ids = torch.zeros(len(lines), width, dtype=torch.long)
    attention = torch.zeros_like(ids)
    positions = []
    for r, line in enumerate(lines):
        row = [cls, *map(int, line), sep]
        ids[r, : len(row)], attention[r, : len(row)] = torch.tensor(row), 1
        positions.append(1 + int(rng.integers(0, len(line))))
        ids[r, positions[-1]] = mask
    at = torch.tensor(positions).unsqueeze(1)

    @torch.no_grad()
    def top1() -> torch.Tensor:
        return torch.cat(
            [
                model(ids[s : s + 250], attention[s : s + 250], None, at[s : s + 250])[:, 0].argmax(-1)
                for s in range(0, len(lines), 250)
            ]
        )

    reference = top1()
    params = dict(model.named_parameters())
    names = [n for n, p in params.items() if p.dim() == 2 and "embeddings" not in n and p.shape[1] % args.block == 0]
    for name in names:
        kept = params[name].data.clone()
        params[name].data = round_int8(kept, args.block)
        print(f"{int((top1() != reference).sum()):4d} flips  {name} {tuple(kept.shape)}", flush=True)
        params[name].data = kept
    for name in names:
        params[name].data = round_int8(params[name].data, args.block)
    print(f"{int((top1() != reference).sum()):4d} flips  all {len(names)} matrices, of {len(lines)} masked positions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
