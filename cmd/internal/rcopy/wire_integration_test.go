package rcopy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// wireSize and wirePerm are the size and mode of TestWireRcopy's file.
const (
	wireSize = 1<<20 + 17
	wirePerm = 0o604
)

// TestWireRcopy: a file of a little over 1 MiB copied over rsockets
// across the wire, from side 1's guest (the client) to side 0's (the
// server), ours against rdma-core's in both roles and ours against
// ours. The client checks its own words; the server's side compares the
// copy's SHA-256, size and mode with the source's, which the client's
// side sends, and our server's words; no id is left on either device.
func TestWireRcopy(t *testing.T) {
	w, dev := rxetest.Wire(t)
	o, r := sides(t, rsock.RDMA)
	for _, pair := range [][2]cmtest.Side{{o, r}, {r, o}, {o, o}} {
		t.Run(fmt.Sprintf("%v-%v", pair[0], pair[1]), func(t *testing.T) {
			cmtest.WireDone(t, w)
			cmtest.NoCMIDsLeft(t, dev)
			if w.Side == 0 {
				wireServe(t, w, dev, pair[0])
			} else {
				wireCopy(t, w, pair[1])
			}
		})
	}
}

// wireServe is the server's side of TestWireRcopy: ours or rdma-core's
// serves until the client's side has sent the source's SHA-256, which
// the copy's must equal.
func wireServe(t *testing.T, w *testenv.WireEnv, dev uint32, server cmtest.Side) {
	wait := func(port uint16) error {
		return cmtest.WaitListen(dev, netip.AddrPortFrom(netip.IPv4Unspecified(), port), 20*time.Second)
	}
	var port string
	var out *testenv.Buffer
	if server.Main != nil {
		port, out = serverReady(t, w, wait)
	} else {
		// rdma-core's server serves for ever; its stdout, a pipe, is
		// lost with the kill, so the copy is the check.
		p := cmtest.Port()
		stop := server.Serve([]string{"-p", strconv.Itoa(int(p))})
		t.Cleanup(func() {
			if r := stop(); r.Code != 128+15 || r.Stderr != "" {
				t.Errorf("rdma-core's server, stopped with SIGTERM: %v", r)
			}
		})
		if err := wait(p); err != nil {
			w.Exchange(t, t.Name()+"/port", "")
			t.Fatalf("rdma-core's server: %v\n%v", err, stop())
		}
		port = strconv.Itoa(int(p))
	}
	dst := filepath.Join(t.TempDir(), "copy")
	w.Exchange(t, t.Name()+"/port", port+" "+dst)
	sum := w.Exchange(t, t.Name()+"/sum", "")
	if sum == "" {
		t.Fatal("the client's side failed")
	}
	if out != nil {
		want := serverOut(w.Peer, dst, wireSize)
		cmtestEventually(t, func() bool { return out.String() == want }, out.String)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256(got); len(got) != wireSize || hex.EncodeToString(h[:]) != sum {
		t.Fatalf("%v server's copy %s: %d bytes, SHA-256 %x; the source: %d bytes, %s", server, dst, len(got), h, wireSize, sum)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != wirePerm {
		t.Fatalf("%v server's copy %s: mode %v, want %v (%v)", server, dst, fi.Mode(), os.FileMode(wirePerm), err)
	}
}

// serverReady is server (ours) that tells the peer when it is not
// ready, rather than leaving it at the rendezvous of the port.
func serverReady(t *testing.T, w *testenv.WireEnv, wait func(uint16) error) (string, *testenv.Buffer) {
	var failed error
	port, out := server(t, rsock.RDMA, func(p uint16) error {
		failed = wait(p)
		return nil
	})
	if failed != nil {
		w.Exchange(t, t.Name()+"/port", "")
		t.Fatalf("our server: %v", failed)
	}
	return port, out
}

// wireCopy is the client's side of TestWireRcopy: client copies a
// fresh random file to the path the server's side named, checks its
// own words, and sends the source's SHA-256 (nothing if it failed).
func wireCopy(t *testing.T, w *testenv.WireEnv, client cmtest.Side) {
	port, dst, ok := strings.Cut(w.Exchange(t, t.Name()+"/port", ""), " ")
	if !ok {
		t.Fatal("the peer's server did not get ready")
	}
	src, data := sourceFile(t, wireSize, wirePerm)
	r := client.Start([]string{src, w.Peer.String() + ":" + dst, "-p", port}, 60*time.Second)()
	if !clientOK(r.Stdout, r.Stderr, r.Code, len(data)) {
		w.Exchange(t, t.Name()+"/sum", "")
		t.Fatalf("%v client: %v", client, r)
	}
	h := sha256.Sum256(data)
	w.Exchange(t, t.Name()+"/sum", hex.EncodeToString(h[:]))
}
