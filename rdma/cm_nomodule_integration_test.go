package rdma

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationCMNoModule: with rdma_ucm unloaded every way into the
// connection manager fails with an error that names the module and
// matches ErrNotSupported, and nothing is left; loaded again, the same
// process uses it (a failed lookup is not remembered).
func TestIntegrationCMNoModule(t *testing.T) {
	addr, _ := rxeAddr(t)
	if !testenv.InVM() {
		testenv.Skip(t, "unloads rdma_ucm: only in the test VM")
	}
	// A channel first, so that the device's path is known and cached.
	ch := newChannel(t)
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("rmmod", "rdma_ucm").CombinedOutput(); err != nil {
		t.Fatalf("rmmod rdma_ucm (is an rdma_cm file still open?): %v: %s", err, out)
	}
	t.Cleanup(func() { loadRdmaUCM(t) })

	fds := openFDs(t)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "rdma_ucm") {
			t.Errorf("%s without rdma_ucm: %v; want an error naming rdma_ucm that matches ErrNotSupported", what, err)
		}
	}
	for range 2 { // the second time without the cached path
		_, err := CreateEventChannel()
		check("CreateEventChannel", err)
	}
	_, err := CreateID(PortSpaceTCP, ib.QPTypeRC)
	check("CreateID", err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = DialEP(ctx, addr.String()+":7471", nil)
	check("DialEP", err)
	if n := openFDs(t); n != fds {
		t.Errorf("%d fds open after the failures, %d before", n, fds)
	}

	loadRdmaUCM(t)
	ch, err = CreateEventChannel()
	if err != nil {
		t.Fatalf("CreateEventChannel after loading rdma_ucm again: %v", err)
	}
	ch.Close()
}

// loadRdmaUCM loads rdma_ucm (a no-op when it is loaded) and waits for
// its device node.
func loadRdmaUCM(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/module/rdma_ucm"); err == nil {
		return
	}
	if out, err := exec.Command("modprobe", "rdma_ucm").CombinedOutput(); err != nil {
		t.Fatalf("modprobe rdma_ucm: %v: %s", err, out)
	}
	testenv.WaitFor(t, "/dev/infiniband/rdma_cm", func() bool {
		_, err := os.Stat("/dev/infiniband/rdma_cm")
		return err == nil
	})
}
