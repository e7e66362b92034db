#!/usr/bin/env bash
# End-to-end performance of claude-iterate, as users run it (the static
# binary the README's install makes, CGO_ENABLED=0, against no-op agents:
# no AI), next to what people use
# today. It prints the README's Performance table, in markdown, with the
# date, the machine (cores, CPU model, load) and the Go version: on a quiet
# machine, paste its output over the README's table.
#
# Every timed measure runs in ROUNDS interleaved rounds (the tool and its
# baseline one after the other, the order alternating) and shows the
# minimum and the median. CPU time is each process tree's own (getrusage
# of the waited-for tree, or /proc/PID/task/*/schedstat for a running
# process), so it holds on a busy machine where wall time does not; a load
# above 0.5 (at the start or the end) is printed with a warning.
#
#   1. start-up: `stop` and `--help`, next to /bin/true; `ps` with 50
#      runs registered
#   2. overhead per iteration over a bash for-loop running the same agent
#      (wall and CPU), and the floor: a Go program running the agent with
#      os/exec and the same process setup
#   3. verbose stream-json on a realistic 50 MiB transcript
#      (scripts/gen-transcript.py: tool calls, tool results, text, thinking,
#      sub-agents, in the fixtures' shapes): MB/s and peak RSS, against jq -c
#      on the same file; with the binary's GOMAXPROCS and with all cores;
#      and the same for a 50 MiB codex exec --json transcript
#      (scripts/gen-codex-transcript.py), run with --agent codex
#   4. 20 runs at once: CPU per iteration, with the binary's GOMAXPROCS and
#      with all cores, next to one run alone
#   5. peak RSS for one line just under the 64 MiB line cap (an agent
#      text, an Edit's strings, a tool result, and a text line the fast
#      decoder leaves to encoding/json) and one 100 MiB line, over the cap,
#      skipped as it streams
#   6. the git work of an iteration in a worktree (status scan and commit)
#      on a 10,000-file repository (BenchmarkGitIteration): an iteration
#      that edits three files, and one that edits two and makes one; wall
#      time and git's CPU time
#   7. idle: the tool's CPU time, wake-ups (bursts of CPU use, sampled every
#      10 ms) and its threads' voluntary context switches per second while
#      the agent works, no terminal, over 12 s (the tool's slowest poll is
#      5 s)
#
# Usage: scripts/bench.sh [ITERATIONS [ROUNDS]]   (default 300 9)
# Needs: go, python3, jq. Takes two to six minutes, by the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
n=${1:-300}
rounds=${2:-9}
many=20     # runs at once
many_n=40   # iterations of each of them
for tool in go python3 jq; do
	command -v "$tool" > /dev/null || { echo "bench.sh: $tool is needed" >&2; exit 1; }
done
load_start=$(cut -d' ' -f1 /proc/loadavg)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
CGO_ENABLED=0 go build -o "$tmp/bin/claude-iterate" .
ci=$tmp/bin/claude-iterate

# Two helpers in Go: the floor (what any Go supervisor pays to run the agent
# n times), and measure, which runs a command and appends to a file its wall
# time (ms), its tree's CPU time (user + system, ms) and peak RSS (KiB).
mkdir "$tmp/helpers"
cat > "$tmp/helpers/floor.go" <<'GO'
//go:build floor

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
cat > "$tmp/helpers/measure.go" <<'GO'
//go:build measure

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// measure OUT CMD ARGS...: runs CMD (its stdout and stderr to /dev/null)
// and appends "wall_ms cpu_ms maxrss_kib" to OUT.
func main() {
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	t0 := time.Now()
	cmd.Run()
	wall := time.Since(t0)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	f, err := os.OpenFile(os.Args[1], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "%.3f %.3f %d\n", wall.Seconds()*1000, cpu.Seconds()*1000, ru.Maxrss)
	f.Close()
}
GO
# The start-up floor of any Go program: one that does nothing, built alike.
cat > "$tmp/helpers/empty.go" <<'GO'
//go:build empty

package main

func main() {}
GO
(cd "$tmp/helpers" && go mod init helpers > /dev/null 2>&1 &&
	CGO_ENABLED=0 go build -tags floor -o "$tmp/bin/floor" floor.go && CGO_ENABLED=0 go build -tags measure -o "$tmp/bin/measure" measure.go &&
	CGO_ENABLED=0 go build -tags empty -o "$tmp/bin/empty" empty.go)
