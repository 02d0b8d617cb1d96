"""The training loop (nanoGPT's): AdamW with decay groups, warmup + cosine LR, gradient clipping,
periodic evaluation, atomic checkpoints (latest and best), metrics.jsonl, loss.png and a sample."""
import json
import math
import os
import time

import pcp
from pcp.data import CharTokenizer, TokenDataset
from pcp.data.sources import training_text
from pcp.models import GPT2, GPT2Config
from pcp.optim import AdamW, clip_grad_norm, warmup_cosine
from pcp.serialization import SafetensorsError, read_metadata

from . import rundir
from .checkpoint import best_val_of, load_checkpoint, parse_metadata, save_checkpoint
from .config import resume_changes
from .guard import Guard

RUN_MARKERS = ("ckpt.safetensors", "ckpt.prev.safetensors", "best.safetensors")  # OUT holds a run when one is there
RUN_FILES = ("ckpt.json", "ckpt.prev.json", "best.json", "metrics.jsonl", "loss.png", "tokenizer.json")


def build_data(cfg):
    """The tokenizer and dataset of a run: the text of cfg.data (a UTF-8 text file or a folder of
    .txt files) or $PCP_DATA, else the tiny-Shakespeare text shipped with PCP, with a character
    vocabulary of it; the tokens are cached in cfg.out/cache.

    Args:
        cfg: a TrainConfig (data, block_size and out are read).

    Returns:
        (tokenizer, dataset): a CharTokenizer and a TokenDataset.

    Raises:
        FileNotFoundError: cfg.data does not exist or holds no text.
        ValueError: a file that is not UTF-8, or a text too short for block_size.

    Example:
        >>> import os, tempfile
        >>> from pcp.train import TrainConfig, build_data
        >>> folder = tempfile.mkdtemp()
        >>> with open(os.path.join(folder, "text.txt"), "w") as f:
        ...     _ = f.write("abcd" * 100)
        >>> tok, data = build_data(TrainConfig(data=folder, block_size=8, out=os.path.join(folder, "run")))
        >>> tok.vocab_size, data.block_size
        (4, 8)
    """
    text = training_text(cfg.data or None)
    tokenizer = CharTokenizer.from_text(text)
    name = os.path.basename(os.path.normpath(cfg.data or os.environ.get("PCP_DATA") or "tinyshakespeare.txt"))
    return tokenizer, TokenDataset.from_text(text, tokenizer, cfg.block_size, cache_dir=os.path.join(cfg.out, "cache"),
                                             name=name)


def build_model(cfg, vocab_size):
    return GPT2(GPT2Config(vocab_size=vocab_size, n_positions=cfg.block_size, n_embd=cfg.n_embd,
                           n_layer=cfg.n_layer, n_head=cfg.n_head, dropout=cfg.dropout, bias=cfg.bias))


def build_optimizer(cfg, model):
    # As nanoGPT: weight decay on matrices (2-D and up), none on biases and norm gains.
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return AdamW(groups, lr=cfg.learning_rate, betas=(cfg.beta1, cfg.beta2))


def compute_dtype(cfg, device, name=None):
    """The products' dtype of a run: `name` (default cfg.dtype), where "auto" is bfloat16 on a GPU
    with bfloat16 tensor cores, PCP's own or through cuBLASLt (as nanoGPT picks on CUDA), and
    float32 elsewhere."""
    name = name or cfg.dtype
    if name != "auto":
        return pcp.DType(name)
    if device.startswith("cpu"):
        return pcp.float32
    info = pcp.gpu_info(device)
    return pcp.bfloat16 if info["tensor_core_bfloat16"] or info["vendor"]["matmul"] else pcp.float32


def autocast_for(dtype):
    return pcp.autocast(dtype=dtype if dtype != pcp.float32 else pcp.bfloat16, enabled=dtype != pcp.float32)


@pcp.no_grad()
def estimate_loss(model, data, cfg, dtype=pcp.float32):
    model.eval()
    out = {}
    for split in ("train", "val"):
        total = 0.0
        for _ in range(cfg.eval_iters):
            x, y = data.get_batch(split, cfg.batch_size)
            with autocast_for(dtype):
                total += model(x, y)[1].item()
        out[split] = total / cfg.eval_iters
    model.train()
    return out


