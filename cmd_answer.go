package main

// This file implements the answer command: the user's answer to the
// question the agent asked in .status.json (question.go). The rules are:
// it works whether a run waits for the answer or no run is going on; it
// never writes the metadata (a run may be writing it): it appends the
// question and the answer to ANSWERS.md, and leaves the answer in the
// answer file, which the run takes, replacing an answer no run has taken
// yet; answering when no question is pending is an error; of two answers
// at once, both land, the second replacing the first (the lock of
// ANSWERS.md, writelock.go, held for the whole update); a run takes an
// answer under the same lock, and the question is checked again under it:
// an answer given once a run has taken one to the same question is
// refused, never left to be given again.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// answerUsage is the manual of the answer command.
const answerUsage = `Usage: claude-iterate answer [<workspace>] TEXT
       claude-iterate answer [<workspace>] -        (the answer from stdin)

Answers the question the agent asked by writing "question": "…" in the
workspace's .status.json. A run waiting for the answer (--on-question wait,
the default) goes on at once; if no run is going on, the next run gives
the answer to the agent. Either way the next iteration's prompt carries the
question and the answer, and both are appended, with the time, to the
workspace's ANSWERS.md. An answer no run has taken yet may be replaced: the
last one given goes to the agent; once a run has taken it, the question is
no longer pending, and a later answer is refused. A question once answered
is not waited on again unless the agent asks it again in a later iteration.
'claude-iterate status <ws>' and 'watch' show the pending question. Without
<workspace>, answers the ralph-mode run ('run --prompt') of the current
directory.

Exit status: 0 answered; 1 error, or no question is pending; 2 usage error.

Examples:
  claude-iterate answer demo 'Use PostgreSQL, not SQLite.'
  claude-iterate answer demo - < answer.txt
`

func runAnswer(env *cliEnv, args []string) error {
	fs := newFlagSet("answer")
	pos, err := parseFlags(fs, args, 2)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing the answer (TEXT, or - to read it from standard input)")
	}
	text := pos[len(pos)-1]
	w, err := workspaceFromArgs(env, pos[:len(pos)-1])
	if err != nil {
		// One argument, which names a workspace rather than a ralph-mode
		// run's answer: the answer is what is missing.
		var noRalph *noRalphError
		if len(pos) == 1 && errors.As(err, &noRalph) && pos[0] != "-" {
			if _, werr := workspaceFromArgs(env, pos); werr == nil {
				return usagef("missing the answer: claude-iterate answer %s TEXT", shellQuote(pos[0]))
			}
		}
		return err
	}
	label := wsLabel(w, pos[:len(pos)-1])
	q := w.pendingQuestion()
	if q == nil {
		return withHint(fmt.Errorf("no question is pending in workspace %s", label),
			"the agent asks by writing \"question\" in %s; '%s' shows a pending one", statusFile, wsCommand(w, "status"))
	}
	if text == "-" {
		data, err := readStream(env.stdin, maxAnswer)
		if err != nil {
			return fmt.Errorf("reading the answer from standard input: %w", err)
		}
		text = string(data)
	}
	if text, err = cleanAnswer(text); err != nil {
		return err
	}
	replaces, err := saveAnswer(w, q, text, label, relPath(env.projectRoot, w.answersPath()))
	if err != nil {
		return err
	}
	verb := "saved"
	if replaces {
		verb = "replaced"
	}
	fmt.Fprintf(env.stdout, "Answer %s for workspace: %s (and appended to %s)\n", verb, label, relPath(env.projectRoot, w.answersPath()))
	if w.runningPID() != 0 {
		fmt.Fprintf(env.stdout, "The run goes on with it at its next iteration\n")
	} else {
		fmt.Fprintf(env.stdout, "No run is going on: the next run gives it to the agent\n")
	}
	return nil
}

// cleanAnswer is text as an answer: trimmed, not empty, not too long.
func cleanAnswer(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", usagef("empty answer")
	}
	if len(text) > maxAnswer {
		return "", usagef("answer too long (%d bytes; at most %d)", len(text), maxAnswer)
	}
	return text, nil
}

