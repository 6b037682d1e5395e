package nldev

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

func dialStat(t *testing.T, k *statKernel) *Client {
	return dialFake(t, k.handle)
}

// sentTypes lists the attribute types of the i-th request, and its flags.
func sentTypes(t *testing.T, m netlink.Message) []uint16 {
	return parseStatReq(t, m.Data).types
}

func TestPortCounters(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	got, err := c.PortCounters(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The disabled optional counter (index 2) is left out by the kernel.
	want := []Counter{{"rx_pkts", 100}, {"tx_pkts", 200}, {"cc_rx_cnp_pkts", 400}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("PortCounters (-want +got):\n%s", diff)
	}
	// Only the device and port: STAT_GET is strict on 6.1.
	if diff := cmp.Diff([]uint16{nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, nlabi.RDMA_NLDEV_ATTR_PORT_INDEX}, sentTypes(t, k.sent[0])); diff != "" {
		t.Errorf("request attributes (-want +got):\n%s", diff)
	}
	if k.sent[0].Header.Flags != netlink.Request {
		t.Errorf("flags %v, want Request only", k.sent[0].Header.Flags)
	}

	k.sent = nil
	if _, err := c.PortCounters(3, 0); !errors.Is(err, unix.EINVAL) || len(k.sent) != 0 {
		t.Errorf("PortCounters(3, 0) = %v after %d requests, want EINVAL before sending", err, len(k.sent))
	}
	for _, tt := range []struct{ dev, port uint32 }{{3, 3}, {9, 1}} {
		_, err := c.PortCounters(tt.dev, tt.port)
		if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrNoCounters) {
			t.Errorf("PortCounters(%d, %d) = %v, want os.ErrNotExist", tt.dev, tt.port, err)
		}
	}
	k.noHW = true
	_, err = c.PortCounters(3, 1)
	if !errors.Is(err, ErrNoCounters) || !errors.Is(err, unix.EINVAL) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("PortCounters without hardware counters = %v, want ErrNoCounters", err)
	}
	if !strings.Contains(err.Error(), "no hardware counters") {
		t.Errorf("error text %q does not say why", err)
	}
}

func TestQPCounterMode(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	m, err := c.QPCounterMode(3, 1)
	if err != nil || !cmp.Equal(m, QPCounterMode{Mode: CounterModeNone}) {
		t.Fatalf("QPCounterMode = %+v, %v", m, err)
	}
	if err := c.SetQPCounterAuto(3, 1, AutoModeQPType|AutoModePID); err != nil {
		t.Fatal(err)
	}
	m, err = c.QPCounterMode(3, 1)
	if err != nil || !cmp.Equal(m, QPCounterMode{Mode: CounterModeAuto, Mask: AutoModeQPType | AutoModePID}) {
		t.Fatalf("QPCounterMode after auto = %+v, %v", m, err)
	}
	if s := m.Mask.String(); s != "type,pid" {
		t.Errorf("mask prints %q", s)
	}
	set := k.sent[len(k.sent)-2]
	want := []uint16{nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, nlabi.RDMA_NLDEV_ATTR_STAT_RES,
		nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK}
	if diff := cmp.Diff(want, sentTypes(t, set)); diff != "" || set.Header.Flags != netlink.Request {
		t.Errorf("STAT_SET attributes (-want +got):\n%s, flags %v", diff, set.Header.Flags)
	}

	// Before 6.15 the optional-counters setting is never sent (the fake
	// kernel fails the test if it is); the mode is left as it was.
	err = c.SetQPCounterAutoOptional(3, 1, AutoModeQPType, true)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 6.15") {
		t.Errorf("SetQPCounterAutoOptional on 6.1 = %v", err)
	}
	if k.mode != nlabi.RDMA_COUNTER_MODE_AUTO || k.mask != 3 {
		t.Errorf("mode changed to %d/%d", k.mode, k.mask)
	}
	if err := c.SetQPCounterAuto(3, 1, 0); err != nil || k.mode != nlabi.RDMA_COUNTER_MODE_NONE {
		t.Fatalf("auto off: %v, mode %d", err, k.mode)
	}
	err = c.SetQPCounterAutoOptional(3, 1, AutoModeQPType, true)
	if !errors.Is(err, ErrNotSupported) || k.mode != nlabi.RDMA_COUNTER_MODE_NONE {
		t.Errorf("SetQPCounterAutoOptional from off on 6.1 = %v, mode %d", err, k.mode)
	}

	// 6.15 reports the setting in auto mode and accepts it.
	k.opcounter = true
	if err := c.SetQPCounterAutoOptional(3, 1, AutoModeQPType, true); err != nil {
		t.Fatalf("SetQPCounterAutoOptional on 6.15: %v", err)
	}
	m, err = c.QPCounterMode(3, 1)
	if err != nil || m.OptionalCounters == nil || !*m.OptionalCounters || m.Mask != AutoModeQPType {
		t.Errorf("QPCounterMode on 6.15 = %+v, %v", m, err)
	}

	k.sent = nil
	for _, err := range []error{
		c.SetQPCounterAuto(3, 0, AutoModeQPType),
		c.SetQPCounterAuto(3, 1, 4),
		c.SetQPCounterAutoOptional(3, 1, 0, true),
		func() error { _, err := c.QPCounterMode(3, 0); return err }(),
	} {
		if !errors.Is(err, unix.EINVAL) {
			t.Errorf("bad input: %v, want EINVAL", err)
		}
	}
	if len(k.sent) != 0 {
		t.Errorf("bad input sent %d requests", len(k.sent))
	}
	if _, err := c.QPCounterMode(3, 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("QPCounterMode past the last port = %v", err)
	}
	if err := c.SetQPCounterAuto(4, 1, AutoModeQPType); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SetQPCounterAuto of an unknown device = %v", err)
	}
}

