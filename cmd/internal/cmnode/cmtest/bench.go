package cmtest

import (
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
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
	dir := TmpfsDir(tb)
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

// TmpfsDir is a new directory in the guest's tmpfs (/dev/shm, else the
// temporary directory), removed when tb ends: for binaries that are
// timed, which from the VM's 9p root would pay demand paging.
func TmpfsDir(tb testing.TB) string {
	tb.Helper()
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	dir, err := os.MkdirTemp(dir, "cmtest")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Timed runs a server (serverArgs) and then a client (clientArgs) on
// addr:port and returns the time from the server's start until both
// exited; either failing fails tb.
func Timed(tb testing.TB, dev uint32, addr netip.AddrPort, server, client Side, serverArgs, clientArgs []string) time.Duration {
	tb.Helper()
	d, _, _ := TimedUsage(tb, dev, addr, server, client, serverArgs, clientArgs)
	return d
}

// TimedUsage is Timed that also returns what each side's process used.
func TimedUsage(tb testing.TB, dev uint32, addr netip.AddrPort, server, client Side, serverArgs, clientArgs []string) (_ time.Duration, su, cu Usage) {
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
	return d, rs.Usage, rc.Usage
}

// UsageMetrics collects what the processes of ABBA's pairs (ours with
// ours, rdma-core's with rdma-core's) used, and reports the medians
// per unit of work (a connection, a ping).
type UsageMetrics struct {
	ours, theirs string
	m            map[string][]float64
}

// NewUsageMetrics collects for the pairs of ours and theirs.
func NewUsageMetrics(ours, theirs Side) *UsageMetrics {
	return &UsageMetrics{ours: ours.Name, theirs: theirs.Name, m: map[string][]float64{}}
}

// Add records one run of the pair server, client (other pairs are
// ignored).
func (u *UsageMetrics) Add(server, client Side, su, cu Usage) {
	if server.Name != client.Name {
		return
	}
	for role, x := range map[string]Usage{"server": su, "client": cu} {
		k := server.Name + "-" + role
		u.m["csw-"+k] = append(u.m["csw-"+k], float64(x.Switches()))
		u.m["cpums-"+k] = append(u.m["cpums-"+k], float64(x.CPU.Microseconds())/1000)
	}
}

// Report reports each median divided by per ("csw/conn-ours-server",
// "cpums-rdma-core-client": CPU ms a run).
func (u *UsageMetrics) Report(b *testing.B, per float64, unit string) {
	for _, who := range []string{u.ours, u.theirs} {
		for _, role := range []string{"server", "client"} {
			k := who + "-" + role
			if v := u.m["csw-"+k]; len(v) > 0 {
				b.ReportMetric(Median(v)/per, "csw/"+unit+"-"+k)
				b.ReportMetric(Median(u.m["cpums-"+k]), "cpums-"+k)
			}
		}
	}
}

// BindConnect is a benchmark of whole runs of a program pair whose
// server binds to Addr (-b) and whose client connects to it (-s), each
// run on a fresh port (-p) with Args besides.
type BindConnect struct {
	Dev       uint32     // Addr's device, where the server's listen shows
	Addr      netip.Addr // the server's
	PeerNetns string     // the client's network namespace, if not the server's
	Args      []string
	Per       float64 // units of work a run (connections), for the usage figures
	Unit      string  // their name ("conn")
}

// Run times 8 ABBA rounds of ours and theirs (ABBA) and reports the
// pairs' context switches and CPU per unit (UsageMetrics).
func (bc BindConnect) Run(b *testing.B, ours, theirs Side) {
	use := NewUsageMetrics(ours, theirs)
	ABBA(b, 8, ours, theirs, func(s, c Side) time.Duration {
		port := Port()
		p := append([]string{"-p", strconv.Itoa(int(port))}, bc.Args...)
		client := c
		if bc.PeerNetns != "" {
			client = c.InNetns(bc.PeerNetns)
		}
		d, su, cu := TimedUsage(b, bc.Dev, netip.AddrPortFrom(bc.Addr, port), s, client,
			append([]string{"-b", bc.Addr.String()}, p...), append([]string{"-s", bc.Addr.String()}, p...))
		use.Add(s, c, su, cu)
		return d
	})
	use.Report(b, bc.Per, bc.Unit)
}

// ABBA times rounds runs of our pair (server and client) and rdma-core's
// alternating in ABBA order, each round also timing our server with
// rdma-core's client and the reverse (run makes one timed run), and
// reports the medians and their ratios to rdma-core's pair.
func ABBA(b *testing.B, rounds int, ours, theirs Side, run func(server, client Side) time.Duration) {
	f := ABBAPairings(rounds, ours, theirs, func(s, c Side) float64 { return float64(run(s, c).Microseconds()) / 1000 })
	t := f.Median(theirs, theirs)
	b.ReportMetric(f.Median(ours, ours), "ms-ours")
	b.ReportMetric(t, "ms-rdmacore")
	b.ReportMetric(f.Median(ours, ours)/t, "ratio-ours/rdmacore")
	b.ReportMetric(f.Median(ours, theirs)/t, "ratio-ours-server")
	b.ReportMetric(f.Median(theirs, ours)/t, "ratio-ours-client")
}

// Figures are each pairing's figures from ABBAPairings, by the server's
// and the client's names.
type Figures map[[2]string][]float64

// Median is the median of the figures of server with client.
func (f Figures) Median(server, client Side) float64 {
	return Median(f[[2]string{server.Name, client.Name}])
}

// ABBAPairings runs, after a warm-up run of theirs with theirs, rounds
// rounds of the four pairings of ours and theirs as server and client
// (ours with ours, theirs with theirs, and each serving the other),
// in ABBA order, and returns their figures: run makes one run and
// returns its figure. The mixed pairings tell which end of a pair
// costs what.
func ABBAPairings(rounds int, ours, theirs Side, run func(server, client Side) float64) Figures {
	run(theirs, theirs)
	f := Figures{}
	for r := range rounds {
		order := [][2]Side{{ours, ours}, {theirs, theirs}, {ours, theirs}, {theirs, ours}}
		if r%4 == 1 || r%4 == 2 {
			order = [][2]Side{{theirs, theirs}, {ours, ours}, {theirs, ours}, {ours, theirs}}
		}
		for _, p := range order {
			k := [2]string{p[0].Name, p[1].Name}
			f[k] = append(f[k], run(p[0], p[1]))
		}
	}
	return f
}

// Median is the median of v (the mean of the middle two when even).
func Median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// ABBAMedians runs rounds runs of ours and of theirs (across the wire or
// in one guest), alternating in ABBA order (after one warm-up run of theirs), where run
// makes one and returns its figure (MB/s, Mpps: more is better, or µs:
// less is), and returns the medians.
func ABBAMedians(rounds int, ours, theirs Side, run func(s Side) float64) (o, t float64) {
	run(theirs)
	var os, ts []float64
	for r := range rounds {
		order := []Side{ours, theirs}
		if r%4 == 1 || r%4 == 2 {
			order = []Side{theirs, ours}
		}
		for _, s := range order {
			if s.Name == ours.Name {
				os = append(os, run(s))
			} else {
				ts = append(ts, run(s))
			}
		}
	}
	return Median(os), Median(ts)
}
