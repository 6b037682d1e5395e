package main

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/res_show.golden")

// noPID is a process id no process has (above the kernel's PID_MAX_LIMIT),
// so that no comm is printed for it whatever runs the test.
const noPID = 1 << 30

func kernelOwned(dev uint32, name string) nldev.ResourceInfo {
	return nldev.ResourceInfo{DevIndex: dev, DevName: name, Owner: nldev.Owner{Kernel: "ib_core"}}
}

func userOwned(dev uint32, name string) nldev.ResourceInfo {
	return nldev.ResourceInfo{DevIndex: dev, DevName: name, Owner: nldev.Owner{PID: noPID}}
}

var driverAttrs = []nldev.DriverAttr{
	{Key: "sqn", PrintType: nldev.DriverPrintHex, Value: nldev.DriverU32(0xabc)},
	{Key: "name", Value: nldev.DriverString("dct")},
}

// Objects of every kind as a kernel reports them, with the fields each
// kind may lack both present and absent.
var (
	testQPs = []nldev.QP{
		{ResourceInfo: userOwned(1, "rxe0"), Port: 1, LQPN: 17, Type: ib.QPTypeRC, State: ib.QPStateRTS,
			RQPN: ptrTo(uint32(18)), RQPSN: ptrTo(uint32(0x1234)), SQPSN: 0xabcd, PathMigState: ptrTo(ib.MigArmed),
			PDN: ptrTo(uint32(3))},
		{ResourceInfo: kernelOwned(1, "rxe0"), Port: 1, LQPN: 1, Type: ib.QPTypeGSI, State: ib.QPStateRTS, SQPSN: 5},
		{ResourceInfo: nldev.ResourceInfo{DevIndex: 1, DevName: "rxe0", Owner: nldev.Owner{Kernel: "mlx5_ib"}, Driver: driverAttrs},
			Port: 2, LQPN: 0x40, Type: ib.QPTypeDriver, Subtype: "DCT", State: ib.QPStateInit, SQPSN: 0},
		{ResourceInfo: userOwned(1, "rxe0"), Port: 0, LQPN: 19, Type: ib.QPTypeUD, State: ib.QPStateReset, PDN: ptrTo(uint32(4))},
	}
	testCMIDs = []nldev.CMID{
		{ResourceInfo: userOwned(1, "rxe0"), Port: 1, ID: 0, PortSpace: nldev.PortSpaceTCP, State: nldev.CMListen,
			SrcFamily: 2, SrcAddr: netip.MustParseAddrPort("10.77.0.1:18703")},
		{ResourceInfo: kernelOwned(1, "rxe0"), Port: 1, ID: 1, PortSpace: nldev.PortSpaceUDP, State: nldev.CMConnect,
			QP:        &nldev.CMIDQP{LQPN: 17, Type: ib.QPTypeRC},
			SrcFamily: 10, SrcAddr: netip.MustParseAddrPort("[fe80::1%eth0]:1"),
			DstFamily: 10, DstAddr: netip.MustParseAddrPort("[fe80::2]:2")},
		{ResourceInfo: userOwned(1, "rxe0"), Port: 0, ID: 2, PortSpace: nldev.PortSpaceIB, State: nldev.CMIdle},
		// An address of a family iproute2 cannot print: left out.
		{ResourceInfo: userOwned(1, "rxe0"), Port: 1, ID: 3, SrcFamily: 27},
	}
	testCQs = []nldev.CQ{
		{ResourceInfo: kernelOwned(2, "rxe1"), CQN: 1, CQE: 1023, Users: 1<<32 + 2, PollCtx: ptrTo(nldev.PollWorkqueue),
			AdaptiveModeration: ptrTo(true)},
		{ResourceInfo: userOwned(2, "rxe1"), CQN: 2, CQE: 8, Users: 1, AdaptiveModeration: ptrTo(false), CTXN: ptrTo(uint32(5))},
		{ResourceInfo: nldev.ResourceInfo{DevIndex: 2, DevName: "rxe1", Driver: driverAttrs}, CQN: 3, CQE: 1},
	}
	testMRs = []nldev.MR{
		{ResourceInfo: userOwned(1, "rxe0"), MRN: 4, Length: 1<<32 + 4096, RKey: ptrTo(uint32(0x1ff)),
			LKey: ptrTo(uint32(0xdeadbeef)), IOVA: ptrTo(uint64(0x7f00_1234_5000)), PDN: ptrTo(uint32(3))},
		{ResourceInfo: kernelOwned(1, "rxe0"), MRN: 5, Length: 0},
	}
	testPDs = []nldev.PD{
		{ResourceInfo: kernelOwned(1, "rxe0"), PDN: 1, Users: 3, LocalDMALKey: ptrTo(uint32(0)),
			UnsafeGlobalRKey: ptrTo(uint32(0x99))},
		{ResourceInfo: userOwned(1, "rxe0"), PDN: 2, Users: 0, CTXN: ptrTo(uint32(1))},
	}
	testContexts = []nldev.Context{
		{ResourceInfo: userOwned(1, "rxe0"), CTXN: 0},
		{ResourceInfo: nldev.ResourceInfo{DevIndex: 1, DevName: "rxe0", Driver: driverAttrs}, CTXN: 7},
	}
	testSRQs = []nldev.SRQ{
		{ResourceInfo: userOwned(2, "rxe1"), SRQN: 1, Type: ib.SRQTypeBasic, PDN: 2,
			QPs: []nldev.QPNRange{{First: 17, Last: 20}, {First: 22, Last: 22}}},
		{ResourceInfo: kernelOwned(2, "rxe1"), SRQN: 2, Type: ib.SRQTypeXRC, PDN: 1, CQN: ptrTo(uint32(9))},
		// Only an inverted range: no QP to show, so iproute2 leaves it out.
		{ResourceInfo: userOwned(2, "rxe1"), SRQN: 3, PDN: 1, QPs: []nldev.QPNRange{{First: 9, Last: 8}}},
	}
)

