package nldev

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationMonitor watches the events of adding and deleting an rxe
// device on kernels that have RDMA monitoring, and checks the typed
// refusal on kernels that do not.
func TestIntegrationMonitor(t *testing.T) {
	c := dialVM(t)
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	m, err := DialMonitor()
	if sys.Monitor == nil {
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 6.12") {
			t.Fatalf("DialMonitor on a kernel without monitoring = %v, want ErrNotSupported naming 6.12", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("DialMonitor: %v", err)
	}
	t.Cleanup(func() { m.Close() })

	ip := testenv.Oracle(t, "ip")
	const netdev, name = "rdmstmon0", "rxemon0"
	testenv.Run(t, ip, "link", "add", netdev, "type", "dummy")
	t.Cleanup(func() { exec.Command(ip, "link", "del", netdev).Run() })
	testenv.Run(t, ip, "link", "set", netdev, "up")
	if err := c.AddLink(name, LinkRXE, netdev); err != nil {
		t.Fatal(err)
	}
	d, err := c.DeviceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			c.DeleteLink(d.Index)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []Event
	want := func(typ EventType) Event {
		t.Helper()
		for {
			for i, ev := range got {
				if ev.Type == typ && ev.DevName == name {
					got = append(got[:i], got[i+1:]...)
					return ev
				}
			}
			evs, err := m.Receive(ctx)
			if err != nil {
				t.Fatalf("waiting for %s of %s: %v (other events: %+v)", typ, name, err, got)
			}
			got = append(got, evs...)
		}
	}
	if ev := want(EventRegister); ev.DevIndex != d.Index {
		t.Errorf("REGISTER %+v, want index %d", ev, d.Index)
	}
	if ev := want(EventNetdevAttach); ev.Port != 1 || ev.Netdev != netdev {
		t.Errorf("NETDEV_ATTACH %+v, want port 1 on %s", ev, netdev)
	}
	if err := c.DeleteLink(d.Index); err != nil {
		t.Fatal(err)
	}
	deleted = true
	if ev := want(EventUnregister); ev.DevIndex != d.Index {
		t.Errorf("UNREGISTER %+v, want index %d", ev, d.Index)
	}

	// A cancelled context ends a blocked Receive promptly.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := m.Receive(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Receive with nothing to receive = %v, want the context's deadline", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("Receive took %v to notice the context", time.Since(start))
	}
}
