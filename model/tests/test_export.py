"""ONNX export and INT8 quantization, checked against PyTorch through onnxruntime-node and
onnxruntime-web (both run the exported file as the app would)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from conftest import run_onnx, sample_batch
from onnx import helper, numpy_helper
from tiankong_model.export_model import export_model, parse_window
from tiankong_model.quantize import PATTERNS


def torch_logits(model, batch: dict, mask_only: bool = True) -> np.ndarray:
    args = {k: torch.from_numpy(batch[k]) for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        return model(**args, mask_positions=torch.from_numpy(batch["mask_positions"]) if mask_only else None).numpy()


@pytest.fixture(scope="session")
def exports(tiny_checkpoint, tmp_path_factory):
    """Model directories exported from the tiny checkpoint, by variant name."""
    root = tmp_path_factory.mktemp("exports")
    variants = {
        "fp32": dict(fp32=True),
        "fp32-full": dict(fp32=True, full_logits=True),
        "fp32-tti": dict(fp32=True, token_type_ids=True),
        "int8-full": dict(full_logits=True),
        "int8-reduce-range": dict(reduce_range=True),
        **{f"int8-{p}": dict(pattern=p) for p in PATTERNS},
    }
    for name, options in variants.items():
        export_model(tiny_checkpoint, root / name, log=lambda *_: None, **options)
    return root


@pytest.fixture(scope="session")
def batches(tiny_model):
    return [sample_batch(tiny_model[0].config.vocab_size, seed) for seed in range(4)]


@pytest.mark.parametrize("runtime", ["node", "web"])
def test_fp32_mask_only_matches_pytorch(tiny_model, exports, batches, runtime):
    got = run_onnx(exports / "fp32" / "model.onnx", batches, runtime=runtime, threads=2)
    for batch, logits in zip(batches, got, strict=True):
        expected = torch_logits(tiny_model[0], batch)
        assert logits.shape == expected.shape
        np.testing.assert_allclose(logits, expected, atol=2e-4, rtol=0)


def test_fp32_full_logits_matches_pytorch_and_gathers_to_mask_only(tiny_model, exports, batches):
    full = run_onnx(exports / "fp32-full" / "model.onnx", batches)
    mask_only = run_onnx(exports / "fp32" / "model.onnx", batches)
    for batch, f, m in zip(batches, full, mask_only, strict=True):
        np.testing.assert_allclose(f, torch_logits(tiny_model[0], batch, mask_only=False), atol=2e-4, rtol=0)
        gathered = np.take_along_axis(f, batch["mask_positions"][:, :, None], axis=1)
        np.testing.assert_allclose(m, gathered, atol=1e-5, rtol=0)


def test_token_type_ids_variant_reads_its_input(tiny_model, exports, batches):
    manifest = json.loads((exports / "fp32-tti" / "model.json").read_text())
    assert manifest["inputs"] == ["input_ids", "attention_mask", "token_type_ids", "mask_positions"]
    batch = dict(batches[0], token_type_ids=np.ones_like(batches[0]["token_type_ids"]))
    (got,) = run_onnx(exports / "fp32-tti" / "model.onnx", [batch])
    np.testing.assert_allclose(got, torch_logits(tiny_model[0], batch), atol=2e-4, rtol=0)


def test_graph_interface(exports):
    proto = onnx.load(exports / "fp32" / "model.onnx")
    assert max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")) <= 17
    shapes = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input}
    assert shapes == {
        "input_ids": ["batch", "sequence"],
        "attention_mask": ["batch", "sequence"],
        "mask_positions": ["batch", "masks"],
    }
    (out,) = proto.graph.output
    assert out.name == "logits" and out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim][:2] == ["batch", "masks"]
    full = onnx.load(exports / "fp32-full" / "model.onnx")
    assert [i.name for i in full.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]


def test_tied_embedding_is_stored_once(tiny_model, exports):
    vocab_size, hidden = tiny_model[0].config.vocab_size, tiny_model[0].config.hidden_size
    for variant in ("fp32", "int8-integer-to-float"):
        proto = onnx.load(exports / variant / "model.onnx")
        tables = [i.name for i in proto.graph.initializer if sorted(i.dims) == sorted([vocab_size, hidden])]
        assert len(tables) == 1, (variant, tables)
    int8 = onnx.load(exports / "int8-integer-to-float" / "model.onnx")
    table = next(i for i in int8.graph.initializer if list(i.dims) == [vocab_size, hidden])
    assert table.data_type == onnx.TensorProto.INT8
    assert not any(n.op_type == "DequantizeLinear" for n in int8.graph.node)


def agreement(reference: np.ndarray, candidate: np.ndarray) -> tuple[float, float]:
    """(top-1 agreement, share of candidate top-1 inside the reference top-5)."""
    ref, cand = reference.reshape(-1, reference.shape[-1]), candidate.reshape(-1, candidate.shape[-1])
    top1 = cand.argmax(-1)
    top5 = np.argsort(-ref, axis=-1)[:, :5]
    return float((ref.argmax(-1) == top1).mean()), float((top5 == top1[:, None]).any(-1).mean())


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("runtime", ["node", "web"])
def test_int8_close_to_fp32(exports, batches, pattern, runtime):
    reference = np.concatenate([b.reshape(-1, b.shape[-1]) for b in run_onnx(exports / "fp32" / "model.onnx", batches)])
    got = run_onnx(exports / f"int8-{pattern}" / "model.onnx", batches, runtime=runtime, threads=2)
    quantized = np.concatenate([b.reshape(-1, b.shape[-1]) for b in got])
    correlation = np.corrcoef(reference.ravel(), quantized.ravel())[0, 1]
    top1, in_top5 = agreement(reference, quantized)
    assert correlation > 0.99, correlation
    assert top1 >= 0.75 and in_top5 >= 0.95, (top1, in_top5)


def test_int8_full_logits_close_to_fp32_full(exports, batches):
    """Not equal to the gathered mask-only INT8 logits: the MLM head quantizes its input per
    tensor, over all rows in the full graph and over the masked rows only in the other."""
    reference = run_onnx(exports / "fp32-full" / "model.onnx", batches[:2])
    got = run_onnx(exports / "int8-full" / "model.onnx", batches[:2])
    for ref, cand in zip(reference, got, strict=True):
        assert ref.shape == cand.shape
        assert np.corrcoef(ref.ravel(), cand.ravel())[0, 1] > 0.99


def test_reduce_range_makes_native_and_wasm_agree(exports, batches):
    """x86 onnxruntime-node saturates uint8×int8 products of full-range weights; with 7-bit
    weights the native and wasm kernels compute the same integers."""
    model = exports / "int8-reduce-range" / "model.onnx"
    for native, wasm in zip(run_onnx(model, batches), run_onnx(model, batches, runtime="web", threads=2), strict=True):
        np.testing.assert_allclose(native, wasm, atol=1e-3, rtol=0)
    proto = onnx.load(model)
    table = next(i for i in proto.graph.initializer if i.data_type == onnx.TensorProto.INT8)
    assert np.abs(numpy_helper.to_array(table)).max() == 63


def test_full_logits_export_has_transformers_js_layout(exports):
    directory = exports / "int8-full"
    manifest = json.loads((directory / "model.json").read_text())
    assert manifest["logits"] == "full"
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        assert (directory / name).is_file(), name
    link = directory / "onnx" / "model_quantized.onnx"
    assert link.is_symlink() and link.resolve() == (directory / "model.onnx").resolve()
    config = json.loads((directory / "config.json").read_text())
    assert (
        config["architectures"] == ["BertForMaskedLM"]
        and config["vocab_size"] == manifest["architecture"]["vocab_size"]
    )
    assert (exports / "fp32-full" / "onnx" / "model.onnx").is_symlink()


def test_int8_weights_are_per_channel_int8(exports, tiny_model):
    proto = onnx.load(exports / "int8-integer" / "model.onnx")
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    float_matrices = [
        n
        for n, a in inits.items()
        if a.dtype == np.float32 and a.ndim == 2 and min(a.shape) > 1 and "position" not in n and "token_type" not in n
    ]
    assert float_matrices == []
    matmul_weights = {n.input[1] for n in proto.graph.node if n.op_type == "MatMulInteger"}
    assert len(matmul_weights) == 6 * tiny_model[0].config.num_hidden_layers + 2
    for name in matmul_weights - {n.output[0] for n in proto.graph.node}:
        assert inits[name].dtype == np.int8 and np.abs(inits[name]).max() == 127, name


def test_manifest(exports, tiny_model, tiny_checkpoint):
    manifest = json.loads((exports / "int8-integer-to-float" / "model.json").read_text())
    model = tiny_model[0]
    assert manifest["format"] == "tiankong-model/1"
    assert manifest["architecture"] == {
        "type": "bert",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": model.config.vocab_size,
        "max_position_embeddings": 128,
    }
    assert manifest["special_tokens"] == {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
    assert manifest["inputs"] == ["input_ids", "attention_mask", "mask_positions"]
    assert manifest["logits"] == "mask-only" and manifest["quantization"]["scheme"] == "int8-dynamic-per-channel"
    assert manifest["tokenizer"]["lowercase"] is False
    onnx_bytes = (exports / "int8-integer-to-float" / "model.onnx").read_bytes()
    assert manifest["files"]["model.onnx"]["bytes"] == len(onnx_bytes)
    import hashlib

    assert manifest["files"]["model.onnx"]["sha256"] == hashlib.sha256(onnx_bytes).hexdigest()
    assert (exports / "int8-integer-to-float" / "vocab.txt").read_text(encoding="utf-8") == (
        tiny_checkpoint / "vocab.txt"
    ).read_text(encoding="utf-8")


def test_max_length_beyond_positions_is_rejected(tiny_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="--max-length 129 must be in 8..128"):
        export_model(tiny_checkpoint, tmp_path, max_length=129, log=lambda *_: None)


def test_max_length_below_the_runtime_floor_is_rejected(tiny_checkpoint, tmp_path):
    # The runtime refuses max_length < 8 (web/src/model/manifest.ts): never write such a model.
    with pytest.raises(ValueError, match="--max-length 4 must be in 8..128"):
        export_model(tiny_checkpoint, tmp_path, max_length=4, log=lambda *_: None)
    assert not (tmp_path / "model.onnx").exists()


def test_window_settings_reach_model_json(tiny_checkpoint, tmp_path):
    assert parse_window("96:64") == (96, 64) and parse_window("96:64:128") == (96, 64, 128)
    with pytest.raises(ValueError, match="THRESHOLD:SIZE"):
        parse_window("96:64:")
    manifest = export_model(tiny_checkpoint, tmp_path / "w", window=(96, 64, 128), log=lambda *_: None)
    assert manifest["window"] == {"threshold": 96, "size": 64, "whole_up_to": 128}
    assert json.loads((tmp_path / "w" / "model.json").read_text())["window"]["whole_up_to"] == 128
    with pytest.raises(ValueError, match="THRESHOLD <= WHOLE <= max_length"):
        export_model(tiny_checkpoint, tmp_path / "bad", window=(96, 64, 80), log=lambda *_: None)


def tiankong_block_config(vocab_size: int):
    """A tiny config of the default model's block: pre-LN, no projection biases, GeGLU."""
    from tiankong_model.bert import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=96,
        max_position_embeddings=128,
        layer_norm_position="pre",
        projection_bias=False,
        ffn_type="geglu",
    )


