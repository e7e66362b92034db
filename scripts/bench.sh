#!/usr/bin/env bash
# End-to-end measurements of SPEC §11, against a no-op agent, on this machine:
#   1. per-iteration overhead: claude-iterate vs a bash for-loop running the same agent
#   2. stream-json in verbose mode: throughput and peak RSS on a 100 MB transcript
#      of 1 MiB lines and on one 100 MiB line, and jq -c on the same files (if
#      jq is installed)
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

echo "== 2. stream-json, verbose, 100 MB of 1 MiB lines; then one 100 MiB line (over the cap)"
python3 - "$tmp" <<'PY'
import json, sys
line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "a line of file content\n" * ((1 << 20) // 23)}]}})
use = json.dumps({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/x"}}]}})
result = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "ok"})
with open(sys.argv[1] + "/transcript.ndjson", "w") as f:
    size = 0
    while size < 100 << 20:
        f.write(use + "\n" + line + "\n")
        size += len(line) + len(use) + 2
    f.write(result + "\n")
with open(sys.argv[1] + "/hugeline.ndjson", "w") as f:
    f.write(use + "\n")
    f.write('{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"' + "x" * (100 << 20) + '"}]}}\n')
    f.write(result + "\n")
PY
for t in transcript hugeline; do
	printf '#!/bin/sh\ncat > /dev/null\nexec cat %s\n' "$tmp/$t.ndjson" > "cat-$t"
	chmod +x "cat-$t"
	size=$(stat -c %s "$t.ndjson")
	t0=$(now)
	/usr/bin/time -f '%M' -o rss.txt "$ci" run bench -m 1 -v --claude "./cat-$t" --no-keyboard > /dev/null 2>&1 || true
	t1=$(now)
	el=$(ms "$t0" "$t1")
	echo "$t: claude-iterate -v: ${el} ms, $(echo "scale=1; $size / 1000000 / ($el / 1000)" | bc) MB/s, peak RSS $(( $(cat rss.txt) / 1024 )) MiB"
	if command -v jq > /dev/null; then
		t0=$(now)
		jq -c . "$t.ndjson" > /dev/null
		t1=$(now)
		jel=$(ms "$t0" "$t1")
		echo "$t: jq -c:            ${jel} ms; claude-iterate is $(echo "scale=1; $jel / $el" | bc)x faster"
	else
		echo "jq not installed: no comparison (apt-get install jq)"
	fi
done

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
