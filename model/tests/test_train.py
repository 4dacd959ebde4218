"""Training (model/tiankong_model/train.py): schedules, position codes, a short run on a synthetic
corpus that learns, checkpoints and resumes (from the local checkpoint and from a weights-only one),
and the GPU bundle's CPU dry run (scripts/prepare-gpu-run + run.sh + scripts/import-gpu-run)."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from conftest import REPO_ROOT
from test_train_data import VOCAB, write_corpus
from tiankong_model.checkpoint import load_checkpoint
from tiankong_model.train import learning_rate, main, mask_rate, sinusoidal_positions
from tiankong_model.weights import load_weights_dir, save_weights_dir


def test_schedule_warms_up_holds_then_decays():
    assert learning_rate(0.0, 1.0, 0.1) == 0.0
    assert learning_rate(0.05, 1.0, 0.1) == 0.5
    assert learning_rate(0.1, 1.0, 0.1) == 1.0
    assert learning_rate(0.5, 1.0, 0.1, decay=0.2) == 1.0 == learning_rate(0.8, 1.0, 0.1, decay=0.2)
    assert abs(learning_rate(0.9, 1.0, 0.1, decay=0.2, floor=0.0) - 0.5) < 1e-12
    assert abs(learning_rate(1.0, 1.0, 0.1, decay=0.2, floor=0.02) - 0.02) < 1e-12
    values = [learning_rate(p / 100, 1.0, 0.1) for p in range(10, 101)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))


def test_mask_rate_falls_from_start_to_end():
    assert mask_rate(0.0, 0.3, 0.15) == 0.3
    assert abs(mask_rate(0.5, 0.3, 0.15) - 0.225) < 1e-12
    assert mask_rate(2.0, 0.3, 0.15) == 0.15


def test_position_codes_have_the_scale_and_favour_neighbours():
    codes = sinusoidal_positions(128, 64, 0.02)
    assert abs(codes.std().item() - 0.02) < 1e-6
    similarity = codes[60] @ codes.T
    assert similarity[60] > similarity[61] > similarity[63] > similarity[70]


def synthetic_corpus(directory, lines=400):
    """Each line is one of two fixed 6-token patterns: a masked token is predictable from its neighbours."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    (directory / "stats.json").write_text(json.dumps({"sources": ["a", "b"]}))
    rng = np.random.default_rng(0)
    patterns = [[5, 6, 7, 8, 9, 10], [11, 12, 7, 9, 8, 10]]
    picks = rng.integers(0, 2, lines)
    write_corpus(directory, "train", [patterns[i] for i in picks], sources=picks)
    write_corpus(directory, "val", [patterns[0], patterns[1]] * 20, sources=[0, 1] * 20)


TINY = [
    "--layers",
    "1",
    "--hidden",
    "32",
    "--heads",
    "2",
    "--ffn",
    "64",
    "--seq-len",
    "16",
    "--batch",
    "16",
    "--lr",
    "3e-3",
    "--threads",
    "1",
    "--tokens",
    "1e9",
    "--warmup",
    "0",
    "--mask-start",
    "0.15",
    "--span-share",
    "0",
    "--oversample",
    "b=2",
    "--bf16",
    "off",
]


def read_log(out):
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