// resCase is one rendering of test objects: the kind, the port a per-link
// kind is shown for, the options and the filter arguments.
type resCase struct {
	kind   string
	port   uint32
	o      options
	filter string
}

var (
	textOpts = options{}
	jsonOpts = options{json: true}
	ddOpts   = options{details: true, driverDetails: true}
	ddJSON   = options{json: true, details: true, driverDetails: true}
)

// resCases cover every field's text and JSON and every filter, with
// iproute2's quirks: a number filter hides objects without the field, a
// string filter compares the field's default, keys select by prefix.
var resCases = []resCase{
	{"qp", 1, textOpts, ""}, {"qp", 1, jsonOpts, ""}, {"qp", 2, ddOpts, ""}, {"qp", 2, ddJSON, ""}, {"qp", 0, textOpts, ""},
	{"qp", 1, textOpts, "lqpn 1-17"}, {"qp", 1, textOpts, "rqpn 18"}, {"qp", 1, textOpts, "rq-psn 4660"},
	{"qp", 1, textOpts, "sq-psn 5"}, {"qp", 1, textOpts, "type gsi,RC"}, {"qp", 1, textOpts, "state rts"},
	{"qp", 1, textOpts, "path-mig-state migrated"}, {"qp", 1, textOpts, "pdn 3"}, {"qp", 1, textOpts, "pid 1073741824"},
	{"qp", 1, textOpts, "p 3"}, {"qp", 1, textOpts, "link rxe0/1"}, {"qp", 2, textOpts, "type driver"},

	{"cm_id", 1, textOpts, ""}, {"cm_id", 1, jsonOpts, ""}, {"cm_id", 2, ddOpts, ""},
	{"cm_id", 1, textOpts, "lqpn 17"}, {"cm_id", 1, textOpts, "qp-type rc"}, {"cm_id", 1, textOpts, "qp-type smi"},
	{"cm_id", 1, textOpts, "state listen"}, {"cm_id", 1, textOpts, "ps udp"}, {"cm_id", 1, textOpts, "src-addr 10.77.0.1"},
	{"cm_id", 1, textOpts, "src-port 18703"}, {"cm_id", 1, textOpts, "dst-addr fe80::2"}, {"cm_id", 1, textOpts, "dst-port 2"},
	{"cm_id", 1, textOpts, "pid 1073741824"}, {"cm_id", 1, textOpts, "cm-idn 1-2"}, {"cm_id", 1, textOpts, "dev-type x"},
	{"cm_id", 1, textOpts, "transport-type 5"}, {"cm_id", 1, textOpts, "d 5"},

	{"cq", 0, textOpts, ""}, {"cq", 0, jsonOpts, ""}, {"cq", 0, ddOpts, ""}, {"cq", 0, ddJSON, ""},
	{"cq", 0, textOpts, "users 2"}, {"cq", 0, textOpts, "poll-ctx direct"}, {"cq", 0, textOpts, "poll-ctx workqueue"},
	{"cq", 0, textOpts, "pid 1073741824"}, {"cq", 0, textOpts, "cqn 2-3"}, {"cq", 0, textOpts, "ctxn 5"},
	{"cq", 0, textOpts, "dev rxe1"},

	{"mr", 0, textOpts, ""}, {"mr", 0, jsonOpts, ""}, {"mr", 0, textOpts, "rkey 1"}, {"mr", 0, textOpts, "lkey 1"},
	{"mr", 0, textOpts, "mrlen 4096"}, {"mr", 0, textOpts, "pid 1073741824"}, {"mr", 0, textOpts, "mrn 5"},
	{"mr", 0, textOpts, "pdn 3"},

	{"pd", 0, textOpts, ""}, {"pd", 0, jsonOpts, ""}, {"pd", 0, textOpts, "users 0"}, {"pd", 0, textOpts, "pid 1073741824"},
	{"pd", 0, textOpts, "ctxn 1"}, {"pd", 0, textOpts, "pdn 1"},

	{"ctx", 0, textOpts, ""}, {"ctx", 0, jsonOpts, ""}, {"ctx", 0, ddOpts, ""}, {"ctx", 0, textOpts, "pid 1073741824"},
	{"ctx", 0, textOpts, "ctxn 7"},

	{"srq", 0, textOpts, ""}, {"srq", 0, jsonOpts, ""}, {"srq", 0, textOpts, "pid 1073741824"}, {"srq", 0, textOpts, "srqn 2"},
	{"srq", 0, textOpts, "type xrc"}, {"srq", 0, textOpts, "pdn 2"}, {"srq", 0, textOpts, "cqn 9"},
	{"srq", 0, textOpts, "lqpn 18,22"}, {"srq", 0, jsonOpts, "lqpn 19-25"},
}

