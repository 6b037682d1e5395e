package nldev

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
)

// Fixtures are replies captured from real kernels inside the Soft-RoCE VM
// (see writeFixture): testdata/<kernel>/<name>.txt holds one netlink
// message per line, in hex, exactly as the kernel sent it.

// readFixture returns the messages of one fixture file.
func readFixture(tb testing.TB, path string) []netlink.Message {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var msgs []netlink.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(line)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		var m netlink.Message
		if err := m.UnmarshalBinary(b); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return msgs
}

// fixtures returns every fixture file with the given name, by kernel.
func fixtures(tb testing.TB, name string) map[string][]netlink.Message {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", name+".txt"))
	if err != nil {
		tb.Fatal(err)
	}
	out := make(map[string][]netlink.Message)
	for _, p := range paths {
		out[filepath.Base(filepath.Dir(p))] = readFixture(tb, p)
	}
	return out
}

// fixtureSeeds returns the payload of every captured message, as fuzz seeds.
func fixtureSeeds(tb testing.TB) [][]byte {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	var seeds [][]byte
	for _, p := range paths {
		for _, m := range readFixture(tb, p) {
			seeds = append(seeds, m.Data)
		}
	}
	return seeds
}

// writeFixture records messages as a fixture under dir/<kernel>/<name>.txt.
func writeFixture(tb testing.TB, dir, kernel, name string, msgs []netlink.Message) {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString("# captured from Linux " + kernel + " in the Soft-RoCE VM by nldev's integration tests\n")
	for _, m := range msgs {
		b, err := m.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		sb.WriteString(hex.EncodeToString(b) + "\n")
	}
	d := filepath.Join(dir, kernel)
	if err := os.MkdirAll(d, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, name+".txt"), []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}
