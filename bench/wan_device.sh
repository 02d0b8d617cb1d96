#!/usr/bin/env bash
# Simulated hosts (pcp.distributed.wan) on the GPU machine, whose 16 cores give every simulated
# host a core of its own (this project's 2-core machine runs 4 workers on 2): builds PCP there
# (bench/gpu_device.sh: carry .gl and .gpu-tools/include) and runs the given command with Ray and
# iproute2's `ip`, which that machine lacks, from .wan-tools (carry it; ~30 MB):
#   .wan-tools/ray260.txz   Ray 2.60's cp312 wheel and its pure dependencies unpacked (click,
#                           filelock, jsonschema, msgpack, packaging, protobuf, pyyaml, requests and
#                           theirs), jars/rllib/serve/data/tune/train/llm/dashboard-client removed,
#                           gcs_server, raylet and _raylet.so stripped, as a .tar.xz
#   .wan-tools/ipr/         Debian 12's ip (ip.bin) with its libraries, its libc and its loader (lib/)
#   .wan-tools/bin/ip       exec "$D/lib/ld-linux-x86-64.so.2" --library-path "$D/lib" "$D/ip.bin" "$@"
#                           (D: ../ipr beside it), so what `ip netns exec` starts gets the machine's libraries
#   .wan-tools/bin/ray      exec python3 -c "...from ray.scripts.scripts import main..." "$@"
# Example (one call; results under /tmp/wanout; runs longer than a call: bench/diloco_wan_background.sh):
#   bash bench/wan_device.sh python3 bench/diloco_wan.py --runs sync stream:100:4:int4:15@2 --out /tmp/wanout
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SITE=/tmp/pcp-wan-site
if [ ! -d "$SITE/ray" ]; then
  mkdir -p "$SITE"
  tar xJf "$ROOT/.wan-tools/ray260.txz" -C "$SITE"
fi
export PATH="$ROOT/.wan-tools/bin:$PATH" PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
exec bash "$ROOT/bench/gpu_device.sh" "$@"
