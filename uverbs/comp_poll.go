package uverbs

import "time"

// SetPollTime makes GetEvent poll the channel for up to d before its
// goroutine parks in the netpoller, when an event is plausibly imminent:
// an event was read from the channel less than max(d, 1 ms) before the
// wait began, and a CQ bound to it has an arm pending (RequestNotify not
// yet answered by an event). d <= 0, the default, turns polling off.
//
// A parked wait costs its thread a park and a wake-up (two epoll_pwait
// and the scheduler's path around them) where a blocking read(2), as
// libibverbs' ibv_get_cq_event makes, costs one system call; an event
// that comes within the poll time is read without them. Polling checks
// the CQs' producer indices in memory before it reads the channel, and
// yields to other goroutines between checks (runtime.Gosched): it keeps
// the P but never holds up the rest of the program, and it ends at the
// poll time, the context's deadline or cancellation, or Close, as a
// parked wait does. It spends CPU while nothing else runs: at most d per
// wait, and none in waits that follow a quiet spell.
//
// It pays where the event comes from another CPU. On one CPU the poller
// holds what the peer (and, on Linux 6.12, rxe's workqueue) needs to
// produce the event, as runtime.Gosched yields only to this program's
// goroutines: in the Soft-RoCE VM with one vCPU, the rc, ud and uc
// pingpongs with -e polling 200 µs took 1.2-1.5 times as long per round
// trip as without, and more CPU (BenchmarkPingpong in
// cmd/internal/pingpong; the README has the table), so the drop-ins leave
// it off.
//
// It may be called at any time; waits that begin afterwards use it.
func (ch *CompChannel) SetPollTime(d time.Duration) { ch.pollTime.Store(int64(d)) }

// pollRecent is how long after an event a wait may still poll, at least.
const pollRecent = time.Millisecond

// sawEvent records that an event was read.
func (ch *CompChannel) sawEvent() {
	if ch.pollTime.Load() > 0 {
		ch.lastEvent.Store(int64(time.Since(ch.born)) + 1)
	}
}

// pollBudget is waitfd's poll budget, asked at the start of each wait.
func (ch *CompChannel) pollBudget() time.Duration {
	d := time.Duration(ch.pollTime.Load())
	last := ch.lastEvent.Load()
	if d <= 0 || last == 0 || time.Since(ch.born)-time.Duration(last-1) > max(d, pollRecent) {
		return 0
	}
	if cqs := *ch.cqs.Load(); len(cqs) <= maxHintCQs {
		armed := false
		for _, cq := range cqs {
			armed = armed || cq.hint.bound.Load() > 0
		}
		if !armed {
			return 0
		}
	}
	return d
}
