package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

func renderPorts(t *testing.T, o options, ports ...nldev.Port) string {
	t.Helper()
	var b bytes.Buffer
	p := newPrinter(&b, o)
	for _, pt := range ports {
		printPort(p, o, pt)
		if err := p.end(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	rocePort = nldev.Port{DevIndex: 1, DevName: "rxe1", Index: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp, NetdevIndex: 5, Netdev: "veth1"}
	ibPort   = nldev.Port{DevIndex: 0, DevName: "mlx5_0", Index: 1, State: ib.PortDown, PhysState: ib.PhysPolling,
		IB: &nldev.IBPort{Caps: 1<<1 | 1<<16, SubnetPrefix: ib.GUIDFromUint64(0xfe80000000000000), LID: 3, SMLID: 1}}
)

func TestLinkText(t *testing.T) {
	got := renderPorts(t, options{}, rocePort, ibPort)
	want := "link rxe1/1 state ACTIVE physical_state LINK_UP netdev veth1 \n" +
		"link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state DOWN physical_state POLLING \n"
	if got != want {
		t.Fatalf("text:\n got %q\nwant %q", got, want)
	}
	got = renderPorts(t, options{details: true}, rocePort, ibPort)
	want = "link rxe1/1 state ACTIVE physical_state LINK_UP netdev veth1 netdev_index 5 \n" +
		"link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state DOWN physical_state POLLING \n    caps: <SM, CM>\n"
	if got != want {
		t.Fatalf("details:\n got %q\nwant %q", got, want)
	}
}

func TestLinkJSON(t *testing.T) {
	var got []map[string]any
	if err := json.Unmarshal([]byte(renderPorts(t, options{json: true}, rocePort, ibPort)), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"ifindex": 1.0, "ifname": "rxe1", "port": 1.0, "state": "ACTIVE", "physical_state": "LINK_UP", "netdev": "veth1", "netdev_index": 5.0},
		{"ifindex": 0.0, "ifname": "mlx5_0", "port": 1.0, "subnet_prefix": "fe80:0000:0000:0000", "lid": 3.0, "sm_lid": 1.0, "lmc": 0.0,
			"state": "DOWN", "physical_state": "POLLING"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("JSON (-want +got):\n%s", diff)
	}
}

func TestParseDevPort(t *testing.T) {
	s := &session{devs: []nldev.Device{{Index: 0, Name: "rxe0", Ports: 1}, {Index: 3, Name: "mlx5_0", Ports: 2}}}
	for _, tt := range []struct {
		arg    string
		strict bool
		dev    uint32
		port   uint32
		ok     bool
	}{
		{"rxe0/1", true, 0, 1, true},
		{"mlx5_0/2", true, 3, 2, true},
		{"mlx5_0/2x", true, 3, 2, true}, // atoi stops at the first non-digit
		{"mlx5_0/3", true, 0, 0, false},
		{"mlx5_0/0", true, 0, 0, false},
		{"mlx5_0", true, 0, 0, false}, // strict: a port is required
		{"mlx5_0/-", true, 0, 0, false},
		{"mlx5_0/", true, 0, 0, false},
		{"mlx5_0/x", false, 0, 0, false},
		{"mlx5_0", false, 3, 0, true},
		{"mlx5_0/-", false, 3, 0, true},
		{"nosuch/1", true, 0, 0, false},
	} {
		sel, err := s.parseDevPort(tt.arg, tt.strict)
		if (err == nil) != tt.ok || (tt.ok && (sel.dev.Index != tt.dev || sel.port != tt.port)) {
			t.Errorf("parseDevPort(%q, %v) = %+v, %v", tt.arg, tt.strict, sel, err)
		}
	}
}

func TestLinkAddUsage(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{
		{"link", "add"}, {"link", "add", "rxe9"}, {"link", "add", "rxe9", "type"},
		{"link", "add", "rxe9", "type", "rxe"}, {"link", "add", "rxe9", "type", "rxe", "netdev"},
		{"link", "add", "rxe9", "kind", "rxe"}, {"link", "delete"},
	} {
		if err := run(&out, args); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}
