#!/usr/bin/env bash
# Self-test of the simulated driver: builds, then drives the CLI, fakejob and
# the fake NVML (through test/nvml_check, which dlopens it like the addon).
# Exit status: number of failed checks (0 = all passed). Needs node for JSON.
set -u
HERE="$(cd "$(dirname "$0")/.." && pwd)"
B="$HERE/build"
make -s -C "$HERE" >/dev/null || { echo "build failed"; exit 1; }

TMP="$(mktemp -d)"
export GPUSHARE_FAKEGPU_STATE="$TMP/state"
export LD_LIBRARY_PATH="$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset CUDA_VISIBLE_DEVICES
FG="$B/fakegpu"
JOB="$B/fakejob"
NV="$B/nvml_check $B/libnvidia-ml.so.1"
FAILS=0
BG=()
cleanup() {
  for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done
  { wait; } 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { local what="$1"; shift; if "$@" >"$TMP/out" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/     /' "$TMP/out" | head -20; fi; }
# js 'expression over d (parsed stdin JSON)' — prints the value
js() { node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const d=JSON.parse(s);const v=($1);console.log(typeof v==='object'?JSON.stringify(v):v)})"; }
expect_eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }
# wait_line FILE PATTERN — up to 3 s
wait_line() { for _ in $(seq 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done; return 1; }
now_ms() { date +%s%3N; }

echo "== scenarios"
for s in a100-40gb:1 h100x2-mig:2 h100x8:8; do
  name=${s%%:*}; n=${s##*:}
  check "init $name" "$FG" init --scenario "$name"
  expect_eq "$name devices" "$("$FG" dump | js 'd.devices.length')" "$n"
done
"$FG" init --scenario h100x2-mig
expect_eq "mig layout" "$("$FG" dump | js 'd.devices[1].migDevices.map(m=>m.profileName+"@"+m.placement.start+":"+m.placement.size+"/gi"+m.gpuInstanceId+"/sm"+m.smCount).join(" ")')" \
  "3g.40gb@4:4/gi1/sm60 2g.20gb@2:2/gi2/sm32 1g.10gb@1:1/gi3/sm16 1g.10gb@0:1/gi4/sm16"
expect_eq "mig names" "$("$FG" dump | js 'd.devices[1].migDevices[0].name')" "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
expect_eq "uuid formats" "$("$FG" dump | js '/^GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(d.devices[0].uuid) && /^MIG-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(d.devices[1].migDevices[0].uuid)')" true
u1=$("$FG" dump | js 'd.devices[1].uuid'); "$FG" init --scenario h100x2-mig
expect_eq "uuids deterministic" "$("$FG" dump | js 'd.devices[1].uuid')" "$u1"
check "nvml basic" $NV basic

printf 'driver 550.54.15\ngpu model="NVIDIA H100 80GB HBM3" mig=on\nmig profile=3g.40gb\nmig profile=3g.40gb\nmig profile=1g.10gb\n' >"$TMP/bad.scn"
"$FG" init --state "$TMP/other" --scenario "$TMP/bad.scn" 2>"$TMP/err"; rc=$?
expect_eq "bad scenario exits 2" "$rc" 2
if grep -q "bad.scn:5:" "$TMP/err"; then ok "bad scenario names file:line ($(cat "$TMP/err"))"; else bad "bad scenario message: $(cat "$TMP/err")"; fi
printf 'gpu model="X" memory=lots\n' >"$TMP/bad2.scn"
"$FG" init --state "$TMP/other" --scenario "$TMP/bad2.scn" 2>"$TMP/err"; expect_eq "bad value exits 2" "$?" 2
"$FG" fault --device 0 --lost maybe 2>/dev/null; expect_eq "bad CLI arg exits 2" "$?" 2
"$FG" fault --call nvmlNoSuchCall --code 3 2>/dev/null; expect_eq "unknown NVML call exits 2" "$?" 2
"$FG" execlog --device 9 2>/dev/null; expect_eq "bad device exits 2" "$?" 2
"$JOB" train >"$TMP/out" 2>/dev/null; expect_eq "fakejob bad options exit 2" "$?/$(wc -c <"$TMP/out")" "2/0"
"$JOB" alloc --chunk 1X --count 1 >"$TMP/out" 2>/dev/null; expect_eq "fakejob bad size exit 2" "$?/$(wc -c <"$TMP/out")" "2/0"
GPUSHARE_FAKEGPU_STATE="$TMP/missing" check "nvmlInit without state: DRIVER_NOT_LOADED" $NV noinit
GPUSHARE_FAKEGPU_STATE="$TMP/missing" "$JOB" hold --duration 0 >"$TMP/out"
expect_eq "cuInit without state: NO_DEVICE" "$(js 'd.code' <"$TMP/out")" 100

echo "== memory"
"$FG" init --scenario a100-40gb
"$JOB" --mem 1G hold >"$TMP/hold.out" & BG+=($!); hp=$!
wait_line "$TMP/hold.out" ready || bad "hold never ready"
expect_eq "alloc shows in dump" "$("$FG" dump | js 'd.devices[0].processes.map(p=>p.pid+":"+p.usedMemory+":"+p.gpuInstanceId).join()')" "$hp:1073741824:4294967295"
expect_eq "memoryUsed = reserved + allocations" "$("$FG" dump | js 'd.devices[0].memoryUsed')" $((256 * 1048576 + 1073741824))
check "nvml sees 1 process, record sizes" $NV procs 0 1
# 40960 MiB - 256 reserved - 1024 held = 39680 MiB free: three 12 GiB chunks fit, the fourth not
"$JOB" --resolve symbol alloc --chunk 12G --count 4 >"$TMP/alloc.out"
expect_eq "OOM at capacity" "$(grep '"alloc"' "$TMP/alloc.out" | while read -r l; do echo "$l" | js 'd.result'; done | tr '\n' ' ')" \
  "CUDA_SUCCESS CUDA_SUCCESS CUDA_SUCCESS CUDA_ERROR_OUT_OF_MEMORY "
expect_eq "meminfo after OOM" "$(grep meminfo "$TMP/alloc.out" | js 'd.free/1048576')" $((40960 - 256 - 1024 - 3 * 12288))
"$JOB" alloc --chunk 1M --count 1 --after 0.3 >"$TMP/alloc.out"
expect_eq "alloc --after waits first" "$(head -2 "$TMP/alloc.out" | while read -r l; do echo "$l" | js 'd.event'; done | tr '\n' ' ')" "ready waiting "
for api in pitch managed async pool vmm array array3d mipmap; do
  "$JOB" alloc --chunk 1G --count 40 --api $api >"$TMP/alloc.out"
  expect_eq "api $api counts against capacity" "$(grep -c CUDA_SUCCESS "$TMP/alloc.out")" 38
done
# SIGKILL: gone from NVML through the rate-limited reap path (no dump); the time is a figure, the bound only ends the wait
kill -9 "$hp"; { wait "$hp"; } 2>/dev/null  # bash reaps it at once; the lifeline also covers zombies
t0=$(now_ms)
while ! $NV procs 0 0 >/dev/null 2>&1; do [ $(($(now_ms) - t0)) -gt 10000 ] && break; done
dt=$(($(now_ms) - t0))
if [ $dt -le 10000 ]; then ok "SIGKILLed job gone from NVML (${dt} ms)"; else bad "SIGKILLed job still listed after ${dt} ms"; fi
expect_eq "its memory released" "$("$FG" dump | js 'd.devices[0].memoryUsed')" $((256 * 1048576))

echo "== time slicing"
"$FG" init --scenario h100x2-mig
t_start=$(($(date +%s%N) - 0))
"$JOB" --resolve symbol train --kernel-ms 10 --batch 4 --duration 1.5 >"$TMP/t1.out" & BG+=($!); p1=$!
"$JOB" --resolve procaddress train --kernel-ms 10 --batch 4 --duration 1.5 >"$TMP/t2.out" & BG+=($!); p2=$!
wait_line "$TMP/t1.out" ready && wait_line "$TMP/t2.out" ready || bad "train jobs never ready"
sleep 1
check "nvml per-process utilization" $NV util 0 "$p1"
wait "$p1" "$p2"
expect_eq "both resolve modes finish" "$(cat "$TMP/t1.out" "$TMP/t2.out" | grep -c '"done"')" 2
"$FG" execlog --device 0 >"$TMP/log"
node -e '
const recs=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(JSON.parse);
recs.sort((a,b)=>a.startNs-b.startNs);
let overlaps=0; const busy={};
for (let i=0;i<recs.length;i++){ const r=recs[i]; busy[r.pid]=(busy[r.pid]||0)+(r.endNs-r.startNs);
  for (let j=i+1;j<recs.length&&recs[j].startNs<r.endNs;j++) if(recs[j].pid!==r.pid) overlaps++; }
const v=Object.values(busy), tot=v.reduce((a,b)=>a+b,0);
const shares=v.map(x=>x/tot);
console.log(`records=${recs.length} overlaps=${overlaps} shares=${shares.map(s=>s.toFixed(2)).join("/")}`);
process.exit(overlaps===0 && v.length===2 && shares.every(s=>s>0.3&&s<0.7) ? 0 : 1);' "$TMP/log" >"$TMP/out" 2>&1 \
  && ok "execlog: one kernel at a time, fair ($(cat "$TMP/out"))" || bad "time slicing: $(cat "$TMP/out")"
last=$(tail -1 "$TMP/log" | js 'd.endNs')
expect_eq "execlog --since-ns" "$("$FG" execlog --device 0 --since-ns "$last" | wc -l)" 0

echo "== MIG"
mig=$("$FG" dump | js 'd.devices[1].migDevices[1].uuid')
CUDA_VISIBLE_DEVICES=$mig "$JOB" --mem 2G train --kernel-ms 5 --duration 1.2 >"$TMP/mig.out" & BG+=($!); mp=$!
wait_line "$TMP/mig.out" ready || bad "mig job never ready"
expect_eq "MIG job device name" "$(head -1 "$TMP/mig.out" | js 'd.name')" "NVIDIA H100 80GB HBM3 MIG 2g.20gb"
expect_eq "MIG job in dump with GI/CI" "$("$FG" dump | js 'd.devices[1].processes.map(p=>p.pid+":"+p.gpuInstanceId+":"+p.computeInstanceId).join()')" "$mp:2:0"
expect_eq "MIG instance memory" "$("$FG" dump | js 'd.devices[1].migDevices[1].memoryUsed')" 2147483648
wait "$mp"
expect_eq "MIG execlog per instance" "$("$FG" execlog --device 1 --mig 2 | wc -l | awk '{print ($1>0)}')/$("$FG" execlog --device 1 --mig 1 | wc -l)" "1/0"
CUDA_VISIBLE_DEVICES=$mig "$JOB" alloc --chunk 10G --count 2 | grep -c OUT_OF_MEMORY >"$TMP/out"
expect_eq "MIG instance capacity (19968 MiB)" "$(cat "$TMP/out")" 1

echo "== faults"
sleep 30 & BG+=($!); sp=$!
check "attach" "$FG" attach --device 0 --pid "$sp" --mem 3G
"$FG" attach --device 0 --pid "$sp" --mem 100G 2>/dev/null; expect_eq "attach past capacity exits 1" "$?" 1
"$FG" attach --device 0 --pid 999999999 --mem 1G 2>/dev/null; expect_eq "attach dead pid exits 2" "$?" 2
check "v3 24-byte records" $NV procs 0 1
"$FG" fault --v3-record-size 32
check "v3 32-byte records (R535)" $NV v3wide 0 1
expect_eq "dump v3RecordSize" "$("$FG" dump | js 'd.v3RecordSize')" 32
"$FG" fault --call nvmlDeviceGetName --code 3 --device 0
check "fault on device 0" $NV fault 0 3
check "device 1 unaffected" $NV fault 1 0
"$FG" fault --call nvmlDeviceGetName --code 4
check "fault on all devices" $NV fault 1 4
expect_eq "dump faults" "$("$FG" dump | js 'd.faults.length')" 2
"$FG" fault --call nvmlDeviceGetName --code 0 --device 0; "$FG" fault --call nvmlDeviceGetName --code 0
check "faults cleared" $NV fault 0 0
"$FG" fault --device 0 --lost on
check "lost GPU" $NV lost 0
"$JOB" alloc --chunk 1M --count 1 >"$TMP/out"
expect_eq "CUDA on a lost GPU fails" "$(js 'd.event' <"$TMP/out" | tail -1)" error
"$FG" fault --device 0 --lost off
"$FG" set --device 0 temperature=77 power=123456
expect_eq "set pins" "$("$FG" dump | js 'd.devices[0].temperatureC+"/"+d.devices[0].powerMilliwatts')" "77/123456"
"$FG" set --device 0 temperature=auto power=auto
expect_eq "auto unpins" "$("$FG" dump | js 'd.devices[0].temperatureC')" 30
kill -9 "$sp"; wait "$sp" 2>/dev/null
expect_eq "attached pid reaped" "$("$FG" dump | js 'd.devices[0].processes.length')" 0

echo "== profiles"
"$JOB" infer --rate 100 --kernel-ms 2 --requests 30 --seed 7 >"$TMP/out"
expect_eq "infer latency event" "$(grep latency "$TMP/out" | js 'd.requests>0 && d.p50Ms>=2 && d.p99Ms>=d.p50Ms')" true
"$JOB" interactive --burst-ms 20 --idle-ms 30 --duration 0.3 >"$TMP/out"
expect_eq "interactive bursts" "$(grep -c burst "$TMP/out" | awk '{print ($1>=3)}')" 1

echo "== fakejob --check-memory"
"$FG" init --scenario a100-40gb
"$JOB" --mem 1G interactive --burst-ms 2 --idle-ms 200 --duration 10 --check-memory >"$TMP/mc.out" & BG+=($!); mp=$!
wait_line "$TMP/mc.out" '"memory-check"' || bad "--check-memory never checked"
expect_eq "--check-memory: 64 KiB every 256 MiB and the last 64 KiB written, read back ok" \
  "$(grep -m1 memory-written "$TMP/mc.out" | js 'd.bytes/65536')/$(grep -m1 memory-check "$TMP/mc.out" | js 'd.ok+":"+d.bytes/65536')" "5/true:5"
# one byte of its first sample changed behind its back (its device memfd; the allocation is at offset 0):
# flipped, not set to a fixed value, which the pid-seeded pattern holds there for 1 pid in 256
changed=0
for f in /proc/$mp/fd/*; do
  [[ "$(readlink "$f")" == "/memfd:fakegpu-device-slot"* ]] || continue
  was=$(dd if="$f" bs=1 skip=5 count=1 status=none | od -An -tu1 | tr -d ' ')
  printf "\\$(printf '%03o' $((255 - was)))" | dd of="$f" bs=1 seek=5 conv=notrunc status=none && changed=$((changed + 1))
done
expect_eq "--check-memory: the job's device memfd found and one byte flipped" "$changed" 1
wait "$mp"; rc=$?
expect_eq "--check-memory: a changed byte is seen at the next cell, exit 3" "$rc/$(grep memory-check "$TMP/mc.out" | tail -1 | js 'd.ok')" "3/false"

echo "== CUDA driver API (test/cuda_check.c)"
"$FG" init --scenario a100-40gb
for c in capture graphmem arrays vmm ctx queue ckpt contents copy2d memset2d batch arraycopy; do
  "$B/cuda_check" "$B/libcuda.so.1" "$c" >"$TMP/out" 2>&1; rc=$?
  if [ $rc -eq 0 ]; then ok "cuda $c ($(grep -c '^ok' "$TMP/out") checks)"; else bad "cuda $c"; grep -v '^ok' "$TMP/out" | sed 's/^/     /' | head -20; fi
done
expect_eq "cuda checks leave nothing on the GPU" "$("$FG" dump | js 'd.devices[0].memoryUsed')" $((256 * 1048576))

echo "== fakejob profiles for the driver's features"
"$FG" init --scenario a100-40gb
ev() { grep "\"event\":\"$2\"" "$1" | head -1; }
reap() { "$FG" dump >/dev/null; } # dump reaps at once: the next job's figures do not count a finished job's memory
"$JOB" capture --kernels 3 --kernel-ms 1 --launches 4 --graph-mem 1G >"$TMP/cap.out"; rc=$?
cp=$(ev "$TMP/cap.out" ready | js 'd.pid')
expect_eq "capture: captured, launched 4 times" "$rc/$(ev "$TMP/cap.out" captured | js 'd.end')/$(ev "$TMP/cap.out" done | js 'd.kernels')" "0/CUDA_SUCCESS/12"
expect_eq "capture: 3 x 4 graph kernels in the execution record" "$("$FG" execlog --device 0 | grep -c "\"pid\":$cp,")" 12
expect_eq "capture: graph memory held while the graph exists" "$(ev "$TMP/cap.out" graph | js '(d.total-d.free)/1048576')" $((256 + 1024))
reap
"$JOB" capture --kernels 3 --kernel-ms 1 --launches 4 --sync-during-capture >"$TMP/cap.out"; rc=$?
cp=$(ev "$TMP/cap.out" ready | js 'd.pid')
expect_eq "capture --sync-during-capture: sync fails, capture invalidated" "$rc/$(ev "$TMP/cap.out" captured | js 'd.sync+"/"+d.end')" \
  "0/CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED/CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
expect_eq "capture --sync-during-capture: nothing ran" "$("$FG" execlog --device 0 | grep -c "\"pid\":$cp,")" 0
reap
"$JOB" vmm --chunk 256M --count 2 --release-first >"$TMP/vmm.out"
expect_eq "vmm --release-first: held until the last unmap" \
  "$(grep '"vmm"' "$TMP/vmm.out" | while read -r l; do echo "$l" | js 'd.step+":"+(d.total-d.free)/1048576'; done | tr '\n' ' ')" \
  "created:768 mapped:768 released:768 unmapped:256 "
reap
"$JOB" ctx --chunk 1G --count 2 >"$TMP/ctx.out"
expect_eq "ctx: its memory comes back at cuCtxDestroy, and fits again" \
  "$(grep '"ctx"' "$TMP/ctx.out" | while read -r l; do echo "$l" | js 'd.step+":"+(d.total-d.free)/1048576'; done | tr '\n' ' ')$(grep -c CUDA_SUCCESS "$TMP/ctx.out")" \
  "allocated:2304 destroyed:256 reallocated:2304 4"
reap
"$JOB" --mem 512M ctx --chunk 1G --count 1 --reset >"$TMP/ctx.out"
expect_eq "ctx --reset: cuDevicePrimaryCtxReset frees the primary context's memory" \
  "$(grep '"ctx"' "$TMP/ctx.out" | while read -r l; do echo "$l" | js 'd.step+":"+(d.total-d.free)/1048576'; done | tr '\n' ' ')" \
  "allocated:1792 reset:256 reallocated:1280 "
reap
"$JOB" --children 3 --mem 1G hold >"$TMP/ch.out" & BG+=($!); chp=$!
for _ in $(seq 1000); do [ "$(grep -c '"ready"' "$TMP/ch.out")" = 3 ] && break; sleep 0.01; done
expect_eq "--children 3: the children event first" "$(head -1 "$TMP/ch.out" | js 'd.event+":"+d.pids.length+":"+d.pid')" "children:3:$chp"
expect_eq "--children 3: three CUDA processes with 1 GiB each" \
  "$("$FG" dump | js 'd.devices[0].processes.map(p=>p.usedMemory/1073741824).join()')/$(head -1 "$TMP/ch.out" | js 'd.pids.sort().join()')" \
  "1,1,1/$("$FG" dump | js 'd.devices[0].processes.map(p=>p.pid).sort().join()')"
kill -TERM "$chp"; wait "$chp"; rc=$?
expect_eq "--children: SIGTERM reaches every child, all end with done" "$rc/$(grep -c '"done"' "$TMP/ch.out")" "0/3"

echo "== cost (figure only; FAKEGPU_BENCH_PROCS=64 for the 8 x 64 figure)"
"$FG" init --scenario h100x8
for i in $(seq "${FAKEGPU_BENCH_PROCS:-16}"); do sleep 30 & BG+=($!); for d in 0 1 2 3 4 5 6 7; do "$FG" attach --device $d --pid $! --mem 64M; done; done
$NV bench | sed 's/^/     /'

echo "== $FAILS failure(s)"
exit $FAILS
