package rsocket

import (
	"sync"
	"time"
)

// deadline is one direction's deadline: a channel that is closed when the
// deadline passes, which a blocked Read or Write selects on. Setting a new
// deadline replaces a channel that was closed.
type deadline struct {
	mu      sync.Mutex
	timer   *time.Timer
	expired chan struct{}
}

func newDeadline() *deadline { return &deadline{expired: make(chan struct{})} }

// set arms the deadline at t; the zero t means none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.expired // the timer fired, or is closing the channel: wait for it
	}
	d.timer = nil
	closed := isClosed(d.expired)
	if t.IsZero() {
		if closed {
			d.expired = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.expired = make(chan struct{})
		}
		ch := d.expired
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !closed {
		close(d.expired)
	}
}

// wait is the channel closed when the deadline passes.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.expired
}

// stop releases the timer.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && d.timer.Stop() {
		d.timer = nil
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
