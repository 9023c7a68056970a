#!/usr/bin/env bash
# The rulebook scenario: a stand-in SGLang unit whose metrics regress after a few seconds, the
# real ansible-rulebook running extensions/eda/rulebooks/rollback_on_regression.yml with the
# collection's sglang_metrics source, and a stand-in rollback playbook. Passes when the rollback
# ran once, restored the saved NEXTN unit file byte for byte and recorded the cause.
#
#   EDA_VENV=/tmp/metrics-eda-venv tests/eda/run_scenario.sh
#
# EDA_VENV holds ansible-rulebook (needs a Java 17 runtime: apt-get install openjdk-17-jre-headless),
# ansible-core, prometheus-client and requests (docs/bake.md lists the versions tried).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
EDA_VENV=${EDA_VENV:-$REPO/.venv-eda}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
WORK=$(mktemp -d /tmp/ddtree-eda-scenario.XXXXXX)
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT

# The collection, as ansible-galaxy finds it: <path>/ansible_collections/ddtree/sglang.
mkdir -p "$WORK/collections/ansible_collections/ddtree"
ln -s "$REPO" "$WORK/collections/ansible_collections/ddtree/sglang"
export ANSIBLE_COLLECTIONS_PATH="$WORK/collections"

# The host's unit files: the DDTree one is active, the NEXTN one saved by the deploy.
mkdir -p "$WORK/active" "$WORK/saved"
printf '[Service]\nExecStart=/opt/sglang/bin/python -m sglang.launch_server --speculative-algorithm NEXTN\n' \
    > "$WORK/saved/sglang.service"
printf '[Service]\nExecStart=/opt/sglang/bin/python -m sglang.launch_server --speculative-algorithm DDTREE\n' \
    > "$WORK/active/sglang.service"
cat > "$WORK/inventory.yml" <<INV
all:
  hosts:
    sim129:
      ansible_connection: local
      ansible_python_interpreter: $EDA_VENV/bin/python
      scenario_dir: $WORK
INV
cat > "$WORK/vars.yml" <<VARS
sglang_url: http://127.0.0.1:$PORT
sglang_host: sim129
sglang_interval: 2
sglang_gate_accept_length: 3.1
rollback_playbook: $REPO/tests/eda/standin_rollback.yml
sglang_measurements: 12
VARS

"$EDA_VENV/bin/python" "$REPO/tests/eda/regressing_metrics_server.py" --port "$PORT" --decay-after 12 \
    > "$WORK/server.log" 2>&1 &
SERVER_PID=$!

# The source stops after 12 measurements (24 s); ansible-rulebook then ends.
start=$(date +%s)
PATH="$EDA_VENV/bin:$PATH" timeout 120 ansible-rulebook \
    --rulebook "$REPO/extensions/eda/rulebooks/rollback_on_regression.yml" \
    --inventory "$WORK/inventory.yml" --vars "$WORK/vars.yml" \
    -v \
    > "$WORK/rulebook.log" 2>&1 || { cat "$WORK/rulebook.log"; echo "ansible-rulebook failed"; exit 1; }
echo "ansible-rulebook ran $(( $(date +%s) - start )) s; log: $WORK/rulebook.log"

cmp "$WORK/saved/sglang.service" "$WORK/active/sglang.service" \
    || { echo "FAIL: the NEXTN unit was not restored"; exit 1; }
grep -q 'sim129: bake: sglang:spec_accept_length 1.02 for 2 of' "$WORK/rollback-cause.txt" \
    || { echo "FAIL: cause not recorded:"; cat "$WORK/rollback-cause.txt"; exit 1; }
runs=$(grep -c 'PLAY \[Restore the last-known-good SGLang unit (stand-in)\]' "$WORK/rulebook.log" || true)
[ "$runs" = 1 ] || { echo "FAIL: the rollback ran $runs times (throttle: once)"; exit 1; }
echo "PASS: $(cat "$WORK/rollback-cause.txt")"