def save_plot(path, xlabel, ylabel, draw):
    """A PNG of the lines draw(ax) adds; False (and no file) when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    draw(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_losses(metrics, path):
    def draw(ax):
        its = [m["iter"] for m in metrics]
        ax.plot(its, [m["train_loss"] for m in metrics], label="train")
        ax.plot(its, [m["val_loss"] for m in metrics], label="val")
    return save_plot(path, "iteration", "cross-entropy loss", draw)


def training_step(model, opt, scaler, cfg, dtype, command_lists=False, guard=None):
    """One optimizer step on a batch (forward under autocast, backward, clipping, the update) as a
    function of (x, y) returning the loss; compiled into a plan when cfg.compile (replayed as
    command lists with command_lists, see pcp.compile). An eager step leaves its gradient norm
    in step.norm (None without clipping, or with a GradScaler, whose overflows are its own); with
    a guard that may skip steps, a step whose loss or norm is not finite is not applied, and
    step.skipped says why ('' when it was applied)."""
    def step(x, y):
        with autocast_for(dtype):
            _, loss = model(x, y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        norm = None
        if cfg.grad_clip > 0:
            scaler.unscale_(opt)
            norm = clip_grad_norm(model.parameters(), cfg.grad_clip)
        step.norm = None if scaler.is_enabled() else norm
        step.skipped = guard.bad(loss, step.norm) if guard is not None and guard.skip else ""
        if step.skipped:
            opt.zero_grad()
            return loss
        scaler.step(opt)
        scaler.update()
        return loss
    step.norm, step.skipped = None, ""
    return pcp.compile(step, command_lists=command_lists) if cfg.compile else step


_warned_software = set()  # the software GPUs a run was warned about (once per process)


def software_gpu_warning(device, report):
    """Says once, when a run's device is a software GPU (Mesa's lavapipe...), how slow it is."""
    if device.startswith("cpu") or device in _warned_software or not pcp.gpu_info(device)["software"]:
        return
    _warned_software.add(device)
    report({"kind": "message", "text": f"warning: {device} ({pcp.gpu_info(device)['name']}) is a software implementation "
                                       "of a GPU, running on the CPU: training there is about 100x slower than with "
                                       "--device cpu (127x measured for shakespeare-char-cpu); use --device cpu"})


def plan_summary(entry):
    """One line on a compiled training step's plan (a pcp.compile CacheEntry)."""
    plan, mem = entry.plan, entry.plan.memory()
    dispatches = "" if entry.dispatches is None else f", {entry.dispatches} GPU dispatches a step"
    return (f"plan: traced in {entry.trace_seconds * 1e3:.0f} ms, {plan.traced_nodes} ops traced, {entry.nodes} "
            f"run ({plan.ops.count('fused_elementwise')} fused){dispatches}, {mem['peak_bytes'] / 2**20:.1f} MiB "
            f"of values at the peak, replayed {plan.replay_mode}")


def train(cfg, resume=False, report=None, overwrite=False):
    """Trains a character-level GPT-2 as nanoGPT does (what ``pcp train`` runs): AdamW with decay
    groups, warmup + cosine learning rate, gradient clipping, autocast per cfg.dtype, periodic
    evaluation, atomic checkpoints in cfg.out (ckpt.safetensors, and best.safetensors at the best
    validation loss), metrics.jsonl, loss.png (with matplotlib) and a sample at the end.

    Args:
        cfg: a TrainConfig.
        resume: continue from cfg.out's checkpoint (True), or from a checkpoint file (its path),
            e.g. the previous one a damaged newest checkpoint's error names (default False). A
            cfg.out without a checkpoint starts a new run.
        report: a function receiving each event of the run, a dict with a 'kind' ('start',
            'step', 'eval', 'message', 'end'; see pcp.dashboard); by default a dashboard on a
            terminal and log lines otherwise.
        overwrite: start anew in a cfg.out that holds a run, whose files then move to
            cfg.out/replaced-<time>/ (default False: such a folder is refused).

    Returns:
        A dict: train_loss and val_loss (the last evaluation's), best_val, ms_per_iter, metrics
        (the evaluation records), sample (text) and model (the trained GPT2).

    Raises:
        ValueError: an invalid config, or a checkpoint past max_iters.
        RunDirError: cfg.out holds a run and neither resume nor overwrite is given, or another
            run holds it (a ValueError).
        SafetensorsError: a checkpoint to resume that does not fit the config.

    Example:
        >>> import os, tempfile
        >>> from pcp.train import TrainConfig, train
        >>> folder = tempfile.mkdtemp()
        >>> with open(os.path.join(folder, "text.txt"), "w") as f:
        ...     _ = f.write("to be or not to be\\n" * 50)
        >>> cfg = TrainConfig(n_layer=1, n_head=2, n_embd=8, block_size=8, batch_size=2, max_iters=2,
        ...                   eval_iters=1, data=folder, out=os.path.join(folder, "run"), sample_tokens=0)
        >>> summary = train(cfg, report=lambda event: None)
        >>> summary["val_loss"] > 0, "ckpt.safetensors" in os.listdir(cfg.out)
        (True, True)
    """
    from pcp.dashboard import reporter
    cfg.validate()
    previous = pcp.get_default_device()
    pcp.set_default_device(pcp.device(cfg.device))  # parameters and optimizer state live there
    try:
        with rundir.locked(cfg.out):
            if report is not None:
                return _train(cfg, resume, overwrite, report)
            with reporter() as report:
                return _train(cfg, resume, overwrite, report)
    finally:
        pcp.set_default_device(previous)


