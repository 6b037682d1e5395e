package rsocket

import (
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	d := newDeadline()
	if isClosed(d.wait()) {
		t.Fatal("a new deadline has expired")
	}
	d.set(time.Now().Add(-time.Second))
	if !isClosed(d.wait()) {
		t.Fatal("a past deadline has not expired")
	}
	d.set(time.Time{})
	if isClosed(d.wait()) {
		t.Fatal("clearing the deadline left it expired")
	}
	d.set(time.Now().Add(20 * time.Millisecond))
	select {
	case <-d.wait():
	case <-time.After(5 * time.Second):
		t.Fatal("a 20ms deadline did not expire")
	}
	d.set(time.Now().Add(time.Hour))
	if isClosed(d.wait()) {
		t.Fatal("a future deadline has expired")
	}
	d.set(time.Now().Add(-time.Second))
	if !isClosed(d.wait()) {
		t.Fatal("moving the deadline into the past did not expire it")
	}
	d.stop()
}
