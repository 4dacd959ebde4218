"""The lean graph (lean_graph.py, scripts/export-model --lean) against the torch export it replaces:
the contrib operators it uses run in onnxruntime-node and in onnxruntime-web's wasm build, and its
outputs equal the torch export's within fp32 tolerance in both runtimes, for every graph kind and
for both block architectures (post-LN BERT, the default's pre-LN / GeGLU / no projection bias),
on random weights and on the real default checkpoint, quantized forms included."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from conftest import REPO_ROOT, run_onnx, sample_batch
from onnx import TensorProto, helper, numpy_helper
from tiankong_model.bert import BertConfig, BertForMaskedLM
from tiankong_model.checkpoint import load_checkpoint
from tiankong_model.export_model import export_model
from tiankong_model.head import read_head
from tiankong_model.lean_graph import MS_DOMAIN, export_lean, op_counts
from tiankong_model.onnx_graph import export_fp32
from tiankong_model.quantize import DEFAULT_PATTERN, quantize_dynamic_int8, store_weights_fp16
from tiankong_model.vocab import read_vocab

RUN_TYPED = REPO_ROOT / "model" / "tests" / "run_typed_onnx.mjs"
DEFAULT_CHECKPOINT = REPO_ROOT / "model" / "default" / "checkpoint"
HELD_OUT = REPO_ROOT / ".cache" / "corpus" / "val"
RUNTIMES = ["node", "web"]


def run_typed(models: list[tuple[Path, dict]], runtime: str, threads: int = 2) -> list[dict]:
    """Runs each (model path, feeds name -> array) in one Node process; per model either
    {"outputs": {name: array}} or {"error": message}."""
    dtypes = {np.float32: "float32", np.int32: "int32", np.int64: "int64"}
    request = {
        "runtime": runtime,
        "threads": threads,
        "models": [
            {
                "path": str(path),
                "feeds": {
                    k: {"dtype": dtypes[v.dtype.type], "dims": list(v.shape), "data": v.ravel().tolist()}
                    for k, v in feeds.items()
                },
            }
            for path, feeds in models
        ],
    }
    result = subprocess.run(
        ["node", str(RUN_TYPED)], input=json.dumps(request), capture_output=True, text=True, cwd=REPO_ROOT, timeout=300
    )
    assert result.returncode == 0, f"status {result.returncode}: {result.stderr[-3000:]}"
    out = []
    for r in json.loads(result.stdout)["results"]:
        if "outputs" in r:
            r = {"outputs": {k: np.asarray(v["data"], np.float64).reshape(v["dims"]) for k, v in r["outputs"].items()}}
        out.append(r)
    return out


# --- contrib operators, one tiny graph each, against numpy -----------------------------------

B, S, HEADS, HEAD_DIM = 2, 5, 2, 4
D = HEADS * HEAD_DIM


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "probe", inputs, outputs, initializer=list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS_DOMAIN, 1)])
    proto.ir_version = 8
    return proto


def _f(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def _i32(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.INT32, dims)


def _ms(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain=MS_DOMAIN, **attrs)


def _init(array, name):
    return numpy_helper.from_array(np.asarray(array), name)


def _gelu(x):
    return 0.5 * x * (1 + torch.erf(torch.from_numpy(x) / np.sqrt(2)).numpy())


def _layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps) * gamma + beta


def _attention(q, k, v, mask):
    """softmax(QKᵀ/√d − 10000·(1 − mask)) V per head; q [B, Sq, D], k/v [B, L, D], mask [B, L]."""

    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], HEADS, HEAD_DIM).transpose(0, 2, 1, 3)

    scores = heads(q) @ heads(k).transpose(0, 1, 3, 2) / np.sqrt(HEAD_DIM) - 10000.0 * (1 - mask[:, None, None, :])
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    context = weights @ heads(v)
    return context.transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], D)


def contrib_cases() -> dict[str, tuple[onnx.ModelProto, dict, tuple]]:
    """name -> (model, feeds, expected outputs in order). The first group is what lean_graph.py
    uses; the rest records what else the wasm build runs (for later graph work)."""
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    mask = np.ones((B, S), np.int32)
    mask[1, 3:] = 0
    q, k, v, x, skip = f32(B, S, D), f32(B, S, D), f32(B, S, D), f32(B, S, D), f32(B, S, D)
    bias3, bias, gamma, beta, rows = f32(3 * D) * 0.1, f32(D) * 0.1, 1 + f32(D) * 0.1, f32(D) * 0.1, f32(S, D)
    qkv_in = [_f("q", [None, None, D]), _f("k", [None, None, D]), _f("v", [None, None, D]), _i32("mask", [None, None])]
    qkv_feeds = {"q": q, "k": k, "v": v, "mask": mask}
    total = x + skip + bias
    cases = {
        "MultiHeadAttention (Q/K/V [B,S,hidden], key_padding_mask [B,S])": (
            _model(
                [_ms("MultiHeadAttention", ["q", "k", "v", "", "mask"], ["y"], num_heads=HEADS)],
                qkv_in,
                [_f("y", None)],
            ),
            qkv_feeds,
            (_attention(q, k, v, mask),),
        ),
        "MultiHeadAttention (bias)": (
            _model(
                [_ms("MultiHeadAttention", ["q", "k", "v", "b", "mask"], ["y"], num_heads=HEADS)],
                qkv_in,
                [_f("y", None)],
                [_init(bias3, "b")],
            ),
            qkv_feeds,
            (_attention(q + bias3[:D], k + bias3[D : 2 * D], v + bias3[2 * D :], mask),),
        ),
        "MultiHeadAttention (2 query rows over 5 keys)": (
            _model(
                [_ms("MultiHeadAttention", ["q", "k", "v", "", "mask"], ["y"], num_heads=HEADS)],
                qkv_in,
                [_f("y", None)],
            ),
            {**qkv_feeds, "q": q[:, [1, 3]]},
            (_attention(q[:, [1, 3]], k, v, mask),),
        ),
        "SkipLayerNormalization (bias, sum output)": (
            _model(
                [_ms("SkipLayerNormalization", ["x", "s", "g", "b", "sb"], ["y", "", "", "sum"], epsilon=1e-12)],
                [_f("x", [None, None, D]), _f("s", [None, None, D])],
                [_f("y", None), _f("sum", None)],
                [_init(gamma, "g"), _init(beta, "b"), _init(bias, "sb")],
            ),
            {"x": x, "s": skip},
            (_layer_norm(total, gamma, beta), total),
        ),
        "SkipLayerNormalization (skip [S,hidden] broadcast)": (
            _model(
                [_ms("SkipLayerNormalization", ["x", "s", "g", "b"], ["y"], epsilon=1e-12)],
                [_f("x", [None, None, D]), _f("s", [None, D])],
                [_f("y", None)],
                [_init(gamma, "g"), _init(beta, "b")],
            ),
            {"x": x, "s": rows},
            (_layer_norm(x + rows, gamma, beta),),
        ),
        "Gelu": (
            _model([_ms("Gelu", ["x"], ["y"])], [_f("x", [None, None, D])], [_f("y", None)]),
            {"x": x},
            (_gelu(x),),
        ),
        "BiasGelu": (
            _model(
                [_ms("BiasGelu", ["x", "b"], ["y"])], [_f("x", [None, None, D])], [_f("y", None)], [_init(bias, "b")]
            ),
            {"x": x},
            (_gelu(x + bias),),
        ),
        "FastGelu (bias)": (
            _model(
                [_ms("FastGelu", ["x", "b"], ["y"])], [_f("x", [None, None, D])], [_f("y", None)], [_init(bias, "b")]
            ),
            {"x": x},
            (0.5 * (x + bias) * (1 + np.tanh(np.sqrt(2 / np.pi) * ((x + bias) + 0.044715 * (x + bias) ** 3))),),
        ),
    }
    # Not used by the lean graph; recorded because they run too.
    weights = f32(D, 3 * D)
    projected = x @ weights + bias3
    vocab, words, positions = 11, f32(11, D), f32(16, D)
    ids = rng.integers(0, vocab, (B, S)).astype(np.int32)
    cases |= {
        "Attention (weights and bias inputs, raw mask [B,S])": (
            _model(
                [_ms("Attention", ["x", "w", "b", "mask"], ["y"], num_heads=HEADS)],
                [_f("x", [None, None, D]), _i32("mask", [None, None])],
                [_f("y", None)],
                [_init(weights, "w"), _init(bias3, "b")],
            ),
            {"x": x, "mask": mask},
            (_attention(projected[..., :D], projected[..., D : 2 * D], projected[..., 2 * D :], mask),),
        ),
        "EmbedLayerNormalization (int32 ids, no segments)": (
            _model(
                [
                    _ms(
                        "EmbedLayerNormalization",
                        ["ids", "", "we", "pe", "", "g", "b", "mask"],
                        ["y", "mi"],
                        epsilon=1e-12,
                    )
                ],
                [_i32("ids", [None, None]), _i32("mask", [None, None])],
                [_f("y", None), _i32("mi", None)],
                [_init(words, "we"), _init(positions, "pe"), _init(gamma, "g"), _init(beta, "b")],
            ),
            {"ids": ids, "mask": mask},
            (_layer_norm(words[ids] + positions[:S], gamma, beta), mask.sum(1)),
        ),
        "SkipSimplifiedLayerNormalization": (
            _model(
                [_ms("SkipSimplifiedLayerNormalization", ["x", "s", "g"], ["y"], epsilon=1e-6)],
                [_f("x", [None, None, D]), _f("s", [None, None, D])],
                [_f("y", None)],
                [_init(gamma, "g")],
            ),
            {"x": x, "s": skip},
            ((x + skip) / np.sqrt(((x + skip) ** 2).mean(-1, keepdims=True) + 1e-6) * gamma,),
        ),
        "QuickGelu": (
            _model([_ms("QuickGelu", ["x"], ["y"], alpha=1.702)], [_f("x", [None, None, D])], [_f("y", None)]),
            {"x": x},
            (x / (1 + np.exp(-1.702 * x)),),
        ),
        "FusedMatMul (transB)": (
            _model(
                [_ms("FusedMatMul", ["x", "wt"], ["y"], transB=1)],
                [_f("x", [None, None, D])],
                [_f("y", None)],
                [_init(weights.T.copy(), "wt")],
            ),
            {"x": x},
            (x @ weights,),
        ),
    }
    return cases


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_contrib_operators_run_and_compute_what_they_document(runtime, tmp_path):
    cases = contrib_cases()
    paths = []
    for i, (proto, _, _) in enumerate(cases.values()):
        onnx.save(proto, tmp_path / f"op{i}.onnx")
        paths.append(tmp_path / f"op{i}.onnx")
    results = run_typed([(p, c[1]) for p, c in zip(paths, cases.values(), strict=True)], runtime)
    for (name, (_, _, expected)), result in zip(cases.items(), results, strict=True):
        assert "outputs" in result, f"{name} fails in {runtime}: {result.get('error')}"
        for got, want in zip(result["outputs"].values(), expected, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4, err_msg=f"{name} in {runtime}")


def test_what_the_lean_graph_avoids_fails_in_wasm(tmp_path):
    """Why MultiHeadAttention gets Q, K and V apart and Attention is not used: packed QKV is not
    implemented for CPU, and Attention without its bias input is refused by wasm (and crashes
    onnxruntime-node 1.30, which is why this runs only in wasm)."""
    packed = _model(
        [_ms("MultiHeadAttention", ["qkv", "", "", "", "mask"], ["y"], num_heads=HEADS)],
        [_f("qkv", [None, None, HEADS, 3, HEAD_DIM]), _i32("mask", [None, None])],
        [_f("y", None)],
    )
    unbiased = _model(
        [_ms("Attention", ["x", "w", "", "mask"], ["y"], num_heads=HEADS)],
        [_f("x", [None, None, D]), _i32("mask", [None, None])],
        [_f("y", None)],
        [_init(np.ones((D, 3 * D), np.float32), "w")],
    )
    onnx.save(packed, tmp_path / "packed.onnx")
    onnx.save(unbiased, tmp_path / "unbiased.onnx")
    mask = np.ones((B, S), np.int32)
    results = run_typed(
        [
            (tmp_path / "packed.onnx", {"qkv": np.zeros((B, S, HEADS, 3, HEAD_DIM), np.float32), "mask": mask}),
            (tmp_path / "unbiased.onnx", {"x": np.zeros((B, S, D), np.float32), "mask": mask}),
        ],
        "web",
    )
    assert "not implemented for CPU" in results[0]["error"]
    assert "bias" in results[1]["error"]


# --- the lean graph against the torch export --------------------------------------------------

ARCHITECTURES = {
    "post-LN BERT": dict(),
    "pre-LN GeGLU, no projection bias (default)": dict(
        layer_norm_position="pre", projection_bias=False, ffn_type="geglu"
    ),
    "pre-LN with biases": dict(layer_norm_position="pre"),
    "post-LN GeGLU with biases, tanh gelu": dict(ffn_type="geglu", hidden_act="gelu_new"),
}
KINDS = ["core", "mask-only", "full"]


def small_config(layers: int = 2, **architecture) -> BertConfig:
    """The small BERT most tests export: 64 wide, 4 heads, FFN 96, 300 tokens, 64 positions."""
    return BertConfig(
        vocab_size=300,
        hidden_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        intermediate_size=96,
        max_position_embeddings=64,
        **architecture,
    )


def trained_looking(config: BertConfig, seed: int = 0) -> BertForMaskedLM:
    """A random model with non-zero biases, LayerNorm gains away from 1 and larger weights (larger
    logit margins), so a wrong bias, gain or residual shows."""
    torch.manual_seed(seed)
    model = BertForMaskedLM(config).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("bias"):
                param.copy_(torch.randn(param.shape, generator=generator) * 0.1)
            elif param.dim() == 1:  # LayerNorm gains
                param.copy_(1 + torch.randn(param.shape, generator=generator) * 0.1)
            else:
                param.mul_(4)
    return model


def feeds_for(model: BertForMaskedLM, kind: str, batches: list[dict]) -> list[dict]:
    """The batches as the graph kind takes them (core: the word-embedding rows instead of ids)."""
    if kind != "core":
        return batches
    table = model.bert.embeddings.word_embeddings.weight.detach().numpy()
    return [
        {
            "inputs_embeds": table[b["input_ids"]],
            "attention_mask": b["attention_mask"],
            "mask_positions": b["mask_positions"],
        }
        for b in batches
    ]


def assert_same_outputs(lean: list[np.ndarray], plain: list[np.ndarray], what: str) -> None:
    """Equal within fp32 rounding of the different kernels (errors ~1e-6 of the output's scale)."""
    for a, b in zip(lean, plain, strict=True):
        assert a.shape == b.shape, what
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, atol=2e-5 * scale, rtol=0, err_msg=what)