measure=$tmp/bin/measure

# col FILE K: column K of FILE's lines. min, median: of numbers on stdin.
col() { awk -v k="$2" '{ print $k }' "$1"; }
min() { sort -g | head -n1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
signed() { awk -v x="$1" 'BEGIN { printf "%+.3f", x }'; }
# minmed FILE K DIV [DIGITS]: "min / median" of column K divided by DIV.
minmed() {
	local a b
	a=$(col "$1" "$2" | min) b=$(col "$1" "$2" | median)
	echo "$(calc "$a / $3" "${4:-2}") / $(calc "$b / $3" "${4:-2}")"
}
# pairdiff A B K DIV: "min / median" of (A - B) per round, column K, over DIV.
pairdiff() {
	paste -d' ' <(col "$1" "$3") <(col "$2" "$3") | awk -v d="$4" '{ printf "%.6f\n", ($1 - $2) / d }' > "$tmp/diff"
	echo "$(signed "$(min < "$tmp/diff")") / $(signed "$(median < "$tmp/diff")")"
}

cat > "$tmp/noop-claude" <<'AGENT'
#!/bin/sh
cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0}'
AGENT
chmod +x "$tmp/noop-claude"
cd "$tmp"
printf 'benchmark task\n' > task.md
"$ci" init bench --instructions task.md > /dev/null
# mkagent NAME FILE: an agent that prints FILE.
mkagent() { printf '#!/bin/sh\ncat > /dev/null\nexec cat %s\n' "$2" > "$1"; chmod +x "$1"; }

echo "bench.sh: start-up" >&2
for r in $(seq "$rounds"); do
	"$measure" true.txt sh -c 'for i in $(seq 100); do /bin/true; done'
	"$measure" empty.txt sh -c "for i in \$(seq 100); do $tmp/bin/empty; done"
	"$measure" stop.txt sh -c "for i in \$(seq 100); do $ci stop bench; done"
	"$measure" help.txt sh -c "for i in \$(seq 100); do $ci --help; done"
done
"$ci" stop bench --cancel > /dev/null

echo "bench.sh: ps with 50 runs registered" >&2
# 50 entries in a registry of its own, all of one live process (a sleeper:
# its pid and start time), each with a state file the size of a real one.
sleep 600 &
sleeper=$!
python3 - "$tmp/state" "$sleeper" "$(awk '{ print $22 }' "/proc/$sleeper/stat")" <<'PY'
import json, os, sys, datetime
state, pid, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = os.path.join(state, "claude-iterate", "runs")
os.makedirs(runs)
started = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
for i in range(50):
    ws = os.path.join(state, "project", "claude-iterate", "workspaces", "task%02d" % i)
    os.makedirs(ws)
    st = {"pid": pid, "workspace": "task%02d" % i, "mode": "loop", "started": started, "phase": "running",
          "iteration": 12, "max": 50, "totals": {"iterations": 11, "totalCostUsd": 1.23, "durationMs": 600000},
          "tasks": {"completed": 11, "total": 30}, "updated": started,
          "activity": {"kind": "tool", "tool": "Bash", "arg": "go test ./...", "since": started},
          "lines": [{"seq": j, "text": "✓ Iteration %d/50 done in 52s, $0.1100 · 11/30 items" % j} for j in range(1, 13)]}
    json.dump(st, open(os.path.join(ws, ".run-state.json"), "w"), indent=2)
    e = {"id": "%d-%d" % (pid, i + 1), "pid": pid, "start": start, "project": os.path.join(state, "project"),
         "workspace": "task%02d" % i, "dir": ws, "stateDir": ws, "agent": "claude",
         "state": os.path.join(ws, ".run-state.json"), "started": started}
    json.dump(e, open(os.path.join(runs, e["id"] + ".json"), "w"), indent=2)
PY
[ "$(XDG_STATE_HOME=$tmp/state "$ci" ps | wc -l)" = 51 ] || { echo "bench.sh: ps does not show the 50 runs" >&2; exit 1; }
for r in $(seq "$rounds"); do
	XDG_STATE_HOME=$tmp/state "$measure" ps.txt sh -c "for i in \$(seq 20); do $ci ps; done"
done
kill "$sleeper"