func TestBindUnbind(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	id, err := c.BindQP(3, 1, 17)
	if err != nil || id != 7 {
		t.Fatalf("BindQP = %d, %v", id, err)
	}
	if err := c.BindQPToCounter(3, 1, 18, 5); err != nil {
		t.Fatal(err)
	}
	r := parseStatReq(t, k.sent[1].Data)
	if r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID] != 5 || r.u32[nlabi.RDMA_NLDEV_ATTR_RES_LQPN] != 18 ||
		r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_MODE] != nlabi.RDMA_COUNTER_MODE_MANUAL {
		t.Errorf("bind request %+v", r)
	}
	// STAT_DEL's reply comes as STAT_SET.
	if err := c.UnbindQP(3, 1, 5, 17); err != nil {
		t.Fatalf("UnbindQP: %v", err)
	}
	if err := c.UnbindQP(3, 1, 5, 99); !errors.Is(err, unix.EINVAL) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("UnbindQP of a QP not bound = %v, want EINVAL", err)
	}
	if err := c.UnbindQP(3, 4, 5, 17); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("UnbindQP past the last port = %v, want os.ErrNotExist", err)
	}
	k.mode = nlabi.RDMA_COUNTER_MODE_AUTO
	if _, err := c.BindQP(3, 1, 17); !errors.Is(err, unix.EINVAL) {
		t.Errorf("BindQP in auto mode = %v, want EINVAL", err)
	}
}

func TestQPCounters(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	rc := ib.QPTypeRC
	want := QPCounter{DevIndex: 3, DevName: "mlx5_0", Port: 1, ID: 5, Mode: CounterModeAuto, QPType: &rc,
		Owner: Owner{PID: 42}, LQPNs: []uint32{17, 18}, Counters: fakeQPCounters}
	got, err := c.QPCounters(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]QPCounter{want}, got); diff != "" {
		t.Fatalf("QPCounters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint16{nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, nlabi.RDMA_NLDEV_ATTR_STAT_RES}, sentTypes(t, k.sent[0])); diff != "" {
		t.Errorf("dump attributes (-want +got):\n%s", diff)
	}
	if k.sent[0].Header.Flags != netlink.Request|netlink.Dump {
		t.Errorf("dump flags %v", k.sent[0].Header.Flags)
	}
	got, err = c.QPCounters(3, 2)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("QPCounters(3, 2) = %#v, %v; want an empty list", got, err)
	}
	one, err := c.QPCounter(3, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, one); diff != "" {
		t.Errorf("QPCounter (-want +got):\n%s", diff)
	}
	if _, err := c.QPCounter(3, 1, 6); !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.ENOENT) {
		t.Errorf("QPCounter(unknown) = %v, want ENOENT", err)
	}
	if _, err := c.QPCounters(8, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("QPCounters(unknown device) = %v", err)
	}
}

