package cmtest

import (
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testenv"
)

// Binaries returns our command (first on the VM's PATH) and rdma-core's,
// both copied to a tmpfs directory so that neither pays demand paging
// over the VM's 9p root when timed.
func Binaries(tb testing.TB, name string) (ours, theirs Side) {
	tb.Helper()
	oracle := testenv.Oracle(tb, name)
	bin, err := exec.LookPath(name)
	if err != nil || bin == oracle {
		tb.Fatalf("our %s binary: %q, %v (rdma-core's is %s)", name, bin, err, oracle)
	}
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	dir, err = os.MkdirTemp(dir, "cmtest")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	cp := func(src, dst string) string {
		in, err := os.Open(src)
		if err != nil {
			tb.Fatal(err)
		}
		defer in.Close()
		p := filepath.Join(dir, dst)
		out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			tb.Fatal(err)
		}
		if err := out.Close(); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	return Side{Name: "ours", Oracle: cp(bin, "ours-"+name)}, Side{Name: "rdma-core", Oracle: cp(oracle, name)}
}

// Timed runs a server (serverArgs) and then a client (clientArgs) on
// addr:port and returns the time from the server's start until both
// exited; either failing fails tb.
func Timed(tb testing.TB, dev uint32, addr netip.AddrPort, server, client Side, serverArgs, clientArgs []string) time.Duration {
	tb.Helper()
	t0 := time.Now()
	waitS := server.Start(serverArgs, 300*time.Second)
	if err := WaitListen(dev, addr, 20*time.Second); err != nil {
		tb.Fatalf("%v server: %v\n%v", server, err, waitS())
	}
	rc := client.Start(clientArgs, 300*time.Second)()
	rs := waitS()
	d := time.Since(t0)
	if rc.Code != 0 || rs.Code != 0 {
		tb.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
	}
	return d
}

// ABBA times rounds runs of ours and theirs alternating in ABBA order
// (run makes one timed run of a side) and reports the medians and
// their ratio.
func ABBA(b *testing.B, rounds int, ours, theirs Side, run func(Side) time.Duration) {
	run(theirs) // warm-up
	var o, t []float64
	for r := range rounds {
		order := []Side{ours, theirs}
		if r%4 == 1 || r%4 == 2 {
			order = []Side{theirs, ours}
		}
		for _, s := range order {
			ms := float64(run(s).Microseconds()) / 1000
			if s.Name == ours.Name {
				o = append(o, ms)
			} else {
				t = append(t, ms)
			}
		}
	}
	mo, mt := median(o), median(t)
	b.ReportMetric(mo, "ms-ours")
	b.ReportMetric(mt, "ms-rdmacore")
	b.ReportMetric(mo/mt, "ratio-ours/rdmacore")
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
