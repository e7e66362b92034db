#!/usr/bin/env bash
# End-to-end measurements of SPEC §11, against a no-op agent, on this machine:
#   1. per-iteration overhead: claude-iterate vs a bash for-loop running the same agent
#   2. stream-json in verbose mode: throughput and peak RSS on a 100 MB transcript
#      of 1 MiB lines, and a jq pipeline on the same file (if jq is installed)
#   3. 'stop' and '--help' latency
#   4. SIGINT to exit, with an agent that exits at once on SIGINT
# Usage: scripts/bench.sh [ITERATIONS]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
go build -o "$tmp/bin/claude-iterate" .
ci=$tmp/bin/claude-iterate
now() { date +%s%N; }
ms() { echo "scale=3; ($2 - $1) / 1000000" | bc; }

# A no-op agent: reads its prompt, prints a result.
cat > "$tmp/noop-claude" <<'AGENT'
#!/bin/sh
cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0}'
AGENT
chmod +x "$tmp/noop-claude"

cd "$tmp"
printf 'benchmark task\n' > task.md
"$ci" init bench --instructions task.md > /dev/null

echo "== 1. loop overhead, $n iterations of a no-op agent"
t0=$(now)
for i in $(seq "$n"); do ./noop-claude -p --output-format stream-json --verbose < task.md > /dev/null; done
t1=$(now)
"$ci" run bench -m "$n" --no-delay -q --claude ./noop-claude --no-keyboard
t2=$(now)
base=$(ms "$t0" "$t1"); tool=$(ms "$t1" "$t2")
echo "bash for-loop:  ${base} ms ($(echo "scale=3; $base / $n" | bc) ms/iteration)"
echo "claude-iterate: ${tool} ms ($(echo "scale=3; $tool / $n" | bc) ms/iteration)"
echo "overhead per iteration: $(echo "scale=3; ($tool - $base) / $n" | bc) ms; ratio $(echo "scale=2; $tool / $base" | bc)"

echo "== 2. stream-json, verbose, 100 MB of 1 MiB lines"
python3 - "$tmp/transcript.ndjson" <<'PY'
import json, sys
line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "a line of file content\n" * ((1 << 20) // 23)}]}})
use = json.dumps({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/x"}}]}})
with open(sys.argv[1], "w") as f:
    size = 0
    while size < 100 << 20:
        f.write(use + "\n" + line + "\n")
        size += len(line) + len(use) + 2
    f.write(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "ok"}) + "\n")
PY
printf '#!/bin/sh\ncat > /dev/null\nexec cat %s\n' "$tmp/transcript.ndjson" > cat-claude
chmod +x cat-claude
size=$(stat -c %s transcript.ndjson)
t0=$(now)
/usr/bin/time -f '%M' -o rss.txt "$ci" run bench -m 1 -v --claude ./cat-claude --no-keyboard > /dev/null 2>&1 || true
t1=$(now)
el=$(ms "$t0" "$t1")
echo "claude-iterate -v: ${el} ms, $(echo "scale=1; $size / 1048576 / ($el / 1000)" | bc) MB/s, peak RSS $(( $(cat rss.txt) / 1024 )) MiB"
if command -v jq > /dev/null; then
	t0=$(now)
	jq -r 'select(.type=="user") | .message.content[0].content' transcript.ndjson > /dev/null
	t1=$(now)
	jel=$(ms "$t0" "$t1")
	echo "jq pipeline:       ${jel} ms; claude-iterate is $(echo "scale=1; $jel / $el" | bc)x faster"
else
	echo "jq not installed: no comparison (apt-get install jq)"
fi

echo "== 3. command latency (mean of 100)"
t0=$(now); for i in $(seq 100); do "$ci" stop bench > /dev/null; done; t1=$(now)
echo "stop:   $(echo "scale=3; $(ms "$t0" "$t1") / 100" | bc) ms"
t0=$(now); for i in $(seq 100); do "$ci" --help > /dev/null; done; t1=$(now)
echo "--help: $(echo "scale=3; $(ms "$t0" "$t1") / 100" | bc) ms"
"$ci" stop bench --cancel > /dev/null

# A background job of this non-interactive shell starts with SIGINT ignored,
# which the tool keeps ignored (SPEC §6.2): measure with SIGTERM.
echo "== 4. SIGTERM to exit (agent exits at once on SIGTERM)"
cat > int-claude <<'AGENT'
#!/bin/sh
cat > /dev/null
trap 'echo "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true}"; exit 0' TERM
echo '{"type":"system","subtype":"init"}'
while :; do sleep 0.01; done
AGENT
chmod +x int-claude
total=0
for i in 1 2 3 4 5; do
	"$ci" run bench -m 1 -q --claude ./int-claude --no-keyboard 2> /dev/null &
	pid=$!
	until grep -q 'CLAUDE OUTPUT' claude-iterate/workspaces/bench/logs/*.log 2> /dev/null && [ "$(ls claude-iterate/workspaces/bench/logs | wc -l)" -ge $((i + 2)) ]; do sleep 0.01; done
	sleep 0.1
	t0=$(now); kill -TERM "$pid"; wait "$pid" || true; t1=$(now)
	total=$(echo "$total + $(ms "$t0" "$t1")" | bc)
done
echo "kill -TERM to exit (mean of 5): $(echo "scale=3; $total / 5" | bc) ms"
