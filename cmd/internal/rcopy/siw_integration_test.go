package rcopy

import (
	"context"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestMain lets the test binary be our rcopy as a process (cmtest.Self),
// for the peer namespace of the siw guest.
func TestMain(m *testing.M) {
	cmtest.RunSelf(func(stdout, stderr io.Writer, args []string) error {
		return Run(context.Background(), rsock.RDMA, "rcopy", stdout, stderr, args)
	})
	os.Exit(m.Run())
}

// TestIntegrationSIWRcopy: on Soft-iWARP, a multi-megabyte file ours to
// ours, rdma-core's client to our server and ours to rdma-core's
// server, byte for byte with its mode: the server on siw0 (listening on
// every address, as rcopy does), the client on siw1 in the peer
// namespace (ours there as a process).
func TestIntegrationSIWRcopy(t *testing.T) {
	e, dev := cmtest.SIW(t)
	oracle := testenv.Oracle(t, "rcopy")
	waitRDMA := func(port uint16) error {
		return cmtest.WaitListen(dev, netip.AddrPortFrom(netip.IPv4Unspecified(), port), 20*time.Second)
	}
	src, data := sourceFile(t, 3<<20+17, 0o604)
	ours := cmtest.Self("ours").InNetns(e.PeerNetns)
	theirs := cmtest.Side{Name: "rdma-core", Oracle: oracle}.InNetns(e.PeerNetns)
	copyTo := func(t *testing.T, client cmtest.Side, port string) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "copy")
		r := client.Start([]string{src, e.Addr.String() + ":" + dst, "-p", port}, 120*time.Second)()
		if !clientOK(r.Stdout, r.Stderr, r.Code, len(data)) {
			t.Fatalf("%v client: %v", client, r)
		}
		checkCopy(t, dst, data, 0o604)
		return dst
	}
	for _, client := range []cmtest.Side{ours, theirs} {
		t.Run("ours-"+client.String(), func(t *testing.T) {
			cmtest.NoCMIDsLeft(t, dev)
			port, out := server(t, rsock.RDMA, waitRDMA)
			dst := copyTo(t, client, port)
			cmtestEventually(t, func() bool { return out.String() == serverOut(e.PeerAddr, dst, len(data)) }, out.String)
		})
	}
	t.Run("rdma-core-ours", func(t *testing.T) {
		cmtest.NoCMIDsLeft(t, dev)
		port := cmtest.Port()
		// rdma-core's server serves for ever: the copy is the check.
		srv := exec.Command(oracle, "-p", strconv.Itoa(int(port)))
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		if err := waitRDMA(port); err != nil {
			t.Fatal(err)
		}
		copyTo(t, ours, strconv.Itoa(int(port)))
	})
}
