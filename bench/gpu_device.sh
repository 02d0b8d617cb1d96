#!/usr/bin/env bash
# Builds PCP with its Vulkan GPU backend on a GPU machine that has no network and no GPU toolchain,
# then runs the given command there. Run from the repository root, with two folders carried along:
#   .gl/          the Vulkan loader and the glvnd libraries NVIDIA's driver needs (amd64 .debs),
#                 unpacked into / (needs root); without libglvnd and friends the loader finds no
#                 NVIDIA driver
#   .gpu-tools/   include/{vulkan,vk_video} (the Vulkan headers), and optionally bin/glslc,
#                 bin/spirv-cross and lib/libshaderc.so.1
# The kernels' SPIR-V is checked in (metal/spirv/), so no shader compiler is needed; a glslc
# only compiles kernels whose sources changed since their SPIR-V was made (metal/build_spirv.py).
# Both folders are made on a Debian/Ubuntu x86-64 machine, in the repository root (.gl is in
# .gitignore; add /.gpu-tools/ to .git/info/exclude):
#   mkdir -p .gl /tmp/amd64/partial; o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update
#   (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
#   mkdir -p .gpu-tools/bin .gpu-tools/lib .gpu-tools/include
#   cp -rL /usr/include/vulkan /usr/include/vk_video .gpu-tools/include/     # apt-get install libvulkan-dev
#   cp -L "$(command -v glslc)" "$(command -v spirv-cross)" .gpu-tools/bin/  # optional
#   cp -L /usr/lib/x86_64-linux-gnu/libshaderc.so.1 .gpu-tools/lib/          # what glslc needs beyond glibc
# On the device (carrying .gl and .gpu-tools):
#
#   bash bench/gpu_device.sh python3 bench/gpu.py
#   bash bench/gpu_device.sh python3 -m pytest -q tests/test_gpu.py
#
# A changed tensor-core kernel (metal/coop/) needs a newer glslc than Debian 12's: the pinned one
# (metal/spirv/COMPILER) is Debian sid's, which runs anywhere with its own glibc. Unpack glslc,
# libshaderc1, libc6, libstdc++6 and libgcc-s1 from sid into .gpu-tools/sid (glslc,
# libshaderc.so.1, libc.so.6, libm.so.6, libstdc++.so.6, libgcc_s.so.1, ld-linux-x86-64.so.2)
# with a wrapper .gpu-tools/sid/glslc-sid:
#   exec "$D/ld-linux-x86-64.so.2" --library-path "$D" "$D/glslc" "$@"    (D: the script's folder)
# then regenerate the SPIR-V here (python metal/build_spirv.py --glslc .gpu-tools/sid/glslc-sid),
# or pass PCP_CMAKE_ARGS="-DPCP_GLSLC=$PWD/.gpu-tools/sid/glslc-sid" on the device.
#
# Environment: PCP_SKIP_GL=1 skips unpacking .gl (not root, or a loader is already installed);
# PCP_BUILD_DIR (default build/device, kept between runs: rebuilds are incremental);
# PCP_JOBS (default 16); PCP_CMAKE_ARGS (more configure arguments); PCP_ALLOW_NO_GPU=1 runs the command even when PCP sees no GPU.
set -euo pipefail

