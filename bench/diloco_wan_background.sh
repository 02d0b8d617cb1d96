#!/usr/bin/env bash
# bench/diloco_wan.py in the background, for the device machine, whose calls last at most 10
# minutes: the first call starts it (with the given arguments, results under /tmp/wanout), every
# call, the first too, waits for it until the epoch second DEADLINE and copies what there is
# (log, tables, plot, each run's record) to $OUT. Run it through bench/wan_device.sh:
#   D=$(( $(date +%s) + 570 )); bash bench/wan_device.sh bash bench/diloco_wan_background.sh $D --runs sync ...
#   D=$(( $(date +%s) + 570 )); bash bench/wan_device.sh bash bench/diloco_wan_background.sh $D   # later calls
DEADLINE=$1; shift
mkdir -p /tmp/wanout
if [ ! -f /tmp/wanout/pid ]; then
  python3 -c "import ray, pcp; print('ray', ray.__version__, 'pcp', pcp.__version__)"; ip -V
  setsid nohup python3 bench/diloco_wan.py "$@" --out /tmp/wanout > /tmp/wanout/log 2>&1 < /dev/null &
  echo $! > /tmp/wanout/pid
fi
while [ "$(date +%s)" -lt "$DEADLINE" ] && kill -0 "$(cat /tmp/wanout/pid)" 2>/dev/null; do sleep 5; done
kill -0 "$(cat /tmp/wanout/pid)" 2>/dev/null && echo STILL_RUNNING || echo DONE
tail -20 /tmp/wanout/log
cp /tmp/wanout/log /tmp/wanout/*.json /tmp/wanout/*.png "$OUT"/ 2>/dev/null
for d in /tmp/wanout/*/; do
  [ -f "$d/diloco.json" ] && cp "$d/diloco.json" "$OUT/$(basename "$d").diloco.json"
  [ -f "$d/sync_dp.json" ] && cp "$d/sync_dp.json" "$OUT/sync_dp.json"
done
true
