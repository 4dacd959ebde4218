"""BERT for masked-language modelling, defined directly with Hugging Face parameter names.

The module tree mirrors `transformers.BertForMaskedLM` (`bert.embeddings.*`,
`bert.encoder.layer.N.*`, `cls.predictions.*` with the decoder tied to the word
embeddings), so a real HF checkpoint's state dict loads without renaming, and our own
trained checkpoints load in HF. Dropout is omitted: this module is used for inference,
export and dropout-free training (the throughput notes measured no-dropout training).

Three config switches give the compute-efficient block of "Cramming" (Geiping & Goldstein
2022) that the default model trains with; at their defaults the model is exactly HF's BERT:
- `layer_norm_position="pre"`: x + f(LayerNorm(x)) blocks (stable at higher learning rates),
  a final LayerNorm after the last layer; the LayerNorms are `layernorm_before` /
  `layernorm_after` (HF's names for pre-LN blocks, as in ViT) and `encoder.final_layer_norm`;
- `projection_bias=False`: no biases in the attention and FFN projections;
- `ffn_type="geglu"`: intermediate.dense computes [value, gate] (2 × intermediate_size) and the
  FFN is value * gelu(gate).
Such a config is written with model_type "tiankong_bert", so Hugging Face tools refuse it
instead of loading it into post-LN BERT layers with missing weights.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F


@dataclass
class BertConfig:
    vocab_size: int = 21128
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02
    pad_token_id: int = 0
    layer_norm_position: str = "post"  # "post" (BERT) or "pre"
    projection_bias: bool = True
    ffn_type: str = "mlp"  # "mlp" (BERT) or "geglu"

    @property
    def is_hf_bert(self) -> bool:
        """True when the architecture is exactly Hugging Face's BERT."""
        return self.layer_norm_position == "post" and self.projection_bias and self.ffn_type == "mlp"

    @classmethod
    def from_json_file(cls, path: str | Path) -> BertConfig:
        """Reads an HF config.json, keeping the fields this architecture uses.

        Raises ValueError for configs this module cannot run (non-BERT model type,
        unsupported activation)."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        model_type = raw.get("model_type", "bert")
        if model_type not in ("bert", "tiankong_bert"):
            raise ValueError(
                f"{path}: model_type is {model_type!r}; only 'bert' (and our 'tiankong_bert') checkpoints are supported"
            )
        known = {f.name for f in fields(cls)}
        config = cls(**{k: v for k, v in raw.items() if k in known})
        if model_type == "bert" and not config.is_hf_bert:
            raise ValueError(f"{path}: model_type 'bert' with tiankong block options; expected 'tiankong_bert'")
        if config.layer_norm_position not in ("post", "pre"):
            raise ValueError(f"{path}: layer_norm_position {config.layer_norm_position!r} is not 'post' or 'pre'")
        if config.ffn_type not in ("mlp", "geglu"):
            raise ValueError(f"{path}: ffn_type {config.ffn_type!r} is not 'mlp' or 'geglu'")
        if config.hidden_act not in ("gelu", "gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"{path}: hidden_act {config.hidden_act!r} is not supported (gelu only)")
        if config.hidden_size % config.num_attention_heads:
            raise ValueError(
                f"{path}: hidden_size {config.hidden_size} is not a multiple of "
                f"num_attention_heads {config.num_attention_heads}"
            )
        return config

    def to_hf_dict(self) -> dict:
        """The config.json content HF `BertForMaskedLM` reads (for our block variants: the same
        layout under model_type "tiankong_bert", which HF does not load)."""
        if self.is_hf_bert:
            fields_ = {
                k: v for k, v in asdict(self).items() if k not in ("layer_norm_position", "projection_bias", "ffn_type")
            }
            return {"architectures": ["BertForMaskedLM"], "model_type": "bert", **fields_}
        return {"architectures": ["TiankongBertForMaskedLM"], "model_type": "tiankong_bert", **asdict(self)}


def _gelu(x: torch.Tensor, kind: str) -> torch.Tensor:
    return F.gelu(x, approximate="tanh") if kind in ("gelu_new", "gelu_pytorch_tanh") else F.gelu(x)


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, padding_idx=c.pad_token_id)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(
        self, input_ids: torch.Tensor | None, token_type_ids: torch.Tensor, inputs_embeds: torch.Tensor | None = None
    ) -> torch.Tensor:
        """`inputs_embeds` (the word-embedding rows, computed outside) replaces `input_ids`."""
        words = self.word_embeddings(input_ids) if inputs_embeds is None else inputs_embeds
        positions = torch.arange(words.shape[1], device=words.device).unsqueeze(0)
        x = words + self.position_embeddings(positions) + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.num_heads = c.num_attention_heads
        self.head_dim = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size, bias=c.projection_bias)
        self.key = nn.Linear(c.hidden_size, c.hidden_size, bias=c.projection_bias)
        self.value = nn.Linear(c.hidden_size, c.hidden_size, bias=c.projection_bias)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, s, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + additive_mask
        context = torch.matmul(scores.softmax(dim=-1), v)
        return context.transpose(1, 2).reshape(b, s, h)


class BertSelfOutput(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size, bias=c.projection_bias)
        if c.layer_norm_position == "post":
            self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out = self.dense(x) + residual
        return self.LayerNorm(out) if hasattr(self, "LayerNorm") else out


class BertAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        return self.output(self.self(x, additive_mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.gated = c.ffn_type == "geglu"
        width = 2 * c.intermediate_size if self.gated else c.intermediate_size
        self.dense = nn.Linear(c.hidden_size, width, bias=c.projection_bias)
        self.act = c.hidden_act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            value, gate = self.dense(x).chunk(2, dim=-1)
            return value * _gelu(gate, self.act)
        return _gelu(self.dense(x), self.act)


class BertOutput(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size, bias=c.projection_bias)
        if c.layer_norm_position == "post":
            self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out = self.dense(x) + residual
        return self.LayerNorm(out) if hasattr(self, "LayerNorm") else out


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.pre_norm = c.layer_norm_position == "pre"
        if self.pre_norm:
            self.layernorm_before = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
            self.layernorm_after = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        if self.pre_norm:
            x = self.attention.output(self.attention.self(self.layernorm_before(x), additive_mask), x)
            return self.output(self.intermediate(self.layernorm_after(x)), x)
        attended = self.attention(x, additive_mask)
        return self.output(self.intermediate(attended), attended)


class BertEncoder(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c.num_hidden_layers))
        if c.layer_norm_position == "pre":  # pre-LN blocks leave the residual stream unnormalised
            self.final_layer_norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        for layer in self.layer:
            x = layer(x, additive_mask)
        return self.final_layer_norm(x) if hasattr(self, "final_layer_norm") else x


class BertModel(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)

    def forward(self, input_ids, attention_mask, token_type_ids, inputs_embeds=None):
        # 0 where attended, a large negative number at padding; broadcast over heads and queries.
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        return self.encoder(self.embeddings(input_ids, token_type_ids, inputs_embeds), additive_mask)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.act = c.hidden_act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The cast is a no-op in fp32; under torch 1.13 bf16 autocast it avoids a
        # bf16/fp32 dtype mismatch in LayerNorm.
        return self.LayerNorm(_gelu(self.dense(x), self.act).float())


class BertLMPredictionHead(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))
        self.decoder.bias = self.bias  # HF stores it twice (cls.predictions.bias and .decoder.bias), one tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.transform(x))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)


class BertForMaskedLM(nn.Module):
    """`transformers.BertForMaskedLM` without dropout and pooler.

    forward(input_ids, attention_mask, token_type_ids=None, mask_positions=None) returns
    logits `[batch, seq, vocab]`, or only at `mask_positions` (`[batch, n_masks]` int64
    indices into the sequence) as `[batch, n_masks, vocab]` — the MLM head then runs on
    n_masks rows instead of seq rows.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config)
        self.cls = BertOnlyMLMHead(config)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        std = self.config.initializer_range
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def hidden_states(self, input_ids, attention_mask, token_type_ids=None, inputs_embeds=None):
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(attention_mask)
        return self.bert(input_ids, attention_mask, token_type_ids, inputs_embeds)

    def head_hidden(self, inputs_embeds, attention_mask, token_type_ids, mask_positions):
        """The MLM head's transformed hidden state at `mask_positions` ([batch, n_masks, hidden]):
        everything up to, not including, the tied vocabulary projection (which the C++ core does)."""
        hidden = self.hidden_states(None, attention_mask, token_type_ids, inputs_embeds)
        index = mask_positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
        return self.cls.predictions.transform(torch.gather(hidden, 1, index))

    def forward(self, input_ids, attention_mask, token_type_ids=None, mask_positions=None):
        hidden = self.hidden_states(input_ids, attention_mask, token_type_ids)
        if mask_positions is not None:
            index = mask_positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
            hidden = torch.gather(hidden, 1, index)
        return self.cls.predictions(hidden)
