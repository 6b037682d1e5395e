package uevent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationRXE adds and deletes an rxe device and checks that the
// kernel's events arrive, parse, and name the device's uverbs node.
func TestIntegrationRXE(t *testing.T) {
	testenv.RequireRDMA(t)
	ok, err := Delivered()
	if err != nil || !ok {
		t.Fatalf("Delivered() = %v, %v; the VM's root namespace receives uevents", ok, err)
	}
	c, nl := listenAndDial(t)
	testenv.Dummy(t, "ueventd0")
	if err := drain(c); err != nil { // the dummy's own events
		t.Fatal(err)
	}

	if err := nl.AddLink("rxeuevent0", nldev.LinkRXE, "ueventd0"); err != nil {
		t.Fatal(err)
	}
	dev, err := nl.DeviceByName("rxeuevent0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.DeleteLink(dev.Index) })
	ch, err := nl.UverbsChardev(dev.Index)
	if err != nil {
		t.Fatal(err)
	}
	// The events are queued before NEWLINK returns: no waiting.
	added := collect(t, c)
	want := "infiniband/" + ch.Name
	if !has(added, "add", "infiniband_verbs", want) || !has(added, "add", "infiniband", "") {
		t.Fatalf("after rdma link add: events %+v lack add of rxeuevent0 and %s", added, want)
	}

	if err := nl.DeleteLink(dev.Index); err != nil {
		t.Fatal(err)
	}
	removed := collect(t, c)
	if !has(removed, "remove", "infiniband_verbs", want) || !has(removed, "remove", "infiniband", "") {
		t.Fatalf("after rdma link delete: events %+v lack remove of rxeuevent0 and %s", removed, want)
	}
}

// listenAndDial opens a Conn and an RDMA netlink client, both closed at
// t's cleanup.
func listenAndDial(t *testing.T) (*Conn, *nldev.Client) {
	t.Helper()
	c, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	return c, nl
}

// has reports whether evs hold action on subsystem (and node, if given).
func has(evs []Event, action, subsystem, node string) bool {
	for _, e := range evs {
		if e.Action == action && e.Subsystem == subsystem && (node == "" || e.DevName == node) &&
			(subsystem != "infiniband" || strings.HasSuffix(e.DevPath, "/rxeuevent0")) {
			return e.RDMA()
		}
	}
	return false
}

// collect returns the events queued now, failing on an overrun.
func collect(t *testing.T, c *Conn) []Event {
	t.Helper()
	var evs []Event
	if err := c.Pending(func(e Event) { evs = append(evs, e) }); err != nil {
		t.Fatal(err)
	}
	return evs
}

// drain waits a little for events to settle, then discards them.
func drain(c *Conn) error {
	time.Sleep(100 * time.Millisecond)
	err := c.Pending(func(Event) {})
	if errors.Is(err, ErrOverrun) {
		return nil
	}
	return err
}

// TestIntegrationWait: a Wait parked before an rxe device is added
// returns once the device's events come; the dummy netdev's own events
// do not end it.
func TestIntegrationWait(t *testing.T) {
	testenv.RequireRDMA(t)
	c, nl := listenAndDial(t)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- c.Wait(ctx)
	}()
	testenv.Dummy(t, "ueventw0")
	select {
	case err := <-done:
		t.Fatalf("Wait ended by a network device's events: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := nl.AddLink("rxeueventw0", nldev.LinkRXE, "ueventw0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if dev, err := nl.DeviceByName("rxeueventw0"); err == nil {
			nl.DeleteLink(dev.Index)
		}
	})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait after rdma link add: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not end 10 s after rdma link add")
	}
}
