"""Masked-language-model training of the default model on the corpus built by scripts/build-corpus.

Design choices (see model/default/README.md for the measurements behind them):
- whole-word masking of 15% of content tokens (80% [MASK], 10% random token, 10% unchanged);
  with a character vocab a word is one CJK character or one Latin/digit run (token + its ## pieces);
- dynamic masking: a fresh mask for every batch, so repeated epochs see new targets;
- lines are packed into [CLS] line [SEP] line [SEP] ... sequences that always start at a line start
  (as inference inputs do), lines longer than a sequence are split;
- the loss is computed only at masked positions: the MLM head (hidden -> vocab) runs on those rows only;
- AdamW with linear warm-up and cosine decay over a wall-clock budget, so a run of `--hours` ends with a
  decayed learning rate; resuming continues the same schedule (and a larger --hours extends it);
- position embeddings start as scaled sine/cosine codes (still learned): measured ~0.2 nats lower
  validation loss early in training than random ones on a 2 x 128 probe;
- defaults sized for a 2-core AVX2 CPU (4 x 192, 64-token rows, 4 k tokens per step, peak lr 2e-3), see
  the model card; bf16 autocast off by default (no AVX-512 here: far slower), `--bf16 auto` measures it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch

from .bert import BertConfig, BertForMaskedLM

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Corpus:
    """Token ids of one split, as written by scripts/build-corpus (uint16 ids + uint32 line offsets)."""

    def __init__(self, directory: Path, split: str):
        self.ids = np.fromfile(directory / f"{split}.ids", dtype=np.uint16)
        self.offsets = np.fromfile(directory / f"{split}.idx", dtype=np.uint32).astype(np.int64)

    @property
    def num_lines(self) -> int:
        return len(self.offsets) - 1

    def line(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i]:self.offsets[i + 1]]


def pack_sequences(corpus: Corpus, order: np.ndarray, seq_len: int, cls_id: int, sep_id: int, pad_id: int) -> np.ndarray:
    """Packs lines (in `order`) into rows of `seq_len` ids: [CLS] a [SEP] b [SEP] ... [PAD]*.

    Every row starts at the beginning of a line. A line that does not fit in the remaining space
    starts the next row; a line longer than a row is split into row-sized pieces.
    """
    body = seq_len - 2  # room for [CLS] and the final [SEP]
    rows: list[np.ndarray] = []
    current: list[np.ndarray] = []
    used = 0

    def flush():
        nonlocal current, used
        if current:
            row = np.full(seq_len, pad_id, dtype=np.int64)
            seq = np.concatenate([[cls_id], *current])
            row[:len(seq)] = seq
            rows.append(row)
        current, used = [], 0

    for i in order:
        line = corpus.line(int(i)).astype(np.int64)
        if len(line) == 0:
            continue
        for start in range(0, len(line), body):
            piece = line[start:start + body]
            if used + len(piece) + 1 > seq_len - 1:
                flush()
            current.append(np.append(piece, sep_id))
            used += len(piece) + 1
    flush()
    return np.stack(rows)


class Masker:
    """Whole-word dynamic masking (BERT's 15% with 80/10/10)."""

    def __init__(self, vocab: list[str], rate: float = 0.15):
        self.rate = rate
        self.special = torch.tensor([t in SPECIALS for t in vocab])
        self.continuation = torch.tensor([t.startswith("##") for t in vocab])
        self.mask_id = vocab.index("[MASK]")
        # Random replacements are drawn from ordinary, whole-character tokens.
        self.replacement_ids = torch.tensor([i for i, t in enumerate(vocab)
                                             if t not in SPECIALS and not t.startswith("##")])

    def __call__(self, ids: torch.Tensor, generator: torch.Generator):
        """Returns (inputs, target_positions [N] flat indices, targets [N])."""
        content = ~self.special[ids]
        continuation = self.continuation[ids] & content
        # A word starts at a content token that is not a ## continuation; each word gets one draw.
        word_start = content & ~continuation
        draw = torch.rand(ids.shape, generator=generator) < self.rate
        word_id = torch.cumsum(word_start.to(torch.int64), dim=1)  # continuation tokens share their word's id
        chosen_start = draw & word_start
        # Propagate each word's decision to its continuation pieces.
        chosen_word = torch.zeros(ids.shape[0], ids.shape[1] + 1, dtype=torch.bool)
        chosen_word.scatter_(1, torch.where(chosen_start, word_id, torch.zeros_like(word_id)), chosen_start)
        chosen_word[:, 0] = False
        selected = content & torch.gather(chosen_word, 1, word_id)

        inputs = ids.clone()
        action = torch.rand(ids.shape, generator=generator)
        to_mask = selected & (action < 0.8)
        to_random = selected & (action >= 0.8) & (action < 0.9)
        inputs[to_mask] = self.mask_id
        random_tokens = self.replacement_ids[torch.randint(len(self.replacement_ids), ids.shape, generator=generator)]
        inputs[to_random] = random_tokens[to_random]
        positions = torch.nonzero(selected.flatten(), as_tuple=False).squeeze(1)
        return inputs, positions, ids.flatten()[positions]


def masked_lm_logits(model: BertForMaskedLM, inputs: torch.Tensor, attention_mask: torch.Tensor,
                     positions: torch.Tensor) -> torch.Tensor:
    """Logits only at the flat `positions` of the batch: [N, vocab]."""
    hidden = model.hidden_states(inputs, attention_mask)
    return model.cls.predictions(hidden.reshape(-1, hidden.shape[-1])[positions])


def sinusoidal_positions(count: int, width: int, std: float) -> torch.Tensor:
    """Transformer sine/cosine position codes scaled to standard deviation `std`.

    Used only to initialise BERT's learned position embeddings: random ones carry no notion of distance
    until they are learned, smooth codes give attention one from the first step (see the module notes
    for what that measured).
    """
    position = torch.arange(count, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    codes = torch.zeros(count, width)
    codes[:, 0::2] = torch.sin(position * frequency)
    codes[:, 1::2] = torch.cos(position * frequency)
    return codes * (std / codes.std())


def learning_rate(progress: float, peak: float, warmup: float) -> float:
    """Linear warm-up over the first `warmup` fraction, then cosine decay to 10% of peak."""
    if progress < warmup:
        return peak * progress / warmup
    t = min(1.0, (progress - warmup) / (1 - warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


@torch.no_grad()
def evaluate(model: BertForMaskedLM, batches: list[tuple[torch.Tensor, ...]], use_bf16: bool) -> dict:
    """Masked-token top-1/top-5 accuracy and loss on fixed, pre-masked validation batches."""
    model.eval()
    correct1 = correct5 = total = 0
    loss_sum = 0.0
    for inputs, attention_mask, positions, targets in batches:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
            logits = masked_lm_logits(model, inputs, attention_mask, positions).float()
        loss_sum += torch.nn.functional.cross_entropy(logits, targets, reduction="sum").item()
        top5 = logits.topk(5, dim=-1).indices
        correct1 += (top5[:, 0] == targets).sum().item()
        correct5 += (top5 == targets[:, None]).any(dim=1).sum().item()
        total += len(targets)
    model.train()
    return {"val_loss": loss_sum / total, "val_top1": correct1 / total, "val_top5": correct5 / total, "val_masked": total}


def save_checkpoint(directory: Path, model: BertForMaskedLM, vocab: list[str], state: dict, optimizer) -> None:
    """Writes an HF-format checkpoint (config.json, vocab.txt, pytorch_model.bin, tokenizer_config.json)
    plus training state, atomically (write to a temp dir, then rename), so an interrupted save never
    leaves a broken checkpoint."""
    tmp = directory.with_name(directory.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "config.json").write_text(json.dumps(model.config.to_hf_dict(), indent=2) + "\n")
    (tmp / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (tmp / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "tokenize_chinese_chars": True}) + "\n")
    torch.save(model.state_dict(), tmp / "pytorch_model.bin")
    torch.save({"optimizer": optimizer.state_dict(), **state}, tmp / "training_state.pt")
    (tmp / "training_state.json").write_text(json.dumps({k: v for k, v in state.items() if k != "rng"}, indent=2) + "\n")
    old = directory.with_name(directory.name + ".old")
    if directory.exists():
        directory.rename(old)
    tmp.rename(directory)
    if old.exists():
        for f in old.iterdir():
            f.unlink()
        old.rmdir()


def measure_bf16_speedup(model: BertForMaskedLM, batch: torch.Tensor, masker: Masker) -> bool:
    """Times a few training steps with and without bf16 autocast; True when bf16 is faster."""
    gen = torch.Generator().manual_seed(0)
    timings = {}
    for use_bf16 in (False, True, False, True):
        start = time.perf_counter()
        for _ in range(2):
            inputs, positions, targets = masker(batch, gen)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                logits = masked_lm_logits(model, inputs, (batch != 0).long(), positions).float()
            torch.nn.functional.cross_entropy(logits, targets).backward()
        model.zero_grad(set_to_none=True)
        timings[use_bf16] = time.perf_counter() - start  # the second (warm) measurement wins
    print(f"bf16 probe: fp32 {timings[False]:.2f}s, bf16 {timings[True]:.2f}s per 2 steps", flush=True)
    return timings[True] < timings[False]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train the default tiankong MLM on a corpus built by scripts/build-corpus.")
    p.add_argument("--corpus", type=Path, default=Path(".cache/corpus"))
    p.add_argument("--out", type=Path, default=Path(".cache/train/default"))
    p.add_argument("--hours", type=float, default=2.0, help="wall-clock training budget (total, across resumes)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=192)
    p.add_argument("--heads", type=int, default=3)
    p.add_argument("--ffn", type=int, default=768)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--accumulate", type=int, default=1)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=float, default=0.04, help="fraction of the budget")
    p.add_argument("--bf16", choices=("auto", "on", "off"), default="off")
    p.add_argument("--eval-every-min", type=float, default=10.0)
    p.add_argument("--save-every-min", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--position-init", choices=("random", "sinusoidal"), default="sinusoidal",
                   help="initial position embeddings of a fresh model (learned either way)")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many optimizer steps (0 = budget only)")
    args = p.parse_args(argv)

    torch.set_num_threads(args.threads)
    vocab = (args.corpus / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if vocab[-1] == "":
        vocab.pop()
    ids_of = {t: i for i, t in enumerate(vocab)}
    cls_id, sep_id, pad_id = ids_of["[CLS]"], ids_of["[SEP]"], ids_of["[PAD]"]
    train, val = Corpus(args.corpus, "train"), Corpus(args.corpus, "val")
    masker = Masker(vocab)

    ckpt = args.out / "checkpoint"
    resumed = (ckpt / "training_state.pt").exists()
    if resumed:
        config = BertConfig.from_json_file(ckpt / "config.json")
    else:
        config = BertConfig(vocab_size=len(vocab), hidden_size=args.hidden, num_hidden_layers=args.layers,
                            num_attention_heads=args.heads, intermediate_size=args.ffn,
                            max_position_embeddings=512, pad_token_id=pad_id)
    torch.manual_seed(args.seed)
    model = BertForMaskedLM(config)
    if not resumed and args.position_init == "sinusoidal":
        with torch.no_grad():
            table = model.bert.embeddings.position_embeddings.weight
            table.copy_(sinusoidal_positions(table.shape[0], table.shape[1], config.initializer_range))
    decay = [p_ for n, p_ in model.named_parameters() if p_.dim() >= 2]
    no_decay = [p_ for n, p_ in model.named_parameters() if p_.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98), eps=1e-6, foreach=True)
    state = {"step": 0, "epoch": 0, "epoch_row": 0, "elapsed_s": 0.0, "tokens_seen": 0, "masked_seen": 0,
             "budget_s": args.hours * 3600, "bf16": None}
    if resumed:
        model.load_state_dict(torch.load(ckpt / "pytorch_model.bin"))
        saved = torch.load(ckpt / "training_state.pt")
        optimizer.load_state_dict(saved.pop("optimizer"))
        state.update(saved)
        state["budget_s"] = max(state["budget_s"], args.hours * 3600)
        print(f"resumed at step {state['step']}, {state['elapsed_s'] / 3600:.2f} h done, budget {state['budget_s'] / 3600:.2f} h", flush=True)

    # Fixed validation batches: the same masks every evaluation, so numbers are comparable over time.
    val_gen = torch.Generator().manual_seed(99)
    val_rows = torch.from_numpy(pack_sequences(val, np.arange(val.num_lines), args.seq_len, cls_id, sep_id, pad_id))
    val_rows = val_rows[:1024]
    val_batches = []
    for i in range(0, len(val_rows), 64):
        rows = val_rows[i:i + 64]
        inputs, positions, targets = masker(rows, val_gen)
        val_batches.append((inputs, (rows != pad_id).long(), positions, targets))

    params = sum(p_.numel() for p_ in model.parameters())
    print(f"model: {config.num_hidden_layers} layers x {config.hidden_size}, {config.num_attention_heads} heads, "
          f"FFN {config.intermediate_size}, vocab {config.vocab_size}: {params / 1e6:.1f} M parameters", flush=True)

    rng = np.random.default_rng(args.seed + state["epoch"])
    rows = torch.from_numpy(pack_sequences(train, rng.permutation(train.num_lines), args.seq_len, cls_id, sep_id, pad_id))
    if state["bf16"] is None:
        state["bf16"] = {"on": True, "off": False}.get(args.bf16) if args.bf16 != "auto" else \
            measure_bf16_speedup(model, rows[:args.batch], masker)
    use_bf16 = bool(state["bf16"])
    print(f"bf16 autocast: {use_bf16}; {len(rows)} packed rows per epoch", flush=True)

    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(flag=True))
    gen = torch.Generator().manual_seed(args.seed * 1000 + state["step"])
    log_path = args.out / "log.jsonl"
    args.out.mkdir(parents=True, exist_ok=True)
    session_start = time.perf_counter() - state["elapsed_s"]
    last_eval = last_save = time.perf_counter()
    window_tokens, window_start = 0, time.perf_counter()
    model.train()

    def log(entry: dict) -> None:
        entry = {"step": state["step"], "hours": round(state["elapsed_s"] / 3600, 4), "tokens": state["tokens_seen"], **entry}
        print(json.dumps(entry), flush=True)
        with log_path.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    while not stop["flag"]:
        state["elapsed_s"] = time.perf_counter() - session_start
        progress = state["elapsed_s"] / state["budget_s"]
        if progress >= 1.0 or (args.max_steps and state["step"] >= args.max_steps):
            break
        lr = learning_rate(progress, args.lr, args.warmup)
        for group in optimizer.param_groups:
            group["lr"] = lr
        loss_total = 0.0
        for _ in range(args.accumulate):
            if state["epoch_row"] + args.batch > len(rows):
                state["epoch"] += 1
                state["epoch_row"] = 0
                rng = np.random.default_rng(args.seed + state["epoch"])
                rows = torch.from_numpy(pack_sequences(train, rng.permutation(train.num_lines), args.seq_len,
                                                       cls_id, sep_id, pad_id))
            batch = rows[state["epoch_row"]:state["epoch_row"] + args.batch]
            state["epoch_row"] += args.batch
            attention_mask = (batch != pad_id).long()
            inputs, positions, targets = masker(batch, gen)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                logits = masked_lm_logits(model, inputs, attention_mask, positions).float()
            loss = torch.nn.functional.cross_entropy(logits, targets) / args.accumulate
            loss.backward()
            loss_total += loss.item()
            n_tokens = int(attention_mask.sum())
            state["tokens_seen"] += n_tokens
            state["masked_seen"] += len(targets)
            window_tokens += n_tokens
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        state["step"] += 1
        if state["step"] % 50 == 0:
            now = time.perf_counter()
            log({"loss": round(loss_total, 4), "lr": round(lr, 7), "tokens_per_s": round(window_tokens / (now - window_start))})
            window_tokens, window_start = 0, now
        now = time.perf_counter()
        if now - last_eval > args.eval_every_min * 60:
            log(evaluate(model, val_batches, use_bf16))
            last_eval = now
        if now - last_save > args.save_every_min * 60:
            save_checkpoint(ckpt, model, vocab, state, optimizer)
            last_save = now

    state["elapsed_s"] = time.perf_counter() - session_start
    log({"final": True, **evaluate(model, val_batches, use_bf16)})
    save_checkpoint(ckpt, model, vocab, state, optimizer)
    print(f"saved {ckpt}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