def compare_in_both_runtimes(pairs: list[tuple[Path, Path, list[dict]]], what: str) -> None:
    """For each (lean graph, torch graph, batches): equal outputs in onnxruntime-node and -web, all
    runs of one runtime in one Node process (sessions are cheap at these sizes, processes are not)."""
    jobs = [(path, feeds) for lean, plain, batches in pairs for feeds in batches for path in (lean, plain)]
    for runtime in RUNTIMES:
        results = run_typed(jobs, runtime)
        for i in range(0, len(jobs), 2):
            for r in results[i : i + 2]:
                assert "outputs" in r, f"{what}, {jobs[i][0].name}, {runtime}: {r.get('error')}"
            lean, plain = (next(iter(r["outputs"].values())) for r in results[i : i + 2])
            assert_same_outputs([lean], [plain], f"{what}, {jobs[i][0].name}, {runtime}")


def typed(batches: list[dict]) -> list[dict]:
    """Feeds as run_typed takes them: float32 embeddings, int64 everything else."""
    return [{k: np.asarray(v, np.float32 if k == "inputs_embeds" else np.int64) for k, v in b.items()} for b in batches]


def interface_feeds(proto: onnx.ModelProto, batches: list[dict]) -> list[dict]:
    """The batches restricted to the graph's inputs (run_typed feeds exactly what it is given)."""
    names = [i.name for i in proto.graph.input]
    return [{n: b[n] for n in names} for b in batches]