die() { echo "gpu_device.sh: ERROR: $*" >&2; exit 1; }
say() { echo "gpu_device.sh: $*" >&2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[ -f CMakeLists.txt ] && [ -d python/pcp ] || die "run from a PCP checkout (no CMakeLists.txt / python/pcp in $ROOT)"
TOOLS="$ROOT/.gpu-tools"
BUILD="${PCP_BUILD_DIR:-build/device}"
JOBS="${PCP_JOBS:-16}"

# 1. The Vulkan loader (libvulkan.so.1), which PCP dlopen()s at run time.
have_libvulkan() { ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1 ' >/dev/null; }
if [ "${PCP_SKIP_GL:-0}" = 1 ]; then
  say "PCP_SKIP_GL=1: not unpacking .gl"
elif have_libvulkan; then
  say "libvulkan.so.1 is already installed: not unpacking .gl"
else
  ls .gl/*.deb >/dev/null 2>&1 || die "no .gl/*.deb: carry the .gl folder (the Vulkan loader deb; how to make it: the header of this script)"
  [ "$(id -u)" = 0 ] || die "unpacking .gl/*.deb into / needs root (or install libvulkan1 and set PCP_SKIP_GL=1)"
  command -v dpkg >/dev/null || die "dpkg not found: cannot unpack .gl/*.deb"
  for f in .gl/*.deb; do
    say "unpacking $f into /"
    dpkg -x "$f" /
  done
  ldconfig
fi
have_libvulkan || [ "${PCP_SKIP_GL:-0}" = 1 ] || die "libvulkan.so.1 is still not known to ldconfig after unpacking .gl"

# 2. The Vulkan headers (and, optionally, the kernel toolchain) from .gpu-tools.
[ -d "$TOOLS" ] || die "no .gpu-tools folder: carry it (the Vulkan headers; optionally glslc and spirv-cross)"
for f in include/vulkan/vulkan.h include/vk_video; do
  [ -e "$TOOLS/$f" ] || die "missing .gpu-tools/$f"
done
export PATH="$TOOLS/bin:$PATH"
export LD_LIBRARY_PATH="$TOOLS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TOOL_ARGS=()
if [ -x "$TOOLS/bin/glslc" ] && glslc --version >/dev/null 2>&1; then
  TOOL_ARGS+=(-DPCP_GLSLC="$TOOLS/bin/glslc")
  say "glslc: $(command -v glslc) ($(glslc --version 2>&1 | head -1)), for kernels changed since metal/spirv/"
else
  say "no working .gpu-tools/bin/glslc: the checked-in SPIR-V of metal/spirv/ is used as is"
fi
[ -x "$TOOLS/bin/spirv-cross" ] && spirv-cross --help >/dev/null 2>&1 && TOOL_ARGS+=(-DPCP_SPIRV_CROSS="$TOOLS/bin/spirv-cross")

# 3. A Vulkan driver (ICD). NVIDIA's container runtime may leave its manifest outside the
# loader's search path; point the loader at it when no NVIDIA ICD is found in the usual places.
if [ -d /usr/local/nvidia ]; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
  done
fi
icds=""
for d in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/local/etc/vulkan/icd.d; do
  for f in "$d"/*.json; do [ -e "$f" ] && icds="$icds $f"; done
done
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  say "using the ICD(s) given: VK_DRIVER_FILES=${VK_DRIVER_FILES:-} VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-}"
elif [ -e "$NV_ICD" ] && ! echo "$icds" | grep -i nvidia >/dev/null; then
  export VK_DRIVER_FILES="$NV_ICD" VK_ICD_FILENAMES="$NV_ICD"  # VK_ICD_FILENAMES: loaders before 1.3.207
  say "no NVIDIA ICD in the loader's search path: VK_DRIVER_FILES=$NV_ICD"
elif [ -z "$icds" ]; then
  say "WARNING: no Vulkan ICD manifest found (searched /etc/vulkan/icd.d, /usr/share/vulkan/icd.d, $NV_ICD);"
  say "  NVIDIA needs NVIDIA_DRIVER_CAPABILITIES to include 'graphics' (now: '${NVIDIA_DRIVER_CAPABILITIES:-unset}')"
  say "  and libGLX_nvidia.so.0: $(ldconfig -p 2>/dev/null | grep -o 'libGLX_nvidia[^ ]*' | head -1 || true)"
else
  say "Vulkan ICDs:$icds"
fi
for f in ${VK_DRIVER_FILES:-$icds}; do  # a bare library name in a manifest must be loadable
  lib=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$f" 2>/dev/null || true)
  case "$lib" in
    "" | /*) ;;
    *) ldconfig -p 2>/dev/null | grep -F "$lib" >/dev/null ||
         (IFS=:; for d in $LD_LIBRARY_PATH; do [ -e "$d/$lib" ] && exit 0; done; exit 1) ||
         say "WARNING: $f names $lib, which neither ldconfig nor LD_LIBRARY_PATH knows" ;;
  esac
done

# 4. Configure and build in place (CMakeLists.txt finds vulkan.h, glslc and spirv-cross through these).
command -v cmake >/dev/null || die "cmake not found"
command -v python3 >/dev/null || die "python3 not found"
PY="$(command -v python3)"
PYBIND11_DIR="$("$PY" -m pybind11 --cmakedir 2>/dev/null)" || die "pybind11 not importable by $PY (pip install pybind11)"
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" "$BUILD/CMakeCache.txt"; then
  say "$BUILD was configured for another source folder: starting it afresh"
  rm -rf "$BUILD"
fi
GEN=()
# The system compiler: a toolchain that links libstdc++ statically into the module (the GPU
# image's CXX=/opt/gcc) gave a module whose number formatting crashes (locale facets).
[ -x /usr/bin/g++ ] && export CC=/usr/bin/gcc CXX=/usr/bin/g++
command -v ninja >/dev/null && GEN=(-G Ninja)
[ -f "$BUILD/CMakeCache.txt" ] && GEN=()  # keep the generator of an existing build folder
mkdir -p "$BUILD"
LOG="$BUILD/configure.log"
say "configuring $BUILD (Python $("$PY" -c 'import sys; print(sys.version.split()[0])'))"
cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPCP_BUILD_PYTHON=ON -DPCP_GPU=ON \
  -DPython_EXECUTABLE="$PY" -Dpybind11_DIR="$PYBIND11_DIR" \
  "${TOOL_ARGS[@]}" -DPCP_VULKAN_INCLUDE="$TOOLS/include" -DCMAKE_INCLUDE_PATH="$TOOLS/include" ${PCP_CMAKE_ARGS:-} \
  > "$LOG" 2>&1 || { cat "$LOG" >&2; die "cmake configure failed (log above)"; }
grep 'PCP: GPU backend' "$LOG" >&2 || true
grep 'PCP: GPU backend ON' "$LOG" >/dev/null || die "CMake configured PCP without the GPU backend (see $LOG)"
say "building with $JOBS jobs"
cmake --build "$BUILD" --parallel "$JOBS" || die "build failed"

# 5. The module next to the Python package, as in a development checkout.
shopt -s nullglob
mods=("$BUILD"/_core*.so)
[ ${#mods[@]} -eq 1 ] || die "expected one $BUILD/_core*.so, found ${#mods[@]}: ${mods[*]:-none}"
ln -sfn "$ROOT/${mods[0]}" "python/pcp/$(basename "${mods[0]}")"
say "python/pcp/$(basename "${mods[0]}") -> $ROOT/${mods[0]}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"

# 6. What PCP sees, then the command.
"$PY" - <<'EOF' || [ "${PCP_ALLOW_NO_GPU:-0}" = 1 ] || die "PCP sees no GPU (set PCP_ALLOW_NO_GPU=1 to run anyway)"
import sys
import pcp
from pcp import _core
print("pcp.devices():", pcp.devices(), flush=True)
if all(name == "cpu" for name, _ in _core.devices()):
    print("gpu_device.sh: no GPU:", _core.gpu_unavailable_reason(), file=sys.stderr)
    sys.exit(3)
EOF
if [ $# -gt 0 ]; then
  say "running: $*"
  exec "$@"
fi
