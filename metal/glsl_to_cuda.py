"""Translates a PCP compute kernel (metal/*.comp, GLSL) into CUDA C++ for the CUDA runtime.

One kernel source serves every GPU: glslc compiles it to SPIR-V for Vulkan, SPIRV-Cross
translates that to Metal, and this script rewrites it as CUDA C++, which NVRTC compiles at run
time (cpp/pcp/backend/cuda/). The kernels use a small, C-like part of GLSL; with metal/cuda/glsl.h
(GLSL's types and built-ins in CUDA C++), a few rewrites make them CUDA:

- `#include "x.glsl"` is inlined; `#version` and `#extension` lines go.
- A buffer reference type (GL_EXT_buffer_reference) becomes a struct holding the pointer, made
  from the address's uvec2 as in GLSL; top-level struct types stay at file scope.
- The kernel becomes a struct: its storage buffers become pointer members (in binding order) and
  its push constants a struct member `p`, so that every function, now a member function, sees
  them as GLSL's functions see globals. `extern "C" __global__ void pcp_main(...)` takes the
  buffers' addresses, then the push constants by value, and runs `main`.
- `shared` arrays move out of the struct as `__shared__` arrays; top-level `const` values become
  `static constexpr` members, specialization constants (`layout(constant_id = i)`) too, with
  the value of the macro PCP_SPEC_<i> when the runtime defines it.
- Parameters `inout T x` / `out T x` become `T& x` (`T (&x)[N]` for arrays); `atomicOp(buf[i],
  ...)` gets the element's address; float literals get an `f` (GLSL's are single precision), double ones (`1.5LF`) lose
  their suffix; swizzles `.xy` call a member.

Run:  python metal/glsl_to_cuda.py KERNEL.comp -o OUT.cu
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def expand_includes(path, seen=None):
    seen = set() if seen is None else seen
    out = []
    folder = os.path.dirname(path)
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'\s*#include\s+"([^"]+)"', line)
            if m:
                inc = os.path.normpath(os.path.join(folder, m.group(1)))
                if inc not in seen:
                    seen.add(inc)
                    out.append(expand_includes(inc, seen))
                continue
            if re.match(r"\s*#(version|extension)\b", line):
                continue
            out.append(line)
    return "".join(out)


def strip_comments(src):
    """Removes // and /* */ comments, keeping line breaks (the translation works line by line)."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


