#!/usr/bin/env bash
# SPARe across groups of K = 2 ranks on two loopback "hosts" (127.0.0.2, 127.0.0.3): a
# standalone lighthouse, N = 3 groups (r = 2), one `torchrun --nproc-per-node 2` per group
# (FSDP2 inside each group, or tensor parallelism with MODE=tp). One rank of one group is
# killed with kill -9 from outside: torchrun ends its sibling, the other groups mask the
# group, and a new torchrun of 2 ranks for that group rejoins and heals shard by shard.
# Ends by comparing every rank's full final weights with the failure-free run (one process).
#
#   examples/run_groups_of_ranks.sh [RUN_DIR]   (environment: MODE=fsdp|tp, STEPS, KILL_AT,
#                                                VICTIM, RANK)
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:-$(mktemp -d /tmp/spare_ranks.XXXXXX)}
MODE=${MODE:-fsdp}
STEPS=${STEPS:-20}
KILL_AT=${KILL_AT:-4}
VICTIM=${VICTIM:-1}
RANK=${RANK:-1}
mkdir -p "$RUN"
export PYTHONPATH=${PYTHONPATH:-$PWD} RUST_LOG=${RUST_LOG:-warn}
extra=()
if [ "$MODE" = tp ]; then extra=(--tp); fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

python -m spare_fast lighthouse --bind 127.0.0.2:0 --store-port 0 > "$RUN/lighthouse.log" 2>&1 &
pids+=($!)
until grep -q "^lighthouse" "$RUN/lighthouse.log"; do sleep 0.2; done
cat "$RUN/lighthouse.log"
LH=$(sed -n 's|^lighthouse *\(http://[0-9.:]*\).*|\1|p' "$RUN/lighthouse.log" | head -1)
STORE=$(sed -n 's|.*store *\([0-9.:]*\).*|\1|p' "$RUN/lighthouse.log" | head -1)
export TORCHFT_LIGHTHOUSE=$LH SPARE_FAST_STORE=$STORE

host_of() { if [ "$1" -lt 1 ]; then echo 127.0.0.2; else echo 127.0.0.3; fi; }
launch() {  # launch GROUP LOGFILE: one torchrun of 2 ranks for that group
  local g=$1 host
  host=$(host_of "$g")
  REPLICA_GROUP_ID=$g SPARE_FAST_BIND=$host torchrun --standalone --nproc-per-node 2 \
    --monitor-interval 0.1 examples/train_fsdp.py "${extra[@]}" --steps "$STEPS" \
    --hold "$RUN/hold" --out "$RUN/final-g{group}-r{rank}.pt" > "$2" 2>&1 &
  pids+=($!)
  echo "host $host: torchrun --nproc-per-node 2 for group $g (pid $!), log $2"
}
for g in 0 1 2; do launch "$g" "$RUN/g$g.log"; done

# After step KILL_AT, hold every rank at its next step boundary, kill -9 one rank of VICTIM.
until grep -q "^step *$KILL_AT " "$RUN/g0.log" 2>/dev/null; do sleep 0.1; done
touch "$RUN/hold"
victim=$(sed -n "s|^group $VICTIM rank $RANK/2: pid \([0-9]*\) starting|\1|p" "$RUN/g$VICTIM.log")
kill -9 "$victim"
echo "kill -9 $victim (group $VICTIM rank $RANK) after step $KILL_AT"
wait "${pids[$((VICTIM + 1))]}" || echo "group $VICTIM's torchrun ended (exit code $?)"

# A new torchrun for that group; the others hold until it announced itself (a start-up on a
# loaded machine can take longer than the rest of this short run).
launch "$VICTIM" "$RUN/g$VICTIM-new.log"
until grep -q "rank 1/2: pid" "$RUN/g$VICTIM-new.log" 2>/dev/null; do sleep 0.2; done
sleep 3
rm "$RUN/hold"

for i in "${!pids[@]}"; do
  if [ "$i" -gt 0 ] && [ "$i" -ne $((VICTIM + 1)) ]; then wait "${pids[$i]}"; fi
done
python examples/train_fsdp.py --reference --steps "$STEPS" --out "$RUN/reference.pt"
echo "--- group 0's log (rank 0 of the lowest group prints the run's step lines):"
grep -E "^(step|          event)" "$RUN/g0.log"
echo "--- the replacement's log:"
grep -E "rank ./2: (rejoined|done)" "$RUN/g$VICTIM-new.log"
python - "$RUN" <<'EOF'
import glob, sys, torch
from spare_fast.torch.testing import max_rel_diff
ref = torch.load(f"{sys.argv[1]}/reference.pt")
for path in sorted(glob.glob(f"{sys.argv[1]}/final-g*-r*.pt")):
    print(f"{path.rsplit('/', 1)[1]}: max relative difference {max_rel_diff(torch.load(path), ref):.1e}")
EOF