def test_tiankong_block_exports_and_quantizes(tmp_path, tiny_model, batches):
    """The default model's block (pre-LN, no projection biases, GeGLU) goes through the same
    export, INT8 quantizer and manifest as Hugging Face's BERT, and matches PyTorch."""
    from tiankong_model.bert import BertForMaskedLM
    from tiankong_model.checkpoint import load_checkpoint, save_checkpoint

    _, vocab = tiny_model
    config = tiankong_block_config(len(vocab))
    torch.manual_seed(3)
    model = BertForMaskedLM(config).eval()
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() == 2:
                param.mul_(4)
    save_checkpoint(model, vocab, tmp_path / "ckpt")
    loaded, _ = load_checkpoint(tmp_path / "ckpt")
    assert json.loads((tmp_path / "ckpt" / "config.json").read_text())["model_type"] == "tiankong_bert"
    assert not any("attention.self.query.bias" in k for k in loaded.state_dict())
    export_model(tmp_path / "ckpt", tmp_path / "fp32", fp32=True, log=lambda *_: None)
    export_model(tmp_path / "ckpt", tmp_path / "int8", log=lambda *_: None)
    manifest = json.loads((tmp_path / "int8" / "model.json").read_text())
    assert manifest["architecture"]["layer_norm_position"] == "pre" and manifest["architecture"]["ffn_type"] == "geglu"
    for batch, logits in zip(batches, run_onnx(tmp_path / "fp32" / "model.onnx", batches), strict=True):
        np.testing.assert_allclose(logits, torch_logits(model, batch), atol=2e-4, rtol=0)
    reference = np.concatenate(
        [b.reshape(-1, b.shape[-1]) for b in run_onnx(tmp_path / "fp32" / "model.onnx", batches)]
    )
    quantized = np.concatenate(
        [
            b.reshape(-1, b.shape[-1])
            for b in run_onnx(tmp_path / "int8" / "model.onnx", batches, runtime="web", threads=2)
        ]
    )
    assert np.corrcoef(reference.ravel(), quantized.ravel())[0, 1] > 0.99


