package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

func renderStat(t *testing.T, o options, fn func(p *printer)) string {
	t.Helper()
	var b bytes.Buffer
	p := newPrinter(&b, o)
	fn(p)
	if err := p.end(); err != nil {
		t.Fatal(err)
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestStatShowFormat(t *testing.T) {
	ctrs := []nldev.Counter{{Name: "sent_pkts", Value: 3}, {Name: "rcvd_pkts", Value: 1 << 40}}
	show := func(p *printer) {
		p.str("ifname", "link %s/", "rxe0")
		p.uint("port", "%d ", 1)
		statCounters(p, ctrs)
	}
	if got, want := renderStat(t, options{}, show), "link rxe0/1 \n    sent_pkts 3 \n    rcvd_pkts 1099511627776 \n"; got != want {
		t.Errorf("text:\n got %q\nwant %q", got, want)
	}
	if got, want := renderStat(t, options{oneline: true}, show), "link rxe0/1 \\    sent_pkts 3 \\    rcvd_pkts 1099511627776 \n"; got != want {
		t.Errorf("oneline:\n got %q\nwant %q", got, want)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(renderStat(t, options{json: true}, show)), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"ifname": "rxe0", "port": 1.0, "sent_pkts": 3.0, "rcvd_pkts": float64(1 << 40)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestStatQPCounterFormat(t *testing.T) {
	rc := ib.QPTypeRC
	qc := nldev.QPCounter{DevIndex: 2, DevName: "mlx5_0", Port: 1, ID: 4, Mode: nldev.CounterModeAuto, QPType: &rc,
		Owner: nldev.Owner{Kernel: "ib_core"}, LQPNs: []uint32{17, 18}, Counters: []nldev.Counter{{Name: "rx_write_requests", Value: 9}}}
	show := func(p *printer) { printStatQPCounter(p, qc) }
	want := "link mlx5_0/1 cntn 4 qp-type RC comm [ib_core] \n    rx_write_requests 9 \n    LQPN: <17,18>\n"
	if got := renderStat(t, options{}, show); got != want {
		t.Errorf("text:\n got %q\nwant %q", got, want)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(renderStat(t, options{json: true}, show)), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := []map[string]any{{"ifindex": 2.0, "ifname": "mlx5_0", "port": 1.0, "cntn": 4.0, "qp-type": "RC",
		"comm": "ib_core", "rx_write_requests": 9.0, "lqpn": []any{17.0, 18.0}}}
	if diff := cmp.Diff(wantJSON, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}

	fs, err := parseFilters([]string{"lqpn", "17,18", "qp-type", "rc"}, statQPFilters)
	if err != nil || statQPFiltered(fs, qc) {
		t.Errorf("filters lqpn 17,18 qp-type rc hide the counter (%v)", err)
	}
	// As in iproute2, a counter shows only when every bound QP passes the
	// lqpn filter.
	for _, args := range [][]string{{"cntn", "1-3"}, {"qp-type", "UD"}, {"pid", "7"}, {"lqpn", "18"}} {
		fs, err := parseFilters(args, statQPFilters)
		if err != nil || !statQPFiltered(fs, qc) {
			t.Errorf("filter %q does not hide the counter (%v)", args, err)
		}
	}
}

func TestStatModeText(t *testing.T) {
	on := true
	for _, tt := range []struct {
		m    nldev.QPCounterMode
		want string
	}{
		{nldev.QPCounterMode{}, "qp auto off"},
		{nldev.QPCounterMode{Mode: nldev.CounterModeManual}, "qp auto off"},
		{nldev.QPCounterMode{Mode: nldev.CounterModeAuto, Mask: nldev.AutoModeQPType}, "qp auto type on optional-counters off"},
		{nldev.QPCounterMode{Mode: nldev.CounterModeAuto, Mask: 3, OptionalCounters: &on}, "qp auto type,pid on optional-counters on"},
	} {
		if got := statModeText(tt.m); got != tt.want {
			t.Errorf("statModeText(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestParseAutoMode(t *testing.T) {
	tr, fa := true, false
	for _, tt := range []struct {
		args []string
		mask nldev.AutoModeMask
		opt  *bool
		ok   bool
	}{
		{[]string{"off"}, 0, nil, true},
		{[]string{"type", "on"}, nldev.AutoModeQPType, nil, true},
		{[]string{"type,pid", "on"}, 3, nil, true},
		{[]string{"pid", "on", "optional-counters", "on"}, nldev.AutoModePID, &tr, true},
		{[]string{"type", "on", "opt", "off"}, nldev.AutoModeQPType, &fa, true},
		{[]string{"type"}, 0, nil, false},
		{[]string{"foo", "on"}, 0, nil, false},
		{[]string{"type", "off"}, 0, nil, false},
		{[]string{"type", "on", "optional-counters"}, 0, nil, false},
		{[]string{"type", "on", "optional-counters", "yes"}, 0, nil, false},
		{[]string{"off", "now"}, 0, nil, false},
		{nil, 0, nil, false},
	} {
		mask, opt, err := parseAutoMode(tt.args)
		if (err == nil) != tt.ok || mask != tt.mask || !cmp.Equal(opt, tt.opt) {
			t.Errorf("parseAutoMode(%q) = %v, %v, %v", tt.args, mask, opt, err)
		}
	}
}

func TestStatLinks(t *testing.T) {
	s := &statSession{session: &session{devs: []nldev.Device{{Index: 0, Name: "rxe0", Ports: 1}, {Index: 3, Name: "mlx5_0", Ports: 2}}}}
	type pair struct{ Dev, Port uint32 }
	for _, tt := range []struct {
		arg    string
		strict bool
		want   []pair
		ok     bool
	}{
		{"", false, []pair{{0, 1}, {3, 1}, {3, 2}}, true},
		{"mlx5_0", false, []pair{{3, 1}, {3, 2}}, true},
		{"mlx5_0/", false, []pair{{3, 1}, {3, 2}}, true},
		{"mlx5_0/2", false, []pair{{3, 2}}, true},
		{"mlx5_0/2", true, []pair{{3, 2}}, true},
		{"mlx5_0/-", false, nil, true},
		{"mlx5_0/-", true, nil, false},
		{"mlx5_0", true, nil, false},
		{"mlx5_0/0", false, nil, false},
		{"mlx5_0/3", false, nil, false},
		{"mlx5_0/x", false, nil, false},
		{"nosuch/1", false, nil, false},
	} {
		var args []string
		if tt.arg != "" {
			args = []string{tt.arg, "rest"}
		}
		ports, rest, err := s.statLinks(args, tt.strict)
		var got []pair
		for _, sp := range ports {
			got = append(got, pair{sp.dev.Index, sp.port})
		}
		if (err == nil) != tt.ok || !cmp.Equal(got, tt.want) || (err == nil && tt.arg != "" && !cmp.Equal(rest, []string{"rest"})) {
			t.Errorf("statLinks(%q, %v) = %v, %q, %v", tt.arg, tt.strict, got, rest, err)
		}
	}
}

func TestStatNumberArg(t *testing.T) {
	n, rest, err := statNumberArg([]string{"lq", "17", "cntn", "4"}, "lqpn")
	if err != nil || n != 17 || !cmp.Equal(rest, []string{"cntn", "4"}) {
		t.Errorf("statNumberArg = %d, %q, %v", n, rest, err)
	}
	for _, args := range [][]string{{"cntn", "4"}, {"lqpn"}, {"lqpn", "1-3"}, {"lqpn", "x"}, {"lqpn", "4294967296"}} {
		if _, _, err := statNumberArg(args, "lqpn"); err == nil {
			t.Errorf("statNumberArg(%q) accepted", args)
		}
	}
}
