"""Checkpoints: model and optimizer tensors in one safetensors file whose metadata holds the
step, config, RNG state and best validation loss as JSON. Written atomically (temp + rename)."""
import json
import os

import pcp
from pcp.serialization import load_safetensors, save_safetensors


def save_checkpoint(path, model, optimizer, step, config, extra=None):
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    osd = optimizer.state_dict()
    scalars = {}  # per-parameter counters (Adam's step) go in the JSON metadata
    for i, s in osd["state"].items():
        for k, t in s.items():
            if isinstance(t, pcp.Tensor):
                tensors[f"optim.{i}.{k}"] = t
            else:
                scalars.setdefault(str(i), {})[k] = t
    seed, offset = pcp.random.get_rng_state()
    meta = {
        "step": step,
        "config": config,
        "rng": [seed, offset],
        "optim": {"step": osd["step"], "param_groups": osd["param_groups"], "scalars": scalars},
        **(extra or {}),
    }
    save_safetensors(tensors, path, metadata={"pcp": json.dumps(meta)})
    with open(os.path.splitext(path)[0] + ".json.tmp", "w") as f:  # human-readable copy of the metadata
        json.dump(meta, f, indent=1)
    os.replace(os.path.splitext(path)[0] + ".json.tmp", os.path.splitext(path)[0] + ".json")


def load_checkpoint(path, model=None, optimizer=None, restore_rng=True):
    """Loads into model/optimizer when given; returns the metadata dict."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_checkpoint: no checkpoint at {path}")
    tensors, raw_meta = load_safetensors(path)
    if "pcp" not in raw_meta:
        raise ValueError(f"load_checkpoint: {path} is not a PCP checkpoint (no 'pcp' metadata)")
    meta = json.loads(raw_meta["pcp"])
    if model is not None:
        model.load_state_dict({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
    if optimizer is not None:
        state = {}
        for k, v in tensors.items():
            if k.startswith("optim."):
                _, i, name = k.split(".", 2)
                state.setdefault(int(i), {})[name] = v
        for i, s in meta["optim"].get("scalars", {}).items():
            state.setdefault(int(i), {}).update(s)
        optimizer.load_state_dict({"step": meta["optim"]["step"], "param_groups": meta["optim"]["param_groups"],
                                   "state": state})
    if restore_rng:
        pcp.random.set_rng_state(*meta["rng"])
    return meta