FLOAT_LITERAL = re.compile(r"(?<![\w.])((?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.])")
DOUBLE_LITERAL = re.compile(r"(?<![\w.])((?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?:lf|LF)(?![\w.])")
BUFFER = re.compile(r"layout\s*\(([^)]*)\)\s*((?:\w+\s+)*)buffer\s+\w+\s*\{\s*([\w\s]+?)\s+(\w+)\s*\[\s*\]\s*;\s*\}\s*;")
PUSH = re.compile(r"layout\s*\(\s*push_constant\s*\)\s*uniform\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
SPEC = re.compile(r"layout\s*\(\s*constant_id\s*=\s*(\d+)\s*\)\s*const\s+(\w+)\s+(\w+)\s*=\s*([^;]+);")
REFERENCE = re.compile(r"layout\s*\(([^)]*buffer_reference[^)]*)\)\s*buffer\s+(\w+)\s*\{\s*([\w\s]+?)\s+(\w+)\s*"
                       r"\[\s*\]\s*;\s*\}\s*;")
LOCAL_SIZE = re.compile(r"layout\s*\(\s*local_size_x\s*=\s*(\d+)\s*\)\s*in\s*;")


def translate(path):
    """CUDA C++ source of the kernel at `path`, and its workgroup size."""
    src = strip_comments(expand_includes(path))
    m = LOCAL_SIZE.search(src)
    if not m:
        raise SystemExit(f"{path}: no layout(local_size_x = N) in;")
    local = int(m.group(1))
    src = LOCAL_SIZE.sub("", src)

    # Buffer references (GL_EXT_buffer_reference): a struct holding the pointer, made from the
    # address as GLSL makes it, from a uvec2 (low word, high word).
    references = [f"struct {name} {{\n  {t}* {member};\n  explicit {name}(uvec2 a)\n"
                  f"      : {member}(reinterpret_cast<{t}*>((unsigned long long)a.x | ((unsigned long long)a.y << 32))) {{}}\n}};"
                  for _, name, t, member in REFERENCE.findall(src)]
    src = REFERENCE.sub("", src)

    buffers = []
    for b in BUFFER.finditer(src):
        binding = re.search(r"binding\s*=\s*(\d+)", b.group(1))
        if not binding:
            raise SystemExit(f"{path}: a buffer without a binding: {b.group(0)}")
        buffers.append((int(binding.group(1)), b.group(3).strip(), b.group(4)))
    buffers.sort()
    if [n for n, _, _ in buffers] != list(range(1, len(buffers) + 1)):
        raise SystemExit(f"{path}: bindings must be 1..n, got {[n for n, _, _ in buffers]}")
    src = BUFFER.sub("", src)

    push = PUSH.search(src)
    if not push:
        raise SystemExit(f"{path}: no push constants")
    push_type, push_body, push_name = push.groups()
    src = PUSH.sub("", src)

    specs = [f"#ifdef PCP_SPEC_{i}\n  static constexpr {t} {n} = {t}(PCP_SPEC_{i});\n#else\n"
             f"  static constexpr {t} {n} = {rewrite(v.strip())};\n#endif\n"
             for i, t, n, v in SPEC.findall(src)]
    src = SPEC.sub("", src)

    # What must be at file scope: macros, top-level constants (shared arrays are sized by them)
    # and shared arrays; the rest (functions) goes into the struct, in order.
    prologue, body = [], []
    lines = src.split("\n")
    depth, i = 0, 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if depth == 0 and stripped.startswith("#"):
            block = [line]
            while block[-1].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            prologue.append(rewrite("\n".join(block)))
        elif depth == 0 and re.match(r"struct\s+\w+", stripped):  # types the buffers may hold
            block = [line]
            while not (block[-1].rstrip().endswith(";") and "\n".join(block).count("{") ==
                       "\n".join(block).count("}")) and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            prologue.append(rewrite("\n".join(block)))
        elif depth == 0 and re.match(r"(const|shared)\s", stripped):
            block = [line]
            while not block[-1].rstrip().endswith(";") and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            text = "\n".join(block).strip()
            text = re.sub(r"^const\s", "__device__ constexpr ", text)
            text = re.sub(r"^shared\s", "__shared__ ", text)
            prologue.append(rewrite(text))
        else:
            body.append(line)
            depth += line.count("{") - line.count("}")
        i += 1

    name = os.path.splitext(os.path.basename(path))[0]
    where = os.path.relpath(os.path.abspath(path), os.path.dirname(HERE))  # metal/..., for the header
    members = "".join(f"  {t}* {n};\n" for _, t, n in buffers)
    params = ", ".join([f"{t}* {n}" for _, t, n in buffers] + [f"{push_type} {push_name}"])
    args = ", ".join([n for _, _, n in buffers] + [push_name])
    body_text = rewrite("\n".join(body))
    prologue_text = "\n".join(references + [p for p in prologue if p.strip()])
    return (f"// {name}: {where} translated by metal/glsl_to_cuda.py; do not edit.\n"
            f'#include "pcp_glsl.h"\n'
            f"{prologue_text}\n"
            f"struct {push_type} {{{rewrite(push_body)}}};\n"
            f"struct PcpKernel {{\n{members}  {push_type} {push_name};\n{''.join(specs)}{body_text}\n}};\n"
            f'extern "C" __global__ void __launch_bounds__({local}) pcp_main({params}) {{\n'
            f"  PcpKernel pcp_kernel_{{{args}}};\n  pcp_kernel_.main();\n}}\n"), local


def rewrite(src):
    """The statement-level rewrites (see the module docstring)."""
    # uint[8](a, b, ...) -> {a, b, ...}
    src = re.sub(r"=\s*\w+\s*\[\s*\d*\s*\]\s*\(([^;]*)\)\s*;", r"= {\1};", src)
    # Parameter qualifiers.
    src = re.sub(r"([(,]\s*)(?:inout|out)\s+(\w+)\s+(\w+)\s*(\[\s*\w+\s*\])", r"\1\2 (&\3)\4", src)  # arrays
    src = re.sub(r"([(,]\s*)(?:inout|out)\s+(\w+)\s+(\w+)", r"\1\2& \3", src)
    src = re.sub(r"([(,]\s*)in\s+(\w+\s+\w+)", r"\1\2", src)
    src = re.sub(r"\b(precise|highp|mediump|lowp)\s+", "", src)
    src = src.replace("[[unroll]]", '_Pragma("unroll")')
    # Atomics take the element's address.
    src = re.sub(r"\b(atomic\w+)\(\s*", r"\1(&", src)
    # Swizzles used as values.
    src = re.sub(r"\.(xy|zw|xyz)\b(?!\s*\()", r".\1()", src)
    # Single-precision literals.
    src = FLOAT_LITERAL.sub(lambda m: m.group(1) + "f", src)
    return DOUBLE_LITERAL.sub(r"\1", src)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    text, _ = translate(args.kernel)
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