def export_pair(model, kind: str, directory: Path, batches: list[dict], **lean_options) -> tuple[Path, Path, list]:
    """Saves the lean and the torch graph of `kind`; returns them with the batches they take."""
    types = lean_options.get("token_type_ids", False)
    lean, plain = export_lean(model, kind, **lean_options), export_fp32(model, kind, token_type_ids=types)
    suffix = "-".join([kind, *sorted(lean_options)])
    onnx.save(lean, directory / f"{suffix}-lean.onnx")
    onnx.save(plain, directory / f"{suffix}-plain.onnx")
    feeds = typed(interface_feeds(plain, feeds_for(model, kind, batches)))
    return directory / f"{suffix}-lean.onnx", directory / f"{suffix}-plain.onnx", feeds


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_lean_equals_torch_export_for_every_kind_in_both_runtimes(arch, tmp_path):
    config = small_config(**ARCHITECTURES[arch])
    model = trained_looking(config)
    batches = [sample_batch(config.vocab_size, seed) for seed in range(2)]  # padded rows, 2 masks
    compare_in_both_runtimes([export_pair(model, kind, tmp_path, batches) for kind in KINDS], arch)


def test_fused_projections_and_token_types_equal_the_torch_export(tmp_path):
    """The fuse_projections variant (one MatMul + Split for Q/K/V and for GeGLU) and the
    token_type_ids input (no type row folded into the positions)."""
    model = trained_looking(small_config(layer_norm_position="pre", ffn_type="geglu"))
    batches = [sample_batch(300, seed) for seed in range(2)]
    batches[1]["token_type_ids"][:, 4:] = 1
    pairs = [
        export_pair(model, "core", tmp_path, batches, fuse_projections=True),
        export_pair(model, "mask-only", tmp_path, batches, fuse_projections=True),
        export_pair(model, "mask-only", tmp_path, batches, token_type_ids=True),
    ]
    compare_in_both_runtimes(pairs, "fused / token types")


