"""Training configuration and nanoGPT's Shakespeare presets."""
from dataclasses import dataclass, replace

from pcp._config import DictConfig


@dataclass
class TrainConfig(DictConfig):
    """Everything a training run (pcp.train.train, ``pcp train``) needs: the model's size, the
    optimisation, evaluation and output. The defaults are nanoGPT's shakespeare_char run
    (PRESETS['shakespeare-char']).

    Args:
        n_layer: the GPT-2 model's transformer blocks.
        n_head: attention heads per block.
        n_embd: the model's width (a multiple of n_head).
        block_size: the context, in tokens (characters).
        dropout: the model's dropout probability, in [0, 1).
        bias: biases in linear layers and norms.
        batch_size: sequences per step.
        max_iters: optimizer steps in all.
        learning_rate: the peak learning rate of the warmup + cosine schedule.
        min_lr: the learning rate the cosine decays to.
        warmup_iters: iterations of linear warmup.
        lr_decay_iters: the iteration where the cosine reaches min_lr.
        weight_decay: AdamW's decoupled weight decay (on matrices only).
        beta1: AdamW's first-moment decay.
        beta2: AdamW's second-moment decay.
        grad_clip: the global gradient-norm limit (0 for none).
        compile: run the training step as a plan (pcp.compile): traced at the first iteration,
            replayed after (not with float16, whose GradScaler decides on the host).
        eval_interval: iterations between evaluations (each one checkpoints).
        eval_iters: batches each evaluation averages.
        log_interval: report the loss every log_interval steps.
        seed: the seed of initialisation and batches.
        device: 'cpu', 'gpu', 'gpu:N' or 'vulkan:N'.
        dtype: the products' compute type: 'auto' (bfloat16 on a GPU with bfloat16 tensor cores,
            else float32), 'float32', 'bfloat16' or 'float16' (with a GradScaler).
        data: a UTF-8 text file or folder of .txt files ('' for $PCP_DATA or the shipped
            Shakespeare).
        out: the run's folder (checkpoints, metrics.jsonl, loss.png, tokenizer.json).
        sample_tokens: characters to sample at the end (0 for none).
        skip_nonfinite: how many steps whose loss or gradient norm is NaN or infinite are
            skipped (not applied) before the run stops (default 0: the first one stops it, with
            its last good checkpoint kept). Above 0, every step waits for its loss (eager only).

    Raises:
        TypeError: an unknown field.

    Example:
        >>> from pcp.train import TrainConfig
        >>> cfg = TrainConfig(n_layer=2, max_iters=100)
        >>> cfg.n_layer, cfg.learning_rate
        (2, 0.001)
    """

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
    compile: bool = False
    # evaluation and output
    eval_interval: int = 250
    eval_iters: int = 200
    log_interval: int = 10
    seed: int = 1337
    device: str = "cpu"
    # compute type of the products: auto (bfloat16 on a GPU with tensor cores, else float32),
    # float32, bfloat16 (autocast) or float16 (autocast with a GradScaler)
    dtype: str = "auto"
    skip_nonfinite: int = 0  # steps with a NaN/inf loss or gradient norm skipped before the run stops
    data: str = ""
    out: str = "out"
    sample_tokens: int = 300

    def validate(self):
        """Checks the settings together, as a run does before it starts.

        Returns:
            This config.

        Raises:
            ValueError: a size that is not positive, n_embd not divisible by n_head, a negative
                max_iters, an unknown dtype, or dropout outside [0, 1).

        Example:
            >>> from pcp.train import TrainConfig
            >>> TrainConfig(n_embd=64, n_head=4).validate().n_head
            4
        """
        for name in ("n_layer", "n_head", "n_embd", "block_size", "batch_size", "eval_iters", "log_interval"):
            if getattr(self, name) <= 0:
                raise ValueError(f"train: {name} must be positive, got {getattr(self, name)}")
        if self.n_embd % self.n_head:
            raise ValueError(f"train: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.max_iters < 0:
            raise ValueError(f"train: max_iters must be >= 0, got {self.max_iters}")
        if self.eval_interval <= 0:
            raise ValueError(f"train: eval_interval must be positive, got {self.eval_interval}")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"train: dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"train: dropout must be in [0, 1), got {self.dropout}")
        if self.compile and self.dtype == "float16":
            raise ValueError("train: compile does not run with float16 yet (its GradScaler skips steps on the host)")
        if self.skip_nonfinite < 0 or (self.compile and self.skip_nonfinite):
            raise ValueError(f"train: skip_nonfinite must be >= 0, and 0 with compile (a plan cannot skip a step on "
                             f"the host), got {self.skip_nonfinite}")
        return self


MODEL_FIELDS = ("n_layer", "n_head", "n_embd", "block_size", "bias")  # what a checkpoint's model is


def resume_changes(path, saved, current):
    """What a resumed run changes from the config its checkpoint saved: refused for the model's
    fields (MODEL_FIELDS: the weights would not be that model, or, for n_head, would be read as
    another), returned as messages for the run's fields (max_iters, the schedule, cadences).

    Args:
        path: the checkpoint (for the message).
        saved: the checkpoint's config, a dict.
        current: this run's config, a dict (TrainConfig.to_dict()).

    Returns:
        A list of 'name: old -> new' strings, one per run field that changed.

    Raises:
        SafetensorsError: a model field that differs, all of them listed.

    Example:
        >>> from pcp.train.config import resume_changes
        >>> resume_changes("ckpt.safetensors", {"n_layer": 2, "max_iters": 100}, {"n_layer": 2, "max_iters": 200})
        ['max_iters: 100 -> 200']
    """
    from pcp.serialization import SafetensorsError
    changed = {k: (saved[k], v) for k, v in current.items() if k in saved and saved[k] != v}
    model = [f"{k} is {a!r} there, {b!r} here" for k, (a, b) in changed.items() if k in MODEL_FIELDS]
    if model:
        raise SafetensorsError(path, "a checkpoint of another model: " + "; ".join(model) + " (resume with the "
                               "checkpoint's values, or start anew with --overwrite)")
    return [f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items() if k != "out"]


#: The named configurations ``pcp train --preset NAME`` starts from: nanoGPT's
#: shakespeare_char run ('shakespeare-char') and its CPU-sized variant ('shakespeare-char-cpu').
PRESETS = {
    # nanoGPT config/train_shakespeare_char.py
    "shakespeare-char": TrainConfig(),
    # nanoGPT's CPU variant of it (README: "baby GPT" on a laptop)
    "shakespeare-char-cpu": TrainConfig(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, dropout=0.0,
                                        max_iters=2000, lr_decay_iters=2000, eval_iters=20, eval_interval=250),
}


def preset(name, **overrides):
    """A copy of a preset configuration with some fields changed.

    Args:
        name: a key of PRESETS.
        **overrides: fields to change.

    Returns:
        A new TrainConfig.

    Raises:
        ValueError: an unknown preset (the message lists them).
        TypeError: an unknown field.

    Example:
        >>> from pcp.train import preset
        >>> preset("shakespeare-char-cpu", max_iters=10).n_embd
        128
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset '{name}' (available: {', '.join(PRESETS)})")
    return replace(PRESETS[name], **overrides)
