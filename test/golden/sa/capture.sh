#!/bin/sh
# Re-capture the SA golden fixtures in this directory (see README.md).
# Needs ibsim-utils, opensm, infiniband-diags. Runs in a scratch dir; stops what it starts by PID.
set -eu
OUT=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/sa-golden.XXXXXX)
cd "$W"
PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
export IBSIM_SOCKNAME=sagolden_$$
cp /usr/share/doc/ibsim-utils/net-examples/net.2sw2path net
mkfifo fifo
ibsim -s net <> fifo > ibsim.log 2>&1 &
IBSIM=$!
sleep 1
mkdir cache osm sq
cd osm
OSM_CACHE_DIR="$W/cache" OSM_TMP_DIR="$W/cache" SIM_HOST=Hca1 LD_PRELOAD=$PRELOAD opensm -f "$W/opensm.log" > "$W/opensm.out" 2>&1 &
OSM=$!
cd ..
sleep 8
q() { name=$1; shift; (cd sq && SIM_HOST=Hca2 LD_PRELOAD=$PRELOAD timeout 20 saquery -d -d "$@" 2>&1 | grep -v '^ibwarn' > "$OUT/$name.txt") || true; }
q NR NR; q NR_2 NR 2; q PIR PIR; q PIR_2_1 PIR 2/1; q SMIR SMIR; q LR LR; q LR_2_3 LR 2/3; q SWIR_2 SWIR 2
q CPI CPI; q GIR GIR; q SL2VL SL2VL; q VLAR VLAR; q LFTR LFTR; q MCMR MCMR; q PR PR; q PKTR PKTR; q SR SR
q PR_src_to_dst_1_2 --src-to-dst 1:2
q PR_full PR --slid 1 --dlid 2 --sl 3 --mtu 4 --rate 3 --pkey 0xffff --reversible 1 --numb_path 1 \
  --service_id 0x123456789abcdef0 --qos_class 5 --tclass 3 --flow_label 0x12345 --hop_limit 7 --pkt_lifetime 18
q MCMR_full MCMR --mgid ff12:401b:ffff::ffff:ffff --gid fe80::10:1 --mlid 0xc000 --qkey 0xb1b --pkey 0xffff --sl 3 \
  --mtu 4 --rate 3 --tclass 2 --flow_label 0x54321 --hop_limit 9 --scope 2 --join_state 1 --proxy_join 1 --pkt_lifetime 18
kill "$OSM"; sleep 1; kill "$IBSIM"
