"""The `pcp` command: `pcp train`, `pcp sample`, `pcp export-hf`, and DiLoCo: `pcp diloco`,
`pcp shepherd`, `pcp worker`."""
import argparse
import dataclasses
import importlib.util
import inspect
import os
import signal
import sys
import threading


_terminated = []  # set by SIGTERM: the KeyboardInterrupt may come back re-raised (Ray's calls do that)


def _raise_terminated(signum, frame):
    """SIGTERM raised as Ctrl-C's KeyboardInterrupt, so that `finally` blocks and atexit run (Python's
    default ends the process at once, which would leave a local Ray cluster behind)."""
    _terminated.append(signum)
    raise KeyboardInterrupt


_CONFIG_HELP = {
    "compile": "trace the training step once into a plan (pcp.compile) and replay it each iteration",
    "data": "the text to train on: a UTF-8 file, or a folder whose .txt files are joined (default: "
            "$PCP_DATA, else the tiny-Shakespeare text shipped with PCP)",
    "out": "the run's folder; given, it must not hold a run unless --resume or --overwrite (default: a new "
           "runs/<preset>-<date>-<time>/, or with --resume the latest run under runs/)",
}


def _field_help(cls):
    """{field: its description} from a config dataclass's docstring (its Args section)."""
    doc = inspect.getdoc(cls) or ""
    section = doc.split("Args:", 1)[1].split("\n\n", 1)[0] if "Args:" in doc else ""
    out, names = {}, []
    for line in section.splitlines():
        if line.startswith("    ") and not line.startswith("        ") and ":" in line:
            head, text = line.strip().split(":", 1)
            names = [n.strip() for n in head.split(",")]
            out.update({n: text.strip() for n in names})
        elif names:
            out.update({n: out[n] + " " + line.strip() for n in names})
    return out


def _add_config_flags(p, defaults):
    """A --flag per field of the config `defaults` (an instance: its values are the defaults the
    help shows); a flag not given is absent from the parsed args (the preset's value holds)."""
    described = _field_help(type(defaults))
    for f in dataclasses.fields(defaults):
        flag = "--" + f.name.replace("_", "-")
        text = _CONFIG_HELP.get(f.name) or described.get(f.name, f.name.replace("_", " "))
        if "(default:" not in text:
            text = text.rstrip(".") + f" (default: {getattr(defaults, f.name)!r})"
        text = text.replace("%", "%%")
        if f.type in (bool, "bool"):  # --flag alone means true
            p.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), nargs="?", const=True,
                           default=argparse.SUPPRESS, metavar="BOOL", help=text)
        else:
            typ = {"int": int, "float": float, "str": str}.get(f.type if isinstance(f.type, str) else f.type.__name__, str)
            p.add_argument(flag, type=typ, default=argparse.SUPPRESS, help=text)


def _overrides(args):
    from pcp.train import TrainConfig
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(args, f.name)}


def _run_folder(args, overrides, name):
    """--out as given, else the latest run under runs/ for --resume, else a new runs/<name>-<time>."""
    from pcp.train import rundir
    if "out" not in overrides:
        overrides["out"] = rundir.latest_run() if args.resume is True else rundir.new_run_folder(name)
    return overrides


def _require(module, extra, command):
    """A clear error, not a traceback, when an optional dependency is missing."""
    if importlib.util.find_spec(module) is None:
        raise MissingDependency(f"{command} needs {module}, which is not installed: pip install \"pcp[{extra}]\" "
                                f"(from a clone: pip install \".[{extra}]\")")


class MissingDependency(RuntimeError):
    """An optional dependency a command needs is not installed (the message says which extra)."""


def _add_dashboard_flag(p):
    p.add_argument("--dashboard", action=argparse.BooleanOptionalAction, default=None,
                   help="a live terminal dashboard, or (--no-dashboard) plain log lines; default: the "
                        "dashboard when stdout is a terminal and rich is installed%(default).0s")


