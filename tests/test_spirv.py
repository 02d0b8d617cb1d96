"""The checked-in SPIR-V (metal/spirv/) was made from the kernels' current sources: by hash always,
and byte for byte where the pinned glslc is at hand (PCP_PINNED_GLSLC, or the unpacked copy that
bench/gpu_device.sh describes). A build uses it without a shader compiler, so a stale file would
ship an old kernel."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "metal"))
import build_spirv  # noqa: E402


def pinned_glslc():
    path = os.environ.get("PCP_PINNED_GLSLC") or os.path.join(ROOT, ".gpu-tools", "sid", "glslc-sid")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def test_checked_in_spirv_matches_its_sources():
    problems = build_spirv.check(pinned_glslc())
    assert not problems, "stale SPIR-V (python metal/build_spirv.py --glslc PINNED):\n" + "\n".join(problems)


def test_every_kernel_has_spirv_and_a_hash():
    names = [k[0] for k in build_spirv.kernels()]
    assert "matmul_coop_bf16" in names and "matmul" in names
    assert set(build_spirv.recorded()) == set(names)
    for n in names:
        with open(os.path.join(build_spirv.SPIRV, n + ".spv"), "rb") as f:
            assert int.from_bytes(f.read(4), "little") == 0x07230203, n  # SPIR-V magic


def test_a_changed_source_is_reported(tmp_path, monkeypatch):
    comp = tmp_path / "fill.comp"
    comp.write_text(open(os.path.join(build_spirv.METAL, "fill.comp")).read() + "\n// changed\n")
    real = build_spirv.kernels
    monkeypatch.setattr(build_spirv, "kernels",
                        lambda: [(n, str(comp) if n == "fill" else c, i, t) for n, c, i, t in real()])
    assert build_spirv.check(None) == ["fill: its sources changed since its SPIR-V was made"]


def test_check_command_line():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "metal", "build_spirv.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "is current" in r.stdout, r.stderr
