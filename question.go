package main

// This file implements the agent's questions to the user. The rules are:
//
//   - The agent asks by writing "question": "…" (a non-empty string) in
//     .status.json. After the iteration the run records the question as
//     pending in the metadata (text and hash) and does what onQuestion says:
//     wait (for an answer, without running the agent; s, .stop, Ctrl+C and
//     the max duration end the wait as any other), stop (exit 0, the reason
//     names the question) or continue (logged and notified).
//   - 'claude-iterate answer' never writes the metadata, which a run may be
//     writing: it appends the question and its answer to ANSWERS.md and
//     leaves the answer in the workspace's answer file. The run takes it —
//     while it waits, or at the start of the next run — into the next
//     iteration's prompt, clears the pending question and records its hash
//     as answered: an answered question is never waited on again, even if
//     the agent leaves it in .status.json.
//   - Every question and every answer is an event (question, answered).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// What a run does when the agent asks a question: settings.OnQuestion.
const (
	onQuestionWait     = "wait"
	onQuestionStop     = "stop"
	onQuestionContinue = "continue"
)

// Files of the questions, in the workspace's state directory.
const (
	answersFile = "ANSWERS.md"
	answerFile  = ".answer.json"
)

// maxAnswered bounds the hashes of answered questions kept.
const maxAnswered = 100

// maxQuestion and maxAnswer bound what is kept and shown of each.
const (
	maxQuestion = 4000
	maxAnswer   = 64 << 10
)

func checkOnQuestion(s string) error {
	switch s {
	case onQuestionWait, onQuestionStop, onQuestionContinue:
		return nil
	}
	return fmt.Errorf("unknown value %q (want wait, stop or continue)", s)
}

// questionState is the metadata's record of the agent's questions.
type questionState struct {
	// Pending is the question waiting for an answer, Hash its hash.
	Pending string     `json:"pending,omitempty"`
	Hash    string     `json:"hash,omitempty"`
	AskedAt *time.Time `json:"askedAt,omitempty"`
	// Answered are the hashes of the questions answered, latest last.
	Answered []string `json:"answered,omitempty"`
}

// pendingAnswer is the answer file: an answer the run has not taken yet.
type pendingAnswer struct {
	Question   string    `json:"question"`
	Hash       string    `json:"hash"`
	Answer     string    `json:"answer"`
	AnsweredAt time.Time `json:"answeredAt"`
}

func questionHash(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:8])
}

func (w *workspace) answerPath() string  { return filepath.Join(w.StateDir, answerFile) }
func (w *workspace) answersPath() string { return filepath.Join(w.StateDir, answersFile) }

// pendingQuestion is the workspace's pending question, "" if none.
func (w *workspace) pendingQuestion() *questionState {
	if q := w.meta.Question; q != nil && q.Pending != "" {
		return q
	}
	return nil
}

// answered reports whether the question with hash h was answered.
func (q *questionState) answered(h string) bool {
	if q == nil {
		return false
	}
	for _, a := range q.Answered {
		if a == h {
			return true
		}
	}
	return false
}

// readAnswer reads the answer file; nil if there is none.
func readAnswer(w *workspace) (*pendingAnswer, error) {
	data, err := readRegularFile(w.answerPath(), maxAnswer*2)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a pendingAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s: %v", w.answerPath(), err)
	}
	return &a, nil
}

// questionDesk takes the agent's questions and the user's answers for a
// run.
type questionDesk struct {
	ws         *workspace
	con        *console
	log        *runLog
	live       *live
	notes      *promptNotes // the answers go to the next prompt
	onQuestion string
	save       func() // saves the metadata
}

// note records ts's question as pending, if it is one not yet answered;
// it returns the question, "" if there is none to handle, and whether it
// is new (not pending already).
func (d *questionDesk) note(ts taskStatus) (q string, isNew bool) {
	q = strings.TrimSpace(ts.Question)
	if q == "" {
		return "", false
	}
	q = clip(q, maxQuestion)
	h := questionHash(q)
	m := d.ws.meta
	if m.Question.answered(h) {
		return "", false
	}
	if m.Question == nil {
		m.Question = &questionState{}
	}
	if m.Question.Hash == h {
		return q, false
	}
	now := time.Now().UTC().Truncate(time.Second)
	m.Question.Pending, m.Question.Hash, m.Question.AskedAt = q, h, &now
	return q, true
}

// ask tells of question q: the console, the log, the panel, the event
// and the notification.
func (d *questionDesk) ask(q string) {
	d.save()
	d.log.printf("QUESTION: %s", q)
	d.con.noticef("the agent asks: %s", clip(q, 500))
	d.con.noticef("answer with: %s", answerCommand(d.ws))
	d.live.question(q, d.onQuestion, answerCommand(d.ws))
}

