"""Checkpoints: model and optimizer tensors in one safetensors file whose metadata holds the
step, config, RNG state and best validation loss as JSON. Written atomically (temp + rename).

Loading checks everything against the model and optimizer it loads into (names, dtypes, shapes,
finite values, the metadata's types) and reports any mismatch as a SafetensorsError naming the
file and the tensor, before anything is modified.
"""
import json
import os

import numpy as np

import pcp
from pcp.serialization import SafetensorsError, check_tensor, load_safetensors, read_metadata, save_safetensors


def _pack(prefix, osd, tensors):
    """An optimizer state dict's tensors into `tensors` as prefix.i.name; returns its JSON part."""
    scalars = {}  # per-parameter counters (Adam's step) go in the JSON metadata
    for i, s in osd["state"].items():
        for k, t in s.items():
            if isinstance(t, (pcp.Tensor, np.ndarray)):
                tensors[f"{prefix}.{i}.{k}"] = t if isinstance(t, pcp.Tensor) else pcp.tensor(t)
            else:
                scalars.setdefault(str(i), {})[k] = t
    return {"step": osd["step"], "param_groups": osd["param_groups"], "scalars": scalars}


def previous_path(path):
    """Where save_checkpoint(keep_previous=True) keeps the checkpoint it replaces:
    ckpt.safetensors -> ckpt.prev.safetensors."""
    stem, ext = os.path.splitext(path)
    return stem + ".prev" + ext


def _keep(src, dest):
    """dest becomes a copy of src, atomically: a hard link (no bytes copied) where the file
    system has them, else a copy. The temporary name is one remove_stale_temps cleans."""
    import shutil
    import tempfile
    from pcp.serialization import TMP_PREFIX, TMP_SUFFIX
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(dest)), prefix=TMP_PREFIX, suffix=TMP_SUFFIX)
    os.close(fd)
    try:
        os.unlink(tmp)
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_checkpoint(path, model, optimizer, step, config, extra=None, optimizers=None, arrays=None,
                    keep_previous=False):
    """Writes a checkpoint: the model's and optimizer's tensors in one safetensors file whose
    metadata holds the step, the config, the generator's state and `extra` as JSON, replaced
    atomically, and a readable copy of the metadata beside it (the same name with .json). The
    file carries a CRC32C per tensor and a SHA-256 of its metadata, which loading checks.

    Args:
        path: the .safetensors file.
        model: an nn.Module (its state_dict is saved).
        optimizer: an Optimizer (its state_dict is saved).
        step: the iteration reached, a non-negative int.
        config: a JSON-serialisable dict (e.g. TrainConfig.to_dict()).
        extra: more JSON-serialisable metadata, e.g. {'best_val': 1.5} (default None).
        optimizers: more optimizers' state dicts to keep beside, {prefix: state_dict} (DiLoCo's
            workers; default None).
        arrays: more named arrays to keep, {prefix: {name: array}} (Streaming DiLoCo's workers'
            own parameters; default None); load_checkpoint returns them.
        keep_previous: keep the checkpoint this one replaces at previous_path(path) (default
            False), so a damaged newest file leaves one to resume from. At every moment `path`
            holds a whole checkpoint.

    Returns:
        None.

    Raises:
        TypeError: a tensor of a dtype safetensors cannot hold, or metadata that is not JSON.
        OSError: the file cannot be written.

    Example:
        >>> import os, tempfile
        >>> from pcp import nn, optim
        >>> from pcp.train import save_checkpoint
        >>> model = nn.Linear(2, 2)
        >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
        >>> save_checkpoint(path, model, optim.AdamW(model.parameters()), step=10, config={"lr": 0.1})
        >>> sorted(os.listdir(os.path.dirname(path)))
        ['ckpt.json', 'ckpt.safetensors']
    """
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    seed, offset = pcp.random.get_rng_state()
    meta = {
        "step": step,
        "config": config,
        "rng": [seed, offset],
        "optim": _pack("optim", optimizer.state_dict(), tensors),
        **({"optimizers": {p: _pack(p, sd, tensors) for p, sd in optimizers.items()}} if optimizers else {}),
        **({"arrays": sorted(arrays)} if arrays else {}),
        **(extra or {}),
    }
    for prefix, named in (arrays or {}).items():
        tensors.update({f"{prefix}.{k}": pcp.tensor(np.ascontiguousarray(v)) for k, v in named.items()})
    if keep_previous and os.path.exists(path):
        _keep(path, previous_path(path))
        if os.path.exists(os.path.splitext(path)[0] + ".json"):
            _keep(os.path.splitext(path)[0] + ".json", os.path.splitext(previous_path(path))[0] + ".json")
    save_safetensors(tensors, path, metadata={"pcp": json.dumps(meta)})
    with open(os.path.splitext(path)[0] + ".json.tmp", "w") as f:  # human-readable copy of the metadata
        json.dump(meta, f, indent=1)
    os.replace(os.path.splitext(path)[0] + ".json.tmp", os.path.splitext(path)[0] + ".json")


