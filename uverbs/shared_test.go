package uverbs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/ctxshare"
)

// TestSharedClose: Close on a shared context is refused with ErrShared
// and changes nothing; the function Share returned closes it,
// once.
func TestSharedClose(t *testing.T) {
	_, c := fakeRXEContext(t, 1)
	closeShared := Share(c, ctxshare.Key{})
	t.Cleanup(func() { closeShared() })
	err := c.Close()
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
