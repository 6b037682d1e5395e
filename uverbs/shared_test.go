package uverbs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/ctxshare"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// TestSharedClose: Close on a shared context is refused with ErrShared
// and changes nothing; the function ctxshare.Share returned closes it,
// once.
func TestSharedClose(t *testing.T) {
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error {
		switch w.Command {
		case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
			fd := testEventFD(t)
			copy(w.Resp, []byte{byte(fd), byte(fd >> 8), 0, 0, 1, 0, 0, 0})
		case abi.IB_USER_VERBS_CMD_ALLOC_PD:
			copy(w.Resp, []byte{3, 0, 0, 0})
		}
		return nil
	}}
	c, err := newContext(Device{Name: "rxe0", Uverbs: "uverbs0", DriverID: ib.DriverRXE}, k, InterfaceWrite)
	if err != nil {
		t.Fatal(err)
	}
	closeShared := ctxshare.Share(c)
	t.Cleanup(func() { closeShared() })
	err = c.Close()
	if !errors.Is(err, ErrShared) || !errors.Is(err, unix.EBUSY) || !strings.Contains(err.Error(), "rxe0: close") {
		t.Fatalf("Close on a shared context: %v, want ErrShared naming the device and the operation", err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatalf("alloc pd after a refused Close: %v", err)
	}
	if err := closeShared(); err != nil {
		t.Fatalf("the cache's close: %v", err)
	}
	if _, err := c.AllocPD(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("alloc pd after the cache's close: %v, want os.ErrClosed", err)
	}
	if err := pd.Close(); err != nil {
		t.Fatalf("a PD of the closed context: %v", err)
	}
	if err := closeShared(); err != nil {
		t.Fatalf("a second close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, ErrShared) {
		t.Fatalf("Close after the cache's close: %v, want ErrShared", err)
	}
}
