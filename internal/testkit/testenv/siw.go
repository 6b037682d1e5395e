package testenv

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The environment test/vm gives a siw guest, and the siw device of a wire
// guest.
const (
	EnvSIWDev       = "RDMASTACK_SIW_DEV"        // siw0, in the root network namespace
	EnvSIWAddr      = "RDMASTACK_SIW_ADDR"       // the IPv4 address of siw0's netdev
	EnvSIWPeerDev   = "RDMASTACK_SIW_PEER_DEV"   // siw1, in the peer namespace
	EnvSIWPeerAddr  = "RDMASTACK_SIW_PEER_ADDR"  // the IPv4 address of siw1's netdev
	EnvSIWPeerNetns = "RDMASTACK_SIW_PEER_NETNS" // the peer namespace's path
	EnvWireSIWDev   = "RDMASTACK_WIRE_SIW_DEV"   // the siw device on a wire guest's eth0
)

// SIWEnv is a siw test's view of its guest: test/vm runs every test whose
// name contains SIW (TestIntegrationSIW…, BenchmarkSIW…) in a guest of its
// own per kernel, with two Soft-iWARP devices and no rxe, and in no other
// single guest (a wire test named TestWireSIW… runs in the pairs, where
// WireEnv.SIWDev sits alone on eth0). Dev sits on a veth in the
// root network namespace, PeerDev on its peer in the namespace PeerNetns:
// iWARP is TCP underneath, and two siw devices of one namespace would talk
// through the device that owns the destination address. Run a peer
// process with PeerCommand, or peer code of the test's own process with
// InPeer.
type SIWEnv struct {
	Dev, PeerDev   string     // siw0, siw1
	Addr, PeerAddr netip.Addr // their netdevs' IPv4 addresses, one subnet
	PeerNetns      string     // the peer namespace's path: /run/netns/siwb
}

// SIW returns the test's siw guest. Outside the VM the test skips; inside a
// guest that is not a siw guest it fails (test/vm runs siw tests only
// there).
func SIW(t testing.TB) *SIWEnv {
	t.Helper()
	if !InVM() {
		t.Skip("a siw test runs in test/vm's siw guests")
	}
	if os.Getenv(EnvSIWDev) == "" {
		t.Fatalf("a siw test runs only in a siw guest (no %s here)", EnvSIWDev)
	}
	e, err := parseSIW(os.Getenv(EnvSIWDev), os.Getenv(EnvSIWAddr), os.Getenv(EnvSIWPeerDev),
		os.Getenv(EnvSIWPeerAddr), os.Getenv(EnvSIWPeerNetns))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func parseSIW(dev, addr, peerDev, peerAddr, netns string) (*SIWEnv, error) {
	e := &SIWEnv{Dev: dev, PeerDev: peerDev, PeerNetns: netns}
	var err error
	if e.Addr, err = netip.ParseAddr(addr); err != nil {
		return nil, fmt.Errorf("%s: %v", EnvSIWAddr, err)
	}
	if e.PeerAddr, err = netip.ParseAddr(peerAddr); err != nil {
		return nil, fmt.Errorf("%s: %v", EnvSIWPeerAddr, err)
	}
	for name, v := range map[string]string{EnvSIWDev: dev, EnvSIWPeerDev: peerDev, EnvSIWPeerNetns: netns} {
		if v == "" {
			return nil, fmt.Errorf("%s is empty", name)
		}
	}
	return e, nil
}

// PeerCommand is exec.CommandContext for a program that runs in the peer
// namespace, through nsenter.
func (e *SIWEnv) PeerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + e.PeerNetns, "--", name}, args...)...)
}

// InPeer runs f on a goroutine of its own, locked to its OS thread and
// switched into the peer namespace, so that sockets and rdma_cm ids f
// creates belong there (they stay there once made). It waits for f; f may
// call t.Fatal. A thread that cannot switch back stays locked, so that it
// ends with the goroutine rather than serve others in the wrong namespace.
func (e *SIWEnv) InPeer(t testing.TB, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back, err := setns(e.PeerNetns)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() {
			if err := back(); err != nil {
				errc <- err
				return // the thread stays locked, and dies with the goroutine
			}
			runtime.UnlockOSThread()
			errc <- nil
		}()
		f()
	}()
	if err := <-errc; err != nil {
		t.Fatalf("peer namespace %s: %v", e.PeerNetns, err)
	}
}

// setns switches the calling thread into the network namespace at path and
// returns the function that switches it back.
func setns(path string) (back func() error, err error) {
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, fmt.Errorf("open this thread's namespace: %w", err)
	}
	peer, err := os.Open(path)
	if err != nil {
		self.Close()
		return nil, fmt.Errorf("open namespace: %w", err)
	}
	defer peer.Close()
	if err := unix.Setns(int(peer.Fd()), unix.CLONE_NEWNET); err != nil {
		self.Close()
		return nil, fmt.Errorf("setns %s: %w", path, err)
	}
	return func() error {
		defer self.Close()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns back: %w", err)
		}
		return nil
	}, nil
}
