#!/usr/bin/env bash
# End-to-end performance of claude-iterate against no-op agents (no AI), as
# a table of ratios measured in one run on this machine, each the best of 3
# interleaved rounds:
#
#   1. overhead per iteration over a bash for-loop running the same agent,
#      and the floor: a Go program running it with os/exec and the same
#      process setup (own session, pipes, prompt on stdin, stdout read)
#   2. verbose stream-json throughput and peak RSS on a 50 MB transcript of
#      1 MiB lines, against jq -c on the same file
#   3. peak RSS reading one 100 MiB event line (over the line cap)
#   4. wake-ups of the tool per second while the agent works, no terminal
#   5. 'stop' and '--help' latency
#
# The last column compares with testdata/bench-baseline.txt (the numbers of
# an earlier run on this kind of machine); --save rewrites that file.
#
# Usage: scripts/bench.sh [--save] [ITERATIONS]   (default 200)
# Needs: go, python3, jq; GNU time for peak RSS (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
save=false
if [ "${1:-}" = --save ]; then save=true; shift; fi
n=${1:-200}
rounds=3
for tool in python3 jq /usr/bin/time; do
	command -v "$tool" > /dev/null || { echo "bench.sh: $tool is needed" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
go build -o "$tmp/bin/claude-iterate" .
ci=$tmp/bin/claude-iterate

# The floor: what any Go supervisor pays to run the agent n times.
mkdir "$tmp/floor"
cat > "$tmp/floor/main.go" <<'GO'
package main

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[1], "-p", "--output-format", "stream-json", "--verbose")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Stdin = strings.NewReader("benchmark task\n")
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		io.Copy(io.Discard, out)
		cmd.Wait()
	}
}
GO
(cd "$tmp/floor" && go mod init floor > /dev/null 2>&1 && go build -o "$tmp/bin/floor" .)

now() { date +%s%N; }
# ms T0 T1: milliseconds between two now() readings, with decimals.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }
min() { printf '%s\n' "$@" | sort -g | head -n1; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
signed() { awk -v x="$1" 'BEGIN { printf "%+.3f", x }'; }

cat > "$tmp/noop-claude" <<'AGENT'
#!/bin/sh
cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0}'
AGENT
chmod +x "$tmp/noop-claude"
cd "$tmp"
printf 'benchmark task\n' > task.md
"$ci" init bench --instructions task.md > /dev/null

# 1. Loop overhead.
bash_t=() floor_t=() tool_t=()
for r in $(seq $rounds); do
	t0=$(now)
	for i in $(seq "$n"); do ./noop-claude -p --output-format stream-json --verbose < task.md > /dev/null; done
	t1=$(now)
	bin/floor ./noop-claude "$n"
	t2=$(now)
	"$ci" run bench -m "$n" --no-delay -q --claude ./noop-claude --no-keyboard 2> /dev/null || true
	t3=$(now)
	bash_t+=("$(ms "$t0" "$t1")") floor_t+=("$(ms "$t1" "$t2")") tool_t+=("$(ms "$t2" "$t3")")
done
bash_ms=$(min "${bash_t[@]}") floor_ms=$(min "${floor_t[@]}") tool_ms=$(min "${tool_t[@]}")
overhead=$(calc "($tool_ms - $bash_ms) / $n" 3)
floor_over=$(calc "($floor_ms - $bash_ms) / $n" 3)

