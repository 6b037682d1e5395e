package uverbs

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCompChannelReadNoWait: on an empty channel TryGetEvent reports no
// event and GetEvent with a passed deadline times out, both without
// blocking; an event queued is read at once and names its CQ by the
// user handle it was created with (nil for a CQ no longer known). The fake's
// channel is an eventfd, whose 8-byte counter reads as the event's
// cq_handle.
func TestCompChannelReadNoWait(t *testing.T) {
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
	if got, ok, err := ch.TryGetEvent(); got != nil || ok || err != nil {
		t.Fatalf("TryGetEvent on an empty channel: %v, %v, %v", got, ok, err)
	}
	if _, err := ch.GetEvent(until(t, time.Now().Add(-time.Second))); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("GetEvent with a passed deadline: %v", err)
	}
	for handle, want := range map[uint64]*CQ{cq.userHandle: cq, 99: nil} {
		if _, err := unix.Write(ch.FD(), binary.LittleEndian.AppendUint64(nil, handle)); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := ch.TryGetEvent(); got != want || !ok || err != nil {
			t.Fatalf("TryGetEvent of an event for handle %d: %v, %v, %v; want %v", handle, got, ok, err, want)
		}
	}
	if got, ok, err := ch.TryGetEvent(); got != nil || ok || err != nil {
		t.Fatalf("TryGetEvent once the event was read: %v, %v, %v", got, ok, err)
	}
}
