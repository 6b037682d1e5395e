package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/nldev"
)

func TestNumberMatches(t *testing.T) {
	for _, tc := range []struct {
		list string
		v    uint32
		want bool
	}{
		{"5", 5, true}, {"5", 6, false}, {"1,4-7", 4, true}, {"1,4-7", 6, true}, {"1,4-7", 7, true},
		{"1,4-7", 8, false}, {"1,4-7", 1, true}, {"1,4-7", 2, false}, {",3", 3, true}, {"", 0, false},
		{"7-4", 5, false}, {"2-3-9", 8, true}, {"99999999999", 1215752191, true}, // strtol, then truncated to 32 bits,
	} {
		if got := numberMatches(tc.list, tc.v); got != tc.want {
			t.Errorf("numberMatches(%q, %d) = %v, want %v", tc.list, tc.v, got, tc.want)
		}
	}
}

func TestParseFilters(t *testing.T) {
	fs, err := parseFilters([]string{"link", "rxe0/1", "lq", "17", "type", "RC,ud", "pdn", "1,2"}, qpKind.filterDefs())
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := fs.doitIndex(); !ok || id != 17 {
		t.Errorf("doit index %d, %v", id, ok)
	}
	// Keys match by prefix, as typed; string lists are case-insensitive.
	if fs.num("lqpn", 17, true) || !fs.num("lqpn", 18, true) || !fs.num("lqpn", 17, false) {
		t.Errorf("lqpn filter")
	}
	if fs.str("type", "RC") || fs.str("type", "UD") || !fs.str("type", "GSI") {
		t.Errorf("type filter")
	}
	if fs.num("rqpn", 5, false) || fs.str("state", "ERR") {
		t.Errorf("an attribute without a filter was filtered")
	}
	if fs, _ := parseFilters([]string{"lqpn", "1-3"}, qpKind.filterDefs()); func() bool { _, ok := fs.doitIndex(); return ok }() {
		t.Errorf("a range became a lookup")
	}
	for args, want := range map[string]string{
		"cqn":        "No filter data was supplied to filter option cqn",
		"cqn 1 pid":  "There is filter option without data",
		"nosuch 1":   "Unsupported filter option: nosuch",
		"cqn x":      `cqn filter accepts "1234567890,-" characters only`,
		"poll-ctx 5": "",
	} {
		_, err := parseFilters(strings.Fields(args), cqKind.filterDefs())
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("parseFilters(%s) = %v, want %q", args, err, want)
		}
	}
	if a, err := devArg([]string{"cqn", "1", "d", "rxe3"}); a != "rxe3" || err != nil {
		t.Errorf("devArg = %q, %v", a, err)
	}
	if _, err := devArg([]string{"cqn", "1", "dev"}); err == nil {
		t.Errorf("devArg without a name succeeded")
	}
}

func TestSRQQPList(t *testing.T) {
	ranges := []nldev.QPNRange{{First: 17, Last: 20}, {First: 22, Last: 22}, {First: 30, Last: 31}}
	for _, tc := range []struct {
		filter string
		want   []string
		ok     bool
	}{
		{"", []string{"17-20", "22", "30-31"}, true},
		{"18-19", []string{"18-19"}, true},
		{"17,19-22", []string{"17", "19-20", "22"}, true},
		{"20,31", []string{"20", "31"}, true},
		{"99", nil, false},
	} {
		var args []string
		if tc.filter != "" {
			args = []string{"lqpn", tc.filter}
		}
		fs, err := parseFilters(args, srqKind.filterDefs())
		if err != nil {
			t.Fatal(err)
		}
		got, ok := srqQPList(fs, ranges)
		if ok != tc.ok || !cmp.Equal(got, tc.want) {
			t.Errorf("lqpn %q: %q, %v; want %q, %v", tc.filter, got, ok, tc.want, tc.ok)
		}
	}
	fs, _ := parseFilters([]string{"lqpn", "1"}, srqKind.filterDefs())
	if _, ok := srqQPList(fs, nil); ok {
		t.Errorf("an SRQ without QPs passed an lqpn filter")
	}
	if got, ok := srqQPList(nil, nil); !ok || got != nil {
		t.Errorf("an SRQ without QPs: %q, %v", got, ok)
	}
	// iproute2 keeps 255 bytes of list.
	var many []nldev.QPNRange
	for i := uint32(0); i < 100; i++ {
		many = append(many, nldev.QPNRange{First: 1000 + 3*i, Last: 1000 + 3*i})
	}
	got, _ := srqQPList(nil, many)
	if s := strings.Join(got, ","); len(s) > 255 || len(s) < 250 || !strings.HasPrefix(s, "1000,1003,") {
		t.Errorf("long list of %d bytes", len(s))
	}
}