def test_training_learns_and_resumes(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    synthetic_corpus(corpus)
    common = ["--corpus", str(corpus), "--out", str(out), *TINY]
    assert main(common + ["--max-steps", "150"]) == 0
    final = [e for e in read_log(out) if e.get("final")][-1]
    assert final["step"] == 150 and final["val_top1"] > 0.6
    state = json.loads((out / "checkpoint" / "training_state.json").read_text())
    assert state["step"] == 150 and state["tokens_seen"] > 0 and state["recipe"]["hidden"] == 32
    model, vocab = load_checkpoint(out / "checkpoint")  # an ordinary checkpoint directory
    assert vocab == VOCAB and model.config.num_hidden_layers == 1 and model.config.layer_norm_position == "pre"

    # Resuming keeps the stored recipe: no size options needed, 20 more steps.
    assert (
        main(["--corpus", str(corpus), "--out", str(out), "--threads", "1", "--bf16", "off", "--max-steps", "170"]) == 0
    )
    assert [e["step"] for e in read_log(out) if e.get("final")] == [150, 170]
    resumed = json.loads((out / "checkpoint" / "training_state.json").read_text())
    assert resumed["tokens_seen"] > state["tokens_seen"] and resumed["recipe"] == state["recipe"]
    assert len(resumed["segments"]) == 2


def test_weights_only_checkpoint_continues_with_a_rewarm(tmp_path):
    corpus, first, second = tmp_path / "corpus", tmp_path / "first", tmp_path / "second"
    synthetic_corpus(corpus)
    assert main(["--corpus", str(corpus), "--out", str(first), *TINY, "--max-steps", "150"]) == 0
    model, vocab = load_checkpoint(first / "checkpoint")
    state = json.loads((first / "checkpoint" / "training_state.json").read_text())
    committed = tmp_path / "committed"
    files = save_weights_dir(model, vocab, state, committed)  # what ship-default-model commits (bf16)
    assert "model.safetensors" in files
    assert (
        main(
            [
                "--corpus",
                str(corpus),
                "--out",
                str(second),
                "--init-from",
                str(committed),
                "--threads",
                "1",
                "--bf16",
                "off",
                "--max-steps",
                "160",
                "--rewarm-steps",
                "5",
            ]
        )
        == 0
    )
    log = read_log(second)
    assert log[-1]["step"] == 160 and log[-1]["val_top1"] > 0.6  # continued, not restarted from scratch
    assert json.loads((second / "checkpoint" / "training_state.json").read_text())["tokens_seen"] > state["tokens_seen"]


def test_the_most_trained_committed_checkpoint_is_continued_and_progress_never_goes_back(tmp_path, capsys):
    corpus, early, late = tmp_path / "corpus", tmp_path / "early", tmp_path / "late"
    synthetic_corpus(corpus)
    assert main(["--corpus", str(corpus), "--out", str(early), *TINY, "--max-steps", "20"]) == 0
    assert main(["--corpus", str(corpus), "--out", str(late), *TINY, "--max-steps", "60"]) == 0
    release, progress = tmp_path / "release", tmp_path / "progress"
    script = [str(REPO_ROOT / "scripts" / "save-training-progress")]

    def run(ckpt):
        return subprocess.run([*script, str(ckpt / "checkpoint"), str(progress)], capture_output=True, text=True)

    model, vocab = load_checkpoint(early / "checkpoint")
    save_weights_dir(model, vocab, json.loads((early / "checkpoint" / "training_state.json").read_text()), release)

    saved = run(late)
    assert saved.returncode == 0, saved.stderr
    late_tokens = json.loads((late / "checkpoint" / "training_state.json").read_text())["tokens_seen"]
    assert json.loads((progress / "training_state.json").read_text())["tokens_seen"] == late_tokens
    assert f"{late_tokens / 1e6:.1f} M tokens" in saved.stdout
    before = (progress / "model.safetensors").read_bytes()
    refused = run(early)  # an older run must not overwrite later progress
    assert refused.returncode != 0 and "holds a later run" in refused.stderr
    assert (progress / "model.safetensors").read_bytes() == before

    # Given both (and one that does not exist), training continues from the later one: step 60 on.
    resumed = tmp_path / "resumed"

    def resume(out, *init_from, steps):
        args = ["--corpus", str(corpus), "--out", str(out), "--threads", "1", "--bf16", "off", "--rewarm-steps", "5"]
        return main([*args, "--init-from", *map(str, init_from), "--max-steps", str(steps)])

    assert resume(resumed, release, tmp_path / "absent", progress, steps=65) == 0
    assert [e["step"] for e in read_log(resumed) if e.get("final")] == [65]
    assert json.loads((resumed / "checkpoint" / "training_state.json").read_text())["segments"][-1]["start_step"] == 60

    # A local run behind the committed snapshot (an old .cache beside a newer clone) gives way to it.
    behind = tmp_path / "behind"
    assert main(["--corpus", str(corpus), "--out", str(behind), *TINY, "--max-steps", "10"]) == 0
    assert resume(behind, progress, steps=62) == 0
    assert "more than the local checkpoint" in capsys.readouterr().out
    state = json.loads((behind / "checkpoint" / "training_state.json").read_text())
    assert state["step"] == 62 and state["segments"][-1]["start_step"] == 60


def test_a_finished_run_given_more_tokens_rewarms(tmp_path, capsys):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    synthetic_corpus(corpus)
    tiny = [a if a != "1e9" else "3000" for a in TINY]  # a budget of ~15 steps
    assert main(["--corpus", str(corpus), "--out", str(out), *tiny]) == 0
    done = json.loads((out / "checkpoint" / "training_state.json").read_text())
    assert done["tokens_seen"] >= 3000
    common = ["--corpus", str(corpus), "--out", str(out), "--threads", "1", "--bf16", "off"]
    assert main(common + ["--tokens", "30000", "--rewarm-steps", "1000", "--max-steps", "60"]) == 0
    assert "extending a finished run" in capsys.readouterr().out
    # The schedule says 3e-3 here (constant phase); the re-warm-up starts from ~0 instead.
    first = next(e for e in read_log(out) if e["step"] > done["step"] and "lr" in e)
    assert first["lr"] < 3e-4


def test_weights_split_into_files_under_the_limit(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    synthetic_corpus(corpus)
    assert main(["--corpus", str(corpus), "--out", str(out), *TINY, "--max-steps", "1"]) == 0
    model, vocab = load_checkpoint(out / "checkpoint")
    files = save_weights_dir(model, None, {"step": 1}, tmp_path / "split", max_file_bytes=40 * 1024)
    shards = [f for f in files if f.endswith(".safetensors")]
    assert len(shards) > 1 and "model.safetensors.index.json" in files and "vocab.txt" not in files
    assert all((tmp_path / "split" / f).stat().st_size <= 40 * 1024 for f in shards)
    loaded = load_weights_dir(tmp_path / "split")
    for name, tensor in model.state_dict().items():
        if name in loaded:
            assert np.allclose(loaded[name].numpy(), tensor.numpy(), atol=0.02 * np.abs(tensor.numpy()).max() + 1e-6)
    (tmp_path / "split" / shards[0]).unlink()
    with pytest.raises(ValueError, match="missing"):
        load_weights_dir(tmp_path / "split")


def test_gpu_bundle_dry_run_on_cpu(tmp_path):
    """scripts/prepare-gpu-run packs the corpus and code; its run.sh trains (here: DEVICE=cpu, tiny
    size, a few seconds) and writes fp16 weights that scripts/import-gpu-run turns into a checkpoint
    that exports. The same path a GPU machine runs, known to work before any GPU time is spent."""
    corpus, bundle, out = tmp_path / "corpus", tmp_path / "bundle", tmp_path / "out"
    synthetic_corpus(corpus, lines=2000)
    run = lambda *cmd, **env: subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )
    prepared = run("scripts/prepare-gpu-run", "--corpus", str(corpus), "--out", str(bundle))
    assert prepared.returncode == 0, prepared.stderr
    size = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file())
    assert size < 40e6
    trained = run(
        "bash", str(bundle / "run.sh"), str(out), "0.15", DEVICE="cpu", SIZE="tiny", PYTHON="/usr/bin/python3"
    )
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-2000:]
    returned = [f for f in out.rglob("*") if f.is_file()]
    assert len(returned) <= 8 and all(f.stat().st_size <= 16 * 2**20 for f in returned)
    assert any(e.get("final") for e in read_log(out))
    checkpoint = tmp_path / "checkpoint"
    imported = run("bash", "-c", f"cp {corpus}/vocab.txt {out}/weights/ && scripts/import-gpu-run {out} {checkpoint}")
    assert imported.returncode == 0, imported.stderr
    model, vocab = load_checkpoint(checkpoint)
    assert vocab == VOCAB and model.config.hidden_size == 32


