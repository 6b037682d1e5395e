package k8sbench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// discoveries are the three ways, in the order the benchmarks run them.
var discoveries = []struct {
	name string
	fn   func() ([]Found, error)
}{
	{"ours", Ours},
	{"rdmamap", Rdmamap},
	{"netlink", Netlink},
}

// normal sorts a discovery's devices by name and each device's lists, so
// that discoveries that meet things in different orders compare equal.
func normal(fs []Found) []Found {
	out := slices.Clone(fs)
	for i := range out {
		out[i].CharDevs = slices.Sorted(slices.Values(out[i].CharDevs))
		out[i].Netdevs = slices.Sorted(slices.Values(out[i].Netdevs))
	}
	slices.SortFunc(out, func(a, b Found) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// TestIntegrationDiscoveryAgrees: the three discoveries find the same
// devices, char device paths and netdevs in the VM (rxe devices, each on
// a veth of its own, each port with one umad and one issm), and what they
// find is whole: every device has its uverbs node, rdma_cm and a netdev.
func TestIntegrationDiscoveryAgrees(t *testing.T) {
	testenv.RequireRDMA(t)
	var want []Found
	for _, d := range discoveries {
		got, err := d.fn()
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		got = normal(got)
		if want == nil {
			want = got
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s found otherwise than ours (-ours +%s):\n%s", d.name, d.name, diff)
		}
	}
	if len(want) == 0 {
		t.Fatal("ours found no device")
	}
	for _, f := range want {
		if !slices.Contains(f.CharDevs, "/dev/infiniband/rdma_cm") || !slices.ContainsFunc(f.CharDevs, func(p string) bool {
			return strings.HasPrefix(p, "/dev/infiniband/uverbs")
		}) {
			t.Errorf("%s: char devices %q: want its uverbs node and rdma_cm", f.Name, f.CharDevs)
		}
		if len(f.Netdevs) == 0 {
			t.Errorf("%s: no netdev found", f.Name)
		}
	}
	t.Logf("%d devices, the first %+v", len(want), want[0])
}

// BenchmarkDiscovery is a device plugin's full discovery (see Found) by
// each of the three, then the three alternated in one palindromic round
// (ours, rdmamap, netlink, netlink, rdmamap, ours: ABBA for each pair, so
// a drift of the machine's speed falls on both sides alike), which
// reports the time of one discovery of each and the ratios ours/rdmamap
// and ours/netlink. Run it in the VM (see README.md; with 64 devices one
// rdmamap discovery takes a quarter of an hour under TCG):
//
//	go run ./test/vm test -unit=false -race none -wire=false -parallel 1 -devices 2,16 -scale "" -- -test.run XXX -test.bench Discovery -test.benchtime 2s -test.benchmem
func BenchmarkDiscovery(b *testing.B) {
	testenv.RequireRDMA(b)
	for _, d := range discoveries {
		b.Run(d.name, func(b *testing.B) {
			var n int
			b.ReportAllocs()
			for b.Loop() {
				fs, err := d.fn()
				if err != nil {
					b.Fatal(err)
				}
				n = len(fs)
			}
			b.ReportMetric(float64(n), "devices")
		})
	}
	b.Run("abba", func(b *testing.B) {
		var sum [3]time.Duration
		rounds := 0
		for b.Loop() {
			for _, i := range []int{0, 1, 2, 2, 1, 0} {
				start := time.Now()
				if _, err := discoveries[i].fn(); err != nil {
					b.Fatal(err)
				}
				sum[i] += time.Since(start)
			}
			rounds++
		}
		per := func(i int) float64 { return float64(sum[i]) / float64(2*rounds) }
		for i, d := range discoveries {
			b.ReportMetric(per(i), d.name+"-ns/discovery")
		}
		b.ReportMetric(per(0)/per(1), "ours/rdmamap")
		b.ReportMetric(per(0)/per(2), "ours/netlink")
	})
}