def parse_metadata(path, raw):
    """The checked 'pcp' JSON metadata of a checkpoint (raw: the file's __metadata__)."""
    if "pcp" not in raw:
        raise SafetensorsError(path, "not a PCP checkpoint (no 'pcp' metadata)")
    try:
        meta = json.loads(raw["pcp"])
    except (json.JSONDecodeError, RecursionError) as e:
        raise SafetensorsError(path, f"the checkpoint metadata is not valid JSON ({str(e)[:200]})") from None

    def int_(x):
        return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2 ** 64

    def optim_ok(o):
        return (isinstance(o, dict) and int_(o.get("step")) and isinstance(o.get("param_groups"), list)
                and all(isinstance(g, dict) and isinstance(g.get("params"), list) for g in o["param_groups"])
                and isinstance(o.get("scalars"), dict) and all(isinstance(v, dict) for v in o["scalars"].values()))

    checks = [(lambda: isinstance(meta, dict), "an object"),
              (lambda: int_(meta.get("step")), "'step': a non-negative integer"),
              (lambda: isinstance(meta.get("config"), dict), "'config': an object"),
              (lambda: isinstance(meta.get("rng"), list) and len(meta["rng"]) == 2 and all(map(int_, meta["rng"])),
               "'rng': [seed, offset]"),
              (lambda: optim_ok(meta.get("optim")), "'optim': {step, param_groups, scalars}"),
              (lambda: isinstance(meta.get("optimizers", {}), dict)
               and all(map(optim_ok, meta.get("optimizers", {}).values())), "'optimizers': {prefix: optim}"),
              (lambda: isinstance(meta.get("arrays", []), list) and all(isinstance(p, str) for p in meta.get("arrays", [])),
               "'arrays': a list of prefixes")]
    for ok, expected in checks:  # in order: each check may rely on the ones before
        if not ok():
            raise SafetensorsError(path, f"checkpoint metadata: expected {expected}")
    return meta