def test_bert_base_shaped_layers_equal_the_torch_export(tmp_path):
    """bert-base-chinese's layer shape (768 wide, 12 heads, FFN 3072, post-LN, biases), two layers."""
    config = BertConfig(vocab_size=500, num_hidden_layers=2, max_position_embeddings=128)
    torch.manual_seed(0)
    model = BertForMaskedLM(config).eval()
    batches = [sample_batch(500, seed, seq=18) for seed in range(2)]
    compare_in_both_runtimes([export_pair(model, kind, tmp_path, batches) for kind in ("core", "full")], "bert-base")


def test_the_graph_is_lean():
    """No shape arithmetic, fused attention and LayerNorms: what the graph should keep being."""
    config = small_config(3, **ARCHITECTURES["pre-LN GeGLU, no projection bias (default)"])
    model = trained_looking(config)
    for kind in KINDS:
        counts = op_counts(export_lean(model, kind))
        for absent in ("Reshape", "Concat", "Range", "Expand", "Where", "Equal", "ConstantOfShape", "Sub", "Div"):
            assert absent not in counts, (kind, absent, counts)
        assert counts["Shape"] == 1 and counts.get("Transpose", 0) == (0 if kind == "core" else 1), counts
        assert counts[f"{MS_DOMAIN}:MultiHeadAttention"] == 3
        assert counts[f"{MS_DOMAIN}:SkipLayerNormalization"] == 2 * 3 + 1  # embeddings + 2 per layer
        assert counts["LayerNormalization"] == 2  # the first layer's, the head's
        # the last layer reads its queries and residual at the masks only
        assert counts.get("GatherND", 0) == (0 if kind == "full" else 2)
    # 11 nodes a layer (3 projections, attention, output projection, 2 SkipLayerNorms, 2 GeGLU
    # MatMuls, Gelu, Mul) + embeddings, mask, head: the torch export has ~57 a layer, ~47 after ORT
    assert len(export_lean(model, "core").graph.node) <= 11 * 3 + 16
    post_ln = trained_looking(BertConfig(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=4))
    counts = op_counts(export_lean(post_ln, "core"))
    assert counts["GatherND"] == 1  # post-LN: the last layer's queries are its residual rows
    assert f"{MS_DOMAIN}:BiasGelu" in counts and "LayerNormalization" in counts and "Add" not in counts