// TestResKindsGolden renders every case and compares the bytes with
// testdata/res_show.golden, captured from the field-by-field printers the
// kind tables replaced (go test -run TestResKindsGolden -update rewrites it).
func TestResKindsGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range resCases {
		b.WriteString("=== " + c.name() + "\n")
		b.WriteString(renderRes(t, c))
	}
	const path = "testdata/res_show.golden"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, wantS := strings.Split(b.String(), "=== "), strings.Split(string(want), "=== ")
	if len(got) != len(wantS) {
		t.Fatalf("%d cases, the golden file has %d", len(got)-1, len(wantS)-1)
	}
	for i := range got {
		if got[i] != wantS[i] {
			t.Errorf("got\n%s\nwant\n%s", got[i], wantS[i])
		}
	}
}

func (c resCase) name() string {
	var flags string
	switch {
	case c.o.json && c.o.driverDetails:
		flags = "-j -dd "
	case c.o.json:
		flags = "-j "
	case c.o.driverDetails:
		flags = "-dd "
	}
	s := flags + c.kind
	if c.port != 0 {
		s += " port " + string(rune('0'+c.port))
	}
	if c.filter != "" {
		s += " " + c.filter
	}
	return s
}

// testObjects print each kind's test objects through its table.
var testObjects = map[string]func(rs *resSession, port uint32) error{
	"qp": showTest(qpKind, testQPs), "cm_id": showTest(cmidKind, testCMIDs), "cq": showTest(cqKind, testCQs),
	"mr": showTest(mrKind, testMRs), "pd": showTest(pdKind, testPDs), "ctx": showTest(ctxKind, testContexts),
	"srq": showTest(srqKind, testSRQs),
}