def test_training_report_plots_the_validation_curve(tmp_path):
    from tiankong_model.training_report import main as report_main

    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {"step": 50, "tokens": 1_000_000, "loss": 7.0},
                {"step": 100, "tokens": 2_000_000, "val_loss": 6.5, "val_top1": 0.1},
                {"step": 200, "tokens": 4_000_000, "val_loss": 5.5, "val_top1": 0.2},
            ]
        )
        + "\n"
    )
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps(
            {
                "tokens_seen": 4_000_000,
                "step": 200,
                "epoch": 0,
                "elapsed_s": 3600,
                "segments": [{"device": "cpu", "seconds": 3600}],
            }
        )
    )
    assert report_main([str(log), str(state), str(tmp_path / "curve.svg"), "--json", str(tmp_path / "r.json")]) == 0
    svg = (tmp_path / "curve.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<circle") == 2
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["hours"] == 1.0 and [p["val_loss"] for p in report["curve"]] == [6.5, 5.5]


def test_a_second_run_on_the_same_out_is_refused_while_the_first_holds_it(tmp_path, capsys):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    synthetic_corpus(corpus)
    common = ["--corpus", str(corpus), "--out", str(out), *TINY, "--max-steps", "5"]
    out.mkdir(parents=True)
    # Another process holds the lock, as a running (or still saving) training run does.
    holder = subprocess.Popen(
        [
            "/usr/bin/python3",
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); "
            "f.seek(0); f.truncate(); f.write('4242\\n'); f.flush(); print('held', flush=True); time.sleep(60)",
            str(out / "train.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(common) == 2
        err = capsys.readouterr().err
        assert "another training run (pid 4242)" in err and str(out) in err
        assert not (out / "checkpoint").exists() and not (out / "log.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    # Once the holder is gone (the OS released its lock) the run goes ahead and takes the lock.
    assert main(common) == 0
    assert (out / "train.lock").read_text().strip() == str(os.getpid())
