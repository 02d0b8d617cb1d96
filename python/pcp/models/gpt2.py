"""GPT-2 (Radford et al., 2019) in PCP: pre-LayerNorm blocks, fused causal attention, a GELU(tanh)
MLP and an LM head tied to the token embedding. Loads and saves Hugging Face's layout
(model.safetensors and config.json), so models go both ways between PCP and `transformers`."""
import json
import math
import os
from dataclasses import dataclass

import numpy as np

import pcp
from pcp import nn
from pcp._config import DictConfig
from pcp.serialization import SafetensorsError, check_tensor, load_safetensors, save_safetensors, write_json


# Hugging Face keeps these weights in its Conv1D layout (in, out); PCP's Linear holds (out, in).
_CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


@dataclass
class GPT2Config(DictConfig):
    """The size and settings of a GPT-2 model, with Hugging Face's field names (GPT-2 small by
    default).

    Args:
        vocab_size: the number of token ids (default 50257, GPT-2's BPE).
        n_positions: the longest sequence, the position table's length (default 1024).
        n_embd: the model's width C (default 768).
        n_layer: the number of transformer blocks (default 12).
        n_head: attention heads per block; n_embd must be divisible by it (default 12).
        layer_norm_epsilon: the layer norms' eps (default 1e-5).
        initializer_range: the standard deviation of the initial weights (default 0.02).
        dropout: the dropout probability of embeddings, attention and residuals (default 0).
        bias: whether linear layers and layer norms have biases (default True, as GPT-2).

    Raises:
        ValueError: n_embd not divisible by n_head, or a size that is not positive.

    Example:
        >>> from pcp.models import GPT2Config
        >>> cfg = GPT2Config(vocab_size=65, n_positions=64, n_embd=32, n_layer=2, n_head=4)
        >>> cfg.n_embd // cfg.n_head
        8
    """

    vocab_size: int = 50257
    n_positions: int = 1024
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    dropout: float = 0.0
    bias: bool = True

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"GPT2Config: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        for name in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"):
            if getattr(self, name) <= 0:
                raise ValueError(f"GPT2Config: {name} must be positive, got {getattr(self, name)}")


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.attn_dropout = cfg.dropout
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        # q, k, v side by side in one projection: the fused kernel reads the heads in place.
        y = pcp.qkv_attention(self.c_attn(x), self.n_head, causal=True,
                              dropout_p=self.attn_dropout if self.training else 0.0)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(pcp.gelu(self.c_fc(x), approximate="tanh")))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """GPT-2 (Radford et al., 2019): token and position embeddings, n_layer pre-LayerNorm blocks
    of causal self-attention (fused) and a GELU(tanh) MLP, a final layer norm, and an LM head tied
    to the token embedding. Weights start as GPT-2's initialisation: N(0, 0.02), residual
    projections scaled by 1/sqrt(2 n_layer), from the seeded generator (pcp.random.seed). Its
    parameter names are Hugging Face's (without the 'transformer.' prefix).

    Args:
        cfg: a GPT2Config (default: GPT-2 small, 124M parameters).

    Raises:
        MemoryError: parameters too large for memory.

    Example:
        >>> from pcp.models import GPT2, GPT2Config
        >>> model = GPT2(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
        >>> logits, loss = model(pcp.tensor([[1, 2, 3]]))
        >>> logits.shape, loss
        ((1, 3, 16), None)
    """

    def __init__(self, cfg=None):
        super().__init__()
        cfg = cfg or GPT2Config()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon, bias=cfg.bias)
        self._init_weights()

    def _init_weights(self):
        """GPT-2 init: N(0, 0.02) weights, zero biases, residual projections scaled by 1/sqrt(2 n_layer)."""
        std = self.config.initializer_range
        for name, m in self.named_modules():
            if isinstance(m, nn.Linear):
                s = std / math.sqrt(2 * self.config.n_layer) if name.endswith("c_proj") else std
                m.weight = pcp.randn(m.weight.shape) * s
                if m.bias is not None:
                    m.bias = pcp.zeros(m.bias.shape)
            elif isinstance(m, nn.Embedding):
                m.weight = pcp.randn(m.weight.shape) * std

    def forward(self, idx, targets=None):
        """The next-token logits for every position of a batch of token sequences, and with targets
        the mean cross-entropy loss.

        Args:
            idx: (B, T) integer token ids in [0, vocab_size), T <= n_positions; keep them on the
                CPU (they index the embeddings as host data) whatever the model's device.
            targets: (B, T) integer token ids (the next tokens), or None (default).

        Returns:
            (logits, loss): logits (B, T, vocab_size), float32 (the autocast dtype under
            pcp.autocast), and loss a 0-d float32 tensor, or None without targets.

        Raises:
            ValueError: idx is not 2-D, or T exceeds n_positions.
            IndexError: a token id outside [0, vocab_size).

        Example:
            >>> from pcp.models import GPT2, GPT2Config
            >>> model = GPT2(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
            >>> x = pcp.tensor([[1, 2, 3, 4]])
            >>> _, loss = model(x, x)
            >>> loss.shape, loss.item() > 0
            ((), True)
        """
        if idx.ndim != 2:
            raise ValueError(f"GPT2: idx must be (batch, time), got shape {tuple(idx.shape)}")
        B, T = idx.shape
        if T > self.config.n_positions:
            raise ValueError(f"GPT2: sequence length {T} exceeds n_positions {self.config.n_positions}")
        # Positions 0..T-1 are the table's first T rows: a view, where an embedding of arange(T)
        # would gather them (and scatter their gradient) with indices to upload.
        x = self.drop(self.wte(idx) + self.wpe.weight[:T])
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        logits = x @ self.wte.weight.T  # LM head tied to the token embedding
        loss = None
        if targets is not None:
            loss = pcp.cross_entropy(logits, targets)
        return logits, loss

    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Continues each sequence of idx by sampling max_new_tokens tokens, one at a time, from the
        softmax of the last position's logits / temperature (only the top_k most likely when
        given), the context cut to the last n_positions tokens. It runs in evaluation mode under
        pcp.no_grad() and draws from the seeded generator (pcp.random.seed).

        Args:
            idx: (B, T) integer token ids, the prompts.
            max_new_tokens: how many tokens to add.
            temperature: divides the logits (default 1.0; lower is greedier).
            top_k: sample among the k most likely tokens only (default None: all).

        Returns:
            A (B, T + max_new_tokens) int64 tensor on the CPU: the prompts and their continuations.

        Raises:
            ValueError: temperature is not positive, or idx is not 2-D.

        Example:
            >>> from pcp.models import GPT2, GPT2Config
            >>> model = GPT2(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
            >>> model.generate(pcp.tensor([[1, 2]]), max_new_tokens=10, top_k=5).shape
            (1, 12)
        """
        if temperature <= 0:
            raise ValueError(f"generate: temperature must be positive, got {temperature}")
        was_training = self.training
        self.eval()
        out = np.array(idx.numpy(), dtype=np.int64)
        with pcp.no_grad():
            for _ in range(max_new_tokens):
                ctx = pcp.tensor(out[:, -self.config.n_positions:], device="cpu")
                logits, _ = self(ctx)
                last = (logits[:, -1, :] / temperature).numpy().astype(np.float64)
                if top_k is not None:
                    k = min(top_k, last.shape[-1])
                    kth = np.sort(last, axis=-1)[:, -k][:, None]
                    last = np.where(last < kth, -np.inf, last)
                probs = np.exp(last - last.max(-1, keepdims=True))
                probs /= probs.sum(-1, keepdims=True)
                u = pcp.rand((out.shape[0],), pcp.float64, device="cpu").numpy()
                nxt = np.array([min(np.searchsorted(np.cumsum(p), ui, side="right"), p.size - 1)
                                for p, ui in zip(probs, u)])
                out = np.concatenate([out, nxt[:, None]], axis=1)
        self.train(was_training)
        return pcp.tensor(out)

    def save_pretrained(self, directory, tokenizer=None):
        """Writes this model in Hugging Face's GPT-2 layout: ``model.safetensors`` (float32 weights,
        the attention and MLP matrices in HF's Conv1D layout, zero biases where this model has
        none) and ``config.json``, so ``transformers.GPT2LMHeadModel.from_pretrained(directory)``
        gives the same logits, and ``GPT2.from_pretrained(directory)`` reads it back. With a
        tokenizer that has a ``save_pretrained`` (CharTokenizer, BPETokenizer), its files go there
        too. Creates the directory; each file is replaced atomically.

        Args:
            directory: where to write (created when missing).
            tokenizer: a tokenizer to save beside the model (default None).

        Returns:
            None.

        Raises:
            OSError: the directory cannot be created or written.

        Example:
            >>> import os, tempfile
            >>> from pcp.models import GPT2, GPT2Config
            >>> model = GPT2(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
            >>> out = os.path.join(tempfile.mkdtemp(), "hf")
            >>> from pcp.data import CharTokenizer
            >>> model.save_pretrained(out, tokenizer=CharTokenizer("abc"))
            >>> sorted(os.listdir(out))
            ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']
        """
        _save_pretrained(self, directory, tokenizer)

    @classmethod
    def from_pretrained(cls, path, config=None):
        """A model with Hugging Face GPT-2 weights: from a model.safetensors file, or a directory
        holding it and config.json (as save_pretrained and ``transformers`` write). HF stores the
        attention and MLP weights in Conv1D layout (in, out): they are transposed here. float16
        and bfloat16 weights are widened to float32. Without a config (neither given nor in the
        directory) the sizes are inferred from the weights' shapes, with 64-wide heads.

        Args:
            path: a .safetensors file or a directory.
            config: a GPT2Config to use instead of config.json (default None).

        Returns:
            A GPT2 holding the weights.

        Raises:
            SafetensorsError: a corrupt file, or a missing, extra, misshapen or non-finite tensor
                (the message names the file and the tensor), or weights that disagree with config.
            ValueError: a config.json that is not a usable GPT-2 config.
            FileNotFoundError: no such file.

        Example:
            >>> import os, tempfile
            >>> from pcp.models import GPT2, GPT2Config
            >>> model = GPT2(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
            >>> out = tempfile.mkdtemp()
            >>> model.save_pretrained(out)
            >>> again = GPT2.from_pretrained(out)
            >>> again.config == model.config, again.wte.weight.tolist() == model.wte.weight.tolist()
            (True, True)
        """
        if os.path.isdir(path):
            cfg_path = os.path.join(path, "config.json")
            if config is None and os.path.exists(cfg_path):
                try:
                    with open(cfg_path) as f:
                        config = GPT2Config.from_dict(json.load(f))
                except (ValueError, TypeError, AttributeError, RecursionError) as e:
                    raise ValueError(f"{cfg_path}: not a usable GPT-2 config.json ({e})") from None
            path = os.path.join(path, "model.safetensors")
        tensors, _ = load_safetensors(path)
        tensors = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in tensors.items()}
        inferred = _infer_config(path, tensors)
        for name in ("vocab_size", "n_positions", "n_embd", "n_layer"):  # before building: a config can be huge
            if config is not None and getattr(config, name) != getattr(inferred, name):
                raise SafetensorsError(path, f"the config's {name} is {getattr(config, name)} but the weights' is "
                                             f"{getattr(inferred, name)}")
        model = cls(config or inferred)
        own = model.state_dict()
        state = {}
        for k, v in tensors.items():
            if k.endswith((".attn.bias", ".attn.masked_bias")) or k == "lm_head.weight":
                continue  # causal-mask buffers, and the head tied to wte
            if k not in own:
                raise SafetensorsError(path, "not a parameter of GPT-2 with this config", k)
            v = v.T if k.endswith(_CONV1D) else v
            check_tensor(path, k, v, own[k].shape, (pcp.float32, pcp.float16, pcp.bfloat16))
            state[k] = v.astype(pcp.float32)
        missing = [k for k in own if k not in state]
        if missing:
            raise SafetensorsError(path, f"missing ({len(missing)} tensors missing in all)", missing[0])
        model.load_state_dict(state, strict=True)
        return model


def _save_pretrained(model, directory, tokenizer=None):
    cfg = model.config
    os.makedirs(directory, exist_ok=True)
    tensors = {}
    for k, v in model.state_dict().items():
        v = v.to("cpu").astype(pcp.float32)
        tensors["transformer." + k] = v.T if k.endswith(_CONV1D) else v
    if not cfg.bias:  # HF's GPT-2 always has biases: zeros compute what this model does
        C = cfg.n_embd
        widths = {"ln_1.bias": C, "ln_2.bias": C, "attn.c_attn.bias": 3 * C, "attn.c_proj.bias": C,
                  "mlp.c_fc.bias": 4 * C, "mlp.c_proj.bias": C}
        for i in range(cfg.n_layer):
            for name, n in widths.items():
                tensors[f"transformer.h.{i}.{name}"] = pcp.zeros((n,), device="cpu")
        tensors["transformer.ln_f.bias"] = pcp.zeros((C,), device="cpu")
    save_safetensors(tensors, os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    hf = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": cfg.vocab_size,
          "n_positions": cfg.n_positions, "n_embd": cfg.n_embd, "n_layer": cfg.n_layer, "n_head": cfg.n_head,
          "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": cfg.layer_norm_epsilon,
          "initializer_range": cfg.initializer_range, "resid_pdrop": cfg.dropout, "embd_pdrop": cfg.dropout,
          "attn_pdrop": cfg.dropout, "tie_word_embeddings": True, "torch_dtype": "float32"}
    if cfg.vocab_size == 50257:  # GPT-2's own vocabulary: its <|endoftext|>
        hf["bos_token_id"] = hf["eos_token_id"] = 50256
    else:  # no such token in another vocabulary
        hf["bos_token_id"] = hf["eos_token_id"] = None
    write_json(os.path.join(directory, "config.json"), hf)
    if tokenizer is not None:
        tokenizer.save_pretrained(directory)


def _infer_config(path, tensors):
    """A GPT2Config from the weights' shapes (no config.json): layers, widths, 64-wide heads."""
    for k in ("wte.weight", "wpe.weight"):
        if k not in tensors or tensors[k].ndim != 2:
            raise SafetensorsError(path, "missing or not 2-D: cannot infer the model's size", k)
    layers = {k.split(".")[1] for k in tensors if k.startswith("h.")}
    if not layers or sorted(int(i) if i.isdigit() else -1 for i in layers) != list(range(len(layers))):
        raise SafetensorsError(path, f"transformer blocks must be h.0.* to h.<n-1>.*, got h.{sorted(layers)[:5]}")
    vocab, n_embd = tensors["wte.weight"].shape
    try:
        return GPT2Config(vocab_size=vocab, n_positions=tensors["wpe.weight"].shape[0], n_embd=n_embd,
                          n_layer=1 + max(map(int, layers)), n_head=max(1, n_embd // 64))
    except ValueError as e:
        raise SafetensorsError(path, f"the weights' shapes make no GPT-2: {e}") from None