def _describe(out):
    """What a run in OUT holds, for the refusal and --overwrite messages."""
    try:
        best = best_val_of(os.path.join(out, "best.safetensors"))
    except ValueError:
        best = None
    names = [n for n in RUN_MARKERS if os.path.exists(os.path.join(out, n))]
    return ", ".join(names) + (f"; best val loss {best:.4f}" if best is not None else "")


def _train(cfg, resume, overwrite, report):
    for text in rundir.prepare(cfg.out, RUN_MARKERS, RUN_FILES, resume, overwrite, lambda: _describe(cfg.out)):
        report({"kind": "message", "text": text})
    pcp.random.seed(cfg.seed)
    tokenizer, data = build_data(cfg)
    model = build_model(cfg, tokenizer.vocab_size)
    opt = build_optimizer(cfg, model)
    dtype = compute_dtype(cfg, str(pcp.get_default_device()))
    scaler = pcp.amp.GradScaler(enabled=dtype == pcp.float16)  # float16 gradients underflow unscaled
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, cfg.lr_decay_iters)
    ckpt_path, best_path = os.path.join(cfg.out, "ckpt.safetensors"), os.path.join(cfg.out, "best.safetensors")
    metrics_path = os.path.join(cfg.out, "metrics.jsonl")
    start, best_val, metrics = 0, math.inf, []
    source, messages = rundir.resume_source(cfg.out, "ckpt.safetensors", resume) if resume else (None, [])
    resume = source is not None
    if resume:
        try:
            changes = resume_changes(source, parse_metadata(source, read_metadata(source))["config"], cfg.to_dict())
            meta = load_checkpoint(source, model, opt)
            if opt.step_count > meta["step"]:  # one optimizer step per iteration at most (fewer when skipped)
                raise SafetensorsError(source, f"optimizer state: 'step' is {opt.step_count}, past the checkpoint's "
                                               f"iteration {meta['step']}")
        except SafetensorsError as e:
            rundir.offer_previous(e, source, ckpt_path, cfg.to_dict())
        rundir.set_aside_newest(cfg.out, source, ckpt_path, messages)
        if changes:
            messages.append("resumed with settings changed from the checkpoint's: " + ", ".join(changes))
        start = meta["step"]
        if isinstance(meta.get("grad_scaler"), dict) and scaler.is_enabled():
            scaler.load_state_dict(meta["grad_scaler"])
        if start > cfg.max_iters:
            raise ValueError(f"train: the checkpoint in {cfg.out} is at iteration {start}, past max_iters "
                             f"{cfg.max_iters}: raise max_iters to continue it")
        # Never replace a better best: the best file's own record counts, whatever the checkpoint says.
        recorded = (meta.get("best_val"), best_val_of(best_path))
        best_val = min((float(v) for v in recorded if isinstance(v, (int, float)) and v == v), default=math.inf)
        metrics = rundir.read_metrics(metrics_path, start)
    else:
        open(metrics_path, "w").close()
    for text in messages:
        report({"kind": "message", "text": text})
    with open(os.path.join(cfg.out, "tokenizer.json"), "w") as f:
        f.write(tokenizer.to_json())

    report({"kind": "start", "mode": "train", "parameters": model.num_parameters(),
            "device": str(pcp.get_default_device()), "dtype": str(dtype), "iter": start, "iters": cfg.max_iters, "out": cfg.out})
    guard = Guard(cfg.out, cfg.skip_nonfinite)
    software_gpu_warning(str(pcp.get_default_device()), report)
    step = training_step(model, opt, scaler, cfg, dtype, guard=guard)
    tokens_per_iter = cfg.batch_size * cfg.block_size
    extra = lambda: {"grad_scaler": scaler.state_dict()} if scaler.is_enabled() else {}  # noqa: E731
    t_last, iters_timed, t_train = time.perf_counter(), 0, 0.0
    loss_value = float("nan")
    for it in range(start, cfg.max_iters + 1):
        lr = lr_at(it)
        for g in opt.param_groups:
            g["lr"] = lr
        # Evaluate and checkpoint (skipped at the resume point: that evaluation was already done).
        if it % cfg.eval_interval == 0 or it == cfg.max_iters:
            if not (resume and it == start):
                guard.check()  # nothing of a step gone NaN is saved
                losses = estimate_loss(model, data, cfg, dtype)
                guard.check_eval(it, losses)
                tps = tokens_per_iter * iters_timed / t_train if t_train else 0.0
                rec = {"iter": it, "train_loss": losses["train"], "val_loss": losses["val"], "lr": lr, "tokens_per_s": tps}
                metrics.append(rec)
                with open(metrics_path, "a") as f:
                    f.write(json.dumps(rec) + "\n")
                report({"kind": "eval", "iter": it, "train_loss": losses["train"], "val_loss": losses["val"]})
                if losses["val"] < best_val:
                    best_val = losses["val"]
                    save_checkpoint(best_path, model, opt, it, cfg.to_dict(), {"best_val": best_val, **extra()})
                save_checkpoint(ckpt_path, model, opt, it, cfg.to_dict(), {"best_val": best_val, **extra()},
                                keep_previous=True)
                t_last = time.perf_counter()
        if it == cfg.max_iters:
            break
        x, y = data.get_batch("train", cfg.batch_size)
        loss = step(x, y)
        if getattr(step, "skipped", ""):
            guard.skip_step(it, step.skipped)
            report({"kind": "message", "text": f"iteration {it}: {step.skipped}: step skipped "
                                               f"({len(guard.skipped)} of --skip-nonfinite {guard.skip})"})
        elif not guard.skip:
            guard.record(it, loss, getattr(step, "norm", None))
        if cfg.compile and it == min(start + 1, cfg.max_iters - 1):  # once the plan has run
            report({"kind": "message", "text": plan_summary(step.cache_info()[0])})
        now = time.perf_counter()
        t_train += now - t_last
        iters_timed += 1
        t_last = now
        if (it + 1) % cfg.log_interval == 0 or it + 1 == cfg.max_iters:
            guard.check()
            loss_value = loss.item()
            report({"kind": "step", "iter": it + 1, "iters": cfg.max_iters, "loss": loss_value, "lr": lr,
                    "tokens_per_s": tokens_per_iter * iters_timed / t_train,
                    "eta_s": t_train / iters_timed * (cfg.max_iters - it - 1)})

    plotted = plot_losses(metrics, os.path.join(cfg.out, "loss.png"))
    sample = ""
    if cfg.sample_tokens > 0:
        try:
            start_ids = tokenizer.encode("\n")
        except ValueError:  # a text without newlines (a character vocabulary lacking one): its first token
            start_ids = [0]
        prompt = pcp.tensor([start_ids], device="cpu")
        sample = tokenizer.decode(model.generate(prompt, cfg.sample_tokens, temperature=0.8, top_k=50)[0].tolist())
        report({"kind": "message", "text": "sample:\n" + sample})
    if not plotted:
        report({"kind": "message", "text": "(matplotlib not installed: loss.png skipped)"})
    report({"kind": "end"})
    return {
        "train_loss": metrics[-1]["train_loss"] if metrics else None,
        "val_loss": metrics[-1]["val_loss"] if metrics else None,
        "best_val": best_val,
        "ms_per_iter": 1e3 * t_train / iters_timed if iters_timed else None,
        "metrics": metrics,
        "sample": sample,
        "model": model,
    }
