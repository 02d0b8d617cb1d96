"""What checksumming costs a checkpoint: a GPT-2 124M model with its AdamW moments (1.5 GB),
written by save_checkpoint (atomic, fsync'd) with PCP's per-tensor CRC32C and metadata SHA-256,
and with both switched off, in alternation; and read back by load_checkpoint, verified and not.

Run:  python bench/checkpoint_checksums.py [--repeats N] [--dir FOLDER]
"""
import argparse
import contextlib
import os
import statistics
import tempfile
import time
import warnings

import numpy as np

import pcp
from pcp import serialization
from pcp.models import GPT2, GPT2Config
from pcp.train import load_checkpoint, save_checkpoint


@contextlib.contextmanager
def checksums_off():
    """save_checkpoint and load_checkpoint as they would run without checksums (for timing)."""
    crc, sha, verify = serialization._core._crc32c, serialization._metadata_sha256, serialization._verify_metadata
    serialization._core._crc32c = lambda data, crc=0: 0
    serialization._metadata_sha256 = lambda metadata: ""
    serialization._verify_metadata = lambda path, metadata, names: [metadata.pop(k, None) for k in
                                                                    (serialization.TENSOR_CRCS, serialization.CHECKSUM)] and None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no PCP checksums": what is being timed
            yield
    finally:
        serialization._core._crc32c, serialization._metadata_sha256, serialization._verify_metadata = crc, sha, verify


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the checkpoint is written")
    args = ap.parse_args()
    model = GPT2(GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12))
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-4)
    for p in model.parameters():
        p.grad = pcp.zeros_like(p)
    opt.step()  # the moments exist, as in any checkpoint after the first step
    path = os.path.join(args.dir, "bench-ckpt.safetensors")
    nbytes = 3 * sum(p.size for p in model.parameters()) * 4
    times = {"with": [], "without": []}
    loads = {"with": [], "without": []}
    try:
        for _ in range(args.repeats):
            for mode in ("with", "without"):
                with checksums_off() if mode == "without" else contextlib.nullcontext():
                    t = time.perf_counter()
                    save_checkpoint(path, model, opt, 1, {"n_layer": 12})
                    times[mode].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    load_checkpoint(path, restore_rng=False)
                    loads[mode].append(time.perf_counter() - t)
        buf = np.concatenate([p.numpy().ravel() for p in model.parameters()])
        t = time.perf_counter()
        for _ in range(3):  # the parameters and the two moments: the checkpoint's bytes
            serialization._core._crc32c(buf)
        crc = time.perf_counter() - t
    finally:
        for name in (path, os.path.splitext(path)[0] + ".json"):
            if os.path.exists(name):
                os.unlink(name)
    med = {k: statistics.median(v) for k, v in times.items()}
    load = {k: statistics.median(v) for k, v in loads.items()}
    print(f"# PCP {pcp.__version__}; GPT-2 124M + AdamW moments: {nbytes / 1e9:.2f} GB; median of {args.repeats}; "
          f"written to {args.dir}")
    print("| | save_checkpoint (fsync'd) | load_checkpoint |")
    print("|---|---|---|")
    print(f"| with checksums | {med['with']:.2f} s | {load['with']:.2f} s |")
    print(f"| without | {med['without']:.2f} s | {load['without']:.2f} s |")
    print(f"| overhead | {(med['with'] / med['without'] - 1) * 100:+.1f}% | {(load['with'] / load['without'] - 1) * 100:+.1f}% |")
    print(f"CRC32C of the {nbytes / 1e9:.2f} GB alone: {crc:.3f} s ({nbytes / crc / 1e9:.1f} GB/s), "
          f"{crc / med['with'] * 100:.1f}% of the write")


if __name__ == "__main__":
    main()