echo "bench.sh: overhead per iteration ($n iterations, $rounds rounds)" >&2
cat > loop.sh <<SH
for i in \$(seq $n); do ./noop-claude -p --output-format stream-json --verbose < task.md > /dev/null; done
SH
for r in $(seq "$rounds"); do
	run_tool() { "$measure" tool.txt "$ci" run bench -m "$n" --no-delay --stagnation-threshold 0 -q --claude ./noop-claude --no-keyboard; }
	if [ $((r % 2)) = 1 ]; then
		"$measure" bash.txt bash loop.sh; "$measure" floor.txt bin/floor ./noop-claude "$n"; run_tool
	else
		run_tool; "$measure" floor.txt bin/floor ./noop-claude "$n"; "$measure" bash.txt bash loop.sh
	fi
done

echo "bench.sh: stream (realistic transcript)" >&2
python3 "$repo/scripts/gen-transcript.py" transcript.ndjson 50 "$repo/testdata/fixtures"
size=$(stat -c %s transcript.ndjson)
mkagent cat-claude "$tmp/transcript.ndjson"
cores=$(nproc)
for r in $(seq "$rounds"); do
	"$measure" stream.txt "$ci" run bench -m 1 -v --claude ./cat-claude --no-keyboard
	"$measure" jq.txt jq -c . transcript.ndjson
	GOMAXPROCS=$cores "$measure" stream-all.txt "$ci" run bench -m 1 -v --claude ./cat-claude --no-keyboard
done
# mbs FILE: "min / median" MB/s: the best time gives the best speed.
mbs() {
	local a b
	a=$(col "$1" 1 | min) b=$(col "$1" 1 | median)
	echo "$(calc "$size / 1e3 / $a" 0) / $(calc "$size / 1e3 / $b" 0)"
}
jq_ratio="$(calc "$(col jq.txt 1 | min) / $(col stream.txt 1 | min)" 1)× / $(calc "$(col jq.txt 1 | median) / $(col stream.txt 1 | median)" 1)×"

echo "bench.sh: stream (realistic codex transcript)" >&2
python3 "$repo/scripts/gen-codex-transcript.py" codex.ndjson 50
codex_size=$(stat -c %s codex.ndjson)
mkagent cat-codex "$tmp/codex.ndjson"
for r in $(seq "$rounds"); do
	CLAUDE_ITERATE_CODEX=./cat-codex "$measure" codex.txt "$ci" run bench -m 1 -v --agent codex --no-keyboard
	"$measure" jq-codex.txt jq -c . codex.ndjson
done
codex_mbs="$(calc "$codex_size / 1e3 / $(col codex.txt 1 | min)" 0) / $(calc "$codex_size / 1e3 / $(col codex.txt 1 | median)" 0)"
codex_jq_mbs="$(calc "$codex_size / 1e3 / $(col jq-codex.txt 1 | min)" 0) / $(calc "$codex_size / 1e3 / $(col jq-codex.txt 1 | median)" 0)"
codex_ratio="$(calc "$(col jq-codex.txt 1 | min) / $(col codex.txt 1 | min)" 1)× / $(calc "$(col jq-codex.txt 1 | median) / $(col codex.txt 1 | median)" 1)×"
codex_rss=$(calc "$(col codex.txt 3 | min) / 1024" 0)
jq_cpu_ratio=$(calc "$(col jq.txt 2 | median) / $(col stream.txt 2 | median)" 1)
stream_rss=$(calc "$(col stream.txt 3 | min) / 1024" 0)

echo "bench.sh: $many runs at once ($many_n iterations each)" >&2
for i in $(seq "$many"); do "$ci" init "many$i" --instructions task.md > /dev/null; done
cat > many.sh <<SH
for i in \$(seq $many); do "$ci" run "many\$i" -m $many_n --no-delay --stagnation-threshold 0 -q --claude ./noop-claude --no-keyboard < /dev/null > /dev/null 2>&1 & done
wait
SH
cat > manybash.sh <<SH
for i in \$(seq $many); do bash -c 'for j in \$(seq $many_n); do ./noop-claude -p --output-format stream-json --verbose < task.md > /dev/null; done' & done
wait
SH
for r in $(seq "$rounds"); do
	"$measure" many.txt bash many.sh
	GOMAXPROCS=$cores "$measure" many-all.txt bash many.sh
	"$measure" many-bash.txt bash manybash.sh
done
iters=$((many * many_n))

