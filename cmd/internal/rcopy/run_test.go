package rcopy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

func waitTCP(port uint16) error { return cmtest.WaitTCPListen(port, 10*time.Second) }

// client runs our rcopy client over nw and returns its output and
// exit status.
func client(nw rsock.Network, args ...string) (stdout, stderr string, code int) {
	var so, se bytes.Buffer
	err := Run(context.Background(), nw, "rcopy", &so, &se, args)
	var ee *cmnode.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code & 0xff
	case err != nil:
		code = -1
	}
	return so.String(), se.String(), code
}

// TestCopyTCP: a multi-megabyte file ours to ours (over TCP, as the
// programs run over any net.Conn), byte for byte and with its mode;
// the server's and the client's words are rcopy's.
func TestCopyTCP(t *testing.T) {
	port, out := server(t, rsock.TCP, waitTCP)
	src, data := sourceFile(t, 5<<20+123, 0o640)
	dst := filepath.Join(t.TempDir(), "copy")
	so, se, code := client(rsock.TCP, src, "127.0.0.1:"+dst, "-p", port)
	const head = "opening...transferring...closing...done\n"
	if code != 0 || se != "" || !strings.HasPrefix(so, head) || !perfLine.MatchString(so[len(head):]) ||
		!strings.HasPrefix(so[len(head):], "5243003 bytes in ") {
		t.Fatalf("client: exit %d\nstdout %q\nstderr %q", code, so, se)
	}
	checkCopy(t, dst, data, 0o640)
	want := "waiting for connection...client: 127.0.0.1\nopening: " + dst + ", transferring...5243003 bytes...closing...done\nwaiting for connection..."
	cmtestEventually(t, func() bool { return out.String() == want }, func() string { return out.String() })

}

// TestCopyErrors: what fails, fails as rcopy does: a destination the
// server cannot create (the client exits with the server's errno, the
// server serves the next client), an empty source (rcopy cannot mmap
// it: EINVAL), a missing source, and bad command lines.
func TestCopyErrors(t *testing.T) {
	port, out := server(t, rsock.TCP, waitTCP)
	src, data := sourceFile(t, 4096, 0o600)
	bad := filepath.Join(t.TempDir(), "no-such-dir", "x")
	so, se, code := client(rsock.TCP, src, "127.0.0.1:"+bad, "-p", port)
	if code != 2 || so != "opening..." || se != "" {
		t.Errorf("uncreatable destination: exit %d, stdout %q, stderr %q", code, so, se)
	}
	dst := filepath.Join(t.TempDir(), "y")
	if so, se, code := client(rsock.TCP, src, "127.0.0.1:"+dst, "-p", port); code != 0 {
		t.Errorf("after a failed open: exit %d\n%s%s", code, so, se)
	}
	checkCopy(t, dst, data, 0o600)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	if so, _, code := client(rsock.TCP, empty, "127.0.0.1:"+dst, "-p", port); code != 22 || so != "opening..." {
		t.Errorf("empty source: exit %d, stdout %q", code, so)
	}
	if so, _, code := client(rsock.TCP, empty+"-none", "127.0.0.1:"+dst, "-p", port); code != 255 || so != "opening..." {
		t.Errorf("missing source: exit %d, stdout %q", code, so)
	}
	want := "waiting for connection...client: 127.0.0.1\nopening: " + bad + ", unable to open destination file\n" +
		"waiting for connection...client: 127.0.0.1\nopening: " + dst + ", transferring...4096 bytes...closing...done\n" +
		"waiting for connection...client: 127.0.0.1\nwaiting for connection...client: 127.0.0.1\nwaiting for connection..."
	cmtestEventually(t, func() bool { return out.String() == want }, func() string { return out.String() })

	u := fmt.Sprintf(usage, "rcopy")
	for _, c := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"file"}, u, "", 1},
		{[]string{"file", "host", "-x"}, u, "rcopy: invalid option -- 'x'\n", 1},
		{[]string{"-p"}, u, "rcopy: option requires an argument -- 'p'\n", 1},
		{[]string{src, "127.0.0.1", "-p", strconv.Itoa(int(cmtest.Port()))}, "", "rconnect failed\n: Connection refused\n", 255},
		{[]string{src, "127.0.0.1", "-p", "no-such-service"}, "getaddrinfo failed: Servname not supported for ai_socktype\n", "", 248},
	} {
		if so, se, code := client(rsock.TCP, c.args...); so != c.stdout || se != c.stderr || code != c.code {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q", c.args, code, so, se)
		}
	}
}

// TestServerProtocol: requests rdma-core's client never sends are
// answered as rcopy's server answers them: a write of no bytes fails
// mmap (EINVAL) and leaves the server refusing to open another file
// (EBUSY) until a close; an unknown command is EINVAL.
func TestServerProtocol(t *testing.T) {
	port, out := server(t, rsock.TCP, waitTCP)
	dst := filepath.Join(t.TempDir(), "z")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	expect := func(c net.Conn, cmd Command, status uint32) {
		t.Helper()
		var b [HeaderSize]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		h, err := DecodeHeader(b[:])
		if err != nil {
			t.Fatal(err)
		}
		if st, err := CheckResponse(h, cmd); err != nil || st != status {
			t.Fatalf("%v: status %d, %v; want %d", cmd, st, err, status)
		}
	}
	c := dial()
	c.Write(OpenMessage(dst, 0o100600))
	expect(c, CmdOpen, 0)
	c.Write(WriteMessage(0))
	expect(c, CmdWrite, 22)
	c = dial()
	c.Write(OpenMessage(dst, 0o100600))
	expect(c, CmdOpen, 16)
	c = dial()
	c.Write(Header{Command: CmdClose, Len: HeaderSize}.Append(nil))
	expect(c, CmdClose, 0)
	c.Write(Header{Command: 9, Len: HeaderSize, ID: 5}.Append(nil))
	expect(c, 9, 22)
	want := "waiting for connection...client: 127.0.0.1\nopening: " + dst + ", transferring...error mapping file\n" +
		"waiting for connection...client: 127.0.0.1\nopening: cannot open another file\n" +
		"waiting for connection...client: 127.0.0.1\nclosing...done\nwaiting for connection..."
	cmtestEventually(t, func() bool { return out.String() == want }, func() string { return out.String() })
}

// cmtestEventually waits a few seconds for cond, then fails t with what
// show says.
func cmtestEventually(t testing.TB, cond func() bool, show func() string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("server printed\n%s", show())
}
