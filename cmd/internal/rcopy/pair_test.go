package rcopy

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// server runs our rcopy server over nw on a fresh port until the test
// ends; it returns the port and the server's stdout.
func server(t *testing.T, nw rsock.Network, wait func(port uint16) error) (string, *testenv.Buffer) {
	t.Helper()
	port := cmtest.Port()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testenv.Buffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, nw, "rcopy", &out, &errOut, []string{"-p", strconv.Itoa(int(port))}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != context.Canceled || errOut.String() != "" {
				t.Errorf("server: %v, stderr %q", err, errOut.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("server does not stop")
		}
	})
	if err := wait(port); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(int(port)), &out
}

// sourceFile is a file of n random bytes with mode perm.
func sourceFile(t testing.TB, n int, perm os.FileMode) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	p := filepath.Join(t.TempDir(), "source")
	if err := os.WriteFile(p, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// perfLine is the client's last line.
var perfLine = regexp.MustCompile(`^\d+ bytes in \d+\.\d\d seconds = (\d+\.\d\d|inf) Gb/sec\n$`)

// checkCopy checks that dst holds data with mode perm.
func checkCopy(t testing.TB, dst string, data []byte, perm os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("%s: %d bytes differ from the source's %d", dst, len(got), len(data))
	}
	fi, err := os.Stat(dst)
	if err != nil || fi.Mode().Perm() != perm {
		t.Fatalf("%s: mode %v, want %v (%v)", dst, fi.Mode(), perm, err)
	}
}