func showTest[T any](k *resKind[T], xs []T) func(rs *resSession, port uint32) error {
	return func(rs *resSession, port uint32) error { return k.printAll(rs, xs, port) }
}

// renderRes prints a case's test objects through the kind's table.
func renderRes(t *testing.T, c resCase) string {
	t.Helper()
	var out bytes.Buffer
	rs := &resSession{session: &session{o: c.o}, p: newPrinter(&out, c.o)}
	var obj *resObject
	for i := range resObjects {
		if resObjects[i].name == c.kind {
			obj = &resObjects[i]
		}
	}
	fs, err := parseFilters(strings.Fields(c.filter), obj.filters)
	if err != nil {
		t.Fatal(err)
	}
	rs.fs = fs
	show, ok := testObjects[c.kind]
	if !ok {
		t.Fatalf("no test objects of kind %q", c.kind)
	}
	err = show(rs, c.port)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.p.flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestResFilterLists pins each kind's accepted filters to iproute2 HEAD's
// lists in rdma/res.h, in their order (a key selects the first filter it
// is a prefix of): "#" marks a number filter, "!" a lookup by id.
func TestResFilterLists(t *testing.T) {
	want := map[string]string{
		"qp":         "link lqpn#! rqpn# pid# sq-psn# rq-psn# type path-mig-state state pdn#",
		"cm_id":      "link lqpn# qp-type state ps dev-type transport-type pid# src-addr src-port# dst-addr dst-port# cm-idn#!",
		"cq":         "dev users# poll-ctx pid# cqn#! ctxn#",
		"mr":         "dev rkey# lkey# mrlen# pid# mrn#! pdn#",
		"pd":         "dev users# pid# ctxn# pdn#!",
		"ctx":        "dev pid# ctxn#!",
		"srq":        "dev pid# srqn#! type pdn# cqn# lqpn#",
		"frmr_pools": "dev ats# access_flags# vendor_key# num_dma_blocks# queue# in_use# max_in_use# pinned#",
	}
	var names []string
	for _, obj := range resObjects {
		names = append(names, obj.name)
		var got []string
		for _, d := range obj.filters {
			s := d.name
			if d.number {
				s += "#"
			}
			if d.doit {
				s += "!"
			}
			got = append(got, s)
		}
		if s := strings.Join(got, " "); s != want[obj.name] {
			t.Errorf("%s filters:\n got %s\nwant %s", obj.name, s, want[obj.name])
		}
	}
	if s := strings.Join(names, " "); s != "qp cm_id cq mr pd ctx srq frmr_pools" {
		t.Errorf("objects in the order %s", s)
	}
}

// TestResFieldRanks: within a kind the filter ranks are 1, 2, ... with no
// gap or repeat, and every applied filter has a getter.
func TestResFieldRanks(t *testing.T) {
	for _, k := range []kindFilters{rankInfo(qpKind), rankInfo(cmidKind), rankInfo(cqKind), rankInfo(mrKind),
		rankInfo(pdKind), rankInfo(ctxKind), rankInfo(srqKind), rankInfo(frmrKind)} {
		seen := map[int]bool{}
		for _, f := range k.fields {
			if f.rank == 0 {
				continue
			}
			if seen[f.rank] {
				t.Errorf("%s: rank %d twice", k.name, f.rank)
			}
			seen[f.rank] = true
			if !f.getter && !f.inert {
				t.Errorf("%s: field %s filters without a getter", k.name, f.name)
			}
		}
		for r := 1; r <= len(seen); r++ {
			if !seen[r] {
				t.Errorf("%s: no rank %d", k.name, r)
			}
		}
	}
}

// kindFilters is what TestResFieldRanks checks of a kind's fields.
type kindFilters struct {
	name   string
	fields []fieldFilter
}

type fieldFilter struct {
	name          string
	rank          int
	getter, inert bool
}

func rankInfo[T any](k *resKind[T]) kindFilters {
	r := kindFilters{name: k.name}
	for _, f := range k.fields {
		r.fields = append(r.fields, fieldFilter{f.name, f.filter.rank, f.get != nil, f.filter.inert})
	}
	return r
}
