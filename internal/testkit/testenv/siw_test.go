package testenv

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSIW(t *testing.T) {
	e, err := parseSIW("siw0", "10.78.0.1", "siw1", "10.78.0.2", "/run/netns/siwb")
	if err != nil {
		t.Fatal(err)
	}
	want := SIWEnv{Dev: "siw0", PeerDev: "siw1", Addr: netip.MustParseAddr("10.78.0.1"),
		PeerAddr: netip.MustParseAddr("10.78.0.2"), PeerNetns: "/run/netns/siwb"}
	if *e != want {
		t.Errorf("parseSIW = %+v, want %+v", *e, want)
	}
	for _, bad := range [][5]string{
		{"", "10.78.0.1", "siw1", "10.78.0.2", "/n"},
		{"siw0", "x", "siw1", "10.78.0.2", "/n"},
		{"siw0", "10.78.0.1", "", "10.78.0.2", "/n"},
		{"siw0", "10.78.0.1", "siw1", "", "/n"},
		{"siw0", "10.78.0.1", "siw1", "10.78.0.2", ""},
	} {
		if _, err := parseSIW(bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("parseSIW(%q): no error", bad)
		}
	}
}

// TestSIWPeerCommand: the peer's program runs under nsenter in the peer
// namespace.
func TestSIWPeerCommand(t *testing.T) {
	e := &SIWEnv{PeerNetns: "/run/netns/siwb"}
	got := e.PeerCommand(context.Background(), "/usr/bin/rping", "-c", "-a", "10.78.0.1").Args
	want := []string{"nsenter", "--net=/run/netns/siwb", "--", "/usr/bin/rping", "-c", "-a", "10.78.0.1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("PeerCommand args = %q, want %q", got, want)
	}
}

// TestSIWInPeerErrors: a namespace that cannot be entered fails the test
// and leaves no thread behind in the wrong namespace.
func TestSIWInPeerErrors(t *testing.T) {
	if _, err := setns("/nonexistent/netns"); err == nil {
		t.Fatal("setns of a missing namespace: no error")
	}
}

// TestIntegrationSIWGuest: the siw guest's two devices are iWARP RNICs with
// ACTIVE ports, rdma-core's rping runs between them across the namespaces,
// and InPeer really runs in the peer namespace.
func TestIntegrationSIWGuest(t *testing.T) {
	e := SIW(t)
	for _, dev := range []string{e.Dev, e.PeerDev} {
		sys := "/sys/class/infiniband/" + dev
		if got := readTrimmed(t, sys+"/node_type"); got != "4: RNIC" {
			t.Errorf("%s node_type = %q, want %q", dev, got, "4: RNIC")
		}
		if got := readTrimmed(t, sys+"/ports/1/state"); got != "4: ACTIVE" {
			t.Errorf("%s port 1 state = %q, want %q", dev, got, "4: ACTIVE")
		}
		if got := readTrimmed(t, sys+"/ports/1/link_layer"); got != "Ethernet" {
			t.Errorf("%s port 1 link_layer = %q, want Ethernet", dev, got)
		}
	}

	e.InPeer(t, func() {
		if !hasAddr(t, e.PeerAddr) || hasAddr(t, e.Addr) {
			t.Errorf("InPeer: the namespace does not hold %s alone of %s and %s", e.PeerAddr, e.PeerAddr, e.Addr)
		}
	})
	if !hasAddr(t, e.Addr) || hasAddr(t, e.PeerAddr) {
		t.Errorf("after InPeer: the namespace does not hold %s alone of %s and %s", e.Addr, e.Addr, e.PeerAddr)
	}

	// rping's own exit race fails about 1 run in 20 (vm-harness notes): a
	// single retry of the pair is fair, two failures are not.
	rping := Oracle(t, "rping")
	var why string
	for range 2 {
		if why = rpingPair(t, e, rping); why == "" {
			return
		}
		t.Logf("rping pair failed, once more: %s", why)
	}
	t.Fatalf("rping %s <-> %s over %s/%s failed twice: %s", e.Addr, e.PeerAddr, e.Dev, e.PeerDev, why)
}

// rpingPair runs rping's server in this namespace and its client in the
// peer's, 3 verified pings, and says why it failed ("" if it did not).
func rpingPair(t *testing.T, e *SIWEnv, rping string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var srvOut bytes.Buffer
	srv := exec.CommandContext(ctx, rping, "-s", "-a", e.Addr.String(), "-C", "3", "-V")
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatalf("start rping -s: %v", err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	waited := false
	defer func() {
		if !waited {
			srv.Process.Kill()
			<-srvDone
		}
	}()
	// The client retries until the server listens.
	var cliOut []byte
	var cliErr error
	for try := 0; try < 40; try++ {
		cliOut, cliErr = e.PeerCommand(ctx, rping, "-c", "-a", e.Addr.String(), "-C", "3", "-V").CombinedOutput()
		if cliErr == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if cliErr != nil {
		return "client: " + cliErr.Error() + ": " + string(cliOut)
	}
	waited = true
	if err := <-srvDone; err != nil {
		return "server: " + err.Error() + ": " + srvOut.String()
	}
	return ""
}

func readTrimmed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// hasAddr reports whether an interface of the calling thread's network
// namespace has a.
func hasAddr(t *testing.T, a netip.Addr) bool {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("interface addresses: %v", err)
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok && n.IP.Equal(a.AsSlice()) {
			return true
		}
	}
	return false
}

// TestWireSIWDevice: a pair that runs wire tests named SIW has siw0 on
// eth0 in both guests, an iWARP RNIC with an ACTIVE port, and no other
// RDMA device (rdma_cm would bind eth0's address to an rxe0 there).
func TestWireSIWDevice(t *testing.T) {
	w := WireSIW(t)
	if w.Dev != w.SIWDev {
		t.Errorf("the wire's device %q, want %q", w.Dev, w.SIWDev)
	}
	ents, err := os.ReadDir("/sys/class/infiniband")
	if err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, e := range ents {
		devs = append(devs, e.Name())
	}
	if !slices.Equal(devs, []string{w.SIWDev}) {
		t.Errorf("RDMA devices %q, want %s alone", devs, w.SIWDev)
	}
	sys := "/sys/class/infiniband/" + w.SIWDev
	if got := readTrimmed(t, sys+"/node_type"); got != "4: RNIC" {
		t.Errorf("%s node_type = %q, want %q", w.SIWDev, got, "4: RNIC")
	}
	if got := readTrimmed(t, sys+"/ports/1/state"); got != "4: ACTIVE" {
		t.Errorf("%s port 1 state = %q, want %q", w.SIWDev, got, "4: ACTIVE")
	}
	link := strings.Fields(string(Run(t, Oracle(t, "rdma"), "link", "show", w.SIWDev+"/1")))
	if i := slices.Index(link, "netdev"); i < 0 || i+1 >= len(link) || link[i+1] != WireDev {
		t.Errorf("%s is not on %s: %q", w.SIWDev, WireDev, link)
	}
	w.Sync(t, "siw0 checked")
}