def test_lean_export_option_writes_the_same_interface_and_quantizes(tiny_checkpoint, tmp_path):
    """scripts/export-model --lean: same model.json interface as the torch export; the INT8,
    fp16-weights passes apply (each within the same tolerance as for the torch export)."""
    quiet = dict(log=lambda *_: None, graph="core")
    export_model(tiny_checkpoint, tmp_path / "plain", fp32=True, **quiet)
    export_model(tiny_checkpoint, tmp_path / "lean", fp32=True, lean=True, **quiet)
    export_model(tiny_checkpoint, tmp_path / "lean-int8", lean=True, **quiet)
    export_model(tiny_checkpoint, tmp_path / "lean-fp16", fp16_weights=True, lean=True, **quiet)
    manifests = {n: json.loads((tmp_path / n / "model.json").read_text()) for n in ("plain", "lean", "lean-int8")}
    for key in ("inputs", "outputs", "logits", "architecture", "head"):
        assert manifests["lean"][key] == manifests["plain"][key]
    assert manifests["lean-int8"]["quantization"]["quantized_matmuls"] > 0
    int8 = onnx.load(tmp_path / "lean-int8" / "model.onnx")
    assert not any(n.op_type == "MatMul" and n.input[1].endswith("weight_t") for n in int8.graph.node)
    model, _ = load_checkpoint(tiny_checkpoint)
    batches = feeds_for(model, "core", [sample_batch(model.config.vocab_size, seed) for seed in range(3)])
    for runtime in RUNTIMES:
        reference = run_onnx(tmp_path / "plain" / "model.onnx", batches, runtime, threads=2)
        assert_same_outputs(run_onnx(tmp_path / "lean" / "model.onnx", batches, runtime, threads=2), reference, runtime)
        for form in ("lean-int8", "lean-fp16"):
            got = np.concatenate([h.ravel() for h in run_onnx(tmp_path / form / "model.onnx", batches, runtime)])
            assert np.corrcoef(np.concatenate([h.ravel() for h in reference]), got)[0, 1] > 0.99, (form, runtime)