# 2. Stream-json throughput, verbose.
python3 - transcript.ndjson 50 <<'PY'
import json, sys
line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "a line of file content\n" * ((1 << 20) // 23)}]}})
use = json.dumps({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/x"}}]}})
with open(sys.argv[1], "w") as f:
    size = 0
    while size < int(sys.argv[2]) << 20:
        f.write(use + "\n" + line + "\n")
        size += len(line) + len(use) + 2
    f.write(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "ok"}) + "\n")
PY
printf '#!/bin/sh\ncat > /dev/null\nexec cat %s\n' "$tmp/transcript.ndjson" > cat-claude
chmod +x cat-claude
size=$(stat -c %s transcript.ndjson)
stream_t=() jq_t=() rss=()
for r in $(seq $rounds); do
	t0=$(now)
	/usr/bin/time -f '%M' -o rss.txt "$ci" run bench -m 1 -v --claude ./cat-claude --no-keyboard > /dev/null 2>&1 || true
	t1=$(now)
	jq -c . transcript.ndjson > /dev/null
	t2=$(now)
	stream_t+=("$(ms "$t0" "$t1")") jq_t+=("$(ms "$t1" "$t2")") rss+=("$(tail -n1 rss.txt)")
done
stream_ms=$(min "${stream_t[@]}") jq_ms=$(min "${jq_t[@]}")
mbs=$(calc "$size / 1e6 / ($stream_ms / 1000)" 0)
jq_mbs=$(calc "$size / 1e6 / ($jq_ms / 1000)" 0)
stream_rss=$(( $(min "${rss[@]}") / 1024 ))

# 3. One 100 MiB line.
python3 - bigline.ndjson <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"type":"assistant","message":{"content":[{"type":"text","text":"')
    chunk = "x" * (1 << 20)
    for _ in range(100):
        f.write(chunk)
    f.write('"}]}}\n{"type":"result","subtype":"success","is_error":false,"result":"ok"}\n')
PY
printf '#!/bin/sh\ncat > /dev/null\nexec cat %s\n' "$tmp/bigline.ndjson" > big-claude
chmod +x big-claude
/usr/bin/time -f '%M' -o rss.txt "$ci" run bench -m 1 -q --claude ./big-claude --no-keyboard > /dev/null 2>&1 || true
bigline_rss=$(( $(tail -n1 rss.txt) / 1024 ))

# 4. Wake-ups while the agent works (no terminal): voluntary context
# switches (each one a thread going back to sleep after a wake-up) of all
# the tool's threads over 3 seconds, once the iteration is under way.
cat > slow-claude <<'AGENT'
#!/bin/sh
cat > /dev/null
sleep 7
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok"}'
AGENT
chmod +x slow-claude
switches() { cat /proc/"$1"/task/*/status 2> /dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }
"$ci" run bench -m 1 -q --claude ./slow-claude --no-keyboard < /dev/null > /dev/null 2>&1 &
pid=$!
sleep 2
s0=$(switches "$pid")
sleep 3
s1=$(switches "$pid")
wait "$pid" || true
wakeups=$(calc "($s1 - $s0) / 3" 1)

# 5. Command latency.
t0=$(now); for i in $(seq 100); do "$ci" stop bench > /dev/null; done; t1=$(now)
stop_ms=$(calc "$(ms "$t0" "$t1") / 100" 2)
"$ci" stop bench --cancel > /dev/null
t0=$(now); for i in $(seq 100); do "$ci" --help > /dev/null; done; t1=$(now)
help_ms=$(calc "$(ms "$t0" "$t1") / 100" 2)

cd "$repo"
baseline=testdata/bench-baseline.txt
base() { [ -f "$baseline" ] && awk -v k="$1" '$1 == k { print $2 }' "$baseline" || true; }
vs() {
	local b; b=$(base "$1")
	if [ -n "$b" ] && awk -v b="$b" 'BEGIN { exit !(b != 0) }'; then calc "$2 / $b" 2; else echo "-"; fi
}
printf '%-44s %-22s %-34s %-18s %s\n' "measure ($(nproc) cores, best of $rounds)" "claude-iterate" "baselines" "target" "vs baseline file"
printf '%-44s %-22s %-34s %-18s %s\n' "overhead per iteration vs bash loop" "$(signed "$overhead") ms" "Go os/exec floor $(signed "$floor_over") ms" "<= +0.3 ms" "$(vs overhead_ms "$overhead")"
printf '%-44s %-22s %-34s %-18s %s\n' "verbose stream-json, 50 MB of 1 MiB lines" "${mbs} MB/s" "jq -c ${jq_mbs} MB/s ($(calc "$mbs / $jq_mbs" 1)x)" ">= 200, >= 4x jq" "$(vs stream_mbs "$mbs")"
printf '%-44s %-22s %-34s %-18s %s\n' "  peak RSS" "${stream_rss} MiB" "" "<= 32 MiB" "$(vs stream_rss_mib "$stream_rss")"
printf '%-44s %-22s %-34s %-18s %s\n' "one 100 MiB line: peak RSS" "${bigline_rss} MiB" "" "<= 100 MiB" "$(vs bigline_rss_mib "$bigline_rss")"
printf '%-44s %-22s %-34s %-18s %s\n' "wake-ups per second, agent working" "$wakeups" "bash wait: 0" "<= 2" "$(vs wakeups_per_s "$wakeups")"
printf '%-44s %-22s %-34s %-18s %s\n' "stop / --help" "${stop_ms} / ${help_ms} ms" "" "<= 5 ms" "$(vs stop_ms "$stop_ms")"
if $save; then
	{
		echo "# scripts/bench.sh --save on $(date -u +%Y-%m-%d), $(nproc) cores, $(go version | awk '{print $3}')"
		echo "overhead_ms $overhead"
		echo "stream_mbs $mbs"
		echo "stream_rss_mib $stream_rss"
		echo "bigline_rss_mib $bigline_rss"
		echo "wakeups_per_s $wakeups"
		echo "stop_ms $stop_ms"
	} > "$baseline"
	echo "saved $baseline"
fi
