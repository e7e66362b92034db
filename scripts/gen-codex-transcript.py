#!/usr/bin/env python3
"""Writes a realistic `codex exec --json` transcript for scripts/bench.sh.

Usage: gen-codex-transcript.py OUT MIB

The events are the real CLI's (codex-rs/exec/src/exec_events.rs, as
codexstream.go reads them): thread.started, turn.started, then turns of a
reasoning item, a command (item.started, then item.completed with its
aggregated output: test runs, file listings, source code with quotes, tabs,
backslashes and non-ASCII text), now and then a file_change, and an
agent_message; the file ends with turn.completed and its usage. The same
arguments always give the same file (codexstream_test.go's
genCodexTranscript makes the same kind for the Go benchmark).
"""

import json
import random
import sys


def main():
    out, mib = sys.argv[1], float(sys.argv[2])
    size = int(mib * (1 << 20))
    rng = random.Random(29)
    n = 0
    item = 0

    def code(lines):
        return "".join(
            '\tif err := step%d(ctx, "naïve \\"quoted\\" value"); err != nil {\t// line %d\n' % (rng.randrange(1000), i)
            for i in range(lines)
        )

    with open(out, "w", encoding="utf-8") as f:
        def emit(v):
            nonlocal n
            line = json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n"
            f.write(line)
            n += len(line.encode("utf-8"))

        emit({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
        emit({"type": "turn.started"})
        commands = ["bash -lc 'go test ./...'", "bash -lc 'sed -n 1,200p src/server.go'", "bash -lc 'rg -n handler src'", "bash -lc ls"]
        while n < size:
            item += 1
            emit({"type": "item.completed", "item": {"id": "item_%d" % item, "type": "reasoning",
                  "text": "**Checking the tests**\n\nI need to look at " + "the failing case and its fixture " * (1 + rng.randrange(8))}})
            item += 1
            cid, cmd = "item_%d" % item, rng.choice(commands)
            emit({"type": "item.started", "item": {"id": cid, "type": "command_execution", "command": cmd,
                  "aggregated_output": "", "exit_code": None, "status": "in_progress"}})
            ok = rng.randrange(5) != 0
            emit({"type": "item.completed", "item": {"id": cid, "type": "command_execution", "command": cmd,
                  "aggregated_output": code(5 + rng.randrange(300)), "exit_code": 0 if ok else 1,
                  "status": "completed" if ok else "failed"}})
            if rng.randrange(3) == 0:
                item += 1
                emit({"type": "item.completed", "item": {"id": "item_%d" % item, "type": "file_change",
                      "changes": [{"path": "/home/dev/project/src/server.go", "kind": "update"}], "status": "completed"}})
            item += 1
            emit({"type": "item.completed", "item": {"id": "item_%d" % item, "type": "agent_message",
                  "text": "I changed the handler; " + "the tests now cover it. " * (1 + rng.randrange(6))}})
        emit({"type": "turn.completed", "usage": {"input_tokens": 1234567, "cached_input_tokens": 1100000, "output_tokens": 23456}})


if __name__ == "__main__":
    main()
