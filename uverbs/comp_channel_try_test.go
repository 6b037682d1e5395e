package uverbs

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTryGetEventDoesNotWait: while a GetEvent waits on the channel,
// TryGetEvent returns at once with no event (the waiter holds the turn
// and takes what comes); the event then goes to the waiter.
func TestTryGetEventDoesNotWait(t *testing.T) {
	c, _ := writeContext(t)
	ch, err := c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	cq, err := c.CreateCQ(CQAttr{CQE: 4, CompChannel: ch})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		cq  *CQ
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := ch.GetEvent(context.Background())
		done <- result{got, err}
	}()
	time.Sleep(30 * time.Millisecond)
	returned := make(chan error, 1)
	go func() {
		for range 10 {
			if got, ok, err := ch.TryGetEvent(); got != nil || ok || err != nil {
				returned <- fmt.Errorf("TryGetEvent while GetEvent waits: %v, %v, %v", got, ok, err)
				return
			}
		}
		returned <- nil
	}()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("TryGetEvent waited for the GetEvent waiting on the same channel")
	}
	if _, err := unix.Write(ch.FD(), binary.LittleEndian.AppendUint64(nil, cq.userHandle)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.cq != cq || r.err != nil {
			t.Fatalf("the waiter's GetEvent: %v, %v; want %v", r.cq, r.err, cq)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the event")
	}
}
