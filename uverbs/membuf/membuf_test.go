package membuf

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

func TestBuffer(t *testing.T) {
	if _, err := New(0); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("New(0): %v", err)
	}
	b, err := New(5000)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Bytes()
	if len(m) != 5000 || cap(m) != 5000 || b.Len() != 5000 || b.Addr(0)%uint64(unix.Getpagesize()) != 0 || b.Addr(10) != b.Addr(0)+10 {
		t.Fatalf("len %d cap %d addr %#x", len(m), cap(m), b.Addr(0))
	}
	m[4999] = 1
	if _, err := b.RegisterRange(nil, 4000, 2000, 0); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("range past the end: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil || b.Bytes() != nil {
		t.Fatalf("second Close: %v, Bytes %v", err, b.Bytes() != nil)
	}
}
