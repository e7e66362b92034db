#!/usr/bin/env python3
"""Writes a realistic stream-json transcript for scripts/bench.sh.

Usage: gen-transcript.py OUT MIB [FIXTURES_DIR]

The events are the real CLI's, taken from the fixtures (testdata/fixtures,
captured from `claude -p --output-format stream-json --verbose`): each line
is a copy of a fixture line of the same kind, with its text, tool input and
tool result replaced by generated ones of realistic sizes. A turn is what
the agent does in a session: thinking, some text, a tool call (Read, Bash,
Edit, Grep, Glob, Write, TodoWrite, now and then a Task sub-agent whose
events carry parent_tool_use_id), and the tool's result, which the CLI
writes twice (message.content for the model, tool_use_result for the UI:
Read gives the numbered file, Edit the whole original file and a patch).
File contents are source code with quotes, tabs, backslashes and some
non-ASCII text, so strings are escaped as they are in real transcripts.
The file starts with the fixtures' system/init line and ends with their
result line. The same arguments always give the same file.
"""

import copy
import glob
import json
import math
import os
import random
import sys


def load_templates(d):
    t = {}
    tool_of = {}
    for path in sorted(glob.glob(os.path.join(d, "*.ndjson"))):
        for line in open(path, encoding="utf-8"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            typ = e.get("type")
            msg = e.get("message") if isinstance(e.get("message"), dict) else {}
            blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
            if typ == "system" and e.get("subtype") == "init":
                t.setdefault("init", e)
            elif typ == "result" and e.get("subtype") == "success" and not e.get("is_error"):
                t.setdefault("result", e)
            elif typ == "assistant" and len(blocks) == 1:
                b = blocks[0]
                if b.get("type") == "text":
                    t.setdefault("text", e)
                elif b.get("type") == "tool_use":
                    tool_of[b.get("id")] = b.get("name")
                    t.setdefault(("use", b.get("name")), e)
            elif typ == "user" and len(blocks) == 1 and blocks[0].get("type") == "tool_result":
                b = blocks[0]
                name = tool_of.get(b.get("tool_use_id"))
                if name and not b.get("is_error") and isinstance(e.get("tool_use_result"), dict):
                    t.setdefault(("result", name), e)
    return t


WORDS = ("the parser reads each line and hands the value to the caller; when the input is "
         "empty it returns an error instead of a zero value so that callers can tell them "
         "apart, which the test checks with a table of cases").split()
UNICODE = ["é", "→", "–", "…", "ü", "✓", "日本"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.n = 0

    def size(self, median, lo, hi):
        # Log-normal sizes: most results are small, a few are big.
        return int(min(hi, max(lo, median * math.exp(self.r.gauss(0, 1.2)))))

    def words(self, nbytes):
        out, n = [], 0
        while n < nbytes:
            w = self.r.choice(WORDS)
            if self.r.random() < 0.03:
                w = self.r.choice(UNICODE)
            out.append(w)
            n += len(w) + 1
        return " ".join(out)

    def code_line(self):
        r = self.r
        k = r.random()
        ind = "\t" * r.randint(0, 3)
        if k < 0.15:
            return ""
        if k < 0.35:
            return ind + 'return fmt.Errorf("parse %q: %w", name, err)'
        if k < 0.5:
            return ind + "// " + self.words(r.randint(20, 70))
        if k < 0.6:
            return ind + 'if strings.HasPrefix(line, "\\\\") || line == "\\"" {'
        if k < 0.7:
            return ind + 'msg := "' + self.words(r.randint(10, 40)) + '"'
        return ind + "v%d := parse(b[i:j], %d) + offset * %d" % (r.randint(0, 99), r.randint(0, 999), r.randint(1, 9))

    def file(self, lines):
        return "\n".join(self.code_line() for _ in range(lines)) + "\n"

    def id(self):
        self.n += 1
        return "toolu_01Bench%08d" % self.n


def event(tpl, **over):
    e = copy.deepcopy(tpl)
    e.update(over)
    return e


def assistant(t, g, block, parent=None):
    e = copy.deepcopy(t["text"])
    e["message"]["content"] = [block]
    e["parent_tool_use_id"] = parent
    return e


def turn(t, g, parent=None):
    """One agent turn: the events, in order."""
    r = g.r
    out = []
    if r.random() < 0.4:
        out.append(assistant(t, g, {"type": "thinking", "thinking": g.words(g.size(600, 50, 8000)),
                                    "signature": "Eq" + "x" * r.randint(200, 600)}, parent))
    if r.random() < 0.5:
        out.append(assistant(t, g, {"type": "text", "text": g.words(g.size(300, 20, 4000))}, parent))
    tool = r.choices(["Read", "Bash", "Edit", "Grep", "Glob", "Write", "TodoWrite", "Task"],
                     [33, 25, 15, 10, 5, 5, 5, 2])[0]
    if parent and tool == "Task":
        tool = "Read"
    tid = g.id()
    path = "/home/dev/project/internal/%s/%s.go" % (r.choice(["parse", "loop", "store", "api"]),
                                                    r.choice(["main", "util", "reader", "writer_test"]))
    use = copy.deepcopy(t[("use", tool)])
    res = copy.deepcopy(t[("result", tool)])
    use["parent_tool_use_id"] = parent
    res["parent_tool_use_id"] = parent
    ub = use["message"]["content"][0]
    ub["id"] = tid
    rb = res["message"]["content"][0]
    rb["tool_use_id"] = tid
    tur = res["tool_use_result"]
    if tool == "Read":
        text = g.file(g.size(150, 5, 2000))
        lines = text.split("\n")[:-1]
        ub["input"] = {"file_path": path}
        rb["content"] = "".join("%6d\t%s\n" % (i + 1, l) for i, l in enumerate(lines))
        tur["file"] = {"filePath": path, "content": text, "numLines": len(lines), "startLine": 1,
                       "totalLines": len(lines)}
    elif tool == "Bash":
        outp = g.file(g.size(40, 1, 800))
        ub["input"] = {"command": r.choice(["go test ./...", "make build 2>&1 | tail -n 50",
                                            "grep -rn \"TODO\" internal/"]),
                       "description": g.words(20)}
        rb["content"] = outp
        tur.update({"stdout": outp, "stderr": ""})
    elif tool == "Edit":
        orig = g.file(g.size(200, 10, 2000))
        old, new = g.code_line(), g.code_line()
        ub["input"] = {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}
        rb["content"] = "The file %s has been updated. Here's the result of running `cat -n` on a snippet:\n%s" % (
            path, "".join("%6d\t%s\n" % (i + 40, g.code_line()) for i in range(8)))
        tur.update({"filePath": path, "oldString": old, "newString": new, "originalFile": orig,
                    "structuredPatch": [{"oldStart": 48, "oldLines": 1, "newStart": 48, "newLines": 1,
                                         "lines": ["-" + old, "+" + new]}]})
    elif tool == "Write":
        content = g.file(g.size(80, 5, 1500))
        ub["input"] = {"file_path": path, "content": content}
        rb["content"] = "File created successfully at: " + path
        tur.update({"filePath": path, "content": content})
    elif tool == "Grep":
        hits = "".join("%s:%d:%s\n" % (path, r.randint(1, 900), g.code_line()) for _ in range(g.size(20, 1, 400)))
        ub["input"] = {"pattern": "func Parse", "path": "/home/dev/project", "output_mode": "content", "-n": True}
        rb["content"] = hits
        tur.update({"content": hits, "numLines": hits.count("\n")})
    elif tool == "Glob":
        names = ["/home/dev/project/internal/p%d/f%d_test.go" % (i % 17, i) for i in range(g.size(30, 1, 500))]
        ub["input"] = {"pattern": "**/*_test.go"}
        rb["content"] = "\n".join(names)
        tur.update({"filenames": names, "numFiles": len(names)})
    elif tool == "TodoWrite":
        todos = [{"content": g.words(30), "status": r.choice(["pending", "in_progress", "completed"]),
                  "activeForm": g.words(30)} for _ in range(r.randint(2, 8))]
        ub["input"] = {"todos": todos}
        rb["content"] = "Todos have been modified successfully."
        tur.update({"oldTodos": todos[:1], "newTodos": todos})
    elif tool == "Task":
        ub["input"] = {"description": g.words(25), "prompt": g.words(200), "subagent_type": "Explore"}
        out.append(use)
        for _ in range(r.randint(2, 5)):
            out.extend(turn(t, g, parent=tid))
        rb["content"] = [{"type": "text", "text": g.words(g.size(400, 50, 3000))}]
        tur["content"] = rb["content"]
        out.append(res)
        return out
    out.append(use)
    out.append(res)
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: gen-transcript.py OUT MIB [FIXTURES_DIR]")
    target = int(float(sys.argv[2]) * (1 << 20))
    d = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "testdata", "fixtures")
    t = load_templates(d)
    g = Gen(22)
    size = 0
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        def put(e):
            nonlocal size
            line = json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
            f.write(line)
            size += len(line.encode("utf-8"))
        put(t["init"])
        while size < target:
            for e in turn(t, g):
                put(e)
        put(t["result"])


if __name__ == "__main__":
    main()
