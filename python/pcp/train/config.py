"""Training configuration and nanoGPT's Shakespeare presets."""
from dataclasses import dataclass, replace

from pcp._config import DictConfig


@dataclass
class TrainConfig(DictConfig):
    # model
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    block_size: int = 256
    dropout: float = 0.2
    bias: bool = False
    # optimisation
    batch_size: int = 64
    max_iters: int = 5000
    learning_rate: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    lr_decay_iters: int = 5000
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0
    # evaluation and output
    eval_interval: int = 250
    eval_iters: int = 200
    log_interval: int = 10
    seed: int = 1337
    device: str = "cpu"
    # compute type of the products: auto (bfloat16 on a GPU with tensor cores, else float32),
    # float32, bfloat16 (autocast) or float16 (autocast with a GradScaler)
    dtype: str = "auto"
    data: str = ""
    out: str = "out"
    sample_tokens: int = 300

    def validate(self):
        for name in ("n_layer", "n_head", "n_embd", "block_size", "batch_size", "eval_iters", "log_interval"):
            if getattr(self, name) <= 0:
                raise ValueError(f"train: {name} must be positive, got {getattr(self, name)}")
        if self.n_embd % self.n_head:
            raise ValueError(f"train: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.max_iters < 0 or self.eval_interval <= 0:
            raise ValueError("train: max_iters must be >= 0 and eval_interval > 0")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"train: dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"train: dropout must be in [0, 1), got {self.dropout}")
        return self


PRESETS = {
    # nanoGPT config/train_shakespeare_char.py
    "shakespeare-char": TrainConfig(),
    # nanoGPT's CPU variant of it (README: "baby GPT" on a laptop)
    "shakespeare-char-cpu": TrainConfig(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, dropout=0.0,
                                        max_iters=2000, lr_decay_iters=2000, eval_iters=20, eval_interval=250),
}


def preset(name, **overrides):
    if name not in PRESETS:
        raise ValueError(f"unknown preset '{name}' (available: {', '.join(PRESETS)})")
    return replace(PRESETS[name], **overrides)
