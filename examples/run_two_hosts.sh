#!/usr/bin/env bash
# SPARe in the user's own loop on two "hosts" (loopback addresses 127.0.0.2 and 127.0.0.3):
# a standalone lighthouse, four groups (r = 2), each its own torchrun, one group killed with
# kill -9 from outside and later replaced by a new process that rejoins from a live peer.
# Ends by comparing every group's final weights with the failure-free run (one process).
#
#   examples/run_two_hosts.sh [RUN_DIR]      (environment: STEPS, KILL_AT, PAUSE, VICTIM)
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:-$(mktemp -d /tmp/spare_two_hosts.XXXXXX)}
STEPS=${STEPS:-80}
KILL_AT=${KILL_AT:-8}
PAUSE=${PAUSE:-0.25}
VICTIM=${VICTIM:-3}
mkdir -p "$RUN"
export PYTHONPATH=${PYTHONPATH:-$PWD} RUST_LOG=${RUST_LOG:-warn}

free_port() {  # a free TCP port on address $1 (a pair: PORT and PORT + 1 for the store)
  python - "$1" <<'EOF'
import socket, sys
for _ in range(200):
    a = socket.socket(); a.bind((sys.argv[1], 0)); port = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind((sys.argv[1], port + 1))
    except OSError:
        continue
    finally:
        a.close(); b.close()
    print(port); break
EOF
}

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

LH_PORT=$(free_port 127.0.0.2)
python -m spare_fast lighthouse --bind "127.0.0.2:$LH_PORT" > "$RUN/lighthouse.log" 2>&1 &
pids+=($!)
until grep -q "^lighthouse" "$RUN/lighthouse.log"; do sleep 0.2; done
cat "$RUN/lighthouse.log"
export TORCHFT_LIGHTHOUSE="http://127.0.0.2:$LH_PORT" SPARE_FAST_STORE="127.0.0.2:$((LH_PORT + 1))"

host_of() { if [ "$1" -lt 2 ]; then echo 127.0.0.2; else echo 127.0.0.3; fi; }
launch() {  # launch GROUP LOGFILE: one torchrun (one worker process) for that group
  local g=$1 host port
  host=$(host_of "$g")
  port=$(free_port "$host")
  REPLICA_GROUP_ID=$g SPARE_FAST_BIND=$host torchrun --nnodes 1 --nproc-per-node 1 \
    --rdzv-backend static --master-addr "$host" --master-port "$port" --max-restarts 0 \
    examples/train_transformer.py --steps "$STEPS" --pause "$PAUSE" \
    --out "$RUN/final-g$g.pt" --checkpoint-dir "$RUN/checkpoints-g$g" > "$2" 2>&1 &
  pids+=($!)
  echo "host $host: torchrun for group $g (pid $!), log $2"
}
for g in 0 1 2 3; do launch "$g" "$RUN/g$g.log"; done

# Wait until the victim's worker has committed step KILL_AT, then kill -9 its worker process.
until grep -q "group $VICTIM: step *$KILL_AT " "$RUN/g$VICTIM.log" 2>/dev/null; do sleep 0.1; done
victim=$(sed -n "s/^group $VICTIM: pid \([0-9]*\) starting/\1/p" "$RUN/g$VICTIM.log" | head -1)
kill -9 "$victim"
echo "kill -9 $victim (group $VICTIM's worker) after its step $KILL_AT"

# A repair delay, then a new process for the dead group, on the same host.
sleep 3
launch "$VICTIM" "$RUN/g$VICTIM-new.log"

for p in "${pids[@]:1}"; do wait "$p" || true; done
python examples/train_transformer.py --reference --steps "$STEPS" --out "$RUN/reference.pt"

echo "--- group 0's log (the lowest group prints the run's step lines; ... = lines left out):"
python - "$RUN/g0.log" <<'EOF'
import re, sys
lines = [x.rstrip("\n") for x in open(sys.argv[1]) if re.match(r"(step|          event)", x)]
keep = set()
for i, x in enumerate(lines):
    m = re.match(r"step +(\d+)  depth", x)
    if m and (int(m.group(1)) < 2 or int(m.group(1)) % 20 == 0 or i == len(lines) - 1):
        keep.add(i)
    if "event" in x or "rejoined" in x or "between" in x:
        keep.update({i - 1, i, i + 1})
last = -1
for i in sorted(k for k in keep if 0 <= k < len(lines)):
    if i > last + 1:
        print("...")
    print(lines[i])
    last = i
EOF
echo "--- the replacement:"
grep -E "starting|rejoined|done" "$RUN/g$VICTIM-new.log"
echo "--- checkpoints (written by the lowest group, on its host): $(ls "$RUN"/checkpoints-g0 | tr '\n' ' ')"
python - "$RUN" "$STEPS" <<'EOF'
import sys, torch
from spare_fast.torch.testing import max_rel_diff
run, steps = sys.argv[1], int(sys.argv[2])
ref = torch.load(f"{run}/reference.pt", weights_only=True)
worst = 0.0
for g in range(4):
    got = torch.load(f"{run}/final-g{g}.pt", weights_only=True)
    rel = max_rel_diff(got, ref)
    worst = max(worst, rel)
    print(f"group {g}: max relative difference to the failure-free run {rel:.2e}")
print("PASS" if worst <= 1e-10 else "FAIL", f"(float64, bound 1e-10, worst {worst:.2e})")
sys.exit(0 if worst <= 1e-10 else 1)
EOF
echo "demo wall time: ${SECONDS} s"