def test_quantizers_see_every_weight_of_the_lean_graph():
    """Every weight matrix of the lean graph is a MatMul B initializer, so the passes convert as many
    matrices as for the torch export (the tied decoder of a mask-only graph included)."""
    model = trained_looking(small_config(**ARCHITECTURES["pre-LN GeGLU, no projection bias (default)"]))
    for kind in ("core", "mask-only"):
        embedding = None if kind == "core" else "bert.embeddings.word_embeddings.weight"
        lean_int8 = quantize_dynamic_int8(export_lean(model, kind), embedding, DEFAULT_PATTERN, False)
        plain_int8 = quantize_dynamic_int8(export_fp32(model, kind), embedding, DEFAULT_PATTERN, False)
        # the lean graph splits GeGLU's matrix in two (value, gate): one product more per layer
        assert lean_int8["quantized_matmuls"] == plain_int8["quantized_matmuls"] + 2
        lean_fp16 = store_weights_fp16(export_lean(model, kind))
        plain_fp16 = store_weights_fp16(export_fp32(model, kind))
        assert lean_fp16["converted_matrices"] >= plain_fp16["converted_matrices"]


# --- the real default checkpoint --------------------------------------------------------------

needs_default = pytest.mark.skipif(
    not (DEFAULT_CHECKPOINT / "config.json").is_file(), reason="no model/default/checkpoint"
)


def held_out_cases(vocab: list[str], count: int, seed: int = 0, max_chars: int = 62) -> list[tuple[list[int], int]]:
    """(ids with [CLS]/[SEP], mask position) for `count` held-out lines (.cache/corpus/val), one Han
    character masked each. Only lines whose every character is a vocab token are used: BERT's
    tokenizer then gives one token per character, so the ids need no tokenizer here."""
    index = {token: i for i, token in enumerate(vocab)}
    rng = np.random.default_rng(seed)
    lines = []
    for path in sorted(HELD_OUT.glob("*.txt")):
        lines += [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if 4 <= len(line) <= max_chars and all(ch in index for ch in line)]
    cases = []
    for line in rng.permutation(np.array(lines, dtype=object))[:count]:
        han = [i for i, ch in enumerate(line) if "\u4e00" <= ch <= "\u9fff"]
        if not han:
            continue
        position = int(rng.choice(han)) + 1
        ids = [index["[CLS]"], *(index[ch] for ch in line), index["[SEP]"]]
        ids[position] = index["[MASK]"]
        cases.append((ids, position))
    return cases