def cmd_train(args):
    from pcp.dashboard import reporter
    from pcp.train import preset, train
    cfg = preset(args.preset, **_run_folder(args, _overrides(args), args.preset))
    with reporter(args.dashboard) as report:
        summary = train(cfg, resume=args.resume, report=report, overwrite=args.overwrite)
    val = "none" if summary["val_loss"] is None else f"{summary['val_loss']:.4f}"
    speed = (f"{summary['ms_per_iter']:.1f} ms/iter" if summary["ms_per_iter"] is not None
             else f"nothing left to train (the run was at max_iters {cfg.max_iters})")
    print(f"done: val loss {val} (best {summary['best_val']:.4f}), {speed}; the run is in {cfg.out}")
    if args.export_hf:
        from pcp.data import CharTokenizer
        with open(os.path.join(cfg.out, "tokenizer.json")) as f:
            _export_hf(summary["model"], CharTokenizer.from_json(f.read()), args.export_hf)
    return 0


def _load_trained(checkpoint):
    """(model, tokenizer) of a checkpoint file, or of a run's folder (pcp train's or pcp diloco's:
    its best checkpoint, else its last); None: the latest run under runs/."""
    from pcp.data import CharTokenizer
    from pcp.train.checkpoint import load_checkpoint
    from pcp.train.loop import build_model
    from pcp.train.config import TrainConfig

    from pcp.train import rundir
    ckpt = rundir.checkpoint_in(checkpoint if checkpoint is not None else rundir.latest_run())
    tok_path = os.path.join(os.path.dirname(ckpt), "tokenizer.json")
    if not os.path.isfile(tok_path):
        raise FileNotFoundError(f"{ckpt}: no tokenizer.json beside it (the run's character vocabulary): not a GPT run "
                                "of pcp train or pcp diloco")
    with open(tok_path) as f:
        try:
            tokenizer = CharTokenizer.from_json(f.read())
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
            raise ValueError(f"{tok_path}: not a usable tokenizer file ({type(e).__name__}: {e})") from None
    meta = load_checkpoint(ckpt, restore_rng=False)
    try:
        cfg = TrainConfig.from_dict(meta["config"]).validate()
    except (ValueError, TypeError) as e:
        from pcp.serialization import SafetensorsError
        raise SafetensorsError(ckpt, f"checkpoint metadata: its config is not usable ({e})") from None
    model = build_model(cfg, tokenizer.vocab_size)
    load_checkpoint(ckpt, model, restore_rng=False)
    return model, tokenizer


def cmd_sample(args):
    import pcp
    model, tokenizer = _load_trained(args.checkpoint)
    pcp.random.seed(args.seed)
    prompt = pcp.tensor([tokenizer.encode(args.prompt or "\n")])
    out = model.generate(prompt, args.max_new_tokens, temperature=args.temperature, top_k=args.top_k)
    print(tokenizer.decode(out[0].tolist()))
    return 0


def _export_hf(model, tokenizer, directory):
    model.save_pretrained(directory, tokenizer=tokenizer)
    print(f"exported to {directory} in Hugging Face's layout: transformers.GPT2LMHeadModel.from_pretrained"
          f"({directory!r}) and AutoTokenizer.from_pretrained({directory!r}) load it")


def cmd_export_hf(args):
    if len(args.paths) > 2:
        raise ValueError(f"export-hf: expected [CHECKPOINT] DIR, got {len(args.paths)} paths")
    checkpoint, directory = args.paths if len(args.paths) == 2 else (None, args.paths[0])
    model, tokenizer = _load_trained(checkpoint)
    _export_hf(model, tokenizer, directory)
    return 0


def _ints(flag, text):
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{flag}: expected whole numbers separated by commas, got {text!r}") from None


