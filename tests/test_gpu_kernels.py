"""The embedded GPU kernels: every GLSL kernel in metal/ was compiled to SPIR-V, and its Metal
Shading Language translation (SPIRV-Cross, at build time) binds what the Metal runtime binds:
push constants at [[buffer(0)]] and storage buffer `binding i` (1, 2, ... in dispatch order) at
[[buffer(i)]], entry point main0, and the workgroup size recorded for the dispatch. The SPIR-V side is read independently,
with `spirv-cross --reflect`. (The Metal runtime itself runs only on macOS, not in this CI.)
"""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from pcp import _core

KERNELS = _core._gpu_kernels()
METAL = os.path.join(os.path.dirname(__file__), "..", "metal")
GLSL = sorted(f[:-5] for f in os.listdir(METAL) if f.endswith(".comp"))
# Tensor-core kernels: SPIR-V only (SPIRV-Cross cannot translate cooperative matrices to Metal).
COOP = sorted(f[:-5] for f in os.listdir(os.path.join(METAL, "coop")) if f.endswith(".comp"))
# Multi-tensor kernels (buffer device addresses): SPIR-V and CUDA only; Metal takes the
# one-tensor-at-a-time path.
ADDR = sorted(f[:-5] for f in os.listdir(os.path.join(METAL, "addr")) if f.endswith(".comp"))
# float64 and int64 kernels: SPIR-V and CUDA only (Metal has no float64).
WIDE = sorted(f[:-5] for f in os.listdir(os.path.join(METAL, "wide")) if f.endswith(".comp"))
pytestmark = pytest.mark.skipif(not KERNELS, reason="built without the GPU backend")
SPIRV_CROSS = shutil.which("spirv-cross")


def test_every_glsl_kernel_is_embedded():
    # Every build has every kernel, the tensor-core ones included (their SPIR-V is checked in).
    assert sorted(KERNELS) == sorted(GLSL + COOP + ADDR + WIDE)
    assert all(KERNELS[k][1] is None for k in COOP + ADDR + WIDE)  # no Metal translation


def test_gpu_info_lists_the_kernels():
    import pcp
    if not pcp.devices()[1:]:
        pytest.skip("no GPU device")
    assert sorted(pcp.gpu_info()["kernels"]) == sorted(KERNELS)


def test_every_gpu_says_who_it_is():
    """Each GPU's UUID (unique: how workers on a multi-GPU host are told apart) and, where the
    driver reports one, its PCI address."""
    import re
    import pcp
    gpus = [d.split(" ")[0] for d in pcp.devices()[1:]]
    if not gpus:
        pytest.skip("no GPU device")
    infos = [pcp.gpu_info(g) for g in gpus]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i["uuid"]) and i["uuid"] != "0" * 32 for i in infos)
    assert len({i["uuid"] for i in infos}) == len(infos)
    assert all(i["pci_bus"] == "" or re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", i["pci_bus"])
               for i in infos)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_spirv_header(name):
    spirv, _, local, _ = KERNELS[name]
    assert int.from_bytes(spirv[:4], "little") == 0x07230203  # SPIR-V magic
    # The embedded workgroup size is the SPIR-V's: OpExecutionMode (opcode 16) LocalSize (17) x.
    words = np.frombuffer(spirv, dtype="<u4")
    sizes, i = [], 5
    while i < len(words):
        count, opcode = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if opcode == 16 and words[i + 2] == 17:
            sizes.append(int(words[i + 3]))
        i += max(count, 1)
    assert sizes == [local]
    folder = "coop" if name in COOP else "addr" if name in ADDR else "wide" if name in WIDE else ""
    source = os.path.join(METAL, folder, name + ".comp")
    declared = re.search(r"local_size_x\s*=\s*(\d+)", open(source).read())
    assert declared is None or local == int(declared.group(1))  # coop kernels size theirs by defines


@pytest.mark.skipif(SPIRV_CROSS is None, reason="spirv-cross CLI not installed")
@pytest.mark.parametrize("name", GLSL)
def test_msl_bindings_match_the_metal_runtime(name, tmp_path):
    spirv, msl, local, _ = KERNELS[name]
    assert msl is not None, "the build had spirv-cross, so every kernel should carry MSL"
    path = tmp_path / f"{name}.spv"
    path.write_bytes(spirv)
    refl = json.loads(subprocess.run([SPIRV_CROSS, str(path), "--reflect"], check=True, capture_output=True,
                                     text=True, timeout=60).stdout)
    assert refl["entryPoints"][0]["workgroup_size"] == [local, 1, 1]
    sig = re.search(r"kernel void main0\((.*?)\)\s*\{", msl, re.S)
    assert sig, f"{name}: no `kernel void main0` in the MSL"
    params = {m.group(2): (m.group(1), int(m.group(3)))
              for m in re.finditer(r"(constant|device) (\w+)& \w+ \[\[buffer\((\d+)\)\]\]", sig.group(1))}
    for pc in refl.get("push_constants", []):
        assert params.pop(pc["type"]) == ("constant", 0), f"{name}: push constants not at buffer(0)"
    bindings = sorted(s["binding"] for s in refl.get("ssbos", []))
    assert bindings == list(range(1, len(bindings) + 1)), f"{name}: bindings {bindings} are not 1..n"
    for ssbo in refl.get("ssbos", []):
        assert ssbo["set"] == 0
        assert params.pop(ssbo["type"]) == ("device", ssbo["binding"]), \
            f"{name}: binding {ssbo['binding']} not at buffer({ssbo['binding']})"
    assert not params, f"{name}: unexpected MSL buffers {params}"
