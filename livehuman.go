package main

// This file holds the live view's calls for the human in the loop and the
// verifier: the agent's question and its answer (question.go), the
// verifier of run --verify (verify.go).

import "time"

// question: the agent asks q; the run does what onQuestion says.
func (l *live) question(q, onQuestion, answerCmd string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	if onQuestion != onQuestionStop {
		l.st.Question, l.st.AnswerCmd = q, answerCmd
	}
	if onQuestion == onQuestionWait {
		l.st.Phase, l.st.WaitUntil = phaseQuestion, time.Time{}
	}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.emit(runEvent{Event: eventQuestion, Question: q, OnQuestion: onQuestion, Message: answerCmd})
	l.update(now)
}

// questionWithdrawn: the agent withdrew its question (question.go).
func (l *live) questionWithdrawn() {
	if l == nil {
		return
	}
	l.clearQuestion()
	l.update(time.Now())
}

// clearQuestion takes the question off the views.
func (l *live) clearQuestion() {
	l.mu.Lock()
	l.st.Question, l.st.AnswerCmd = "", ""
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
}

// answered: the answer to question q is taken.
func (l *live) answered(q, answer string) {
	if l == nil {
		return
	}
	l.clearQuestion()
	l.emit(runEvent{Event: eventAnswered, Question: q, Answer: answer})
	l.update(time.Now())
}

// verifying: the verifier starts, at depth.
func (l *live) verifying(depth string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Phase, l.st.VerifyDepth, l.st.IterStarted, l.st.Updated = phaseVerify, depth, now, now
	l.st.WaitUntil = time.Time{}
	l.st.Activity = l.act.reset(now)
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(now)
}

// verified: a verification's record is made, with its verdict vd.
func (l *live) verified(rec *iterationRecord, vd verdict, totals workTotals, elapsed time.Duration) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Totals, l.st.Updated, l.st.Phase, l.st.VerifyDepth = totals, now, phaseBetween, ""
	l.st.Activity = activity{}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	ev := runEvent{Event: eventVerifyFailed, Record: rec, Totals: &totals, ElapsedMS: elapsed.Milliseconds(), Verdict: &vd}
	if vd.Verdict == verdictPass {
		ev.Event = eventVerifyPassed
	}
	l.emit(ev)
	l.update(now)
}
