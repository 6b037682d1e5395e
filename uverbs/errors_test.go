package uverbs

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

func errIs(err, target error) bool { return errors.Is(err, target) }

// TestErrNotSupported: one sentinel, shared with nldev and ib, and the
// kernel's errnos for it.
func TestErrNotSupported(t *testing.T) {
	if ErrNotSupported != nldev.ErrNotSupported || ErrNotSupported != ib.ErrNotSupported {
		t.Fatal("uverbs, nldev and ib have different ErrNotSupported sentinels")
	}
	for _, errno := range []unix.Errno{unix.EOPNOTSUPP, unix.EPROTONOSUPPORT} {
		err := wrap("rxe0", "x", errno)
		if !errIs(err, ErrNotSupported) || !errIs(err, nldev.ErrNotSupported) || !errIs(err, errno) {
			t.Errorf("%v does not match ErrNotSupported (uverbs and nldev) and %v", err, errno)
		}
	}
	if errIs(wrap("rxe0", "x", unix.EINVAL), ErrNotSupported) {
		t.Error("EINVAL matches ErrNotSupported")
	}
}