def cmd_diloco(args):
    _require("ray", "distributed", "pcp diloco")
    from pcp.dashboard import reporter
    from pcp.distributed import DiLoCoConfig, Shepherd
    from pcp.distributed.plot import plot_rounds
    from pcp.train import preset
    overrides = _run_folder(args, _overrides(args), f"diloco-{args.preset}")
    if "device" not in overrides and "gpu" in (args.worker_device, *args.worker_devices.split(",")):
        overrides["device"] = "gpu"  # the global model and outer step beside GPU workers, not on the host
    cfg = preset(args.preset, **overrides).validate()
    dcfg = DiLoCoConfig(workers=args.workers, inner_steps=args.inner_steps, rounds=args.rounds,
                        outer_lr=args.outer_lr, outer_momentum=args.outer_momentum, compression=args.compression,
                        split=args.split, round_timeout=args.round_timeout, weighting=args.weighting,
                        fragments=args.fragments, overlap=args.overlap, merge_alpha=args.merge_alpha,
                        pipeline=args.pipeline, merge_when_ready=args.merge_when_ready,
                        batch_sizes=_ints("--worker-batch-sizes", args.worker_batch_sizes), worker_device=args.worker_device,
                        worker_devices=[v.strip() for v in args.worker_devices.split(",") if v.strip()],
                        worker_dtypes=[v.strip() for v in args.worker_dtypes.split(",") if v.strip()],
                        gpus_per_worker=args.gpus_per_worker, address=args.address or "",
                        eval_every=args.eval_every, worker_eval=args.worker_eval, checkpoint_every=args.checkpoint_every,
                        state_every=args.state_every).validate()
    with reporter(args.dashboard) as report:
        # A local Ray cluster is stopped on every way out: errors, Ctrl-C and SIGTERM here (Shepherd
        # stops it when its own start fails), and a reaper process if this one is killed outright.
        shepherd = Shepherd(cfg, dcfg, report=report, resume=args.resume, overwrite=args.overwrite)
        try:
            history = shepherd.run()
        finally:
            shepherd.shutdown()
    plotted = plot_rounds(history, os.path.join(cfg.out, "loss.png"))
    last = history[-1]
    print(f"done: {shepherd.round} rounds, val loss {last['val_loss']:.4f}, {last['total_bytes'] / 1e6:.1f} MB "
          f"communicated; the run is in {cfg.out}{'' if plotted else ' (matplotlib not installed: loss.png skipped)'}")
    return 0


def _ray_start(ray_args):
    """Runs `ray start ... --block` (Ray's own CLI) until interrupted."""
    import shutil
    import subprocess
    _require("ray", "distributed", "this command")
    ray = shutil.which("ray")
    if ray is None:
        raise RuntimeError("the `ray` command is not installed (pip install 'pcp[distributed]')")
    # Multi-node is the point here, whatever a local run set (init_ray turns clusters off for loopback).
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="1")
    try:
        return subprocess.call([ray, "start", *ray_args, "--block"], env=env)
    except KeyboardInterrupt:
        return 0


def cmd_shepherd(args):
    host = ["--node-ip-address", args.host] if args.host else []
    print(f"starting a Ray head on port {args.port}; workers join with `pcp worker --connect HOST:{args.port}`, "
          f"and `pcp diloco --address HOST:{args.port} ...` trains on the cluster", flush=True)
    return _ray_start(["--head", "--port", str(args.port), "--include-dashboard=false", *host])


def cmd_worker(args):
    host, _, port = args.connect.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"worker: --connect must be HOST:PORT, got {args.connect!r}")
    from pcp.distributed.cluster import check_reachable
    check_reachable(args.connect)
    return _ray_start(["--address", args.connect, *(["--node-ip-address", args.host] if args.host else [])])


