package main

// This file implements the agent's questions to the user. The rules are:
//
//   - The agent asks by writing "question": "…" (a non-empty string) in
//     .status.json. A question counts when the iteration wrote it
//     (evidence.go), unless it was answered and the file held it before:
//     the agent left it in (said once a run, in the console and the log,
//     so that an agent looping on it shows). One removed and written again later, or
//     forgotten by reset, is a new question. After the iteration the run
//     records the question as pending in the metadata (text and hash) and
//     does what onQuestion says: wait (for an answer, without running the agent; s, .stop,
//     Ctrl+C and the max duration end the wait as any other), stop (exit
//     0, the reason names the question) or continue (logged and notified).
//     A status the agent writes again without the question withdraws it.
//   - A question pending when a run starts is named before the first
//     iteration, and waited on or stopped on before one is paid for.
//   - 'claude-iterate answer' never writes the metadata, which a run may be
//     writing: it appends the question and its answer to ANSWERS.md and
//     leaves the answer in the workspace's answer file, replacing one no
//     run has taken yet. The run takes it — while it waits, or at the
//     start of the next run — into the next iteration's prompt, clears the
//     pending question and records its hash as answered. Both hold the
//     update lock of ANSWERS.md (writelock.go): the answer command checks
//     under it that the question is still pending, and the run reads,
//     removes and records under it; an answer to a question answered and
//     no longer pending is never given.
//   - reset forgets the questions: pending, answered, and an answer not
//     taken.
//   - Every question and every answer is an event (question, answered).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// maxAnswerJSON bounds an answer as JSON holds it (the answer file, serve's
// request body): JSON writes a byte as up to six ('<' is \u003c, a byte
// that is not UTF-8 \ufffd), so the longest answer takes six times its
// length, beside its question and a few fields.
const (
	maxQuestion   = 4000
	maxAnswer     = 64 << 10
	maxAnswerJSON = 6*(maxAnswer+maxQuestion) + 1024
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

// answered reports whether the question with hash h was answered.
func (q *questionState) answered(h string) bool {
	return q != nil && slices.Contains(q.Answered, h)
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

// questionsNow are the questions as the metadata file says them now (a
// run may have changed them since w was opened), nil if none.
func (w *workspace) questionsNow() (*questionState, error) {
	path := w.metadataPath()
	data, err := readRegularFile(path, metadataCap)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
	}
	m, err := parseMetadata(path, data)
	if err != nil {
		return nil, err
	}
	return m.Question, nil
}

// questionWaits reports whether w's pending question waits for an
// answer: pending, and no answer given.
func (w *workspace) questionWaits() bool {
	q := w.pendingQuestion()
	if q == nil {
		return false
	}
	a, err := readAnswer(w)
	return err != nil || a == nil || a.Hash != q.Hash
}

// forgetQuestions forgets w's pending question and an answer no run has
// taken (reset); it returns what changed, as a "field\tbefore → after"
// line, "" if nothing.
func forgetQuestions(w *workspace) (string, error) {
	var was []string
	if w.pendingQuestion() != nil {
		was = append(was, "pending")
	}
	if q := w.meta.Question; q != nil && len(q.Answered) > 0 {
		was = append(was, fmt.Sprintf("%d answered", len(q.Answered)))
	}
	w.meta.Question = nil
	err := os.Remove(w.answerPath())
	switch {
	case err == nil:
		was = append(was, "an answer not taken")
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("removing %s: %w", w.answerPath(), unwrapPathError(err))
	}
	if len(was) == 0 {
		return "", nil
	}
	return "question\t" + strings.Join(was, ", ") + " → none", nil
}

// readAnswer reads the answer file; nil if there is none. A symbolic link
// there is no answer, never read through (readOwnFile): the answer command
// writes none.
func readAnswer(w *workspace) (*pendingAnswer, error) {
	data, err := readOwnFile(w.answerPath(), maxAnswerJSON)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a pendingAnswer
	if err := decodeJSONFile(w.answerPath(), data, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// dropBadAnswer removes what sits at the answer file's path and is no
// answer (err, readAnswer's, says why), saying so in one warning line: a
// link is removed itself, its target never read, and a FIFO, a device or a
// directory is never read (tryout5: they went without a word). One it
// cannot remove (a directory with files in it) is said once, with the
// command that removes it.
func (d *questionDesk) dropBadAnswer(err error) {
	path := d.ws.answerPath()
	what, read := fmt.Sprintf("%v, not an answer", err), ""
	if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
		kind := fileKind(fi)
		if target, lerr := os.Readlink(path); lerr == nil {
			kind += " to " + target
		}
		what, read = fmt.Sprintf("%s is %s, not an answer", path, kind), ", not read"
	}
	rerr := os.Remove(path)
	switch {
	case rerr == nil || errors.Is(rerr, os.ErrNotExist):
		d.badTold = ""
		d.con.errorf("warning: %s: removed%s", what, read)
		d.log.printf("WARNING: %s: removed%s", what, read)
		return
	}
	msg := fmt.Sprintf("%s: not read, and not removed (%v); remove it: %s", what, unwrapPathError(rerr), removeCommand(path, path))
	if read == "" {
		msg = fmt.Sprintf("%s: not removed (%v); remove it: %s", what, unwrapPathError(rerr), removeCommand(path, path))
	}
	if msg != d.badTold {
		d.badTold = msg
		d.con.errorf("warning: %s", msg)
		d.log.printf("WARNING: %s", msg)
	}
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
	busyTold   bool   // the lock of ANSWERS.md was found held, and said so
	badTold    string // the warning about a bad answer file it could not remove
	leftTold   string // the hash of the answered question left in, said once
}

// note records the question the iteration asked (e) as pending, and
// forgets a pending one the agent withdrew; it returns the pending
// question, "" if there is none, and whether it is new (not pending
// already).
func (d *questionDesk) note(e *evidence) (q string, isNew bool) {
	m := d.ws.meta
	p := d.ws.pendingQuestion()
	if e.question != "" {
		q = clip(e.question, maxQuestion)
		h := questionHash(q)
		switch {
		case p != nil && p.Hash == h:
			return q, false
		case e.leftIn && m.Question.answered(h): // answered, and left in the file
			if d.leftTold != h {
				d.leftTold = h
				d.log.printf("[the agent left its question, answered before, in .status.json: not asked again: %s]", clip(oneLine(q), 300))
				d.con.noticef("the agent left its question, answered before, in .status.json: not asked again (its answer is in %s)", answersFile)
			}
			if p != nil {
				return p.Pending, false
			}
			return "", false
		}
		if m.Question == nil {
			m.Question = &questionState{}
		}
		now := time.Now().UTC().Truncate(time.Second)
		m.Question.Pending, m.Question.Hash, m.Question.AskedAt = q, h, &now
		return q, true
	}
	if p != nil && e.withdrawn {
		d.log.printf("[the agent withdrew its question: %s]", clip(oneLine(p.Pending), 300))
		m.Question.Pending, m.Question.Hash, m.Question.AskedAt = "", "", nil
		d.live.questionWithdrawn()
		return "", false
	}
	if p != nil {
		return p.Pending, false
	}
	return "", false
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

// answerLockWait bounds the run's wait for the lock of ANSWERS.md (the
// answer command holds it for milliseconds); past it, the answer is taken
// at the next look.
const answerLockWait = 5 * time.Second

// take takes the answer file's answer into the next prompt; it reports
// whether it did. It clears the pending question it answers, and records
// the question as answered. The answer is read, removed and the metadata
// written under the update lock of ANSWERS.md, which the answer command
// holds to check that the question is pending and to save its answer: an
// answer given meanwhile either replaces this one before it is taken, or
// finds the question answered and taken and is refused. An answer to a
// question answered before and no longer pending is not given again.
func (d *questionDesk) take() bool {
	if workspacePresent(d.ws) != nil {
		return false // deleted, or replaced: an answer there is another run's
	}
	if a, err := readAnswer(d.ws); err == nil && a == nil {
		return false // no answer: no lock to take
	}
	// Bounded: anyone may hold the lock (an agent, a stuck editor), and a
	// run that waited for it for good would answer no signal.
	unlock, err := lockMakingWithin(d.ws.answersPath(), 0o600, answerLockWait, func() {
		d.log.printf("[waiting for the lock of %s: another process holds it]", answersFile)
		d.log.Flush()
	})
	if err != nil {
		if !d.busyTold || !errors.Is(err, errLockBusy) {
			d.con.errorf("warning: the answer is not taken yet: %v", lockedUpdateError(d.ws.answersPath(), err))
		}
		d.busyTold = d.busyTold || errors.Is(err, errLockBusy)
		return false
	}
	defer unlock()
	a, err := readAnswer(d.ws)
	if err != nil {
		d.dropBadAnswer(err)
		return false
	}
	if a == nil {
		return false
	}
	// Removed first: an answer is given once, never again at each
	// iteration because its file stayed.
	if err := os.Remove(d.ws.answerPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.con.errorf("warning: the answer is not taken: removing %s: %v", d.ws.answerPath(), unwrapPathError(err))
		return false
	}
	m := d.ws.meta
	if m.Question == nil {
		m.Question = &questionState{}
	}
	if a.Hash != m.Question.Hash && m.Question.answered(a.Hash) {
		d.log.printf("[an answer to a question answered before and no longer pending, not given: %s]", clip(oneLine(a.Answer), 300))
		return false
	}
	if !m.Question.answered(a.Hash) {
		m.Question.Answered = append(m.Question.Answered, a.Hash)
		if n := len(m.Question.Answered); n > maxAnswered {
			m.Question.Answered = m.Question.Answered[n-maxAnswered:]
		}
	}
	if a.Hash == m.Question.Hash {
		m.Question.Pending, m.Question.Hash, m.Question.AskedAt = "", "", nil
	}
	d.notes.answers = append(d.notes.answers, *a)
	// Written now, before the lock is let go, not at the run's pace: the
	// answer command reads it under the lock.
	if err := d.ws.saveSync(false); err != nil && !isGone(err) {
		d.con.errorf("warning: saving the metadata: %v", unwrapPathError(err))
	}
	d.log.printf("ANSWER (to %q): %s", clip(a.Question, 200), a.Answer)
	d.con.progressf("Answer taken: it goes to the next iteration")
	d.live.answered(a.Question, a.Answer)
	return true
}

// answerPoll is how often a run waiting for an answer looks for it.
const answerPoll = 200 * time.Millisecond

// answerCommand is the command that answers the workspace's question.
func answerCommand(w *workspace) string {
	return wsCommand(w, "answer", "TEXT")
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
	return append(hangLines("Question: ", styleYellow, sanitizeString(oneLine(st.Question)), w, color, questionLines),
		hangLines("Answer with: ", styleDim, sanitizeString(st.AnswerCmd), w, color, 2)...)
}

// hangLines are label and text wrapped to w columns (at most maxLines
// lines), the lines after the first under the text's start.
func hangLines(label, style, text string, w int, color bool, maxLines int) []string {
	var lines []string
	for i, l := range wrapWidth(text, w-len(label), w-len(label), maxLines) {
		head := segment{label, style}
		if i > 0 {
			head = segment{strings.Repeat(" ", len(label)), styleNone}
		}
		lines = append(lines, renderItems([]panelItem{{segs: []segment{head, {l, styleNone}}, flex: true}}, "", w, color))
	}
	return lines
}

// questionLines is how many lines a question takes at most on a
// terminal (the panel, watch --all), wrapped.
const questionLines = 6

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
