package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/rdmastack/rdmastack/exporter/collector"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// BenchmarkScrape times one scrape of every RDMA device of the VM over
// HTTP, ours against node_exporter 1.5.0's infiniband collector (Debian's
// prometheus-node-exporter --collector.disable-defaults
// --collector.infiniband), both as processes started from tmpfs, both
// without their own Go and process metrics, alternating in one run
// (RDMA_EXPORTER_BENCH_ROUNDS rounds, ABBA). It reports the series each
// scrape carries and whether node_exporter's collector succeeded.
//
// sysfs=real reads the devices' own sysfs: on rxe node_exporter fails
// (rxe has no PMA counters directory), so that is the time of its failure.
// sysfs=pma gives both exporters a sysfs tree with one directory per real
// device laid out as an InfiniBand HCA's (testdata's mlx5_0, with all 30
// PMA counters), on which node_exporter succeeds; ours reads the same
// files, and RDMA netlink as always.
//
// inprocess is our collector's Gather and text encoding without HTTP, for
// its allocations, on either sysfs.
func BenchmarkScrape(b *testing.B) {
	testenv.RequireRDMA(b)
	tmp := b.TempDir()
	ne := copyTo(b, testenv.Oracle(b, "prometheus-node-exporter"), filepath.Join(tmp, "node_exporter"))
	self := copyTo(b, os.Args[0], filepath.Join(tmp, "rdma_exporter"))
	pmaRoot := pmaSysfs(b, filepath.Join(tmp, "sys"))
	// RDMA_EXPORTER_BENCH_ROUNDS rounds of every sub-benchmark, in ABBA
	// order: run with -test.count=1.
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("RDMA_EXPORTER_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	type target struct{ name, addr string }
	var pairs [][2]target
	for _, sys := range []struct{ name, root string }{{"real", "/sys"}, {"pma", pmaRoot}} {
		ours := startBench(b, self, []string{"RDMA_EXPORTER_AS_MAIN=1"}, "--web.exporter-metrics=false", "--compat.node-exporter", "--path.sysfs="+sys.root)
		ne := startBench(b, ne, nil, "--collector.disable-defaults", "--collector.infiniband", "--web.disable-exporter-metrics", "--path.sysfs="+sys.root)
		pairs = append(pairs, [2]target{{"sysfs=" + sys.name + "/ours", ours}, {"sysfs=" + sys.name + "/node_exporter", ne}})
	}
	for r := 0; r < rounds; r++ {
		for _, p := range pairs {
			first, second := p[0], p[1]
			if r%2 == 1 {
				first, second = second, first
			}
			b.Run(first.name, func(b *testing.B) { scrapeLoop(b, first.addr) })
			b.Run(second.name, func(b *testing.B) { scrapeLoop(b, second.addr) })
		}
	}
	for _, sys := range []struct{ name, root string }{{"real", "/sys"}, {"pma", pmaRoot}} {
		b.Run("sysfs="+sys.name+"/inprocess", func(b *testing.B) {
			c, err := collector.New(collector.Options{SysfsRoot: sys.root, NodeExporter: true})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			reg := prometheus.NewRegistry()
			reg.MustRegister(c)
			b.ReportAllocs()
			for b.Loop() {
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, mf := range mfs {
					enc.Encode(mf)
				}
			}
		})
	}
}

// scrapeLoop scrapes addr b.N times and reports the series per scrape and,
// for node_exporter, whether its collector succeeded.
func scrapeLoop(b *testing.B, addr string) {
	var series, failed int
	for b.Loop() {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		series, failed = 0, 0
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if l == "" || l[0] == '#' {
				continue
			}
			series++
			if strings.HasPrefix(l, `node_scrape_collector_success{collector="infiniband"} 0`) {
				failed = 1
			}
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(series), "series/op")
	b.ReportMetric(float64(failed), "failed")
}

// startBench starts an exporter on a free port and waits until it answers.
func startBench(b *testing.B, path string, env []string, args ...string) string {
	b.Helper()
	addr := freeAddr(b)
	flag := "--web.listen-address=" + addr
	cmd := exec.Command(path, append([]string{flag}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testenv.WaitFor(b, path+" to answer", func() bool { _, err := httpGet("http://" + addr + "/metrics"); return err == nil })
	return addr
}

// copyTo copies a binary to dst (tmpfs in the VM: a process started from
// the 9p root pays demand paging) and returns dst.
func copyTo(b *testing.B, src, dst string) string {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dst
}

// pmaSysfs builds under root a sysfs tree with class/infiniband/<name> for
// every RDMA device of the kernel, each a copy of the collector's mlx5_0
// fixture (an InfiniBand HCA port with every PMA counter).
func pmaSysfs(b *testing.B, root string) string {
	b.Helper()
	devs := rxetest.Devices(b)
	src := filepath.Join("..", "..", "collector", "testdata", "sysfs", "class", "infiniband", "mlx5_0")
	for _, d := range devs {
		dst := filepath.Join(root, "class", "infiniband", d.Name)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
	}
	return root
}
