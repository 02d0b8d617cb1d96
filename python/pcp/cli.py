"""The `pcp` command: `pcp train` and `pcp sample`."""
import argparse
import dataclasses
import os
import sys


def _add_config_flags(p, defaults):
    for f in dataclasses.fields(defaults):
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            p.add_argument(flag, type=lambda s: s.lower() in ("1", "true", "yes"), default=None, metavar="BOOL")
        else:
            typ = {"int": int, "float": float, "str": str}.get(f.type if isinstance(f.type, str) else f.type.__name__, str)
            p.add_argument(flag, type=typ, default=None)


def cmd_train(args):
    from pcp.train import TrainConfig, preset, train
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if getattr(args, f.name) is not None}
    cfg = preset(args.preset, **overrides)
    summary = train(cfg, resume=args.resume)
    print(f"done: val loss {summary['val_loss']:.4f} (best {summary['best_val']:.4f}), "
          f"{summary['ms_per_iter'] or 0:.1f} ms/iter")
    return 0


def cmd_sample(args):
    import pcp
    from pcp.data import CharTokenizer
    from pcp.train.checkpoint import load_checkpoint
    from pcp.train.loop import build_model
    from pcp.train.config import TrainConfig

    ckpt = args.checkpoint
    if os.path.isdir(ckpt):
        ckpt = os.path.join(ckpt, "best.safetensors" if os.path.exists(os.path.join(ckpt, "best.safetensors"))
                            else "ckpt.safetensors")
    tok_path = os.path.join(os.path.dirname(ckpt), "tokenizer.json")
    with open(tok_path) as f:
        tokenizer = CharTokenizer.from_json(f.read())
    meta = load_checkpoint(ckpt, restore_rng=False)
    cfg = TrainConfig.from_dict(meta["config"])
    model = build_model(cfg, tokenizer.vocab_size)
    load_checkpoint(ckpt, model, restore_rng=False)
    pcp.random.seed(args.seed)
    prompt = pcp.tensor([tokenizer.encode(args.prompt or "\n")])
    out = model.generate(prompt, args.max_new_tokens, temperature=args.temperature, top_k=args.top_k)
    print(tokenizer.decode(out[0].tolist()))
    return 0


def main(argv=None):
    from pcp.train import TrainConfig
    parser = argparse.ArgumentParser(prog="pcp", description="PCP: train and sample GPT models")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a GPT on a text (tiny Shakespeare by default)")
    t.add_argument("--preset", default="shakespeare-char-cpu", help="shakespeare-char or shakespeare-char-cpu")
    t.add_argument("--resume", action="store_true", help="continue from OUT/ckpt.safetensors")
    _add_config_flags(t, TrainConfig)
    t.set_defaults(fn=cmd_train)
    s = sub.add_parser("sample", help="generate text from a checkpoint")
    s.add_argument("--checkpoint", required=True, help="a checkpoint file or the --out folder of a run")
    s.add_argument("--prompt", default="\n")
    s.add_argument("--max-new-tokens", type=int, default=500)
    s.add_argument("--temperature", type=float, default=0.8)
    s.add_argument("--top-k", type=int, default=200)
    s.add_argument("--seed", type=int, default=1337)
    s.set_defaults(fn=cmd_sample)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, TypeError, FileNotFoundError, RuntimeError) as e:
        print(f"pcp {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