// saveAnswer gives text as the answer to q, the question seen pending in
// w (label: the workspace as named), and reports whether it replaces an
// answer no run has taken yet; answers is ANSWERS.md, as shown. It is the
// answer command's, and 'watch --all”s and serve's.
func saveAnswer(w *workspace, q *questionState, text, label, answers string) (replaces bool, err error) {
	// Two answers at once: both land, the second replacing the first (the
	// answer read again under the lock, for the whole read-modify-write of
	// ANSWERS.md). The answer file goes first: ANSWERS.md is replaced last,
	// as a command that comes after that locks the new file.
	unlock, err := lockMaking(w.answersPath(), 0o600)
	if err != nil {
		return false, withHint(fmt.Errorf("cannot save the answer: %s: %v; nothing was saved", answers, unwrapPathError(err)),
			"move %s aside, then answer again", answers)
	}
	defer unlock()
	// A run takes an answer under this lock (questionDesk.take): the
	// question seen pending above may have been answered and taken since.
	now, err := w.questionsNow()
	if err != nil {
		return false, err
	}
	if now == nil || now.Pending == "" || now.Hash != q.Hash {
		return false, questionGoneError(w, label, q.Hash, now, answers)
	}
	earlier, _ := readAnswer(w)
	replaces = earlier != nil && earlier.Hash == q.Hash
	a := pendingAnswer{Question: q.Pending, Hash: q.Hash, Answer: text, AnsweredAt: time.Now().UTC().Truncate(time.Second)}
	// Every check before any write: an answer that cannot be appended to
	// ANSWERS.md (too large, not a regular file) saves nothing.
	book, err := answersWith(w, a, replaces)
	if err != nil {
		return false, withHint(fmt.Errorf("cannot save the answer: reading %s: %v; nothing was saved", answers, unwrapPathError(err)),
			"move %s aside (or trim it), then answer again", answers)
	}
	data, _ := json.Marshal(&a)
	if err := writeFileAtomicSync(w.answerPath(), append(data, '\n'), 0o600, true); err != nil {
		return false, fmt.Errorf("cannot save the answer: %w; nothing was saved", err)
	}
	if err := writeFileAtomicSync(w.answersPath(), book, 0o600, true); err != nil {
		// The answer file back as it was: an answer not in ANSWERS.md
		// is not saved.
		if earlier != nil {
			back, _ := json.Marshal(earlier)
			writeFileAtomicSync(w.answerPath(), append(back, '\n'), 0o600, true)
		} else {
			os.Remove(w.answerPath())
		}
		return false, fmt.Errorf("cannot save the answer: writing %s: %v; nothing was saved", answers, unwrapPathError(err))
	}
	return replaces, nil
}

// questionGoneError refuses an answer to the question of hash h, pending
// when the command started and no longer (now: the questions as they are
// now): a run took an answer to it meanwhile, or the agent withdrew it or
// asked another. answers is ANSWERS.md, as shown.
func questionGoneError(w *workspace, label, h string, now *questionState, answers string) error {
	status := wsCommand(w, "status")
	switch {
	case now != nil && now.Pending != "":
		return withHint(fmt.Errorf("the question changed meanwhile: the agent now asks: %s; this answer is not saved", clip(oneLine(now.Pending), 300)),
			"answer the new question with %s", answerCommand(w))
	case now.answered(h):
		return withHint(errors.New("the question was answered, and the run took the answer meanwhile: this answer is not saved"),
			"the agent has the earlier answer (in %s); if it asks again, answer then ('%s' shows a pending question)", answers, status)
	}
	return withHint(fmt.Errorf("no question is pending in workspace %s any more (the agent withdrew it): this answer is not saved", label),
		"'%s' shows a pending question", status)
}

// answersWith is ANSWERS.md with a question and its answer appended;
// replaces: the answer replaces the one above, not taken. An ANSWERS.md
// that cannot be read is an error (nothing is written).
func answersWith(w *workspace, a pendingAnswer, replaces bool) ([]byte, error) {
	old, err := readRegularFile(w.answersPath(), taskFileCap)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) == 0 {
		b.WriteString("# Answers to the agent's questions\n")
	}
	heading := "Answer"
	if replaces {
		heading = "Answer (replaces the one above)"
	}
	fmt.Fprintf(&b, "\n## %s\n\n### Question\n\n%s\n\n### %s\n\n%s\n", a.AnsweredAt.Format(time.RFC3339), a.Question, heading, a.Answer)
	return b.Bytes(), nil
}
