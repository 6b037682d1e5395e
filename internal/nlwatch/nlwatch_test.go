package nlwatch

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func TestListenPendingClose(t *testing.T) {
	c, err := Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pending(func([]byte) {}); err != nil {
		t.Fatalf("Pending with nothing queued: %v", err)
	}
	if c.Changed(func([]byte) bool { return false }) {
		t.Fatal("Changed with a filter that matches nothing reported a change")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !c.Changed(nil) {
		t.Fatal("Changed on a closed Conn: want true (its owner cannot know)")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var nilConn *Conn
	if err := nilConn.Close(); err != nil {
		t.Fatalf("Close on nil: %v", err)
	}
	if !nilConn.Changed(nil) {
		t.Fatal("Changed on nil: want true")
	}
	if _, err := Listen(-1, 0); err == nil {
		t.Fatal("Listen on protocol -1 succeeded")
	}
}

// TestIntegrationLinkEvents: a network device added and set up is seen at
// once, as rtnetlink messages from the kernel.
func TestIntegrationLinkEvents(t *testing.T) {
	testenv.RequireRDMA(t)
	c, err := Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	testenv.Dummy(t, "nlwatch0")
	var types []uint16
	if err := c.Pending(func(b []byte) {
		if len(b) >= unix.SizeofNlMsghdr {
			types = append(types, uint16(b[4])|uint16(b[5])<<8)
		}
	}); err != nil {
		t.Fatal(err)
	}
	newlinks := 0
	for _, ty := range types {
		if ty == unix.RTM_NEWLINK {
			newlinks++
		}
	}
	if newlinks < 2 {
		t.Fatalf("message types %v: want at least two RTM_NEWLINK (add, up)", types)
	}
}

// TestWaitEnds: a Wait with nothing arriving ends at its context's
// deadline, and one in progress ends when another goroutine closes the
// Conn; after that, Wait fails at once.
func TestWaitEnds(t *testing.T) {
	c, err := Listen(unix.NETLINK_ROUTE, unix.RTMGRP_LINK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx, func([]byte) bool { return false }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with nothing arriving: %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait(context.Background(), func([]byte) bool { return false }) }()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Wait ended by Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a Wait")
	}
	if err := c.Wait(context.Background(), nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Wait after Close: %v, want os.ErrClosed", err)
	}
	var nilConn *Conn
	if err := nilConn.Wait(context.Background(), nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Wait on nil: %v, want os.ErrClosed", err)
	}
}