func TestMRStats(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	got, err := c.MRStats(3)
	if err != nil {
		t.Fatal(err)
	}
	want := []MRStats{{DevIndex: 3, DevName: "mlx5_0", MRN: 1}, {DevIndex: 3, DevName: "mlx5_0", MRN: 2, Counters: []Counter{{"page_faults", 7}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("MRStats (-want +got):\n%s", diff)
	}
	one, err := c.MRStat(3, 2)
	if err != nil || !cmp.Equal(one, want[1]) {
		t.Errorf("MRStat(3, 2) = %+v, %v", one, err)
	}
	// The MR doit must not carry a port: the kernel refuses it.
	for _, typ := range sentTypes(t, k.sent[len(k.sent)-1]) {
		if typ == nlabi.RDMA_NLDEV_ATTR_PORT_INDEX || typ == nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS {
			t.Errorf("MR doit carries attribute %d", typ)
		}
	}
	if _, err := c.MRStat(3, 9); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MRStat(unknown MR) = %v", err)
	}
	if _, err := c.MRStats(7); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MRStats(unknown device) = %v", err)
	}
}

func TestCounterStatusAndOptional(t *testing.T) {
	k := newStatKernel(t)
	c := dialStat(t, k)
	got, err := c.CounterStatus(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []CounterInfo{{"rx_pkts", 0, false, false}, {"tx_pkts", 1, false, false},
		{"cc_rx_ce_pkts", 2, true, false}, {"cc_rx_cnp_pkts", 3, true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("CounterStatus (-want +got):\n%s", diff)
	}
	if err := c.SetOptionalCounters(3, 1, []uint32{2}); err != nil {
		t.Fatal(err)
	}
	r := parseStatReq(t, k.sent[len(k.sent)-1].Data)
	if !r.nested || !cmp.Equal(r.indexes, []uint32{2}) {
		t.Errorf("set request %+v: want a nested list with index 2", r)
	}
	if !k.enabled[2] || k.enabled[3] {
		t.Errorf("enabled %v, want only 2", k.enabled)
	}
	if err := c.UnsetOptionalCounters(3, 1); err != nil || k.enabled[2] || k.enabled[3] {
		t.Errorf("unset: %v, enabled %v", err, k.enabled)
	}
	if r := parseStatReq(t, k.sent[len(k.sent)-1].Data); !r.hasHW || !r.nested || len(r.indexes) != 0 {
		t.Errorf("unset request %+v: want an empty nested list", r)
	}

	n := len(k.sent)
	err = c.SetOptionalCounters(3, 1, []uint32{1})
	if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "tx_pkts) is not optional") {
		t.Errorf("enable a counter that is not optional: %v", err)
	}
	if err := c.SetOptionalCounters(3, 1, []uint32{2, 40}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("enable an unknown counter: %v", err)
	}
	// Only the status was asked; nothing was set.
	for _, m := range k.sent[n:] {
		if nlabi.GetOp(uint16(m.Header.Type)) != nlabi.RDMA_NLDEV_CMD_STAT_GET_STATUS {
			t.Errorf("bad input sent command %d", nlabi.GetOp(uint16(m.Header.Type)))
		}
	}
	if _, err := c.CounterStatus(3, 3); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CounterStatus past the last port = %v", err)
	}
	k.noStatus = true
	_, err = c.CounterStatus(3, 1)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 5.16") {
		t.Errorf("CounterStatus before 5.16 = %v", err)
	}
	k.noStatus, k.noHW = false, true
	if _, err = c.CounterStatus(3, 1); !errors.Is(err, ErrNoCounters) {
		t.Errorf("CounterStatus without counters = %v", err)
	}
}

