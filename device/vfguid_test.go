package device

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

func TestParseVFGUID(t *testing.T) {
	want := ib.GUID{0x00, 0x02, 0xc9, 0x03, 0x00, 0x21, 0x6e, 0x70}
	for _, s := range []string{"00:02:c9:03:00:21:6e:70", "0002:c903:0021:6e70", "0002c90300216e70"} {
		if g, err := ParseVFGUID(s); err != nil || g != want {
			t.Errorf("ParseVFGUID(%q) = %v, %v, want %v", s, g, err, want)
		}
	}
	for _, s := range []string{"", "00:02:c9:03:00:21:6e", "00:02:c9:03:00:21:6e:70:01", "00-02-c9-03-00-21-6e-70",
		"0g:02:c9:03:00:21:6e:70", "+0:02:c9:03:00:21:6e:70", "0002c90300216e7"} {
		if _, err := ParseVFGUID(s); !errors.Is(err, ErrInvalidGUID) || !errors.Is(err, unix.EINVAL) {
			t.Errorf("ParseVFGUID(%q) = %v, want ErrInvalidGUID and EINVAL", s, err)
		}
	}
}

// TestVFGUIDNotInfiniBand runs where rtnetlink does: lo is no IPoIB
// netdev, and a missing netdev is os.ErrNotExist; nothing is sent.
func TestVFGUIDNotInfiniBand(t *testing.T) {
	if _, err := VFs("lo"); err != nil && !errors.Is(err, ErrNotInfiniBand) {
		t.Fatalf("VFs(lo) = %v", err)
	} else if err == nil {
		t.Fatal("VFs(lo) succeeded, want ErrNotInfiniBand")
	}
	g := ib.GUID{1, 2, 3, 4, 5, 6, 7, 8}
	for name, err := range map[string]error{
		"node": SetVFNodeGUID("lo", 0, g), "port": SetVFPortGUID("lo", 0, g), "both": SetVFGUIDs("lo", 0, g, g),
	} {
		if !errors.Is(err, ErrNotInfiniBand) || !errors.Is(err, unix.EOPNOTSUPP) {
			t.Errorf("set %s GUID on lo = %v, want ErrNotInfiniBand and EOPNOTSUPP", name, err)
		}
	}
	if err := SetVFNodeGUID("rdmst-nonexist", 0, g); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing netdev: %v, want os.ErrNotExist", err)
	}
	for _, bad := range []string{"", "a-name-longer-than-ifnamsiz"} {
		if _, err := VFs(bad); !errors.Is(err, unix.EINVAL) {
			t.Errorf("VFs(%q) = %v, want EINVAL", bad, err)
		}
	}
}
