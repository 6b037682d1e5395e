package testenv

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
)

// StraceNetlink runs tool under strace and returns the netlink messages it
// sent (sendto and sendmsg, from strace's hex dump of the data written),
// what it wrote to stderr, and whether it exited zero. Where nlmon cannot see a protocol (the
// kernel taps only some: netlink_filter_tap leaves NETLINK_RDMA out), this
// is how a test reads what iproute2 sends.
func StraceNetlink(t testing.TB, tool string, args ...string) (msgs []netlink.Message, stderr string, ok bool) {
	t.Helper()
	strace := Oracle(t, "strace")
	out := filepath.Join(t.TempDir(), "strace.txt")
	cmd := exec.Command(strace, append([]string{"-f", "-o", out, "-e", "trace=sendto,sendmsg", "-e", "write=all", tool}, args...)...)
	var errBuf Buffer
	cmd.Stderr = &errBuf
	err := cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("strace %s: %v", tool, err)
	}
	b, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var buf []byte
	flush := func() {
		if len(buf) > 0 {
			msgs = append(msgs, splitNetlink(t, buf)...)
		}
		buf = nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, " | ") && len(line) >= 10:
			hexPart := line[10:min(len(line), 58)]
			for _, f := range strings.Fields(hexPart) {
				v, err := hex.DecodeString(f)
				if err != nil || len(v) != 1 {
					t.Fatalf("strace dump line %q", line)
				}
				buf = append(buf, v[0])
			}
		case strings.HasPrefix(line, " * "):
			// "N bytes in buffer K": the same syscall goes on.
		default:
			flush()
		}
	}
	flush()
	return msgs, errBuf.String(), err == nil
}