def _unpack(path, prefix, ometa, tensors, optimizer):
    """Loads prefix.* tensors and their JSON part into optimizer, checked (SafetensorsError)."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    state = {}
    for name, t in tensors.items():
        if not name.startswith(prefix + "."):
            continue
        i, _, key = name[len(prefix) + 1:].partition(".")
        if not i.isdigit() or not key or int(i) >= len(params):
            raise SafetensorsError(path, f"not a state of one of the optimizer's {len(params)} parameters", name)
        check_tensor(path, name, t, params[int(i)].shape, (params[int(i)].dtype,))
        state.setdefault(int(i), {})[key] = t
    for i, s in ometa["scalars"].items():
        if not i.isdigit():
            raise SafetensorsError(path, f"optimizer state for parameter {i!r}")
        state.setdefault(int(i), {}).update(s)
    try:
        optimizer.load_state_dict({"step": ometa["step"], "param_groups": ometa["param_groups"], "state": state})
    except ValueError as e:
        raise SafetensorsError(path, f"{prefix}: {e}") from None


def load_checkpoint(path, model=None, optimizer=None, restore_rng=True, optimizers=None):
    """Reads a checkpoint save_checkpoint wrote, loading it into the model and optimizer when
    given. Everything is checked first (names, dtypes, shapes, finite values, the metadata's
    types), so a file that does not fit leaves the model and optimizers as they were.

    Args:
        path: the .safetensors file.
        model: an nn.Module to load the weights into, or None (default).
        optimizer: an Optimizer to load the state into, or None (default).
        restore_rng: also restore the global generator's state (default True), so a resumed
            run draws the batches it would have.
        optimizers: {prefix: optimizer} for the extra state dicts save_checkpoint kept (a prefix
            the file lacks is left alone; default None).

    Returns:
        The metadata dict: step, config, rng, optim, what `extra` held, and arrays ({prefix:
        {name: NumPy array}} of what save_checkpoint's `arrays` kept; the caller checks them).

    Raises:
        FileNotFoundError: no file at path.
        SafetensorsError: a corrupt file, or tensors or metadata that do not fit (the message
            names the file and the tensor).

    Example:
        >>> import os, tempfile
        >>> from pcp import nn, optim
        >>> from pcp.train import load_checkpoint, save_checkpoint
        >>> model = nn.Linear(2, 2)
        >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
        >>> save_checkpoint(path, model, optim.SGD(model.parameters()), step=3, config={})
        >>> other = nn.Linear(2, 2)
        >>> load_checkpoint(path, other)["step"]
        3
        >>> other.weight.tolist() == model.weight.tolist()
        True
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_checkpoint: no checkpoint at {path}")
    tensors, raw_meta = load_safetensors(path)
    meta = parse_metadata(path, raw_meta)
    prefixes = {"model", "optim", *meta.get("optimizers", {}), *meta.get("arrays", [])}
    for name in tensors:
        if not any(name.startswith(p + ".") for p in prefixes):
            raise SafetensorsError(path, f"unexpected tensor (known prefixes: {', '.join(sorted(prefixes))})", name)
    # Everything is checked before the model or an optimizer changes.
    if model is not None:
        own = model.state_dict()
        saved = {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}
        missing = [k for k in own if k not in saved]
        if missing:
            raise SafetensorsError(path, "missing from the checkpoint" + (f" ({len(missing)} in all)"
                                                                          if len(missing) > 1 else ""),
                                   "model." + missing[0])
        for k, v in saved.items():
            if k not in own:
                raise SafetensorsError(path, "not a parameter of the model", "model." + k)
            check_tensor(path, "model." + k, v, own[k].shape, (own[k].dtype,))
    loads = [("optim", meta["optim"], optimizer)] if optimizer is not None else []
    loads += [(p, meta["optimizers"][p], o) for p, o in (optimizers or {}).items() if p in meta.get("optimizers", {})]
    backups = [(o, o.state_dict()) for _, _, o in loads]
    try:
        for prefix, ometa, opt in loads:
            _unpack(path, prefix, ometa, tensors, opt)
    except BaseException:
        for o, sd in backups:  # leave every optimizer as it was
            o.load_state_dict(sd)
        raise
    if model is not None:
        model.load_state_dict(saved)
    if restore_rng:
        pcp.random.set_rng_state(*meta["rng"])
    # The longest prefix that fits, so that prefix "a" does not take the arrays of "a.b".
    meta["arrays"] = {p: {} for p in meta.get("arrays", [])}
    for name, t in tensors.items():
        owner = max((p for p in meta["arrays"] if name.startswith(p + ".")), key=len, default=None)
        if owner is not None:
            meta["arrays"][owner][name[len(owner) + 1:]] = t.numpy()
    return meta


def best_val_of(path):
    """The best_val recorded in a checkpoint's metadata (reads the header only); None without one."""
    if not os.path.isfile(path):
        return None
    meta = parse_metadata(path, read_metadata(path))
    v = meta.get("best_val")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