func TestStatFixtures(t *testing.T) {
	rxe := []string{"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
		"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err",
		"completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs"}
	all := fixtures(t, "stat-port")
	if len(all) < 2 {
		t.Fatalf("%d kernels' stat-port fixtures, want 6.1 and 6.12", len(all))
	}
	for kernel, msgs := range all {
		pc, err := decodePortCounters(msgs[0].Data)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		var names []string
		for _, c := range pc.Counters {
			names = append(names, c.Name)
		}
		if pc.DevName != "rxe0" || pc.Port != 1 || !cmp.Equal(names, rxe) {
			t.Errorf("%s: port counters %+v", kernel, pc)
		}
	}
	for kernel, msgs := range fixtures(t, "stat-status") {
		st, err := decodeCounterStatus(msgs[0].Data)
		if err != nil || len(st) != len(rxe) {
			t.Fatalf("%s: %d counters, %v", kernel, len(st), err)
		}
		for i, ci := range st {
			if ci.Name != rxe[i] || ci.Index != uint32(i) || ci.Optional {
				t.Errorf("%s: status %d = %+v", kernel, i, ci)
			}
		}
	}
	modes := map[string]QPCounterMode{
		"stat-qp-mode":           {Mode: CounterModeNone},
		"stat-qp-mode-auto-type": {Mode: CounterModeAuto, Mask: AutoModeQPType},
	}
	for name, want := range modes {
		for kernel, msgs := range fixtures(t, name) {
			m, err := decodeQPCounterMode(msgs[0].Data)
			if err != nil || !cmp.Equal(m, want) {
				t.Errorf("%s %s: %+v, %v; want %+v (no opcounter attribute before 6.15)", kernel, name, m, err, want)
			}
		}
	}
	for _, name := range []string{"stat-set-auto-type", "stat-set-auto-off"} {
		for kernel, msgs := range fixtures(t, name) {
			if len(msgs) != 1 || nlabi.GetOp(uint16(msgs[0].Header.Type)) != nlabi.RDMA_NLDEV_CMD_STAT_SET {
				t.Errorf("%s %s: %d messages, type %#x", kernel, name, len(msgs), msgs[0].Header.Type)
			}
			pc, err := decodePortCounters(msgs[0].Data)
			if !errors.Is(err, unix.EPROTO) || pc.DevName != "" {
				t.Errorf("%s %s: a STAT_SET reply has no counter table: %+v, %v", kernel, name, pc, err)
			}
		}
	}
	for kernel, msgs := range fixtures(t, "stat-mr-dump") {
		var mrs []MRStats
		for _, m := range msgs {
			ms, err := decodeMRStatsTable(m.Data)
			if err != nil {
				t.Fatalf("%s: %v", kernel, err)
			}
			mrs = append(mrs, ms...)
		}
		if len(mrs) == 0 || mrs[0].DevName != "rxe0" || mrs[0].Counters != nil {
			t.Errorf("%s: MR statistics %+v", kernel, mrs)
		}
	}
}

// fuzzStat runs decode on every fixture and arbitrary bytes: it must not
// panic, and what it accepts it must accept again the same way.
func fuzzStat[T any](f *testing.F, decode func([]byte) (T, error)) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(b)
		if err != nil {
			return
		}
		again, err := decode(b)
		if err != nil || !cmp.Equal(v, again) {
			t.Fatalf("decoding %x twice: %+v then %+v, %v", b, v, again, err)
		}
	})
}

func FuzzDecodePortCounters(f *testing.F)  { fuzzStat(f, decodePortCounters) }
func FuzzDecodeQPCounterMode(f *testing.F) { fuzzStat(f, decodeQPCounterMode) }
func FuzzDecodeQPCounters(f *testing.F)    { fuzzStat(f, decodeQPCounters) }
func FuzzDecodeQPCounter(f *testing.F)     { fuzzStat(f, decodeQPCounter) }
func FuzzDecodeMRStatsTable(f *testing.F)  { fuzzStat(f, decodeMRStatsTable) }
func FuzzDecodeCounterStatus(f *testing.F) { fuzzStat(f, decodeCounterStatus) }
