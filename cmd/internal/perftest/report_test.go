package perftest

import (
	"bytes"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

// The expected texts are perftest 4.5-0.17's own output on the VM's rxe
// device (6.12), as printed by ib_read_bw and ib_send_lat.
const readBWClientInfo = resultLine +
	"                    RDMA_Read BW Test\n" +
	" Dual-port       : OFF\t\tDevice         : rxe0\n" +
	" Number of qps   : 1\t\tTransport type : IB\n" +
	" Connection type : RC\t\tUsing SRQ      : OFF\n" +
	" PCIe relax order: ON\n" +
	" ibv_wr* API     : OFF\n" +
	" TX depth        : 20\n" +
	" CQ Moderation   : 1\n" +
	" Mtu             : 1024[B]\n" +
	" Link type       : Ethernet\n" +
	" GID index       : 1\n" +
	" Outstand reads  : 128\n" +
	" rdma_cm QPs\t : OFF\n" +
	" Data ex. method : Ethernet\n" + resultLine

func parsed(t *testing.T, prog string, args ...string) *Config {
	t.Helper()
	p := programs[prog]
	var out, errb bytes.Buffer
	c, err := Parse(&out, &errb, prog, p.v, p.t, args)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTestInfo(t *testing.T) {
	c := parsed(t, "ib_read_bw", "-d", "rxe0", "-x", "1", "-F", "-n", "20", "127.0.0.1")
	c.OutReads = 128
	got := testInfo(c, linkInfo{dev: "rxe0", transport: "IB", linkLayer: "Ethernet", mtu: 1024})
	if got != readBWClientInfo {
		t.Errorf("got\n%q\nwant\n%q", got, readBWClientInfo)
	}
	s := parsed(t, "ib_send_lat", "-d", "rxe0", "-x", "1", "-F", "-n", "20", "-c", "UC")
	s.Inline = 0
	got = testInfo(s, linkInfo{dev: "rxe0", transport: "IB", linkLayer: "Ethernet", mtu: 1024})
	for _, want := range []string{"                    Send Latency Test\n", " Connection type : UC\t\tUsing SRQ      : OFF\n",
		" RX depth        : 20\n", " Max inline data : 0[B]\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("send_lat server info lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TX depth") || strings.Contains(got, "CQ Moderation") {
		t.Errorf("send_lat server info:\n%s", got)
	}
}

func TestDestLine(t *testing.T) {
	c := parsed(t, "ib_read_bw", "-n", "20")
	d := Dest{LID: 0, OutReads: 0x80, QPN: 0x16, PSN: 0x552c3, RKey: 0x645, VAddr: 0x55937de6f000,
		GID: ib.GID(netip.MustParseAddr("::ffff:10.77.0.1").As16())}
	want := " local address: LID 0000 QPN 0x0016 PSN 0x552c3 OUT 0x80 RKey 0x000645 VAddr 0x0055937de6f000\n" +
		" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:01\n"
	if got := destLine(c, "local", &d, true); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Over rdma_cm perftest prints every address as a SEND test's.
	cm := parsed(t, "ib_read_bw", "-n", "20", "-R")
	if got := destLine(cm, "local", &d, false); got != " local address: LID 0000 QPN 0x0016 PSN 0x552c3\n" {
		t.Errorf("-R: %q", got)
	}
	s := parsed(t, "ib_send_bw", "-n", "20")
	d = Dest{QPN: 0x11, PSN: 0x6429ee}
	if got := destLine(s, "remote", &d, false); got != " remote address: LID 0000 QPN 0x0011 PSN 0x6429ee\n" {
		t.Errorf("send: %q", got)
	}
	if cHex(0, 6) != "000000" || cHex(0x80, 4) != "0x80" || cHex(0x123456, 6) != "0x123456" {
		t.Errorf("cHex %s %s %s", cHex(0, 6), cHex(0x80, 4), cHex(0x123456, 6))
	}
}

func TestBWLine(t *testing.T) {
	c := parsed(t, "ib_send_bw", "-n", "20")
	for _, tc := range []struct {
		r    Report
		want string
	}{
		{Report{65536, 20, 28.23, 25.20, 0.000403}, " 65536      20               28.23              25.20  \t\t   0.000403\n"},
		{Report{65536, 20, 0, 34.76, 0.000556}, " 65536      20               0.00               34.76  \t\t   0.000556\n"},
		{Report{1024, 20, 0, 349.12, 0.357501}, " 1024       20               0.00               349.12 \t\t   0.357501\n"},
	} {
		if got := bwLine(c, tc.r); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	g := parsed(t, "ib_write_bw", "--report_gbits")
	if got := bwLine(g, Report{65536, 20, 0.31, 0.29, 0.000562}); got != " 65536      20               0.31               0.29   \t\t   0.000562\n" {
		t.Errorf("gbits %q", got)
	}
	if got := bwLine(g, Report{2, 5, 0.01, 0.02, 0.5}); got != " 2          5           0.010000            0.020000            0.500000\n" {
		t.Errorf("gbits small %q", got)
	}
	if got := bwHeader(g); got != resultLine+resultFmtGb+"\n" {
		t.Errorf("header %q", got)
	}
}

func TestComputeBW(t *testing.T) {
	c := parsed(t, "ib_write_bw", "-n", "5", "-s", "1M")
	// five 1 MiB writes, one completing every millisecond after the
	// first post at 0: average 5 MiB in 5 ms, the best run 1 MiB/ms.
	tm := &bwTimes{posted: []int64{0, 0, 0, 0, 0}, completed: []int64{1e6, 2e6, 3e6, 4e6, 5e6}}
	r := computeBW(c, tm, 1<<20, 5)
	if r.Size != 1<<20 || r.Iters != 5 || r.BWAvg != 1000 || r.BWPeak != 1000 || r.MsgRateAvg != 0.001 {
		t.Errorf("%+v", r)
	}
}

func TestLatReport(t *testing.T) {
	if got := (latStats{2, 20, 72.26, 94.12, 73.33, 75.36, 4.87, 94.12, 94.12}).line(); got !=
		" 2       20          72.26          94.12        73.33    \t       75.36       \t4.87   \t\t94.12   \t\t94.12  \n" {
		t.Errorf("line %q", got)
	}
	c := parsed(t, "ib_send_lat", "-n", "7")
	// posts 2 µs apart (an RTT of 2 µs: 1 µs each way), one 20 µs outlier
	posted := []int64{0, 2000, 4000, 6000, 26000, 28000, 30000}
	got := latReport(c, posted, 2)
	want := latStats{2, 7, 1, 1, 1, 1, 0, 1, 1}.line()
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	r := parsed(t, "ib_read_lat", "-n", "5", "-U")
	got = latReport(r, []int64{0, 1000, 3000, 6000, 10000}, 2)
	if !strings.HasPrefix(got, "#, usec\n1, 1\n2, 2\n3, 3\n4, 4\n"+resultLine) {
		t.Errorf("unsorted %q", got)
	}
}

// TestRowPatterns checks the interop test's row patterns against
// perftest's own rows (from the VM) and ours.
func TestRowPatterns(t *testing.T) {
	for _, row := range []string{
		" 2       20          72.26          94.12        73.33    \t       75.36       \t4.87   \t\t94.12   \t\t94.12  ",
		" 2       20          155.35         91887.76      3499.13  \t       7411.28     \t-nan   \t\t91887.76 \t\t91887.76",
		strings.TrimSuffix(latStats{2, 5, 1, 2, 3, 4, math.NaN(), 6, 7}.line(), "\n"),
		strings.TrimSuffix(latStats{2, 20, math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1), math.Copysign(math.NaN(), -1), math.Inf(1), math.Inf(1)}.line(), "\n"),
	} {
		if !latRow.MatchString(row) {
			t.Errorf("latRow does not match %q", row)
		}
	}
	for v, want := range map[float64]string{math.Copysign(math.NaN(), -1): "-nan", math.Inf(1): "inf", math.Inf(-1): "-inf", 2.005: "2.00", 0: "0.00"} {
		if got := cF2(v); got != want {
			t.Errorf("cF2(%v) = %q, want %q", v, got, want)
		}
	}
	if cInt(3e9) != math.MinInt32 || cInt(-2.5) != -2 {
		t.Errorf("cInt %d %d", cInt(3e9), cInt(-2.5))
	}
	c := parsed(t, "ib_send_bw")
	for _, row := range []string{" 65536      20               33.30              33.30  \t\t   0.000533",
		strings.TrimSuffix(bwLine(c, Report{1024, 20, 0, 349.12, 0.357501}), "\n")} {
		if !bwRow.MatchString(row) {
			t.Errorf("bwRow does not match %q", row)
		}
	}
}
