package device

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

func TestNetNSResolve(t *testing.T) {
	for in, want := range map[string]string{
		"pod1":              "/run/netns/pod1",
		"1234":              "/proc/1234/ns/net",
		"/var/run/netns/x":  "/var/run/netns/x",
		"./relative/ns/net": "./relative/ns/net",
	} {
		if got := NetNSPath(in).resolve(); got != want {
			t.Errorf("NetNSPath(%q) opens %q, want %q", in, got, want)
		}
	}
	if s := NetNSFD(7).String(); s != "fd 7" {
		t.Errorf("NetNSFD(7) = %q", s)
	}
}

// TestNetNSBadInput: what names no namespace is a typed error before any
// request, and what reaches the kernel needs no RDMA to be refused.
func TestNetNSBadInput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	closed := int(r.Fd())
	r.Close()
	for _, tc := range []struct {
		name string
		ns   NetNS
		want []error
	}{
		{"zero", NetNS{}, []error{unix.EINVAL}},
		{"negative fd", NetNSFD(-1), []error{unix.EINVAL}},
		{"closed fd", NetNSFD(closed), []error{unix.EBADF}},
		{"a pipe", NetNSFD(int(w.Fd())), []error{nldev.ErrNotNetNS, unix.EINVAL}},
		{"missing", NetNSPath("rdmst-no-such-netns"), []error{os.ErrNotExist}},
		{"dot-dot", NetNSPath(".."), []error{unix.EINVAL}},
	} {
		for fn, err := range map[string]error{
			"MoveToNetNS":       MoveToNetNS(1, tc.ns),
			"MoveToNetNSByGUID": MoveToNetNSByGUID(ib.GUID{1}, tc.ns),
			"ListNetNS":         second(ListNetNS(tc.ns)),
		} {
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("%s(%s) = %v, want %v", fn, tc.name, err, want)
				}
			}
		}
	}
	// A CNI DEL after the namespace went: nothing to do, not an error.
	if err := ReturnFromNetNS(1, NetNSPath("rdmst-no-such-netns")); err != nil {
		t.Errorf("ReturnFromNetNS from a namespace that is gone = %v, want nil", err)
	}
	if err := ReturnFromNetNSByGUID(ib.GUID{1}, NetNSPath("/proc/self/status")); err != nil {
		t.Errorf("ReturnFromNetNS from a file that is no namespace mount = %v, want nil", err)
	}
	// The caller's own namespace holds whatever is here: nothing to do.
	if err := ReturnFromNetNS(1, NetNSPath("/proc/thread-self/ns/net")); err != nil {
		t.Errorf("ReturnFromNetNS from the caller's namespace = %v, want nil", err)
	}
	// A descriptor given by the caller is not forgiven.
	if err := ReturnFromNetNS(1, NetNSFD(closed)); !errors.Is(err, unix.EBADF) {
		t.Errorf("ReturnFromNetNS(closed fd) = %v, want EBADF", err)
	}
}

func second[T any](_ T, err error) error { return err }
