"""Masked-language-model training of the default model on the corpus built by scripts/build-corpus.

The recipe (see model/default/README.md for the probes behind each choice):
- architecture: pre-LayerNorm blocks, no biases in attention/FFN projections, gated-GELU FFN, no
  dropout, decoder tied to the word embeddings ("Cramming", Geiping & Goldstein 2022); position
  embeddings start as scaled sine/cosine codes (still learned);
- data (train_data.py): 128-token packed rows, modern sources oversampled, masking rate falling
  linearly from 30% to 15% over training with 20% of the masked units 2-4 character spans;
- loss only at masked positions: the MLM head (hidden -> vocab) runs on those rows only;
- AdamW; the schedule is in tokens, not wall-clock time, so it continues the same way on any
  machine: linear warm-up, a constant phase, then a linear decay over the last 20% of the token
  budget ("warmup-stable-decay": a run stopped in the constant phase loses nothing by pausing);
- resumable three ways: from the local full checkpoint (.cache/train/default/checkpoint, with the
  optimizer state; unless a committed one given to --init-from has seen more tokens), from a
  weights-only checkpoint committed to the repo (`--init-from model/default/checkpoint
  model/progress/checkpoint`: the one that has seen more tokens; bf16 weights +
  training_state.json; the AdamW moments are rebuilt during a short re-warm-up of
  `--rewarm-steps` steps, because a fresh Adam with the full learning rate would take oversized
  first steps), or fresh;
- the recipe is stored in the checkpoint; a resumed run keeps it unless an option is given again
  on the command line.
- `--device cuda` runs the same recipe with bf16 autocast on a GPU (PyTorch 1.13 and 2.x).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import math
import os
import platform
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch

from .bert import BertConfig, BertForMaskedLM
from .train_data import (
    IDIOM_HEADS,
    Corpus,
    Masker,
    add_idiom_heads,
    epoch_order,
    pack_sequences,
    parse_oversampling,
    single_line_rows,
)
from .weights import load_weights_dir, save_weights_dir, tokens_seen

# The recipe: every option that defines what is trained (a resumed run keeps the stored values).
RECIPE_DEFAULTS = {
    "layers": 4,
    "hidden": 224,
    "heads": 4,
    "ffn": 576,
    "block": "pre",
    "bias": False,
    "ffn_type": "geglu",
    "seq_len": 128,
    "batch": 32,
    "lr": 2e-3,
    "tokens": 120e6,
    "warmup": 0.02,
    "decay": 0.2,
    "mask_start": 0.30,
    "mask_end": 0.15,
    "span_share": 0.2,
    "oversample": "poetry=0.6,novels=2,tatoeba=4,wiki=4,idioms=2,idiom-heads=2,"
    "debian-docs=2,libreoffice-help=2,manpages=2,wesnoth=2,written=12",
    "seed": 1234,
    "position_init": "sinusoidal",
    "weight_decay": 0.01,
}
VAL_ROWS = 1024
VAL_ROWS_PER_SOURCE = 192
# Named model sizes (--size): layers, hidden, heads, FFN (gated: 3 matrices, ~8/3 x hidden).
SIZES = {
    "tiny": {"layers": 1, "hidden": 32, "heads": 2, "ffn": 64},
    "4x224": {"layers": 4, "hidden": 224, "heads": 4, "ffn": 576},  # CPU default: bf16 weights <= 10 MB
    "4x256": {"layers": 4, "hidden": 256, "heads": 4, "ffn": 640},
    "5x320": {"layers": 5, "hidden": 320, "heads": 5, "ffn": 832},
    "6x384": {"layers": 6, "hidden": 384, "heads": 6, "ffn": 1024},  # ~15 M parameters, INT8 <= 16 MB
}
# --size auto picks the largest of these that sees this many epochs in the time budget.
AUTO_SIZES = ("6x384", "5x320", "4x256", "4x224")
AUTO_EPOCHS = 10
# Recipe changes for a GPU: larger batches (the optimizer step is cheap there, small matmuls are not).
CUDA_RECIPE = {"batch": 256, "warmup": 0.03}


def masked_lm_logits(
    model: BertForMaskedLM, inputs: torch.Tensor, attention_mask: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """Logits only at the flat `positions` of the batch: [N, vocab]."""
    hidden = model.hidden_states(inputs, attention_mask)
    return model.cls.predictions(hidden.reshape(-1, hidden.shape[-1])[positions])


def sinusoidal_positions(count: int, width: int, std: float) -> torch.Tensor:
    """Transformer sine/cosine position codes scaled to standard deviation `std`.

    Used only to initialise BERT's learned position embeddings: random ones carry no notion of distance
    until they are learned, smooth codes give attention one from the first step (measured ~0.2 nats
    lower validation loss early in training than random ones on a 2 x 128 probe).
    """
    position = torch.arange(count, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    codes = torch.zeros(count, width)
    codes[:, 0::2] = torch.sin(position * frequency)
    codes[:, 1::2] = torch.cos(position * frequency)
    return codes * (std / codes.std())


def learning_rate(progress: float, peak: float, warmup: float, decay: float = 0.2, floor: float = 0.02) -> float:
    """Warmup-stable-decay: linear warm-up over the first `warmup` fraction of the token budget,
    constant `peak`, then a linear decay to `floor` × peak over the last `decay` fraction."""
    if warmup > 0 and progress < warmup:
        return peak * progress / warmup
    if decay <= 0 or progress < 1 - decay:
        return peak
    t = min(1.0, (progress - (1 - decay)) / decay)
    return peak * (1 - (1 - floor) * t)


def mask_rate(progress: float, start: float, end: float) -> float:
    """Masking rate falling linearly from `start` to `end` over the token budget."""
    return start + (end - start) * min(max(progress, 0.0), 1.0)


def autocast(device: str, enabled: bool):
    """bf16 autocast on CPU or CUDA (torch 1.13 and 2.x spell it the same)."""
    return torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=enabled)


@torch.no_grad()
def evaluate(model: BertForMaskedLM, batches: list[tuple[torch.Tensor, ...]], device: str, use_bf16: bool) -> dict:
    """Masked-token top-1/top-5 accuracy and loss on fixed, pre-masked validation batches."""
    model.eval()
    correct1 = correct5 = total = 0
    loss_sum = 0.0
    for inputs, attention_mask, positions, targets in batches:
        inputs, attention_mask = inputs.to(device), attention_mask.to(device)
        positions, targets = positions.to(device), targets.to(device)
        with autocast(device, use_bf16):
            logits = masked_lm_logits(model, inputs, attention_mask, positions).float()
        loss_sum += torch.nn.functional.cross_entropy(logits, targets, reduction="sum").item()
        top5 = logits.topk(5, dim=-1).indices
        correct1 += (top5[:, 0] == targets).sum().item()
        correct5 += (top5 == targets[:, None]).any(dim=1).sum().item()
        total += len(targets)
    model.train()
    return {
        "val_loss": round(loss_sum / total, 4),
        "val_top1": round(correct1 / total, 4),
        "val_top5": round(correct5 / total, 4),
        "val_masked": total,
    }


def most_trained(directories: list[Path]) -> Path | None:
    """The weights-only checkpoint among `directories` that has seen the most tokens (the first on a
    tie); None when none has a training_state.json. Why: a release's checkpoint and the progress
    snapshot of a run stopped between releases are both committed, and either may be ahead."""
    seen = [(tokens, Path(d)) for d in directories if (tokens := tokens_seen(d)) is not None]
    return max(seen, key=lambda pair: pair[0], default=(None, None))[1]


def save_checkpoint(directory: Path, model: BertForMaskedLM, vocab: list[str], state: dict, optimizer) -> None:
    """Writes an HF-format checkpoint (config.json, vocab.txt, pytorch_model.bin, tokenizer_config.json)
    plus training state, atomically (write to a temp dir, then rename), so an interrupted save never
    leaves a broken checkpoint."""
    tmp = directory.with_name(directory.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "config.json").write_text(json.dumps(model.config.to_hf_dict(), indent=2) + "\n")
    (tmp / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (tmp / "tokenizer_config.json").write_text(
        json.dumps({"do_lower_case": False, "tokenize_chinese_chars": True}) + "\n"
    )
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, tmp / "pytorch_model.bin")
    torch.save({"optimizer": optimizer.state_dict(), **state}, tmp / "training_state.pt")
    (tmp / "training_state.json").write_text(json.dumps(state, indent=2) + "\n")
    old = directory.with_name(directory.name + ".old")
    if directory.exists():
        directory.rename(old)
    tmp.rename(directory)
    if old.exists():
        for f in old.iterdir():
            f.unlink()
        old.rmdir()


def measure_bf16_speedup(model: BertForMaskedLM, batch: torch.Tensor, masker: Masker, device: str) -> bool:
    """Times a few training steps with and without bf16 autocast; True when bf16 is faster (CPUs
    with AVX-512 BF16 run it fast through oneDNN, AVX2-only CPUs far slower than fp32)."""
    gen = torch.Generator().manual_seed(0)
    timings = {}
    for use_bf16 in (False, True, False, True):
        start = time.perf_counter()
        for _ in range(2):
            inputs, positions, targets = masker(batch, gen)
            with autocast(device, use_bf16):
                logits = masked_lm_logits(
                    model, inputs.to(device), (batch != 0).long().to(device), positions.to(device)
                ).float()
            torch.nn.functional.cross_entropy(logits, targets.to(device)).backward()
        if device == "cuda":
            torch.cuda.synchronize()
        model.zero_grad(set_to_none=True)
        timings[use_bf16] = time.perf_counter() - start  # the second (warm) measurement wins
    print(f"bf16 probe: fp32 {timings[False]:.2f}s, bf16 {timings[True]:.2f}s per 2 steps", flush=True)
    return timings[True] < timings[False]


def choose_size(
    recipe: dict,
    vocab: list[str],
    train: Corpus,
    source_names: list[str],
    budget_s: float,
    device: str,
    bf16: bool,
    explicit_tokens: bool,
) -> tuple[str, float]:
    """Times a few training steps of each AUTO_SIZES model on this device; returns the largest that
    processes AUTO_EPOCHS epochs within `budget_s` (else the fastest) and the tokens it will see
    (about 90% of the budget: the probe and evaluations take the rest)."""
    ids_of = {t: i for i, t in enumerate(vocab)}
    masker = Masker(vocab)
    rng = np.random.default_rng(0)
    order = epoch_order(
        train, source_names or ["corpus"], parse_oversampling(recipe["oversample"]) if source_names else {}, rng
    )
    epoch_tokens = float((train.offsets[order + 1] - train.offsets[order]).sum())
    sample = torch.from_numpy(
        pack_sequences(train, order[:20000], recipe["seq_len"], ids_of["[CLS]"], ids_of["[SEP]"], ids_of["[PAD]"])
    )
    throughput = {}
    for name in AUTO_SIZES:
        model = BertForMaskedLM(build_config({**recipe, **SIZES[name]}, len(vocab), ids_of["[PAD]"])).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        gen = torch.Generator().manual_seed(0)
        tokens, elapsed = 0, 0.0
        for step in range(14):
            batch = sample[(step * recipe["batch"]) % max(len(sample) - recipe["batch"], 1) :][: recipe["batch"]]
            if step == 4:  # the first steps warm up kernels and allocators
                if device == "cuda":
                    torch.cuda.synchronize()
                tokens, start = 0, time.perf_counter()
            inputs, positions, targets = masker(batch, gen, rate=recipe["mask_start"], span_share=recipe["span_share"])
            with autocast(device, bf16):
                logits = masked_lm_logits(
                    model, inputs.to(device), (batch != ids_of["[PAD]"]).long().to(device), positions.to(device)
                ).float()
            torch.nn.functional.cross_entropy(logits, targets.to(device)).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            tokens += int((batch != ids_of["[PAD]"]).sum())
        if device == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        throughput[name] = tokens / elapsed
        del model, optimizer
    usable_s = 0.9 * budget_s
    fitting = [n for n in AUTO_SIZES if throughput[n] * usable_s >= AUTO_EPOCHS * epoch_tokens]
    choice = fitting[0] if fitting else max(throughput, key=throughput.get)
    print(
        "size probe: "
        + ", ".join(
            f"{n} {throughput[n]:,.0f} tok/s ({throughput[n] * usable_s / epoch_tokens:.1f} epochs)" for n in AUTO_SIZES
        )
        + f"; epoch {epoch_tokens / 1e6:.1f} M tokens -> {choice}",
        flush=True,
    )
    return choice, throughput[choice] * usable_s


def build_config(recipe: dict, vocab_size: int, pad_id: int) -> BertConfig:
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=recipe["hidden"],
        num_hidden_layers=recipe["layers"],
        num_attention_heads=recipe["heads"],
        intermediate_size=recipe["ffn"],
        max_position_embeddings=512,
        pad_token_id=pad_id,
        layer_norm_position=recipe["block"],
        projection_bias=recipe["bias"],
        ffn_type=recipe["ffn_type"],
    )


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, dict]:
    """Parses the command line; returns (args, recipe options given explicitly)."""
    p = argparse.ArgumentParser(description="Train the default tiankong MLM on a corpus built by scripts/build-corpus.")
    p.add_argument("--corpus", type=Path, default=Path(".cache/corpus"))
    p.add_argument("--out", type=Path, default=Path(".cache/train/default"))
    p.add_argument(
        "--init-from",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="weights-only checkpoints to continue from when --out has no checkpoint (e.g. model/default/checkpoint "
        "model/progress/checkpoint): the one that has seen the most tokens; missing ones are skipped",
    )
    p.add_argument(
        "--hours", type=float, help="stop this run after this much wall-clock time (the schedule is in tokens)"
    )
    p.add_argument("--minutes", type=float, help="same as --hours, in minutes")
    p.add_argument(
        "--max-steps", type=int, default=0, help="stop after this many optimizer steps in total (0 = no limit)"
    )
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument(
        "--bf16",
        choices=("auto", "on", "off"),
        default="auto",
        help="bf16 autocast (auto: measured on CPU, on for CUDA)",
    )
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--eval-every-min", type=float, default=10.0)
    p.add_argument("--save-every-min", type=float, default=10.0)
    p.add_argument(
        "--rewarm-steps",
        type=int,
        default=300,
        help="after --init-from (no optimizer state), or when a finished run gets a larger --tokens: "
        "steps of linear learning-rate re-warm-up",
    )
    p.add_argument(
        "--size",
        choices=(*SIZES, "auto"),
        help="a named model size (sets --layers/--hidden/--heads/--ffn); auto: measure throughput "
        f"on this device and take the largest of {', '.join(AUTO_SIZES)} that sees "
        f"{AUTO_EPOCHS} epochs in the --hours/--minutes budget (fresh runs only)",
    )
    p.add_argument(
        "--export-fp16",
        type=Path,
        help="at the end, also write fp16 weights (split into <= 16 MiB files) + config to this folder",
    )
    recipe = p.add_argument_group("recipe (stored in the checkpoint; given options override the stored ones)")
    for name, default in RECIPE_DEFAULTS.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            recipe.add_argument(
                flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=f"(default {default})"
            )
        else:
            recipe.add_argument(
                flag,
                dest=name,
                type=type(default) if name != "tokens" else float,
                default=None,
                help=f"(default {default})",
            )
    args = p.parse_args(argv)
    given = {name: getattr(args, name) for name in RECIPE_DEFAULTS if getattr(args, name) is not None}
    if args.size in SIZES:
        given = {**SIZES[args.size], **given}
    if args.size == "auto" and not (args.hours or args.minutes):
        p.error("--size auto needs a time budget (--hours or --minutes)")
    if given.get("block", "pre") not in ("pre", "post"):
        p.error("--block must be 'pre' or 'post'")
    if given.get("ffn_type", "geglu") not in ("geglu", "mlp"):
        p.error("--ffn-type must be 'geglu' or 'mlp'")
    return args, given


def hold_run_lock(out: Path):
    """Takes an exclusive lock on OUT/train.lock for the rest of this process (the OS releases it
    when the process ends, however it ends) and writes this pid into it. Returns the open lock
    file (keep it referenced), or None when another run holds it: two runs on one --out would
    write the same checkpoint and log. A run stopped with SIGTERM saves its checkpoint first,
    which takes seconds, so a run started right after `kill` can find the lock still held."""
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / "train.lock", "a+")  # noqa: SIM115 - held open for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


def main(argv: list[str] | None = None) -> int:
    args, given = parse_args(argv)
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        print("train: --device cuda but torch sees no CUDA device", file=sys.stderr)
        return 2
    run_lock = hold_run_lock(args.out)
    if run_lock is None:
        holder = (args.out / "train.lock").read_text().strip() or "unknown"
        print(
            f"train: another training run (pid {holder}) is using {args.out}; wait for it to end "
            f"(after SIGTERM it saves its checkpoint, then exits) or give this one another --out",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(args.threads)
    vocab_text = (args.corpus / "vocab.txt").read_text(encoding="utf-8")
    vocab = vocab_text.split("\n")
    if vocab[-1] == "":
        vocab.pop()
    vocab_sha256 = hashlib.sha256(vocab_text.encode("utf-8")).hexdigest()
    ids_of = {t: i for i, t in enumerate(vocab)}
    cls_id, sep_id, pad_id = ids_of["[CLS]"], ids_of["[SEP]"], ids_of["[PAD]"]
    stats_path = args.corpus / "stats.json"
    source_names = json.loads(stats_path.read_text()).get("sources", []) if stats_path.exists() else []
    train, val = Corpus(args.corpus, "train"), Corpus(args.corpus, "val")
    masker = Masker(vocab)

    ckpt = args.out / "checkpoint"
    state = {
        "step": 0,
        "epoch": 0,
        "epoch_row": 0,
        "elapsed_s": 0.0,
        "tokens_seen": 0,
        "masked_seen": 0,
        "vocab_sha256": vocab_sha256,
        "recipe": dict(RECIPE_DEFAULTS),
        "segments": [],
    }
    optimizer_state = None
    rewarm_from = None  # step at which a re-warm-up started (no optimizer state, or a finished run extended)
    finished_budget = None  # the token budget a resumed local run had already completed
    weights = None
    committed = most_trained(args.init_from or [])
    resume_local = (ckpt / "training_state.pt").exists()
    if resume_local and committed is not None and (tokens_seen(committed) or 0) > (tokens_seen(ckpt) or 0):
        # A machine with an old local run and a newer snapshot pulled from the repository: progress
        # outweighs the optimizer moments a re-warm-up rebuilds. (The next save replaces the old run.)
        print(
            f"train: {committed} has seen {tokens_seen(committed) / 1e6:.1f} M tokens, more than the local "
            f"checkpoint {ckpt} ({(tokens_seen(ckpt) or 0) / 1e6:.1f} M): continuing from it (its optimizer "
            "state is not kept)"
        )
        resume_local = False
    if resume_local:
        saved = torch.load(ckpt / "training_state.pt")
        optimizer_state = saved.pop("optimizer")
        state.update(saved)
        weights = torch.load(ckpt / "pytorch_model.bin")
        origin = f"local checkpoint {ckpt}"
        stored_budget = state["recipe"].get("tokens", 0)
        finished_budget = stored_budget if state["tokens_seen"] >= stored_budget else None
    elif (init_from := committed) is not None:
        state.update(json.loads((init_from / "training_state.json").read_text()))
        weights = load_weights_dir(init_from)
        rewarm_from = state["step"]
        origin = f"weights-only checkpoint {init_from} (optimizer rebuilt, {args.rewarm_steps}-step re-warm-up)"
    if weights is not None and state.get("vocab_sha256") != vocab_sha256:
        print(
            f"train: the checkpoint was trained with another vocab ({state.get('vocab_sha256')}) than "
            f"{args.corpus / 'vocab.txt'} ({vocab_sha256}); rebuild the corpus with the same settings",
            file=sys.stderr,
        )
        return 2
    fresh = weights is None
    device_recipe = CUDA_RECIPE if device == "cuda" and fresh else {}
    recipe = {**RECIPE_DEFAULTS, **state["recipe"], **device_recipe, **given}
    if args.size == "auto" and fresh:
        budget_s = (args.hours or 0) * 3600 + (args.minutes or 0) * 60
        choice, tokens = choose_size(
            recipe, vocab, train, source_names, budget_s, device, args.bf16 != "off", explicit_tokens="tokens" in given
        )
        recipe.update(SIZES[choice])
        if "tokens" not in given:
            recipe["tokens"] = tokens
    state["recipe"] = recipe
    oversample = parse_oversampling(recipe["oversample"])
    if source_names and oversample.get(IDIOM_HEADS, 0) > 0 and "：" in ids_of:
        source_names = add_idiom_heads(train, source_names, ids_of["："])
    if optimizer_state is not None and finished_budget is not None and recipe["tokens"] > finished_budget:
        # A finished run given a larger budget: its learning rate had decayed to the floor, and
        # jumping back to the schedule's value would take oversized steps with the old moments.
        rewarm_from = state["step"]
        print(f"extending a finished run ({finished_budget / 1e6:.0f} M tokens): {args.rewarm_steps}-step re-warm-up")

    config = build_config(recipe, len(vocab), pad_id)
    torch.manual_seed(recipe["seed"])
    model = BertForMaskedLM(config)
    if weights is not None:
        model.load_state_dict(weights, strict=False)  # tied decoder weight follows the embedding
        print(
            f"resumed from {origin}: step {state['step']}, {state['tokens_seen'] / 1e6:.1f} M of "
            f"{recipe['tokens'] / 1e6:.0f} M tokens",
            flush=True,
        )
    elif recipe["position_init"] == "sinusoidal":
        with torch.no_grad():
            table = model.bert.embeddings.position_embeddings.weight
            table.copy_(sinusoidal_positions(table.shape[0], table.shape[1], config.initializer_range))
    model.to(device)
    decay = [p_ for n, p_ in model.named_parameters() if p_.dim() >= 2]
    no_decay = [p_ for n, p_ in model.named_parameters() if p_.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": recipe["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=recipe["lr"],
        betas=(0.9, 0.98),
        eps=1e-6,
    )
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)

    # Fixed validation batches: one held-out line per row (as the product sees text), 15% single
    # tokens masked with a fixed seed, so numbers stay comparable across recipes and over time.
    # Besides the overall sample (dominated by poetry, as the corpus is), up to VAL_ROWS_PER_SOURCE
    # lines of each source give a loss per source: what an oversampling choice does to each.
    def validation_batches(order: np.ndarray, seed: int) -> list[tuple[torch.Tensor, ...]]:
        gen = torch.Generator().manual_seed(seed)
        all_rows = torch.from_numpy(single_line_rows(val, order, 128, cls_id, sep_id, pad_id))
        batches = []
        for i in range(0, len(all_rows), 64):
            rows = all_rows[i : i + 64]
            width = int((rows != pad_id).sum(dim=1).max())
            rows = rows[:, :width]
            inputs, positions, targets = masker(rows, gen, rate=0.15)
            batches.append((inputs, (rows != pad_id).long(), positions, targets))
        return batches

    val_batches = validation_batches(np.random.default_rng(99).permutation(val.num_lines)[:VAL_ROWS], 99)
    source_batches = {}
    for index, name in enumerate(source_names):
        lines = np.nonzero(val.sources == index)[0]
        if len(lines):
            picked = np.random.default_rng(100 + index).permutation(lines)[:VAL_ROWS_PER_SOURCE]
            source_batches[name] = validation_batches(picked, 100 + index)

    def validate() -> dict:
        result = evaluate(model, val_batches, device, use_bf16)
        result["val_loss_by_source"] = {
            name: evaluate(model, batches, device, use_bf16)["val_loss"] for name, batches in source_batches.items()
        }
        return result

    params = sum(p_.numel() for p_ in model.parameters())
    print(
        f"model: {config.num_hidden_layers} layers x {config.hidden_size}, {config.num_attention_heads} heads, "
        f"FFN {config.intermediate_size} ({config.ffn_type}, {config.layer_norm_position}-LN, "
        f"bias {config.projection_bias}), vocab {config.vocab_size}: {params / 1e6:.2f} M parameters; "
        f"device {device}",
        flush=True,
    )

    def epoch_rows(epoch: int) -> torch.Tensor:
        rng = np.random.default_rng(recipe["seed"] + epoch)
        order = epoch_order(train, source_names or ["corpus"], oversample if source_names else {}, rng)
        return torch.from_numpy(pack_sequences(train, order, recipe["seq_len"], cls_id, sep_id, pad_id))

    rows = epoch_rows(state["epoch"])
    if args.bf16 == "auto":
        use_bf16 = True if device == "cuda" else measure_bf16_speedup(model, rows[: recipe["batch"]], masker, device)
    else:
        use_bf16 = args.bf16 == "on"
    print(
        f"bf16 autocast: {use_bf16}; {len(rows)} packed rows per epoch "
        f"({int((rows != pad_id).sum()) / 1e6:.1f} M tokens)",
        flush=True,
    )

    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(flag=True))
    gen = torch.Generator().manual_seed(recipe["seed"] * 1000 + state["step"])
    log_path = args.out / "log.jsonl"
    args.out.mkdir(parents=True, exist_ok=True)
    run_start = time.perf_counter()
    run_limit_s = (args.hours or 0) * 3600 + (args.minutes or 0) * 60
    elapsed_before = state["elapsed_s"]
    segment = {
        "device": device if device == "cpu" else torch.cuda.get_device_name(0),
        "machine": platform.processor() or platform.machine(),
        "threads": args.threads,
        "bf16": use_bf16,
        "start_step": state["step"],
        "start_tokens": state["tokens_seen"],
        "seconds": 0.0,
        "tokens": 0,
    }
    state["segments"] = [*state.get("segments", []), segment]
    last_eval = last_save = time.perf_counter()
    window_tokens, window_start = 0, time.perf_counter()
    model.train()

    def log(entry: dict) -> None:
        entry = {
            "step": state["step"],
            "hours": round(state["elapsed_s"] / 3600, 4),
            "tokens": state["tokens_seen"],
            **entry,
        }
        print(json.dumps(entry), flush=True)
        with log_path.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def update_clock() -> None:
        now = time.perf_counter() - run_start
        state["elapsed_s"] = elapsed_before + now
        segment["seconds"] = round(now, 1)
        segment["tokens"] = state["tokens_seen"] - segment["start_tokens"]

    while not stop["flag"]:
        update_clock()
        progress = state["tokens_seen"] / recipe["tokens"]
        if progress >= 1.0 or (args.max_steps and state["step"] >= args.max_steps):
            break
        if run_limit_s and time.perf_counter() - run_start >= run_limit_s:
            break
        lr = learning_rate(progress, recipe["lr"], recipe["warmup"], recipe["decay"])
        if rewarm_from is not None:
            lr *= min(1.0, (state["step"] - rewarm_from + 1) / max(args.rewarm_steps, 1))
        rate = mask_rate(progress, recipe["mask_start"], recipe["mask_end"])
        for group in optimizer.param_groups:
            group["lr"] = lr
        if state["epoch_row"] + recipe["batch"] > len(rows):
            state["epoch"] += 1
            state["epoch_row"] = 0
            rows = epoch_rows(state["epoch"])
        batch = rows[state["epoch_row"] : state["epoch_row"] + recipe["batch"]]
        state["epoch_row"] += recipe["batch"]
        attention_mask = (batch != pad_id).long()
        inputs, positions, targets = masker(batch, gen, rate=rate, span_share=recipe["span_share"])
        with autocast(device, use_bf16):
            logits = masked_lm_logits(model, inputs.to(device), attention_mask.to(device), positions.to(device)).float()
        loss = torch.nn.functional.cross_entropy(logits, targets.to(device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        n_tokens = int(attention_mask.sum())
        state["tokens_seen"] += n_tokens
        state["masked_seen"] += len(targets)
        window_tokens += n_tokens
        state["step"] += 1
        if state["step"] % 50 == 0:
            now = time.perf_counter()
            log(
                {
                    "loss": round(loss.item(), 4),
                    "lr": round(lr, 7),
                    "mask_rate": round(rate, 3),
                    "epoch": state["epoch"],
                    "tokens_per_s": round(window_tokens / (now - window_start)),
                }
            )
            window_tokens, window_start = 0, now
        now = time.perf_counter()
        if now - last_eval > args.eval_every_min * 60:
            update_clock()
            log(validate())
            last_eval = now
        if now - last_save > args.save_every_min * 60:
            update_clock()
            save_checkpoint(ckpt, model, vocab, state, optimizer)
            last_save = now

    update_clock()
    log({"final": True, **validate()})
    save_checkpoint(ckpt, model, vocab, state, optimizer)
    print(f"saved {ckpt}", flush=True)
    if args.export_fp16:
        # No vocab: it is the corpus's (the importer takes it from there), and fewer files travel back.
        files = save_weights_dir(model, None, state, args.export_fp16, dtype=torch.float16)
        print(f"wrote fp16 weights to {args.export_fp16}: {', '.join(files)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