echo "bench.sh: big lines" >&2
cap_mib=64
python3 - "$cap_mib" <<'PY'
import sys
cap = int(sys.argv[1]) << 20
row = ("word " * 200) + "\\n"  # 1002 bytes of JSON text
def line(head, tail, n):
    return head + row * ((cap - 4096 - len(head) - len(tail)) // n // len(row)) + tail
result = '{"type":"result","subtype":"success","is_error":false,"result":"ok"}\n'
with open("near-text.ndjson", "w") as f:
    f.write(line('{"type":"assistant","message":{"content":[{"type":"text","text":"', '"}]}}\n', 1) + result)
with open("near-tool.ndjson", "w") as f:
    f.write(line('{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"', '"}]}}\n', 1) + result)
half = row * ((cap - 4096) // 2 // len(row))
with open("near-edit.ndjson", "w") as f:
    f.write('{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Edit","input":{"file_path":"/x","old_string":"'
            + half + '","new_string":"' + half + '"}}]}}\n' + result)
# The same text with its key twice: the fast decoder hands it to encoding/json.
with open("near-json.ndjson", "w") as f:
    f.write(line('{"type":"assistant","message":{"content":[{"type":"text","text":"x","text":"', '"}]}}\n', 1) + result)
with open("over.ndjson", "w") as f:
    f.write('{"type":"assistant","message":{"content":[{"type":"text","text":"')
    for _ in range(100):
        f.write("x" * (1 << 20))
    f.write('"}]}}\n' + result)
PY
for k in near-text near-edit near-tool near-json over; do
	mkagent "$k-claude" "$tmp/$k.ndjson"
	"$measure" "$k.txt" "$ci" run bench -m 1 -v --claude "./$k-claude" --no-keyboard
done
rss() { calc "$(col "$1.txt" 3 | min) / 1024" 0; }

echo "bench.sh: idle (12 s)" >&2
cat > slow-claude <<'AGENT'
#!/bin/sh
cat > /dev/null
sleep 15
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok"}'
AGENT
chmod +x slow-claude
# The tool is sampled every 10 ms for 12 s: its CPU time (all its threads'
# schedstat), its wake-ups (the runs of samples in which it used CPU: each is
# the tool leaving its wait, for a look-around or a timer) and its threads'
# voluntary context switches (a wake-up of the tool is several of those: the
# Go runtime's threads hand over to each other within one).
"$ci" run bench -m 1 -q --claude ./slow-claude --no-keyboard < /dev/null > /dev/null 2>&1 &
pid=$!
sleep 1
read -r idle_cpu idle_wake idle_switch < <(python3 - "$pid" 12 <<'PY'
import glob, sys, time
pid, secs = sys.argv[1], float(sys.argv[2])
def sample():
    cpu = sw = 0
    for t in glob.glob("/proc/%s/task/*" % pid):
        try:
            cpu += int(open(t + "/schedstat").read().split()[0])
            for line in open(t + "/status"):
                if line.startswith("voluntary_ctxt_switches"):
                    sw += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return cpu, sw
cpu0, sw0 = sample()
prev_cpu = cpu0
wakes, busy, end = 0, False, time.monotonic() + secs
while time.monotonic() < end:
    time.sleep(0.01)
    cpu, sw = sample()
    if cpu > prev_cpu and not busy:
        wakes += 1
    busy, prev_cpu = cpu > prev_cpu, cpu
print("%.3f %.2f %.1f" % ((cpu - cpu0) / 1e6 / secs, wakes / secs, (sw - sw0) / secs))
PY
)
wait "$pid" || true

echo "bench.sh: git work per iteration (10,000-file repository)" >&2
# The status scan that ends an iteration (and starts the next) and the
# commit of the files it changed, in a worktree run (gitcommit.go):
# BenchmarkGitIteration, one line per round and shape of iteration (edit:
# three files edited; new: two edited and one made): wall ms, git's CPU ms.
(cd "$repo" && go test -run XXX -bench GitIteration -benchtime 30x -count "$rounds" .) |
	awk '/^BenchmarkGitIteration\// {
		split($1, name, /[\/-]/); wall = cpu = ""
		for (i = 1; i < NF; i++) { if ($(i + 1) == "ns/op") wall = $i / 1e6; if ($(i + 1) == "git-cpu-ms/op") cpu = $i }
		print wall, cpu > ("git-" name[2] ".txt")
	}'

# The 1-minute load at the end counts this script's own runs (20 at once
# among them): other work is judged by the processes runnable at the end,
# once ours have ended, sampled ten times over a second (less the sampler and its shell).
others_end=$(for _ in 1 2 3 4 5 6 7 8 9 10; do awk '/^procs_running/ { n = $2 - 2; print (n > 0 ? n : 0) }' /proc/stat; sleep 0.1; done | awk '{ s += $1 } END { printf "%.1f", s / NR }')
model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
gomax=$(grep -o 'runtime.GOMAXPROCS([^)]*)' "$repo/main.go" | head -n1 || true)
warn=""
if awk -v a="$load_start" -v b="$others_end" 'BEGIN { exit !(a > 0.5 || b > 0.5) }'; then
	warn="**Warning: load above 0.5: other work ran during the measure; the wall times are not reliable.**"
	echo "bench.sh: warning: load $load_start at the start, $others_end other runnable processes at the end (above 0.5): wall times are not reliable" >&2
fi

cat <<EOF
Measured by \`scripts/bench.sh $n $rounds\` on $(date -u +%Y-%m-%d), $(nproc) cores ($model),
load $load_start at the start and $others_end other runnable processes at the end, $(go version | awk '{ print $3 }'); each figure is the
minimum / median of $rounds interleaved rounds.${warn:+

$warn}

| measure | claude-iterate | baseline | target |
|---|---|---|---|
| start-up: \`stop\`, \`--help\` | $(minmed stop.txt 1 100) ms, $(minmed help.txt 1 100) ms | \`/bin/true\` $(minmed true.txt 1 100) ms; an empty Go program $(minmed empty.txt 1 100) ms | ≤ 5 ms |
| \`ps\` with 50 runs registered | $(minmed ps.txt 1 20) ms | | < 50 ms |
| overhead per iteration over a bash \`for\` loop running the same agent, wall | $(pairdiff tool.txt bash.txt 1 "$n") ms | Go os/exec floor $(pairdiff floor.txt bash.txt 1 "$n") ms | ≤ +0.3 ms |
| the same, CPU time | $(pairdiff tool.txt bash.txt 2 "$n") ms | Go os/exec floor $(pairdiff floor.txt bash.txt 2 "$n") ms | |
| verbose stream-json, realistic 50 MiB transcript (\`scripts/gen-transcript.py\`) | $(mbs stream.txt) MB/s, ${stream_rss} MiB peak RSS | \`jq -c\` $(mbs jq.txt) MB/s: $jq_ratio faster (CPU: ${jq_cpu_ratio}×) | ≥ 200 MB/s, ≥ 4× jq |
| the same with GOMAXPROCS=$cores | $(mbs stream-all.txt) MB/s | | |
| verbose codex exec --json, realistic 50 MiB transcript (\`scripts/gen-codex-transcript.py\`) | $codex_mbs MB/s, ${codex_rss} MiB peak RSS | \`jq -c\` $codex_jq_mbs MB/s: $codex_ratio faster | ≥ 4× jq |
| $many runs at once, CPU per iteration | $(minmed many.txt 2 "$iters" 3) ms | GOMAXPROCS=$cores: $(minmed many-all.txt 2 "$iters" 3) ms; bash loops: $(minmed many-bash.txt 2 "$iters" 3) ms; one run: $(minmed tool.txt 2 "$n" 3) ms | |
| one line just under the $cap_mib MiB cap: agent text, Edit strings, tool result; a text line left to encoding/json | $(rss near-text), $(rss near-edit), $(rss near-tool); $(rss near-json) MiB peak RSS | | ≤ $((2 * cap_mib)) MiB |
| one 100 MiB line (over the cap, skipped as it streams) | $(rss over) MiB peak RSS | | ≤ 100 MiB |
| git work per iteration in a worktree, 10,000-file repository: status scan and commit (\`BenchmarkGitIteration\`): 3 files edited; 2 edited and 1 made | $(minmed git-edit.txt 1 1) ms (git CPU $(minmed git-edit.txt 2 1) ms); $(minmed git-new.txt 1 1) ms (git CPU $(minmed git-new.txt 2 1) ms) | | ≤ 60 ms |
| idle, agent working, no terminal (12 s, sampled every 10 ms) | $idle_cpu ms CPU per second; $idle_wake wake-ups per second ($idle_switch thread switches) | | ≤ 2 wake-ups per second |

The binary sets ${gomax:-no GOMAXPROCS} for the commands that mostly wait (run among them); "GOMAXPROCS=$cores" rows override it with the environment.
EOF