// TestPrintDriverAndRaw pins the formats of the driver table (-dd) and raw
// data (-r), which rxe cannot produce.
func TestPrintDriverAndRaw(t *testing.T) {
	attrs := []nldev.DriverAttr{
		{Key: "name", Value: nldev.DriverString("dct")},
		{Key: "sqn", PrintType: nldev.DriverPrintHex, Value: nldev.DriverU32(0xabc)},
		{Key: "delta", Value: nldev.DriverS32(-5)},
		{Key: "big", Value: nldev.DriverU64(1<<32 + 7)},
		{Key: "weird", PrintType: 7, Value: nldev.DriverU32(1)},
		{Key: "after", Value: nldev.DriverU32(1)},
	}
	for _, tc := range []struct {
		o    options
		want string
	}{
		{options{details: true, driverDetails: true}, "dev x \n    drv_name dct drv_sqn 0xabc drv_delta -5 drv_big 4294967303 \n"},
		{options{details: true}, "dev x \n"},
		{options{json: true, details: true, driverDetails: true},
			`[{"ifindex":1,"ifname":"x","drv_name":"dct","drv_sqn":2748,"drv_delta":-5,"drv_big":7,"drv_weird":1,"drv_after":1}]` + "\n"},
	} {
		var out bytes.Buffer
		rs := &resSession{session: &session{o: tc.o}, p: newPrinter(&out, tc.o)}
		printDev(rs.p, 1, "x")
		printDriver(rs, attrs)
		rs.p.end()
		rs.p.flush()
		if out.String() != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.o, out.String(), tc.want)
		}
	}
	// Long tables wrap after 80 characters.
	var long []nldev.DriverAttr
	for i := 0; i < 12; i++ {
		long = append(long, nldev.DriverAttr{Key: "counter", Value: nldev.DriverU64(123456)})
	}
	var out bytes.Buffer
	o := options{details: true, driverDetails: true}
	rs := &resSession{session: &session{o: o}, p: newPrinter(&out, o)}
	printDriver(rs, long)
	rs.p.end()
	if n := strings.Count(out.String(), "\n    "); n != 3 {
		t.Errorf("wrapped into %d lines: %q", n, out.String())
	}

	for _, json := range []bool{false, true} {
		var out bytes.Buffer
		o := options{json: json, raw: true}
		rs := &resSession{session: &session{o: o}, p: newPrinter(&out, o)}
		showRaw(rs, []nldev.RawResource{{ResourceInfo: nldev.ResourceInfo{DevIndex: 3, DevName: "mlx5_0"}, Port: 1, Data: []byte{1, 22, 255}}}, true)
		rs.p.flush()
		want := "link mlx5_0/1 122255>\n"
		if json {
			want = `[{"ifindex":3,"ifname":"mlx5_0","port":1,"data":[1,22,255]}]` + "\n"
		}
		if out.String() != want {
			t.Errorf("raw json=%v:\n got %q\nwant %q", json, out.String(), want)
		}
	}
}

// TestPrintQPText pins one QP line against iproute2's, captured in the VM.
func TestPrintCommAndKeys(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&out, options{})
	printLink(p, 0, "rxe0", 1)
	printKey(p, "lkey", ptrTo(uint64(1<<40|0x25b)))
	printComm(p, nldev.Owner{Kernel: "ib_core"})
	printComm(p, nldev.Owner{Kernel: "a_very_long_kernel_name"})
	p.end()
	if want := "link rxe0/1 lkey 0x25b comm [ib_core] comm [a_very_long_kern \n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	p = newPrinter(&out, options{json: true})
	printLink(p, 0, "rxe0", 0)
	printKey(p, "lkey", ptrTo(uint32(0x25b)))
	printComm(p, nldev.Owner{Kernel: "ib_core"})
	p.end()
	p.flush()
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"ifindex": 0.0, "ifname": "rxe0", "lkey": "25b", "comm": "ib_core"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func ptrTo[T any](v T) *T { return &v }
