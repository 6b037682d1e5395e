package rcopy

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// clientOK tells whether a client that copied n bytes ended as rcopy's
// does: status 0, nothing on stderr, its words and the performance line.
func clientOK(stdout, stderr string, code, n int) bool {
	const head = "opening...transferring...closing...done\n"
	return code == 0 && stderr == "" && strings.HasPrefix(stdout, head) && perfLine.MatchString(stdout[len(head):]) &&
		strings.HasPrefix(stdout[len(head):], strconv.Itoa(n)+" bytes in ")
}

// serverOut is what our server prints when the client at client has
// copied n bytes to dst, and it waits for the next.
func serverOut(client netip.Addr, dst string, n int) string {
	return "waiting for connection...client: " + client.String() + "\nopening: " + dst + ", transferring..." +
		strconv.Itoa(n) + " bytes...closing...done\nwaiting for connection..."
}

// TestIntegrationRcopyRDMA: a multi-megabyte file over rsockets on the
// rxe device's address, ours to ours, ours to rdma-core's server and
// rdma-core's client to ours, byte for byte with its mode.
func TestIntegrationRcopyRDMA(t *testing.T) {
	addr, dev := cmtest.RxeAddr(t)
	oracle := testenv.Oracle(t, "rcopy")
	waitRDMA := func(port uint16) error {
		return cmtest.WaitListen(dev, netip.AddrPortFrom(netip.IPv4Unspecified(), port), 20*time.Second)
	}
	src, data := sourceFile(t, 3<<20+17, 0o604)
	checkClient := func(t *testing.T, so, se string, code int) {
		t.Helper()
		if !clientOK(so, se, code, len(data)) {
			t.Fatalf("client: exit %d\nstdout %q\nstderr %q", code, so, se)
		}
	}
	serverOut := func(dst string) string { return serverOut(addr, dst, len(data)) }

	t.Run("ours-ours", func(t *testing.T) {
		port, out := server(t, rsock.RDMA, waitRDMA)
		dst := filepath.Join(t.TempDir(), "copy")
		so, se, code := client(rsock.RDMA, src, addr.String()+":"+dst, "-p", port)
		checkClient(t, so, se, code)
		checkCopy(t, dst, data, 0o604)
		cmtestEventually(t, func() bool { return out.String() == serverOut(dst) }, out.String)
	})
	t.Run("rdma-core-ours", func(t *testing.T) {
		port, out := server(t, rsock.RDMA, waitRDMA)
		dst := filepath.Join(t.TempDir(), "copy")
		var so, se bytes.Buffer
		cmd := exec.Command(oracle, src, addr.String()+":"+dst, "-p", port)
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		checkClient(t, so.String(), se.String(), cmd.ProcessState.ExitCode())
		if err != nil {
			t.Fatal(err)
		}
		checkCopy(t, dst, data, 0o604)
		cmtestEventually(t, func() bool { return out.String() == serverOut(dst) }, out.String)
	})
	t.Run("ours-rdma-core", func(t *testing.T) {
		// rdma-core's server serves for ever; its stdout, a pipe, is
		// lost with the kill, so the copy is the check.
		port := cmtest.Port()
		srv := exec.Command(oracle, "-p", strconv.Itoa(int(port)))
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		if err := waitRDMA(port); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "copy")
		so, se, code := client(rsock.RDMA, src, addr.String()+":"+dst, "-p", strconv.Itoa(int(port)))
		checkClient(t, so, se, code)
		checkCopy(t, dst, data, 0o604)
		os.Remove(dst)
	})
}

// TestIntegrationRcopyRDMAErrors: a client with nobody listening on the
// rxe address ends as rdma-core's does.
func TestIntegrationRcopyRDMAErrors(t *testing.T) {
	addr, _ := cmtest.RxeAddr(t)
	o, r := sides(t, rsock.RDMA)
	nobody := strconv.Itoa(int(cmtest.Port()))
	differ(t, o, r, [][]string{{"/dev/null", addr.String() + ":/tmp/x", "-p", nobody}})
}
