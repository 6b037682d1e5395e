package membuf

import (
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationBufferBusy: a buffer cannot be unmapped while a memory
// region covers it.
func TestIntegrationBufferBusy(t *testing.T) {
	testenv.RequireRDMA(t)
	c, err := uverbs.OpenName("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := b.RegisterRange(pd, 4096, 8192, uverbs.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	if mr.Addr() != uintptr(b.Addr(4096)) || mr.Len() != 8192 {
		t.Fatalf("mr at %#x+%d", mr.Addr(), mr.Len())
	}
	if err := b.Close(); !errors.Is(err, ErrBusy) || b.Bytes() == nil {
		t.Fatalf("Close under an MR: %v", err)
	}
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mr.Close(); err != nil {
		t.Fatalf("second MR Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close after the MR: %v", err)
	}
	if _, err := b.Register(pd, uverbs.AccessLocalWrite); err == nil {
		t.Fatal("Register on a closed buffer")
	}
}
