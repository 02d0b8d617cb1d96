#!/usr/bin/env bash
# The arm64 build (NEON kernels) on this x86-64 machine: cross-compiles GoogleTest and the C++
# suite with Debian's aarch64 toolchain and runs it under qemu-user, at every ISA the build
# has (neon and baseline; the suite's ISA sweeps compare them). Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=""
command -v aarch64-linux-gnu-g++ >/dev/null || PKGS="$PKGS g++-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null || PKGS="$PKGS qemu-user"
[ -d /usr/src/googletest ] || PKGS="$PKGS googletest"
if [ -n "$PKGS" ]; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PKGS >/dev/null
fi
TC=$PWD/cmake/aarch64-linux-gnu.cmake
OUT=${PCP_ARM64_BUILD:-build/arm64}
GEN=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
if [ ! -f "$OUT/gtest/lib/cmake/GTest/GTestConfig.cmake" ]; then
  cmake -S /usr/src/googletest -B "$OUT/gtest-build" -G "$GEN" -DCMAKE_TOOLCHAIN_FILE="$TC" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$PWD/$OUT/gtest" >/dev/null
  cmake --build "$OUT/gtest-build" -j"$(nproc)" >/dev/null
  cmake --install "$OUT/gtest-build" >/dev/null
fi
# -O1 for the library and tests (the kernels keep their own -O3): the CPU work of three builds
# bounds the CI run, and this one is its tail (198 s -> 163 s here on 2 cores).
cmake -S . -B "$OUT/pcp" -G "$GEN" -DCMAKE_TOOLCHAIN_FILE="$TC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DPCP_BUILD_PYTHON=OFF \
  -DPCP_BUILD_TESTS=ON -DPCP_GPU=OFF -DGTest_DIR="$PWD/$OUT/gtest/lib/cmake/GTest" >/dev/null
cmake --build "$OUT/pcp" -j"$(nproc)" --target pcp_tests
echo "== pcp_tests (arm64, under qemu-aarch64)"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$OUT/pcp/pcp_tests" --gtest_brief=1 "$@"
