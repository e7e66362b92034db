package main

// This file builds what the next iteration's prompt adds to the task: the
// answers to the agent's questions, a completion claimed too early
// (--min-iterations), a failed verification's findings. The rules are:
// notes are set after an iteration (or while the run waits) and given to
// the next counted iteration only — an iteration retried after a usage
// limit gets them again; each note is given in full; a failed
// verification's findings are kept in the metadata until an iteration had
// them, so that the next run's first iteration gets them too.

import (
	"fmt"
	"strings"
)

// promptNotes are the notes for the next iteration's prompt.
type promptNotes struct {
	answers []pendingAnswer
	// early is the completion claimed before minIterations: its reason.
	early      string
	earlyAt    int
	minimum    int
	verifyNote string // a failed verification's findings (verifier.go)
	// asking is the completion claimed with a question: its reason.
	asking string
	// rewrite are the files of the file conditions a refused completion
	// took again (stopSet.rejected): a claim again writes them again.
	rewrite []string
}

// empty reports whether there is nothing to add.
func (n *promptNotes) empty() bool {
	return len(n.answers) == 0 && n.early == "" && n.asking == "" && n.verifyNote == "" && len(n.rewrite) == 0
}

// text is what the prompt adds, "" when nothing.
func (n *promptNotes) text(w *workspace) string {
	if n.empty() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Notes from claude-iterate\n")
	for _, a := range n.answers {
		fmt.Fprintf(&b, "\nThe user answered your question (also kept in %s).\nYour question:\n%s\nThe answer:\n%s\n",
			w.answersPath(), a.Question, a.Answer)
		b.WriteString("Remove \"question\" from .status.json if it is still there, and go on with the task using the answer.\n")
	}
	if n.early != "" {
		fmt.Fprintf(&b, "\nThe last iteration (%d) claimed the task is complete (%s), but this run accepts a completion only from iteration %d on. "+
			"The claim came too early: check the work before claiming it again — re-read the task, run the tests and builds, "+
			"look for what is missing or wrong, and fix what you find. Mark the task complete again only when it truly is.\n",
			n.earlyAt, n.early, n.minimum)
	}
	if n.asking != "" {
		fmt.Fprintf(&b, "\nAn earlier iteration claimed the task complete while asking a question (%s): a completion is not accepted while "+
			"its question waits. With the answer, finish what it asks for, and mark the task complete again only when it truly is.\n", n.asking)
	}
	if n.verifyNote != "" {
		b.WriteString("\n" + n.verifyNote)
	}
	if len(n.rewrite) > 0 {
		them := map[bool]string{true: "it", false: "them"}[len(n.rewrite) == 1]
		fmt.Fprintf(&b, "\nThis run takes a completion from writing %s. What the refused claim wrote there no longer counts: "+
			"when you claim the task complete again, write %s again.\n", strings.Join(n.rewrite, " and "), them)
	}
	return b.String()
}

// holdClaim refuses the completion v claims at iteration, before
// minimum: the run goes on — unless a condition of another group is met
// too — and the next prompt says why.
func (n *promptNotes) holdClaim(v stopVerdict, stops *stopSet, iteration, minimum int) stopVerdict {
	n.early, n.earlyAt, n.minimum = v.reason, iteration, minimum
	return otherMet(v, stops)
}

// otherMet is v without its met success condition: the first met
// condition of another group, if any.
func otherMet(v stopVerdict, stops *stopSet) stopVerdict {
	v.met, v.reason = nil, ""
	for i := range stops.ordered {
		gc := &stops.ordered[i]
		if gc.group != groupSuccess && i < len(v.reports) && v.reports[i].Met {
			v.met, v.reason = gc, v.reports[i].Reason
			break
		}
	}
	return v
}
