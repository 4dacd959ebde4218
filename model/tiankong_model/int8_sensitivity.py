"""Which matrices the INT8 top-1 flips come from, and which int8 form flips fewest (issue 24).

Default: each matrix of a checkpoint alone rounded to int8 (round to nearest, a scale per `block`
entries: quantize_blocks, as store_weights_int8 stores it without GPTQ), then all of them.
`--forms F,F,...`: whole-model forms as `scripts/export-model --int8-weights` stores them — the
matrices of INT8_KEEP_FP16 and the embedding tables in float16, every other nn.Linear weight int8 —
with rounding "nearest", "gptq-act" (GPTQ in act order, static block scales: what the export
does) or "gptq" (GPTQ in row order, each block's scale from its weights as updated) and a block
size ("channel" for a scale per output channel), e.g. `gptq:8,gptq-act:8,gptq-act:4:f16` (a third
part: the scales' type, f32 by default; "fp16": every matrix float16, the baseline); GPTQ is
calibrated on `--calibrate-lines` training lines, as the export is. Either way the top-1 answers
at one random masked position per line of the training validation split are compared with
fp32's. Validation lines, not held-out ones: what this finds may choose a quantization.

    PYTHONPATH=model python3 -m tiankong_model.int8_sensitivity model/default/checkpoint .cache/corpus [--lines 1500]
    PYTHONPATH=model python3 -m tiankong_model.int8_sensitivity CHECKPOINT .cache/corpus --forms gptq:8,gptq-act:8
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from .checkpoint import load_checkpoint
from .quantize import INT8_KEEP_FP16, SCALE_DTYPES, gptq_columns, linear_input_hessians, quantize_blocks
from .train_data import Corpus

ROUNDINGS = ("nearest", "gptq", "gptq-act")


def round_int8(weight: torch.Tensor, block: int | None, scale_dtype=np.float32) -> torch.Tensor:
    """`weight` [out, in] (an nn.Linear's) as store_weights_int8 stores it without GPTQ:
    quantize_blocks along the reduction axis (in; `block` None: a scale per output channel;
    scales in `scale_dtype`), restored to float."""
    q, scale = quantize_blocks(np.ascontiguousarray(weight.detach().float().numpy().T), block, scale_dtype)
    return torch.from_numpy(np.ascontiguousarray(_restore(q, scale, block).T))


def gptq_int8(
    weight: torch.Tensor, hessian: np.ndarray, block: int | None, act_order: bool, scale_dtype=np.float32
) -> torch.Tensor:
    """`weight` [out, in] as store_weights_int8 stores it with GPTQ (gptq_columns on the [in, out]
    matrix x @ W^T reads), restored to float."""
    matrix = np.ascontiguousarray(weight.detach().float().numpy().T)
    q, scale = gptq_columns(matrix, hessian, block, act_order=act_order, scale_dtype=scale_dtype)
    return torch.from_numpy(np.ascontiguousarray(_restore(q, scale, block).T))


def _restore(q: np.ndarray, scale: np.ndarray, block: int | None) -> np.ndarray:
    scale = scale.astype(np.float32)
    if block is None:
        return (q * scale).astype(np.float32)
    return (q.reshape(-1, block, q.shape[1]) * scale).reshape(q.shape).astype(np.float32)


def parse_forms(text: str) -> list[tuple[str, int | None, str]]:
    """ "gptq:8,nearest:channel,gptq:4:f16,fp16" -> [("gptq", 8, "f32"), ("nearest", None, "f32"),
    ("gptq", 4, "f16"), ("fp16", None, "f32")] (ROUNDING:BLOCK[:SCALES]; "fp16": every matrix
    float16, the baseline of the other forms). Raises ValueError naming a malformed entry, an
    unknown rounding or scale type, a block that is not a positive integer, or float16 scales
    per channel."""
    forms = []
    for entry in text.split(","):
        rounding, block, scales, *rest = [*entry.strip().split(":"), "", ""]
        if rounding == "fp16" and not block:
            forms.append(("fp16", None, "f32"))
            continue
        if rounding not in ROUNDINGS or not block or any(rest):
            raise ValueError(
                f"form {entry!r}: expected ROUNDING:BLOCK[:SCALES], ROUNDING one of {ROUNDINGS}, "
                "BLOCK a number or 'channel', SCALES f32 or f16"
            )
        if block != "channel" and not (block.isdigit() and int(block) > 0):
            raise ValueError(f"form {entry!r}: block {block!r} is not a positive number or 'channel'")
        if scales not in ("", *SCALE_DTYPES):
            raise ValueError(f"form {entry!r}: scales {scales!r} are not one of {', '.join(SCALE_DTYPES)}")
        if block == "channel" and scales == "f16":
            raise ValueError(f"form {entry!r}: float16 scales need a block size")
        forms.append((rounding, None if block == "channel" else int(block), scales or "f32"))
    return forms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("corpus", type=Path, help="a scripts/build-corpus directory (its val split; train for GPTQ)")
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--block", type=int, default=8, help="per-matrix mode: the block size")
    parser.add_argument("--forms", help="whole-model forms to compare, e.g. nearest:8,gptq:8,gptq-act:8,gptq:channel")
    parser.add_argument("--calibrate-lines", type=int, default=2000, help="training lines that calibrate GPTQ")
    args = parser.parse_args(argv)
    try:
        forms = parse_forms(args.forms) if args.forms else None
    except ValueError as error:
        parser.error(str(error))
    torch.set_num_threads(1)
    model, vocab = load_checkpoint(args.checkpoint)
    model.float()
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
    def logits() -> torch.Tensor:
        return torch.cat(
            [
                model(ids[s : s + 250], attention[s : s + 250], None, at[s : s + 250])[:, 0]
                for s in range(0, len(lines), 250)
            ]
        )

    reference_logits = logits()
    reference = reference_logits.argmax(-1)
    params = dict(model.named_parameters())
    if forms is not None:
        compare_forms(model, params, forms, args, logits, reference, reference_logits)
        return 0
    names = [n for n, p in params.items() if p.dim() == 2 and "embeddings" not in n and p.shape[1] % args.block == 0]
    for name in names:
        kept = params[name].data.clone()
        params[name].data = round_int8(kept, args.block)
        print(f"{int((logits().argmax(-1) != reference).sum()):4d} flips  {name} {tuple(kept.shape)}", flush=True)
        params[name].data = kept
    for name in names:
        params[name].data = round_int8(params[name].data, args.block)
    flips = int((logits().argmax(-1) != reference).sum())
    print(f"{flips:4d} flips  all {len(names)} matrices, of {len(lines)} masked positions")
    return 0


def compare_forms(model, params, forms, args, logits, reference, reference_logits) -> None:
    """Prints, per form, the top-1 flips against fp32, the rms change of fp32's top-1 - top-2 logit
    margin and the logits' rms deviation."""
    linears = {name: module for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)}
    # A Linear whose weight is tied to another parameter (the MLM decoder: the word table) is that
    # table, stored as float16 in head.bin.
    int8_names = [n for n in linears if n + ".weight" in params and not any(part in n for part in INT8_KEEP_FP16)]
    half_names = [n for n, p in params.items() if p.dim() == 2 and n.removesuffix(".weight") not in int8_names]
    hessians = None
    if any(rounding.startswith("gptq") for rounding, _, _ in forms):
        hessians = linear_input_hessians(model, args.corpus, args.calibrate_lines)
    originals = {n: p.data.clone() for n, p in params.items()}
    top2 = reference_logits.topk(2, dim=-1).indices
    print(f"int8: {len(int8_names)} matrices; float16: {', '.join(half_names)}; {len(reference)} masked positions")
    for rounding, block, scales in forms:
        scale_dtype = SCALE_DTYPES[scales]
        for name in half_names:
            params[name].data = originals[name].half().float()
        for name in int8_names:
            weight = originals[name + ".weight"]
            if block is not None and weight.shape[1] % block:
                raise SystemExit(f"{name}: block {block} does not divide its {weight.shape[1]} inputs")
            if rounding == "fp16":
                params[name + ".weight"].data = weight.half().float()
            elif rounding == "nearest":
                params[name + ".weight"].data = round_int8(weight, block, scale_dtype)
            else:
                act_order = rounding == "gptq-act"
                params[name + ".weight"].data = gptq_int8(weight, hessians[name], block, act_order, scale_dtype)
        out = logits()
        flips = int((out.argmax(-1) != reference).sum())
        rms = float((out - reference_logits).pow(2).mean().sqrt())
        # What decides a flip: the change of fp32's top-1 - top-2 margin (flips are where the
        # margin is small); its rms is far less noisy than the count of flips.
        margin = (out.gather(1, top2) @ torch.tensor([1.0, -1.0])) - (
            reference_logits.gather(1, top2) @ torch.tensor([1.0, -1.0])
        )
        margin_rms = float(margin.pow(2).mean().sqrt())
        label = rounding if rounding == "fp16" else f"{rounding}:{block or 'channel'}:{scales}"
        print(f"{flips:4d} flips  margin rms {margin_rms:.4f}  logits rms {rms:.4f}  {label}", flush=True)
    for name, data in originals.items():
        params[name].data = data


if __name__ == "__main__":
    raise SystemExit(main())
