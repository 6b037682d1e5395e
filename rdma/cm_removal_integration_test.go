package rdma

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationCMDeviceRemoval: an rxe device on a dummy netdev, a
// connection over it, then the device deleted: the listener and both
// ends get DEVICE_REMOVAL, later commands fail, and Close works. rxe's
// removal waits for every uverbs context of the device to close, so the
// test closes the ids (which free their PDs, CQs and QPs) and lets the
// device cache drop the vanished device; DeleteLink must then return,
// and no fd or goroutine stay behind.
func TestIntegrationCMDeviceRemoval(t *testing.T) {
	testenv.RequireRDMA(t)
	checkNoLeaks(t, nil) // the device, and its cm_ids, go
	const netdev, rxe, ip = "cmrm0", "rxecmrm0", "10.98.0.1"
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	testenv.Dummy(t, netdev)
	testenv.Run(t, testenv.Oracle(t, "ip"), "addr", "add", ip+"/24", "dev", netdev)
	if err := nl.AddLink(rxe, nldev.LinkRXE, netdev); err != nil {
		t.Fatalf("AddLink: %v", err)
	}
	var index uint32
	found := false
	devs, err := nl.Devices()
	for _, d := range devs {
		if d.Name == rxe {
			index, found = d.Index, true
		}
	}
	if err != nil || !found {
		t.Fatalf("%s not among %v: %v", rxe, devs, err)
	}
	// rxe's removal waits for every context of the device, the device
	// cache's too: DeleteLink runs in its own goroutine, and, should the
	// test fail before the ids are closed, the cleanup (after the ids'
	// own cleanups) flushes the cache until the removal ends, rather than
	// leaving the process stuck in the kernel.
	removed := make(chan error, 1)
	remove := sync.OnceFunc(func() { go func() { removed <- nl.DeleteLink(index) }() })
	deleted := false
	t.Cleanup(func() {
		if deleted {
			return
		}
		remove()
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if list, err := GetDevices(); err == nil {
				FreeDevices(list)
			}
			select {
			case <-removed:
				return
			default:
			}
		}
		t.Errorf("%s: DeleteLink still waits 20 s after the test ended", rxe)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ListenEP(ip+":0", 0, nil)
	if err != nil {
		t.Fatalf("ListenEP on %s: %v", ip, err)
	}
	t.Cleanup(func() { l.Close() })
	if l.Device() == nil || l.Device().Name() != rxe {
		t.Fatalf("listener on %s bound to %v", ip, l.Device())
	}
	la, _ := l.QueryAddr()
	cli, err := CreateEP(ctx, la.Src.String(), nil)
	if err != nil {
		t.Fatalf("CreateEP: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	connected := make(chan error, 1)
	go func() { connected <- cli.Connect(ctx, nil) }()
	srv, err := l.GetRequest(ctx)
	if err != nil {
		t.Fatalf("GetRequest: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.Accept(ctx, nil); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if err := <-connected; err != nil {
		t.Fatalf("Connect: %v", err)
	}

	remove()
	for _, id := range []*ID{l, srv, cli} {
		for {
			ev, err := id.Channel().GetEvent(ctx)
			if err != nil {
				t.Fatalf("waiting for DEVICE_REMOVAL: %v", err)
			}
			ev.Ack()
			if ev.Type == EventDeviceRemoval && ev.ID == id {
				break
			}
			// The connection may end before the device goes.
			if ev.Type != EventDisconnected && ev.Type != EventTimewaitExit {
				t.Fatalf("got %v (status %v), want DEVICE_REMOVAL", ev.Type, ev.Status)
			}
		}
	}
	// ucma tears the kernel id down from a workqueue after it reported
	// DEVICE_REMOVAL, so commands fail from a moment later on.
	testenv.WaitFor(t, "a command on an id whose device was removed to fail", func() bool {
		_, err := cli.QueryAddr()
		return err != nil
	})
	for _, id := range []*ID{cli, srv, l} {
		if err := id.Close(); err != nil {
			t.Fatalf("Close after removal: %v", err)
		}
	}
	FreeDevices(mustGetDevices(t)) // the cache closes the vanished device's context
	select {
	case err := <-removed:
		deleted = true
		if err != nil {
			t.Fatalf("DeleteLink: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("DeleteLink still waits after every id was closed")
	}
}

func mustGetDevices(t *testing.T) []*Device {
	t.Helper()
	list, err := GetDevices()
	if err != nil {
		t.Fatal(err)
	}
	return list
}