def core_logits(model_dir, batches, runtime="node"):
    """Logits of a "core" export the way the runtime computes them: input embeddings from head.bin,
    ONNX Runtime for the hidden states at the masks, then hidden x table^T + bias (numpy here; the
    C++ output layer is tested against the same definition in wasm/src/output_layer_test.cc)."""
    from tiankong_model.head import read_head

    head = read_head(model_dir / "head.bin")
    feeds = [
        {
            "inputs_embeds": head["table"][b["input_ids"]],
            "attention_mask": b["attention_mask"],
            "mask_positions": b["mask_positions"],
        }
        for b in batches
    ]
    hidden = run_onnx(model_dir / "model.onnx", feeds, runtime=runtime, threads=2)
    return [h @ head["table"].T + head["bias"] for h in hidden]


def test_core_graph_ends_at_the_hidden_state_and_head_bin_completes_it(tiny_model, tiny_checkpoint, batches, tmp_path):
    for variant, options in {"core-fp32": dict(fp32=True), "core-int8": {}}.items():
        export_model(tiny_checkpoint, tmp_path / variant, graph="core", log=lambda *_: None, **options)
    manifest = json.loads((tmp_path / "core-int8" / "model.json").read_text())
    assert manifest["inputs"] == ["inputs_embeds", "attention_mask", "mask_positions"]
    assert manifest["outputs"] == ["hidden"] and manifest["logits"] == "core"
    assert manifest["head"] == {"file": "head.bin", "dtype": "int8"} and "head.bin" in manifest["files"]
    proto = onnx.load(tmp_path / "core-int8" / "model.onnx")
    assert not any(
        i.name.startswith("bert.embeddings.word_embeddings") for i in proto.graph.initializer
    )  # stored once, in head.bin
    for batch, logits in zip(batches, core_logits(tmp_path / "core-fp32", batches), strict=True):
        np.testing.assert_allclose(logits, torch_logits(tiny_model[0], batch), atol=3e-4, rtol=0)
    reference = np.concatenate([b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-fp32", batches)])
    quantized = np.concatenate(
        [b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-int8", batches, "web")]
    )
    assert np.corrcoef(reference.ravel(), quantized.ravel())[0, 1] > 0.99


def test_f16_head_export_round_trips_and_its_core_logits_match_fp32(tiny_model, tiny_checkpoint, batches, tmp_path):
    """--head-dtype f16: head.bin holds the table as IEEE halves (read back within fp16 precision,
    i.e. exactly the table rounded to float16), and the logits computed from it are those of the
    fp32 export up to that rounding: far closer than the int8 head."""
    from tiankong_model.head import read_head

    variants = {
        "core-fp32": dict(fp32=True),
        "core-fp32-f16": dict(fp32=True, head_dtype="f16"),  # only the head differs from core-fp32
        "core-fp32-int8": dict(fp32=True, head_dtype="int8"),  # the same with the int8 head
        "core-int8-f16": dict(head_dtype="f16"),  # the INT8 encoder with an f16 head
    }
    for variant, options in variants.items():
        export_model(tiny_checkpoint, tmp_path / variant, graph="core", log=lambda *_: None, **options)
    manifest = json.loads((tmp_path / "core-int8-f16" / "model.json").read_text())
    assert manifest["head"] == {"file": "head.bin", "dtype": "f16"}
    assert manifest["quantization"]["embeddings"].startswith("f16 in head.bin")
    assert json.loads((tmp_path / "core-fp32-int8" / "model.json").read_text())["head"]["dtype"] == "int8"
    assert json.loads((tmp_path / "core-fp32" / "model.json").read_text())["head"]["dtype"] == "f32"

    model = tiny_model[0]
    table = model.bert.embeddings.word_embeddings.weight.detach().numpy()
    vocab, hidden = table.shape
    head = read_head(tmp_path / "core-fp32-f16" / "head.bin")
    assert head["dtype"] == "f16" and head["table"].dtype == np.float32 and head["table"].shape == table.shape
    np.testing.assert_array_equal(head["table"], table.astype(np.float16).astype(np.float32))
    np.testing.assert_allclose(head["table"], table, rtol=2.0**-11, atol=2.0**-25)  # fp16: 11-bit significand
    np.testing.assert_array_equal(head["bias"], model.cls.predictions.bias.detach().numpy())
    size = (tmp_path / "core-fp32-f16" / "head.bin").stat().st_size
    assert size == 32 + vocab * hidden * 2 + 4 * vocab  # hidden 64 is even: no padding
    assert size < (tmp_path / "core-fp32" / "head.bin").stat().st_size * 0.51

    reference = np.concatenate([b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-fp32", batches)])
    half = np.concatenate([b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-fp32-f16", batches)])
    scale = np.abs(reference).max()
    np.testing.assert_allclose(half, reference, atol=1e-3 * scale, rtol=0)  # measured: 3e-4 × scale
    assert (half.argmax(-1) == reference.argmax(-1)).all()
    # The f16 head's own error is far below the int8 head's (the same fp32 encoder under both).
    int8 = np.concatenate([b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-fp32-int8", batches)])
    assert np.abs(half - reference).max() * 8 < np.abs(int8 - reference).max()  # measured: 30×
    int8_encoder = np.concatenate(
        [b.reshape(-1, b.shape[-1]) for b in core_logits(tmp_path / "core-int8-f16", batches, "web")]
    )
    assert np.corrcoef(reference.ravel(), int8_encoder.ravel())[0, 1] > 0.99


def test_f16_head_pads_odd_rows_to_an_even_stride(tmp_path):
    from tiankong_model.bert import BertConfig, BertForMaskedLM
    from tiankong_model.head import head_bytes, read_head

    config = BertConfig(
        vocab_size=50,
        hidden_size=33,
        num_hidden_layers=1,
        num_attention_heads=3,
        intermediate_size=16,
        max_position_embeddings=16,
    )
    model = BertForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.bias.copy_(torch.linspace(-1, 1, 50))
    data = head_bytes(model, "f16")
    dtype, vocab, hidden, stride = np.frombuffer(data, "<u4", 4, 12)
    assert (dtype, vocab, hidden, stride) == (3, 50, 33, 34)
    assert len(data) == 32 + 50 * 34 * 2 + 4 * 50 and (32 + 50 * 34 * 2) % 4 == 0
    rows = np.frombuffer(data, "<u2", 50 * 34, 32).reshape(50, 34)
    assert (rows[:, 33] == 0).all()  # the padding column
    table = model.bert.embeddings.word_embeddings.weight.detach().numpy()
    path = tmp_path / "head.bin"
    path.write_bytes(data)
    head = read_head(path)
    np.testing.assert_array_equal(head["table"], table.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(head["bias"], model.cls.predictions.bias.detach().numpy())
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight[3, 5] = 1e6  # beyond float16
    with pytest.raises(ValueError, match="does not fit float16"):
        head_bytes(model, "f16")


def test_head_dtype_is_checked(tiny_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="--head-dtype f16 needs --graph core"):
        export_model(tiny_checkpoint, tmp_path, head_dtype="f16", log=lambda *_: None)
    with pytest.raises(ValueError, match="--head-dtype must be one of int8, f32, f16"):
        export_model(tiny_checkpoint, tmp_path, graph="core", head_dtype="bf16", log=lambda *_: None)


@pytest.mark.parametrize("graph", ["mask-only", "core"])
def test_fp16_weights_export_is_close_to_fp32(tiny_checkpoint, batches, tmp_path, graph):
    export_model(tiny_checkpoint, tmp_path / "fp32", graph=graph, fp32=True, log=lambda *_: None)
    export_model(tiny_checkpoint, tmp_path / "fp16", graph=graph, fp16_weights=True, log=lambda *_: None)
    proto = onnx.load(tmp_path / "fp16" / "model.onnx")
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in proto.graph.initializer)
    assert json.loads((tmp_path / "fp16" / "model.json").read_text())["quantization"]["scheme"] == "fp16-weights"
    run = (
        core_logits
        if graph == "core"
        else (lambda d, b, rt="node": run_onnx(d / "model.onnx", b, runtime=rt, threads=2))
    )
    for reference, half in zip(run(tmp_path / "fp32", batches), run(tmp_path / "fp16", batches, "web"), strict=True):
        np.testing.assert_allclose(half, reference, atol=0.02 * np.abs(reference).max(), rtol=0)


def fold_restores(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `proto` with every node whose inputs are all initializers (the int8-weights
    Cast/Mul/Reshape and DequantizeLinear chains, the fp16 Casts) evaluated here in numpy and
    replaced by its float32 result: the fp32 model the int8-weights export says it computes."""
    folded = onnx.ModelProto()
    folded.CopyFrom(proto)
    graph = folded.graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    kept = []
    for node in graph.node:
        inputs = [values.get(name) for name in node.input if name]
        if node.op_type not in ("Cast", "Mul", "Reshape", "DequantizeLinear") or any(x is None for x in inputs):
            kept.append(node)
            continue
        if node.op_type == "Cast":
            result = inputs[0].astype(np.float32)
        elif node.op_type == "Mul":
            result = inputs[0] * inputs[1]
        elif node.op_type == "Reshape":
            result = inputs[0].reshape(inputs[1])
        else:
            axis = {a.name: helper.get_attribute_value(a) for a in node.attribute}.get("axis", 1)
            shape = [1] * inputs[0].ndim
            shape[axis] = -1
            result = (inputs[0].astype(np.float32) - inputs[2].reshape(shape)) * inputs[1].reshape(shape)
        values[node.output[0]] = result.astype(np.float32)
    used = {name for node in kept for name in node.input}
    del graph.initializer[:]
    graph.initializer.extend(numpy_helper.from_array(values[name], name) for name in sorted(used) if name in values)
    del graph.node[:]
    graph.node.extend(kept)
    return folded


@pytest.mark.parametrize(
    ("graph", "block", "scales"),
    [("mask-only", None, "f32"), ("core", None, "f32"), ("core", 16, "f32"), ("core", 8, "f16")],
)
def test_int8_weights_export_computes_fp32_on_its_dequantised_weights(
    tiny_checkpoint, batches, tmp_path, graph, block, scales
):
    """--int8-weights: the matrices are stored int8 (a scale per output channel or per block; the
    block scales float32 or, --int8-scales f16, float16), the position table and the MLM transform
    fp16, and ONNX Runtime (native and wasm) computes
    exactly the fp32 model of the dequantised weights — bit for bit, so nothing is quantized at
    run time — which is close to the fp32 export."""
    export_model(tiny_checkpoint, tmp_path / "fp32", graph=graph, fp32=True, log=lambda *_: None)
    manifest = export_model(
        tiny_checkpoint,
        tmp_path / "int8",
        graph=graph,
        int8_weights=True,
        int8_block=block,
        int8_scales=scales,
        log=lambda *_: None,
    )
    quantization = manifest["quantization"]
    assert quantization["scheme"] == "int8-weights" and quantization["block"] == block
    assert quantization.get("scales") == ("float16" if scales == "f16" else None)
    assert ("a float16 scale per" if scales == "f16" else "a float32 scale per") in quantization["weights"]
    assert quantization["activations"] == "float32" and quantization["restore"] == "cast-mul"
    assert [n.split(".")[-2] for n in quantization["fp16_matrices"]] == ["position_embeddings", "dense"]
    proto = onnx.load(tmp_path / "int8" / "model.onnx")
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    int8 = [n for n, a in inits.items() if a.dtype == np.int8]
    assert len(int8) == quantization["int8_matrices"] == 6 * 2 + (1 if graph == "mask-only" else 0)  # + word table
    assert all(np.abs(inits[n]).max() == 127 for n in int8)
    scale_types = {inits[n.removesuffix(".int8") + ".scale"].dtype for n in int8}
    assert scale_types == {np.dtype(np.float16 if scales == "f16" else np.float32)}
    assert not any(a.dtype == np.float32 and a.ndim >= 2 and a.size >= 4096 for a in inits.values())
    run_time_quantization = ("DequantizeLinear", "MatMulInteger", "DynamicQuantizeLinear")
    assert not any(n.op_type in run_time_quantization for n in proto.graph.node)
    fp32_bytes = (tmp_path / "fp32" / "model.onnx").stat().st_size
    # The tiny model's fp16 position table and transform weigh more than a real model's (default: 0.28).
    assert (tmp_path / "int8" / "model.onnx").stat().st_size < (0.45 if block is None else 0.5) * fp32_bytes

    onnx.save(fold_restores(proto), tmp_path / "int8" / "folded.onnx")
    if graph == "core":
        (tmp_path / "folded").mkdir()
        for name in ("head.bin", "model.json", "vocab.txt"):
            (tmp_path / "folded" / name).write_bytes((tmp_path / "int8" / name).read_bytes())
        (tmp_path / "folded" / "model.onnx").write_bytes((tmp_path / "int8" / "folded.onnx").read_bytes())
    for runtime in ("node", "web"):
        if graph == "core":
            got = core_logits(tmp_path / "int8", batches, runtime)
            folded = core_logits(tmp_path / "folded", batches, runtime)
        else:
            got = run_onnx(tmp_path / "int8" / "model.onnx", batches, runtime=runtime, threads=2)
            folded = run_onnx(tmp_path / "int8" / "folded.onnx", batches, runtime=runtime, threads=2)
        for a, b in zip(got, folded, strict=True):
            np.testing.assert_array_equal(a, b)
    reference = core_logits(tmp_path / "fp32", batches) if graph == "core" else None
    if reference is None:
        reference = run_onnx(tmp_path / "fp32" / "model.onnx", batches, threads=2)
    for ref, int8_logits in zip(reference, got, strict=True):
        np.testing.assert_allclose(int8_logits, ref, atol=0.02 * np.abs(ref).max(), rtol=0)


def test_int8_weights_restore_forms_agree(tiny_checkpoint):
    """Cast+Mul (what ships) and per-axis DequantizeLinear (measured against it) restore the same floats."""
    from tiankong_model.checkpoint import load_checkpoint
    from tiankong_model.onnx_graph import export_fp32
    from tiankong_model.quantize import store_weights_int8

    model, _ = load_checkpoint(tiny_checkpoint)
    forms = {}
    for restore in ("cast-mul", "dequantize-linear"):
        proto = export_fp32(model, "core")
        store_weights_int8(proto, restore=restore)
        forms[restore] = {i.name: numpy_helper.to_array(i) for i in fold_restores(proto).graph.initializer}
    assert forms["cast-mul"].keys() == forms["dequantize-linear"].keys()
    for name, value in forms["cast-mul"].items():
        np.testing.assert_array_equal(value, forms["dequantize-linear"][name], err_msg=name)
    with pytest.raises(ValueError, match="opset 21"):
        store_weights_int8(export_fp32(model, "core"), block=16, restore="dequantize-linear")


def test_int8_weights_options_are_checked(tiny_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="exclude each other"):
        export_model(tiny_checkpoint, tmp_path, int8_weights=True, fp16_weights=True, log=lambda *_: None)
    with pytest.raises(ValueError, match="--int8-block, --int8-calibrate and --int8-scales need --int8-weights"):
        export_model(tiny_checkpoint, tmp_path, int8_block=16, log=lambda *_: None)
    with pytest.raises(ValueError, match="need --int8-weights"):
        export_model(tiny_checkpoint, tmp_path, int8_scales="f16", log=lambda *_: None)
    with pytest.raises(ValueError, match="--int8-scales f16 needs --int8-block"):
        export_model(tiny_checkpoint, tmp_path, int8_weights=True, int8_scales="f16", log=lambda *_: None)
    with pytest.raises(ValueError, match="does not divide"):
        export_model(tiny_checkpoint, tmp_path, int8_weights=True, int8_block=48, log=lambda *_: None)


@pytest.mark.parametrize("runtime", ["node", "web"])
def test_int8_weights_run_the_fp32_kernels(tiny_checkpoint, tmp_path, runtime):
    """ONNX Runtime folds the int8-weights restores (per channel; per block with float16 scales)
    when the session starts: a run executes the same kernels as the fp32 export's, none reading an
    int8 or float16 tensor (model/tooling/ort-kernels.mjs profiles one run). A per-axis
    DequantizeLinear restore does not fold with default options (its QDQ fusion makes MatMulNBits,
    which dequantizes every run): the check sees that."""
    import subprocess

    from conftest import REPO_ROOT
    from tiankong_model.checkpoint import load_checkpoint
    from tiankong_model.onnx_graph import export_fp32
    from tiankong_model.quantize import store_weights_int8

    export_model(tiny_checkpoint, tmp_path / "fp32", graph="core", fp32=True, log=lambda *_: None)
    export_model(tiny_checkpoint, tmp_path / "int8", graph="core", int8_weights=True, log=lambda *_: None)
    export_model(
        tiny_checkpoint,
        tmp_path / "int8-f16-blocks",
        graph="core",
        int8_weights=True,
        int8_block=4,
        int8_scales="f16",
        log=lambda *_: None,
    )
    (tmp_path / "dq").mkdir()
    proto = export_fp32(load_checkpoint(tiny_checkpoint)[0], "core")
    store_weights_int8(proto, restore="dequantize-linear")
    onnx.save(proto, tmp_path / "dq" / "model.onnx")
    (tmp_path / "dq" / "model.json").write_text((tmp_path / "int8" / "model.json").read_text())

    def kernels(name, *options):
        tool = REPO_ROOT / "model" / "tooling" / "ort-kernels.mjs"
        command = ["node", str(tool), str(tmp_path / name), "--runtime", runtime, *options]
        result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    fp32, int8 = kernels("fp32"), kernels("int8")
    assert int8["lowPrecisionInputs"] == [] and int8["kernels"] == fp32["kernels"]
    blocks = kernels("int8-f16-blocks")  # float16 scales are widened and folded too
    assert blocks["lowPrecisionInputs"] == [] and blocks["kernels"] == fp32["kernels"]
    assert kernels("dq")["lowPrecisionInputs"] != []
    folded = kernels("dq", "--option", "session.disable_quant_qdq=1")
    assert folded["lowPrecisionInputs"] == [] and folded["kernels"] == fp32["kernels"]


def write_random_corpus(corpus: Path, vocab: list[str], lines: int = 300) -> Path:
    """A scripts/build-corpus directory of random token lines (train split) for `vocab`."""
    corpus.mkdir()
    (corpus / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    rng = np.random.default_rng(5)
    lengths = rng.integers(6, 30, lines)
    rng.integers(5, len(vocab), lengths.sum()).astype(np.uint16).tofile(corpus / "train.ids")
    np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint32).tofile(corpus / "train.idx")
    return corpus


def test_int8_calibrate_reaches_every_matrix_of_the_lean_geglu_graph(tmp_path, tiny_model):
    """The lean graph splits a GeGLU Linear into a value and a gate matrix: both get GPTQ with that
    Linear's inputs (a release shipped with them rounded to nearest: 20 of 28 calibrated)."""
    from tiankong_model.bert import BertForMaskedLM
    from tiankong_model.checkpoint import save_checkpoint

    _, vocab = tiny_model
    config = tiankong_block_config(len(vocab))
    torch.manual_seed(4)
    save_checkpoint(BertForMaskedLM(config).eval(), vocab, tmp_path / "ckpt")
    corpus = write_random_corpus(tmp_path / "corpus", vocab)
    manifest = export_model(
        tmp_path / "ckpt",
        tmp_path / "int8",
        graph="core",
        lean=True,
        int8_weights=True,
        int8_block=4,
        int8_scales="f16",
        int8_calibrate=corpus,
        log=lambda *_: None,
    )
    quantization = manifest["quantization"]
    proto = onnx.load(tmp_path / "int8" / "model.onnx")
    int8 = [i.name for i in proto.graph.initializer if i.data_type == onnx.TensorProto.INT8]
    assert any(".gate." in name for name in int8) and any(".value." in name for name in int8)
    assert quantization["int8_matrices"] == len(int8) == 2 * 7  # q, k, v, out, value, gate, ffn out
    assert quantization["gptq_matrices"] == quantization["int8_matrices"]


def test_int8_calibrate_chooses_the_values_by_gptq(tiny_checkpoint, batches, tmp_path):
    """--int8-calibrate CORPUS_DIR: the layers' inputs on its training lines drive GPTQ; the stored
    form and its restore are those of --int8-weights, the output closer to fp32 than nearest
    rounding's. A corpus of another vocabulary is refused."""
    vocab = (tiny_checkpoint / "vocab.txt").read_text(encoding="utf-8").splitlines()
    corpus = write_random_corpus(tmp_path / "corpus", vocab)
    export_model(tiny_checkpoint, tmp_path / "fp32", fp32=True, log=lambda *_: None)
    export_model(tiny_checkpoint, tmp_path / "nearest", int8_weights=True, log=lambda *_: None)
    manifest = export_model(
        tiny_checkpoint, tmp_path / "gptq", int8_weights=True, int8_calibrate=corpus, log=lambda *_: None
    )
    quantization = manifest["quantization"]
    assert quantization["rounding"] == "gptq" and quantization["act_order"] is True
    assert quantization["gptq_matrices"] == 6 * 2 == quantization["int8_matrices"] - 1  # not the word table
    assert quantization["calibration"] == {"corpus": "corpus", "lines": 2000}
    assert json.loads((tmp_path / "nearest" / "model.json").read_text())["quantization"]["rounding"] == "nearest"
    reference, nearest, gptq = (
        np.concatenate([b.ravel() for b in run_onnx(tmp_path / d / "model.onnx", batches, threads=2)])
        for d in ("fp32", "nearest", "gptq")
    )
    assert np.abs(gptq - reference).mean() < np.abs(nearest - reference).mean()
    (corpus / "vocab.txt").write_text("\n".join(vocab[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="vocab.txt of the model's"):
        export_model(tiny_checkpoint, tmp_path / "bad", int8_weights=True, int8_calibrate=corpus, log=lambda *_: None)
    with pytest.raises(ValueError, match="need --int8-weights"):
        export_model(tiny_checkpoint, tmp_path / "bad", int8_calibrate=corpus, log=lambda *_: None)
