#!/usr/bin/env bash
# The Alertmanager example: the real ansible-rulebook runs extensions/eda/rulebooks/rollback_on_alert.yml
# with ansible.eda.alertmanager; this script posts what Alertmanager's webhook sends for a firing
# SGLangAcceptLengthCollapsed alert (extensions/eda/prometheus/sglang-alerts.yml), twice, and checks
# that the stand-in rollback ran once (throttle) and restored the NEXTN unit file byte for byte.
#
#   EDA_VENV=/tmp/metrics-eda-venv EDA_COLLECTIONS=/path/with/ansible_collections/ansible/eda \
#       tests/eda/run_alert_scenario.sh
#
# EDA_COLLECTIONS: a collections path holding ansible.eda (ansible-galaxy collection install ansible.eda -p DIR).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
EDA_VENV=${EDA_VENV:-$REPO/.venv-eda}
: "${EDA_COLLECTIONS:?set EDA_COLLECTIONS to a collections path that holds ansible.eda}"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
WORK=$(mktemp -d /tmp/ddtree-eda-alert.XXXXXX)
RULEBOOK_PID=
trap '[ -n "$RULEBOOK_PID" ] && kill "$RULEBOOK_PID" 2>/dev/null || true' EXIT

mkdir -p "$WORK/collections/ansible_collections/ddtree"
ln -s "$REPO" "$WORK/collections/ansible_collections/ddtree/sglang"
export ANSIBLE_COLLECTIONS_PATH="$WORK/collections:$EDA_COLLECTIONS"
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
alertmanager_port: $PORT
rollback_playbook: $REPO/tests/eda/standin_rollback.yml
VARS

PATH="$EDA_VENV/bin:$PATH" ansible-rulebook --rulebook "$REPO/extensions/eda/rulebooks/rollback_on_alert.yml" \
    --inventory "$WORK/inventory.yml" --vars "$WORK/vars.yml" -v > "$WORK/rulebook.log" 2>&1 &
RULEBOOK_PID=$!
for _ in $(seq 60); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 1; done

# Alertmanager's webhook payload (version 4), as it posts a firing alert.
payload='{"version": "4", "status": "firing", "receiver": "eda", "groupKey": "{}:{alertname=\"SGLangAcceptLengthCollapsed\"}",
  "alerts": [{"status": "firing", "labels": {"alertname": "SGLangAcceptLengthCollapsed", "host": "sim129",
    "instance": "ct129:30000", "severity": "critical", "ddtree_action": "rollback"},
    "annotations": {"summary": "sglang:spec_accept_length 1.02 on sim129 (bound >= 1.2)"},
    "startsAt": "2026-12-04T18:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "a1"}]}'
for _ in 1 2; do
    curl -sf -X POST -H 'Content-Type: application/json' -d "$payload" "http://127.0.0.1:$PORT/alerts"; echo
    sleep 1
done
for _ in $(seq 60); do [ -f "$WORK/rollback-cause.txt" ] && break; sleep 1; done
sleep 5  # time for a second (throttled) rollback to show if it were not throttled
kill "$RULEBOOK_PID"; wait "$RULEBOOK_PID" 2>/dev/null || true

cmp "$WORK/saved/sglang.service" "$WORK/active/sglang.service" || { cat "$WORK/rulebook.log"; echo "FAIL: not restored"; exit 1; }
grep -q 'sim129: SGLangAcceptLengthCollapsed: sglang:spec_accept_length 1.02' "$WORK/rollback-cause.txt" \
    || { echo "FAIL: cause"; cat "$WORK/rollback-cause.txt"; exit 1; }
runs=$(grep -c 'PLAY \[Restore the last-known-good SGLang unit (stand-in)\]' "$WORK/rulebook.log" || true)
[ "$runs" = 1 ] || { echo "FAIL: the rollback ran $runs times (throttle: once)"; exit 1; }
echo "PASS: $(cat "$WORK/rollback-cause.txt")"