// stopEnding is the run's ending for question q with onQuestion stop.
func (d *questionDesk) stopEnding(q string) *ending {
	return &ending{code: exitOK, reason: "stopped: the agent asks: " + clip(oneLine(q), 300), status: statusStopped,
		hint: "answer with " + answerCommand(d.ws) + ", then run again"}
}

// take takes the answer file's answer into the next prompt; it reports
// whether it did. It clears the pending question it answers, and records
// the question as answered.
func (d *questionDesk) take() bool {
	a, err := readAnswer(d.ws)
	if err != nil {
		d.con.errorf("warning: reading the answer: %v", unwrapPathError(err))
		os.Remove(d.ws.answerPath())
		return false
	}
	if a == nil {
		return false
	}
	os.Remove(d.ws.answerPath())
	m := d.ws.meta
	if m.Question.answered(a.Hash) {
		return false // taken already (a copy left by a crash)
	}
	if m.Question == nil {
		m.Question = &questionState{}
	}
	m.Question.Answered = append(m.Question.Answered, a.Hash)
	if n := len(m.Question.Answered); n > maxAnswered {
		m.Question.Answered = m.Question.Answered[n-maxAnswered:]
	}
	if a.Hash == m.Question.Hash {
		m.Question.Pending, m.Question.AskedAt = "", nil
	}
	d.notes.answers = append(d.notes.answers, *a)
	d.save()
	d.log.printf("ANSWER (to %q): %s", clip(a.Question, 200), a.Answer)
	d.con.progressf("Answer taken: it goes to the next iteration")
	d.live.answered(a.Question, a.Answer)
	return true
}

// answerPoll is how often a run waiting for an answer looks for it.
const answerPoll = 200 * time.Millisecond

// answerCommand is the command that answers the workspace's question.
func answerCommand(w *workspace) string {
	if w.Ralph {
		return "claude-iterate answer TEXT"
	}
	return "claude-iterate answer " + w.Name + " TEXT"
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// questionNotification is the notification of a question or an answer.
func questionNotification(ev runEvent) notification {
	ws := ev.Workspace
	if ev.Event == eventAnswered {
		return notification{event: ev.Event, title: ws + ": question answered", priority: "2", tags: "speech_balloon",
			body: clip(ev.Question, 500) + "\n" + clip(ev.Answer, 1000)}
	}
	body := clip(ev.Question, 2000)
	switch ev.OnQuestion {
	case onQuestionWait:
		body += "\nThe run waits for the answer: " + ev.Message
	case onQuestionStop:
		body += "\nThe run stops; answer with " + ev.Message + ", then run again"
	default:
		body += "\nThe run goes on; answer with " + ev.Message
	}
	return notification{event: ev.Event, title: ws + ": the agent asks a question", priority: "4", tags: "question", body: body}
}

// questionPanelLines are the panel's lines of a pending question.
func questionPanelLines(st *runState, w int, color bool) []string {
	if st.Question == "" || st.Ended {
		return nil
	}
	return []string{
		renderItems([]panelItem{{segs: []segment{{"Question: ", styleYellow}, {sanitizeString(oneLine(st.Question)), styleNone}}, flex: true}}, "", w, color),
		renderItems([]panelItem{{segs: []segment{{"Answer with: ", styleDim}, {sanitizeString(st.AnswerCmd), styleNone}}, flex: true}}, "", w, color),
	}
}

// questionView is a pending question, as status shows it.
type questionView struct {
	Text    string     `json:"text"`
	AskedAt *time.Time `json:"askedAt,omitempty"`
	// Answered: answered, the answer not yet taken by a run.
	Answered      bool   `json:"answered"`
	AnswerCommand string `json:"answerCommand,omitempty"`
}

// viewQuestion is w's pending question, nil if none.
func viewQuestion(w *workspace) *questionView {
	q := w.pendingQuestion()
	if q == nil {
		return nil
	}
	v := &questionView{Text: q.Pending, AskedAt: q.AskedAt}
	if a, err := readAnswer(w); err == nil && a != nil && a.Hash == q.Hash {
		v.Answered = true
	} else {
		v.AnswerCommand = answerCommand(w)
	}
	return v
}

// print shows the question in status's layout.
func (v *questionView) print(out io.Writer) {
	if v == nil {
		return
	}
	fmt.Fprintf(out, "Question:    %s\n", sanitizeString(clip(oneLine(v.Text), 500)))
	if v.Answered {
		fmt.Fprintf(out, "Answer:      given; the next iteration gets it\n")
	} else {
		fmt.Fprintf(out, "Answer with: %s\n", v.AnswerCommand)
	}
}
