#!/usr/bin/env bash
# Capture golden SMA attribute bytes from the real diagnostic tools on ibsim.
#
# Starts ibsim on net.2sw2path4hca2port, lets OpenSM (--qos) configure the subnet (LIDs, LFTs,
# P_Keys, SL2VL, VLArb, SMInfo), then runs smpquery/ibroute/sminfo with libibmad debug level 3,
# which hex-dumps every received MAD ("rcv buf"). For each query NAME it writes
#   test/golden/sma/NAME.hex  the received MADs (256 bytes each, as printed by libibmad)
#   test/golden/sma/NAME.txt  what the tool printed on stdout
# Usage: scripts/capture-golden-sma.sh   (from the repository root)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/test/golden/sma
NET=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca2port
PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=$(mktemp -d /tmp/capture-sma.XXXXXX)
export IBSIM_SOCKNAME=capsma_$$
mkdir -p "$OUT"
cd "$WORK"

mkfifo fifo
ibsim -s "$NET" <>fifo >ibsim.log 2>&1 &
IBSIM_PID=$!
OPENSM_PID=
cleanup() {
  # stop OpenSM while ibsim is still there (it hangs in umad calls once ibsim is gone)
  if [ -n "$OPENSM_PID" ]; then
    kill "$OPENSM_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$OPENSM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$OPENSM_PID" 2>/dev/null || true
  fi
  kill "$IBSIM_PID" 2>/dev/null || true
}
trap cleanup EXIT

for _ in $(seq 50); do grep -q "@$IBSIM_SOCKNAME" /proc/net/unix && break; sleep 0.1; done

LD_PRELOAD=$PRELOAD opensm -f "$WORK/opensm.log" --qos >opensm.out 2>&1 &
OPENSM_PID=$!
for _ in $(seq 100); do grep -q "MASTER" opensm.out 2>/dev/null && break; sleep 0.2; done
sleep 5 # let the first heavy sweep finish programming the switches

# capture NAME TOOL ARGS...
capture() {
  local name=$1
  shift
  LD_PRELOAD=$PRELOAD timeout 20 "$@" -ddd 2>"$WORK/$name.err" | grep -v "^ibdebug:" >"$OUT/$name.txt"
  {
    echo "# $* (libibmad 'rcv buf' dumps, one 256-byte MAD per block; captured by scripts/capture-golden-sma.sh on ibsim + OpenSM --qos)"
    awk '/^rcv buf$/ { n = 16; print ""; next } n > 0 { print; n-- }' "$WORK/$name.err"
  } >"$OUT/$name.hex"
}

capture nodeinfo-switch smpquery -D nodeinfo 0
capture nodeinfo-ca smpquery -D nodeinfo 0,1
capture nodedesc-switch smpquery -D nodedesc 0
capture nodedesc-ca smpquery -D nodedesc 0,1
capture switchinfo smpquery -D switchinfo 0
capture portinfo-switch-p1 smpquery -D portinfo 0 1
capture portinfo-switch-p0 smpquery -D portinfo 0 0
capture portinfo-ca smpquery -D portinfo 0,1 1
capture pkeys-ca smpquery -D pkeys 0,1 1
capture sl2vl-switch smpquery -D sl2vl 0 1
capture vlarb-ca smpquery -D vlarb 0,1 1
capture guidinfo-ca smpquery -D guidinfo 0,1
capture lft-switch ibroute -D 0
capture mft-switch ibroute -M -D 0
capture sminfo sminfo

echo "captured into $OUT"