def main(argv=None):
    import pcp
    from pcp.train import preset
    parser = argparse.ArgumentParser(prog="pcp", description="PCP: train and sample GPT models")
    parser.add_argument("--version", action="version", version=f"pcp {pcp.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    fmt = {"formatter_class": argparse.ArgumentDefaultsHelpFormatter}
    t = sub.add_parser("train", help="train a GPT on a text (tiny Shakespeare by default)", **fmt)
    t.add_argument("--preset", default="shakespeare-char-cpu",
                   help="the configuration flags start from: shakespeare-char (nanoGPT's, for a GPU) or "
                        "shakespeare-char-cpu; the defaults below are shakespeare-char-cpu's")
    t.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                   help="continue the run in --out (the latest under runs/ without --out) from its last checkpoint, "
                        "or from the CHECKPOINT file given (e.g. OUT/ckpt.prev.safetensors, the one before it)")
    t.add_argument("--overwrite", action="store_true",
                   help="start a new run in an OUT that holds one; its files move to OUT/replaced-<time>/")
    t.add_argument("--export-hf", metavar="DIR", default=None,
                   help="also write the final model and its tokenizer to DIR in Hugging Face's layout "
                        "(`pcp export-hf` exports any checkpoint, the best one for instance)")
    _add_dashboard_flag(t)
    _add_config_flags(t, preset("shakespeare-char-cpu"))
    t.set_defaults(fn=cmd_train)
    s = sub.add_parser("sample", help="generate text from a checkpoint", **fmt)
    s.add_argument("--checkpoint", default=None,
                   help="a checkpoint file, or a run's folder (pcp train's or pcp diloco's: its best checkpoint, else "
                        "its last); default: the latest run under runs/")
    s.add_argument("--prompt", default="\n", help="the text the sample continues")
    s.add_argument("--max-new-tokens", type=int, default=500, help="characters to generate")
    s.add_argument("--temperature", type=float, default=0.8, help="below 1 sharper, above 1 more random")
    s.add_argument("--top-k", type=int, default=200, help="sample among the k likeliest characters only")
    s.add_argument("--seed", type=int, default=1337, help="the sampling seed (the same seed, the same text)")
    s.set_defaults(fn=cmd_sample)
    e = sub.add_parser("export-hf", help="write a checkpoint in Hugging Face's layout (transformers loads it)",
                       usage="pcp export-hf [-h] [CHECKPOINT] DIR", **fmt)
    e.add_argument("paths", nargs="+", metavar="[CHECKPOINT] DIR",
                   help="CHECKPOINT: a checkpoint file or a run's folder (its best checkpoint; default: the latest run "
                        "under runs/); DIR: the folder to write model.safetensors, config.json and the tokenizer to")
    e.set_defaults(fn=cmd_export_hf)
    d = sub.add_parser("diloco", help="train one GPT with DiLoCo over Ray workers (local cluster or --address)",
                       **fmt)
    d.add_argument("--preset", default="shakespeare-char-cpu",
                   help="the configuration flags start from: shakespeare-char or shakespeare-char-cpu")
    d.add_argument("--workers", type=int, default=4, help="DiLoCo workers (Ray actors), each a replica of the model")
    d.add_argument("--inner-steps", type=int, default=50, help="H: inner AdamW steps per worker per round")
    d.add_argument("--rounds", type=int, default=10, help="outer steps: rounds of H inner steps on every worker")
    d.add_argument("--outer-lr", type=float, default=0.7, help="the outer Nesterov SGD's learning rate")
    d.add_argument("--outer-momentum", type=float, default=0.9, help="the outer Nesterov SGD's momentum")
    d.add_argument("--compression", default="none", choices=["none", "float16", "int8", "int4", "fp4", "auto"],
                   help="of the pseudo-gradients: int8, int4 and fp4 in blocks of 64 values with a scale each; "
                        "auto: float32, int8 then int4 for a worker whose trips are measured slow")
    d.add_argument("--split", default="iid", choices=["iid", "contiguous"], help="how workers share the train data")
    d.add_argument("--round-timeout", type=float, default=600.0, help="seconds before a silent worker is left out")
    d.add_argument("--fragments", type=int, default=1,
                   help="Streaming DiLoCo: parameter groups (strided by layer) synchronised in turn, one every H/F steps")
    d.add_argument("--overlap", type=int, default=0, metavar="TAU",
                   help="inner steps a fragment's new global values take to arrive (merged then, --merge-alpha)")
    d.add_argument("--merge-alpha", type=float, default=0.5,
                   help="with --overlap: the share of a worker's own values a merge keeps")
    d.add_argument("--pipeline", action=argparse.BooleanOptionalAction, default=True,
                   help="with --overlap: start each worker's next round before the shepherd's step (same results)")
    d.add_argument("--merge-when-ready", action="store_true",
                   help="with --overlap: merge the outer step as soon as it arrives from step TAU on, never "
                        "waiting for it before the round ends (the merge step then depends on timing)")
    d.add_argument("--weighting", default="tokens", choices=["tokens", "uniform"],
                   help="how the outer average weighs each worker's pseudo-gradient")
    d.add_argument("--worker-batch-sizes", default="", metavar="B,B,...",
                   help="each worker's batch size, by rank (repeated); default: --batch-size for all")
    d.add_argument("--worker-device", default="cpu", choices=["cpu", "gpu"],
                   help="where the workers' models and inner steps run (gpu: through Ray's GPU resources)")
    d.add_argument("--worker-devices", default="", metavar="D,D,...",
                   help="each worker's device, by rank (cpu or gpu, repeated): CPU and GPU workers in one run")
    d.add_argument("--worker-dtypes", default="", metavar="T,T,...",
                   help="each worker's products' dtype, by rank (auto, float32, bfloat16 or float16, repeated); "
                        "default: --dtype for all")
    d.add_argument("--gpus-per-worker", type=float, default=0.0,
                   help="Ray's num_gpus per GPU worker (a fraction shares a GPU; default: the GPUs shared evenly)")
    d.add_argument("--eval-every", type=int, default=1, metavar="ROUNDS",
                   help="rounds between evaluations (the first and last are always evaluated)")
    d.add_argument("--worker-eval", action=argparse.BooleanOptionalAction, default=True,
                   help="on evaluated rounds the workers score their own models too; with --no-worker-eval only the "
                        "global model is scored, sparing the workers that time")
    d.add_argument("--checkpoint-every", type=int, default=1, metavar="ROUNDS",
                   help="rounds between checkpoints (the last always checkpoints)")
    d.add_argument("--state-every", type=int, default=0, metavar="ROUNDS",
                   help="rounds between the workers sending their inner states for the checkpoint (0: every "
                        "checkpoint; more spares slow links, a resume then goes on from older states)")
    d.add_argument("--address", default=None, help="HOST:PORT of a running Ray cluster (default: start one here)")
    d.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                   help="continue the run in --out (the latest under runs/ without --out) from its last checkpoint, "
                        "or from the CHECKPOINT file given (e.g. OUT/diloco.prev.safetensors, the one before it)")
    d.add_argument("--overwrite", action="store_true",
                   help="start a new run in an OUT that holds one; its files move to OUT/replaced-<time>/")
    _add_dashboard_flag(d)
    _add_config_flags(d, preset("shakespeare-char-cpu"))
    d.set_defaults(fn=cmd_diloco)
    h = sub.add_parser("shepherd", help="start a Ray head node for DiLoCo workers to join", **fmt)
    h.add_argument("--port", type=int, default=6379, help="the Ray head's port, which workers connect to")
    h.add_argument("--host", default=None, help="the address this node announces (default: Ray's choice)")
    h.set_defaults(fn=cmd_shepherd)
    w = sub.add_parser("worker", help="join a shepherd's Ray cluster as a worker node", **fmt)
    w.add_argument("--connect", required=True, help="HOST:PORT of `pcp shepherd`")
    w.add_argument("--host", default=None, help="the address this node announces (default: Ray's choice)")
    w.set_defaults(fn=cmd_worker)
    args = parser.parse_args(argv)
    from pcp.train.guard import NonFiniteLoss
    main_thread = threading.current_thread() is threading.main_thread()
    _terminated.clear()
    previous = signal.getsignal(signal.SIGTERM)
    if main_thread and args.command in ("train", "sample", "diloco"):
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return args.fn(args)
    except NonFiniteLoss as e:  # the run diverged: its last good checkpoint is kept
        print(f"pcp {args.command}: error: {e}", file=sys.stderr)
        return 3
    except (ValueError, TypeError, OSError, RuntimeError) as e:  # OSError: ConnectionError, missing files
        print(f"pcp {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        signum = signal.SIGTERM if _terminated else signal.SIGINT
        print(f"pcp {args.command}: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum
    finally:
        if main_thread and previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