def core_logits(model_dir: Path, cases: list[tuple[list[int], int]], runtime: str) -> np.ndarray:
    """Logits [cases, vocab] of a core export the way the runtime computes them (head.bin rows in,
    hidden states at the mask, hidden · tableᵀ + bias), one sequence per run."""
    head = read_head(model_dir / "head.bin")
    feeds = [
        {
            "inputs_embeds": head["table"][np.array([ids])],
            "attention_mask": np.ones((1, len(ids)), np.int64),
            "mask_positions": np.array([[position]], np.int64),
        }
        for ids, position in cases
    ]
    hidden = run_onnx(model_dir / "model.onnx", feeds, runtime, threads=2)
    return np.stack([h[0, 0] for h in hidden]) @ head["table"].T + head["bias"]


@needs_default
def test_default_checkpoint_lean_equals_torch_export_on_random_and_real_input(tmp_path):
    model, vocab = load_checkpoint(DEFAULT_CHECKPOINT)
    random = [sample_batch(model.config.vocab_size, seed, seq=20) for seed in range(2)]
    real = [
        {
            "input_ids": np.array([ids]),
            "attention_mask": np.ones((1, len(ids)), np.int64),
            "mask_positions": np.array([[position]]),
        }
        for ids, position in held_out_cases(vocab, 6)
    ] or [sample_batch(model.config.vocab_size, 9, batch=1)]
    onnx.save(export_lean(model, "core"), tmp_path / "lean.onnx")
    onnx.save(export_fp32(model, "core"), tmp_path / "plain.onnx")
    feeds = feeds_for(model, "core", random + real)
    for runtime in RUNTIMES:
        assert_same_outputs(
            run_onnx(tmp_path / "lean.onnx", feeds, runtime, threads=2),
            run_onnx(tmp_path / "plain.onnx", feeds, runtime, threads=2),
            runtime,
        )


def lean_agreement(count: int, work: Path, runtime: str = "web") -> dict:
    """Top-1 agreement and logit differences of the lean vs the torch graph of the default checkpoint
    over `count` held-out lines, both in the shipped form (fp16-stored weights, f16 head.bin)."""
    for form, lean in (("plain", False), ("lean", True)):
        export_model(
            DEFAULT_CHECKPOINT,
            work / form,
            graph="core",
            fp16_weights=True,
            head_dtype="f16",
            lean=lean,
            log=lambda *_: None,
        )
    cases = held_out_cases(read_vocab(DEFAULT_CHECKPOINT / "vocab.txt"), count)
    plain, lean = (core_logits(work / form, cases, runtime) for form in ("plain", "lean"))
    top5_plain = np.argsort(-plain, axis=1)[:, :5]
    top5_lean = np.argsort(-lean, axis=1)[:, :5]
    return {
        "cases": len(cases),
        "runtime": runtime,
        "top1_agreement": float((plain.argmax(1) == lean.argmax(1)).mean()),
        "top5_same_set": float(np.mean([set(a) == set(b) for a, b in zip(top5_plain, top5_lean, strict=True)])),
        "max_abs_logit_diff": float(np.abs(plain - lean).max()),
        "mean_abs_logit_diff": float(np.abs(plain - lean).mean()),
        "logit_scale": float(np.abs(plain).max()),
    }


@needs_default
@pytest.mark.skipif(not HELD_OUT.is_dir(), reason="no held-out corpus (.cache/corpus/val)")
def test_default_model_lean_agrees_on_held_out_text(tmp_path):
    result = lean_agreement(int(os.environ.get("LEAN_AGREEMENT_CASES", "200")), tmp_path)
    if os.environ.get("LEAN_AGREEMENT_OUT"):  # the measurement bench/results/ keeps
        Path(os.environ["LEAN_AGREEMENT_OUT"]).write_text(json.dumps(result, indent=2) + "\n")
    assert result["cases"] >= 100
    assert result["top1_agreement"] >= 0.99
    assert result["max_abs_logit_diff"] < 1e-3 * result["logit_scale"] + 1e-3
