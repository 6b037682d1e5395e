package uverbs

import (
	"testing"
	"time"
)

// TestPollBudget: a wait polls only when polling is on, an event was read
// lately and a CQ has an arm pending (or the channel has too many CQs to
// tell); an idle channel's waits park at once.
func TestPollBudget(t *testing.T) {
	cqs := make([]*CQ, maxHintCQs+1)
	for i := range cqs {
		cqs[i] = &CQ{}
	}
	ch := &CompChannel{born: time.Now()}
	ch.cqs.Store(&[]*CQ{cqs[0]})
	const d = 50 * time.Millisecond
	if got := ch.pollBudget(); got != 0 {
		t.Fatalf("polling off: budget %v", got)
	}
	ch.SetPollTime(d)
	if got := ch.pollBudget(); got != 0 {
		t.Fatalf("no event yet: budget %v", got)
	}
	ch.sawEvent()
	if got := ch.pollBudget(); got != 0 {
		t.Fatalf("no arm pending: budget %v", got)
	}
	cqs[0].hint.arming(0)
	if got := ch.pollBudget(); got != d {
		t.Fatalf("an event just read, an arm pending: budget %v, want %v", got, d)
	}
	ch.SetPollTime(-1)
	if got := ch.pollBudget(); got != 0 {
		t.Fatalf("polling turned off: budget %v", got)
	}
	ch.SetPollTime(d)
	// An event longer ago than the poll time: the channel is idle.
	ch.lastEvent.Store(1)
	ch.born = time.Now().Add(-2 * d)
	if got := ch.pollBudget(); got != 0 {
		t.Fatalf("last event %v ago: budget %v", 2*d, got)
	}
	// With more CQs than the hint follows, arms are not counted.
	ch.sawEvent()
	cqs[0].hint.countRead()
	ch.cqs.Store(&cqs)
	if got := ch.pollBudget(); got != d {
		t.Fatalf("%d CQs: budget %v, want %v", len(cqs), got, d)
	}
}
