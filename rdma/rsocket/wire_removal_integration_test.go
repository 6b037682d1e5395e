package rsocket

import (
	"errors"
	"io"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestWireRsocketPeerDeviceDeleted: a stream busy both ways, then side
// 1 deletes its rxe device (rdma link delete) under it. Side 1's Read
// and Write end with rdma.ErrDeviceRemoved (the CM's DEVICE_REMOVAL)
// within DefaultFailureBound, and once its Conn is closed the deletion
// completes (rxe's removal waits for every uverbs context of the
// device). Side 0, whose peer vanished from the wire, ends both ways
// with ECONNRESET or a failed completion within the same bound (on siw,
// also the completions of a QP whose socket went, siwSocketLost). Nothing
// is left on either side, and side 1 adds its device back for the tests
// after this one.
func TestWireRsocketPeerDeviceDeleted(t *testing.T) {
	w, dev := rxetest.Wire(t)
	wirePeerDeviceDeleted(t, w, dev)
}

// TestWireSIWRsocketPeerDeviceDeleted is TestWireRsocketPeerDeviceDeleted
// with siw0 deleted under the stream; side 1's stream may end with a
// failed or flushed completion rather than ErrDeviceRemoved (see below).
func TestWireSIWRsocketPeerDeviceDeleted(t *testing.T) {
	w, dev := rxetest.WireSIW(t)
	wirePeerDeviceDeleted(t, w, dev)
}

func wirePeerDeviceDeleted(t *testing.T, w *testenv.WireEnv, dev uint32) {
	var del *deletion
	if w.Side == 1 {
		del = deletable(t, w, dev)
	}
	checkNoLeaks(t, &dev)
	c := wireConn(t, w, "conn", &ListenConfig{}, &Dialer{})
	if w.Side == 0 {
		if _, err := io.ReadFull(c, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
	} else if _, err := c.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	wrote, read := pump(c)
	time.Sleep(200 * time.Millisecond) // the Writes fill the buffers and block
	w.Sync(t, t.Name()+"/delete")
	start := time.Now()
	if w.Side == 0 {
		awaitEnd(t, wrote, read, start, DefaultFailureBound, func(err error) bool {
			return errors.Is(err, unix.ECONNRESET) || peerSilent(err) || siwSocketLost(w, err)
		})
		w.Sync(t, t.Name()+"/done")
		return
	}
	del.start()
	awaitEnd(t, wrote, read, start, DefaultFailureBound, func(err error) bool {
		// On siw the kernel errors the QP (iw_cm drops the connection as
		// rdma_cm tells the removal), and its completions can come before
		// the CM's DEVICE_REMOVAL: either ends the stream.
		return errors.Is(err, rdma.ErrDeviceRemoved) || siwSocketLost(w, err)
	})
	if err := c.Close(); err != nil {
		t.Errorf("Close after the device went: %v", err)
	}
	del.wait(t)
	w.Sync(t, t.Name()+"/done")
}

// siwSocketLost reports whether err is how a siw QP ends when its TCP
// socket goes under it: the work request siw was sending completes with
// LOC_QP_OP_ERR (siw_qp_sq_process in siw_qp_tx.c) and the rest are
// flushed. It is false on rxe.
func siwSocketLost(w *testenv.WireEnv, err error) bool {
	var ce *CompletionError
	return w.SIWDev != "" && errors.As(err, &ce) &&
		(ce.Status == uverbs.WCWRFlushErr || ce.Status == uverbs.WCLocQPOpErr)
}

// deletion is the deletion of the wire's device (rxe0 or siw0) by `rdma
// link delete`, which runs in a goroutine of its own: the removal waits
// until every uverbs context of the device is closed.
type deletion struct {
	nl      *nldev.Client
	dev     uint32
	started bool
	done    bool
	result  chan error
}

// deletable prepares the deletion of device dev, the wire's rxe. t's
// cleanup waits for a deletion that was started, then adds the device
// back on its netdev, under its name, and waits until it carries the
// wire's address again, for the tests after this one.
func deletable(t *testing.T, w *testenv.WireEnv, dev uint32) *deletion {
	t.Helper()
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	d, err := nl.Device(dev)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := nl.Ports(dev)
	if err != nil || len(ports) == 0 || ports[0].Netdev == "" {
		t.Fatalf("the netdev of %s: %v %v", d.Name, ports, err)
	}
	netdev := ports[0].Netdev
	del := &deletion{nl: nl, dev: dev, result: make(chan error, 1)}
	t.Cleanup(func() {
		if del.started {
			del.wait(t)
		}
		typ := nldev.LinkRXE
		if w.SIWDev != "" {
			typ = nldev.LinkSIW
		}
		if err := nl.AddLink(d.Name, typ, netdev); err != nil {
			t.Fatalf("adding %s back on %s: %v", d.Name, netdev, err)
		}
		testenv.WaitFor(t, d.Name+" to carry the wire's address again", func() bool {
			devs, err := nl.Devices()
			if err != nil || len(devs) == 0 || devs[0].Name != d.Name {
				return false
			}
			if typ == nldev.LinkSIW { // siw's GIDs come from the MAC: its port up is enough
				ports, err := nl.Ports(devs[0].Index)
				return err == nil && len(ports) > 0 && ports[0].State == ib.PortActive
			}
			return rxetest.HasGID(d.Name, w.Self)
		})
	})
	return del
}

// start starts the deletion; the test's goroutine calls it, once.
func (d *deletion) start() {
	d.started = true
	go func() { d.result <- d.nl.DeleteLink(d.dev) }()
}

// wait waits up to 20 s for the deletion to return, asking the device
// cache meanwhile, which closes a vanished device's context (the last
// one the process holds once its connections are closed).
func (d *deletion) wait(t *testing.T) {
	t.Helper()
	if d.done {
		return
	}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if list, err := rdma.GetDevices(); err == nil {
			rdma.FreeDevices(list)
		}
		select {
		case err := <-d.result:
			d.done = true
			if err != nil {
				t.Fatalf("rdma link delete: %v", err)
			}
			return
		default:
		}
	}
	t.Fatal("rdma link delete still waits 20 s after the connection was closed")
}
