#!/usr/bin/env bash
# The wheel alone in a fresh virtual environment, as a user without PCP's sources, compilers or
# GPU toolchain would have it: pip installs the wheel and its dependencies (NumPy, rich), then,
# from an empty folder, PCP imports, lists its devices, runs an op on the GPU where there is one
# (lavapipe in CI), and runs the main job for a few iterations on the text shipped inside.
# Usage: bash tests/wheel_smoke.sh dist/pcp-*.whl
set -euo pipefail
WHEEL="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
PY=${PYTHON:-python3}
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL"
cd "$WORK"
"$WORK/venv/bin/python" - <<'PYEOF'
import numpy as np
import pcp
print("pcp from", pcp.__file__, "devices:", pcp.devices())
assert "site-packages" in pcp.__file__
if any(d.startswith("vulkan") for d in pcp.devices()):
    x = pcp.tensor([1.0, 2.0, 3.0], device="gpu")
    np.testing.assert_array_equal((x * 2.0 + 1.0).numpy(), [3.0, 5.0, 7.0])
    print("a GPU op ran on", pcp.gpu_info()["name"])
PYEOF
"$WORK/venv/bin/pcp" train --preset shakespeare-char-cpu --max-iters 4 --eval-interval 2 --eval-iters 1 \
  --sample-tokens 0 --no-dashboard --out "$WORK/run"
echo "wheel smoke test passed: $(basename "$WHEEL")"
