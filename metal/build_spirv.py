#!/usr/bin/env python3
"""The checked-in SPIR-V of every GPU kernel (metal/spirv/), so that a build needs no shader
compiler and every build has every kernel, the tensor-core ones included (their extensions need
a glslc newer than most distributions ship).

    python metal/build_spirv.py --glslc PATH    recompile every kernel into metal/spirv/
    python metal/build_spirv.py --check [--glslc PATH]
        check that every kernel's SPIR-V was made from its current sources (by hash); with a
        glslc of the pinned version (metal/spirv/COMPILER), also recompile and compare bytes

A kernel's sources are its .comp file and every .glsl it may include (metal/*.glsl, plus
metal/coop/*.glsl for the tensor-core kernels, metal/addr/*.glsl for those that read tensors
through buffer device addresses and metal/wide/*.glsl for the float64 and int64 ones);
metal/spirv/SOURCES holds their SHA-256. CMake reads the same file: a kernel whose sources changed since is compiled at build time when the
build's glslc can, and left out with a warning when it cannot. The pinned compiler is shaderc
2026.4 (Debian sid's glslc; bench/gpu_device.sh says how to unpack it without installing).
"""
import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile

METAL = os.path.dirname(os.path.abspath(__file__))
SPIRV = os.path.join(METAL, "spirv")
SOURCES = os.path.join(SPIRV, "SOURCES")
COMPILER = os.path.join(SPIRV, "COMPILER")


def kernels():
    """(name, .comp path, include paths, target) of every kernel, sorted by name."""
    def listed(folder, ext):
        return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(ext))
    plain_inc = listed(METAL, ".glsl")
    coop_dir = os.path.join(METAL, "coop")
    coop_inc = plain_inc + listed(coop_dir, ".glsl")
    out = [(os.path.basename(p)[:-5], p, plain_inc, "vulkan1.1") for p in listed(METAL, ".comp")]
    out += [(os.path.basename(p)[:-5], p, coop_inc, "vulkan1.3") for p in listed(coop_dir, ".comp")]
    addr_dir = os.path.join(METAL, "addr")  # tensors read through buffer device addresses
    addr_inc = plain_inc + listed(addr_dir, ".glsl")
    out += [(os.path.basename(p)[:-5], p, addr_inc, "vulkan1.2") for p in listed(addr_dir, ".comp")]
    wide_dir = os.path.join(METAL, "wide")  # float64 and int64
    wide_inc = plain_inc + listed(wide_dir, ".glsl")
    out += [(os.path.basename(p)[:-5], p, wide_inc, "vulkan1.1") for p in listed(wide_dir, ".comp")]
    return sorted(out)


def source_hash(comp, includes):
    """SHA-256 of the space-joined SHA-256s of the .comp and its possible includes, in order
    (CMakeLists.txt computes the same)."""
    parts = []
    for path in [comp] + includes:
        with open(path, "rb") as f:
            parts.append(hashlib.sha256(f.read()).hexdigest())
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()


def compiler_version(glslc):
    out = subprocess.run([glslc, "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0].strip()  # "shaderc 2026.4-1"


def compile_kernel(glslc, comp, target, out):
    r = subprocess.run([glslc, "-O", f"--target-env={target}", "-o", out, comp], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"build_spirv: {glslc} failed on {os.path.relpath(comp, METAL)}:\n{r.stderr}")


def recorded():
    table = {}
    if os.path.isfile(SOURCES):
        for line in open(SOURCES):
            if line.strip() and not line.startswith("#"):
                name, digest = line.split()
                table[name] = digest
    return table


def build(glslc):
    os.makedirs(SPIRV, exist_ok=True)
    names = []
    lines = ["# kernel  SHA-256 of its sources (metal/build_spirv.py); the SPIR-V is <kernel>.spv\n"]
    for name, comp, inc, target in kernels():
        compile_kernel(glslc, comp, target, os.path.join(SPIRV, name + ".spv"))
        lines.append(f"{name} {source_hash(comp, inc)}\n")
        names.append(name)
    for f in os.listdir(SPIRV):  # SPIR-V of kernels that no longer exist
        if f.endswith(".spv") and f[:-4] not in names:
            os.remove(os.path.join(SPIRV, f))
    with open(SOURCES, "w") as f:
        f.writelines(lines)
    with open(COMPILER, "w") as f:
        f.write(compiler_version(glslc) + "\n")
    print(f"build_spirv: {len(names)} kernels compiled into {os.path.relpath(SPIRV)} with {compiler_version(glslc)}")


def check(glslc):
    """A list of problems (empty when the checked-in SPIR-V is current)."""
    problems, table = [], recorded()
    names = set()
    for name, comp, inc, target in kernels():
        names.add(name)
        spv = os.path.join(SPIRV, name + ".spv")
        if name not in table or not os.path.isfile(spv):
            problems.append(f"{name}: no checked-in SPIR-V")
        elif table[name] != source_hash(comp, inc):
            problems.append(f"{name}: its sources changed since its SPIR-V was made")
    problems += [f"{n}: SPIR-V of a kernel that no longer exists" for n in sorted(set(table) - names)]
    pinned = open(COMPILER).read().strip() if os.path.isfile(COMPILER) else None
    if glslc and not problems:
        version = compiler_version(glslc)
        if version != pinned:
            print(f"build_spirv: {glslc} is {version}, not the pinned {pinned}: SPIR-V bytes not compared")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                def differs(kernel):  # compiled on every core: one glslc process each
                    name, comp, _, target = kernel
                    out = os.path.join(tmp, name + ".spv")
                    compile_kernel(glslc, comp, target, out)
                    return open(out, "rb").read() != open(os.path.join(SPIRV, name + ".spv"), "rb").read()
                with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                    for (name, *_), bad in zip(kernels(), pool.map(differs, kernels())):
                        if bad:
                            problems.append(f"{name}: the checked-in SPIR-V differs from what {version} makes of it")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--glslc", help="the glslc to compile with (for --check: to compare bytes when pinned)")
    ap.add_argument("--check", action="store_true", help="check instead of building")
    args = ap.parse_args(argv)
    if args.check:
        problems = check(args.glslc)
        for p in problems:
            print("build_spirv: stale:", p, file=sys.stderr)
        if problems:
            print("build_spirv: regenerate with: python metal/build_spirv.py --glslc PATH (the pinned "
                  f"{open(COMPILER).read().strip() if os.path.isfile(COMPILER) else 'compiler'})", file=sys.stderr)
            return 1
        print(f"build_spirv: the SPIR-V of all {len(kernels())} kernels is current")
        return 0
    if not args.glslc:
        ap.error("--glslc PATH is required to build")
    build(args.glslc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
