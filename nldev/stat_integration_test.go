package nldev

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// statDev returns the first device of the VM (rxe0, one port).
func statDev(t *testing.T, c *Client) Device {
	t.Helper()
	devs, err := c.Devices()
	if err != nil || len(devs) == 0 {
		t.Fatalf("Devices: %d, %v", len(devs), err)
	}
	return devs[0]
}

// rawStat sends one nldev request as built here and returns the replies,
// for capturing fixtures exactly as the kernel sends them.
func rawStat(t *testing.T, c *Client, cmd uint16, flags netlink.HeaderFlags, attrs func(*netlink.AttributeEncoder)) []netlink.Message {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	attrs(ae)
	data, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := c.c.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, cmd)), Flags: netlink.Request | flags},
		Data:   data,
	})
	if err != nil {
		t.Fatalf("command %d: %v", cmd, err)
	}
	return msgs
}

// startQP runs ibv_rc_pingpong as a server on dev and returns its QP's
// number.
func startQP(t *testing.T, dev string) uint32 {
	t.Helper()
	return testenv.StartRCServer(t, dev, 1, 18515)
}

// TestIntegrationStatCaptureFixtures records the kernel's statistics
// replies for the unit tests and checks that the decoders accept them.
func TestIntegrationStatCaptureFixtures(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	restoreMode(t, c, d.Index, 1)
	startQP(t, d.Name) // so that the MR dump has an entry
	devPort := func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, d.Index)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
	}
	qpMode := func(ae *netlink.AttributeEncoder) {
		devPort(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_MANUAL)
	}
	setAuto := func(mask uint32) func(*netlink.AttributeEncoder) {
		return func(ae *netlink.AttributeEncoder) {
			devPort(ae)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_AUTO)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, mask)
		}
	}
	noDecode := func([]byte) error { return nil }
	for _, fx := range []struct {
		name   string
		cmd    uint16
		flags  netlink.HeaderFlags
		attrs  func(*netlink.AttributeEncoder)
		decode func([]byte) error
	}{
		{"stat-port", nlabi.RDMA_NLDEV_CMD_STAT_GET, 0, devPort, func(b []byte) error { _, err := decodePortCounters(b); return err }},
		{"stat-status", nlabi.RDMA_NLDEV_CMD_STAT_GET_STATUS, 0, devPort, func(b []byte) error { _, err := decodeCounterStatus(b); return err }},
		{"stat-qp-mode", nlabi.RDMA_NLDEV_CMD_STAT_GET, 0, qpMode, func(b []byte) error { _, err := decodeQPCounterMode(b); return err }},
		{"stat-set-auto-type", nlabi.RDMA_NLDEV_CMD_STAT_SET, 0, setAuto(nlabi.RDMA_COUNTER_MASK_QP_TYPE), noDecode},
		{"stat-qp-mode-auto-type", nlabi.RDMA_NLDEV_CMD_STAT_GET, 0, qpMode, func(b []byte) error { _, err := decodeQPCounterMode(b); return err }},
		{"stat-set-auto-off", nlabi.RDMA_NLDEV_CMD_STAT_SET, 0, setAuto(0), noDecode},
		{"stat-mr-dump", nlabi.RDMA_NLDEV_CMD_STAT_GET, netlink.Dump, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, d.Index)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_MR)
		}, func(b []byte) error { _, err := decodeMRStatsTable(b); return err }},
	} {
		msgs := rawStat(t, c, fx.cmd, fx.flags, fx.attrs)
		if len(msgs) == 0 {
			t.Fatalf("%s: no reply", fx.name)
		}
		for _, m := range msgs {
			if err := fx.decode(m.Data); err != nil {
				t.Fatalf("%s: decode a real reply: %v", fx.name, err)
			}
		}
		if out := testenv.OutDir(); out != "" {
			writeFixture(t, filepath.Join(out, "testdata", "nldev"), testenv.KernelRelease(), fx.name, msgs)
		}
	}
}

// restoreMode puts the port's QP counter mode back as it was when the
// test ends.
func restoreMode(t *testing.T, c *Client, dev, port uint32) QPCounterMode {
	t.Helper()
	m, err := c.QPCounterMode(dev, port)
	if err != nil {
		t.Fatalf("QPCounterMode: %v", err)
	}
	t.Cleanup(func() {
		mask := AutoModeMask(0)
		if m.Mode == CounterModeAuto {
			mask = m.Mask
		}
		if err := c.SetQPCounterAuto(dev, port, mask); err != nil {
			t.Errorf("restore QP counter mode: %v", err)
		}
	})
	return m
}

// TestIntegrationStatPortCounters compares the port counters with iproute2
// and sysfs: the same names in the same order, and values that only grow
// between reads.
func TestIntegrationStatPortCounters(t *testing.T) {
	c := dialVM(t)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var theirs []map[string]any
	if err := json.Unmarshal(testenv.Run(t, testenv.Oracle(t, "rdma"), "-j", "statistic", "show"), &theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(devs) {
		t.Fatalf("iproute2 listed %d ports, want %d", len(theirs), len(devs))
	}
	for i, d := range devs {
		ctrs, err := c.PortCounters(d.Index, 1)
		if err != nil {
			t.Fatalf("PortCounters(%d, 1): %v", d.Index, err)
		}
		if theirs[i]["ifname"] != d.Name || theirs[i]["port"] != 1.0 {
			t.Fatalf("iproute2 entry %d is %v/%v, want %s/1", i, theirs[i]["ifname"], theirs[i]["port"], d.Name)
		}
		var names []string
		for _, ctr := range ctrs {
			names = append(names, ctr.Name)
			v, ok := theirs[i][ctr.Name].(float64)
			if !ok {
				t.Errorf("%s: iproute2 has no counter %s", d.Name, ctr.Name)
				continue
			}
			if float64(ctr.Value) < v {
				t.Errorf("%s: %s went down from %v (iproute2) to %d (ours, read later)", d.Name, ctr.Name, v, ctr.Value)
			}
			b, err := os.ReadFile(filepath.Join("/sys/class/infiniband", d.Name, "ports/1/hw_counters", ctr.Name))
			if err != nil {
				t.Errorf("%s: sysfs: %v", d.Name, err)
				continue
			}
			sys, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
			if err != nil || sys < ctr.Value {
				t.Errorf("%s: sysfs %s = %q (read later), ours %d", d.Name, ctr.Name, b, ctr.Value)
			}
		}
		if len(theirs[i]) != len(ctrs)+2 {
			t.Errorf("%s: iproute2 printed %d keys, we have %d counters", d.Name, len(theirs[i]), len(ctrs))
		}
		ents, err := os.ReadDir(filepath.Join("/sys/class/infiniband", d.Name, "ports/1/hw_counters"))
		if err != nil {
			t.Fatal(err)
		}
		var sysNames []string
		for _, e := range ents {
			// lifespan is the sysfs cache period of the counters, not a counter.
			if e.Name() != "lifespan" {
				sysNames = append(sysNames, e.Name())
			}
		}
		sorted := slices.Sorted(slices.Values(names))
		if diff := cmp.Diff(sysNames, sorted); diff != "" {
			t.Errorf("%s: counters differ from sysfs (-sysfs +ours):\n%s", d.Name, diff)
		}
		// rxe's counters (rxe_hw_counters.c), in the driver's order.
		want := []string{"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
			"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err",
			"completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("%s: rxe counters (-want +got):\n%s", d.Name, diff)
		}
	}
}

// TestIntegrationStatBadInput: bad devices, ports and arguments give typed
// errors and change nothing.
func TestIntegrationStatBadInput(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	before := restoreMode(t, c, d.Index, 1)
	notExist := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.EINVAL) {
			t.Errorf("%s = %v, want os.ErrNotExist and EINVAL", name, err)
		}
	}
	_, err := c.PortCounters(d.Index, 2)
	notExist("PortCounters past the last port", err)
	_, err = c.PortCounters(1<<30, 1)
	notExist("PortCounters of an unknown device", err)
	_, err = c.QPCounterMode(d.Index, 2)
	notExist("QPCounterMode past the last port", err)
	_, err = c.QPCounterMode(1<<30, 1)
	notExist("QPCounterMode of an unknown device", err)
	notExist("SetQPCounterAuto past the last port", c.SetQPCounterAuto(d.Index, 2, AutoModeQPType))
	notExist("SetQPCounterAuto of an unknown device", c.SetQPCounterAuto(1<<30, 1, AutoModeQPType))
	_, err = c.QPCounters(1<<30, 0)
	notExist("QPCounters of an unknown device", err)
	_, err = c.QPCounters(d.Index, 2)
	notExist("QPCounters past the last port", err)
	_, err = c.MRStats(1 << 30)
	notExist("MRStats of an unknown device", err)
	_, err = c.CounterStatus(d.Index, 2)
	notExist("CounterStatus past the last port", err)
	_, err = c.CounterStatus(1<<30, 1)
	notExist("CounterStatus of an unknown device", err)
	notExist("SetOptionalCounters past the last port", c.SetOptionalCounters(d.Index, 2, nil))

	for name, err := range map[string]error{
		"PortCounters port 0":         func() error { _, err := c.PortCounters(d.Index, 0); return err }(),
		"QPCounterMode port 0":        func() error { _, err := c.QPCounterMode(d.Index, 0); return err }(),
		"SetQPCounterAuto port 0":     c.SetQPCounterAuto(d.Index, 0, AutoModeQPType),
		"SetQPCounterAuto mask 4":     c.SetQPCounterAuto(d.Index, 1, 4),
		"BindQP port 0":               func() error { _, err := c.BindQP(d.Index, 0, 17); return err }(),
		"UnbindQP port 0":             c.UnbindQP(d.Index, 0, 0, 17),
		"CounterStatus port 0":        func() error { _, err := c.CounterStatus(d.Index, 0); return err }(),
		"SetOptionalCounters port 0":  c.SetOptionalCounters(d.Index, 0, nil),
		"SetOptionalCounters counter": c.SetOptionalCounters(d.Index, 1, []uint32{0}), // sent_pkts is not optional
	} {
		if !errors.Is(err, unix.EINVAL) || errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s = %v, want EINVAL", name, err)
		}
	}
	// A counter index past the port's last counter does not exist.
	notExist("SetOptionalCounters index 999", c.SetOptionalCounters(d.Index, 1, []uint32{999}))

	after, err := c.QPCounterMode(d.Index, 1)
	if err != nil || !cmp.Equal(before, after) {
		t.Errorf("QP counter mode changed from %+v to %+v (%v)", before, after, err)
	}
}

// TestIntegrationStatQPMode switches port 1 of the first device to auto
// mode and back, checking each state with QPCounterMode and iproute2.
func TestIntegrationStatQPMode(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	restoreMode(t, c, d.Index, 1)
	rdma := testenv.Oracle(t, "rdma")
	for _, tt := range []struct {
		mask AutoModeMask
		want QPCounterMode
		text string // iproute2 6.1's mode text
	}{
		{AutoModeQPType, QPCounterMode{Mode: CounterModeAuto, Mask: AutoModeQPType}, "qp auto type on"},
		{AutoModeQPType | AutoModePID, QPCounterMode{Mode: CounterModeAuto, Mask: AutoModeQPType | AutoModePID}, "qp auto type,pid on"},
		{AutoModePID, QPCounterMode{Mode: CounterModeAuto, Mask: AutoModePID}, "qp auto pid on"},
		{0, QPCounterMode{Mode: CounterModeNone}, "qp auto off"},
	} {
		if err := c.SetQPCounterAuto(d.Index, 1, tt.mask); err != nil {
			t.Fatalf("SetQPCounterAuto(%v): %v", tt.mask, err)
		}
		got, err := c.QPCounterMode(d.Index, 1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("mode after setting %v (-want +got):\n%s", tt.mask, diff)
		}
		out := string(testenv.Run(t, rdma, "statistic", "qp", "mode", "link", d.Name+"/1"))
		if want := "link " + d.Name + "/1 mode " + tt.text + " \n"; out != want {
			t.Errorf("iproute2 after setting %v: %q, want %q", tt.mask, out, want)
		}
	}
	// Kernels before 6.15 do not know the optional-counters setting: it is
	// refused before it reaches them, and the mode stays as it was.
	err := c.SetQPCounterAutoOptional(d.Index, 1, AutoModeQPType, true)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 6.15") {
		t.Errorf("SetQPCounterAutoOptional = %v, want ErrNotSupported naming 6.15", err)
	}
	if got, err := c.QPCounterMode(d.Index, 1); err != nil || got.Mode != CounterModeNone {
		t.Errorf("mode after a refused SetQPCounterAutoOptional: %+v, %v", got, err)
	}
}

// TestIntegrationStatBind binds the QP of a running ibv_rc_pingpong to a
// counter by hand. rxe cannot allocate QP counters (no counter_alloc_stats
// in its verbs), and the kernel says so with ENOMEM; nothing changes.
func TestIntegrationStatBind(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	before := restoreMode(t, c, d.Index, 1)
	lqpn := startQP(t, d.Name)

	_, err := c.BindQP(d.Index, 1, lqpn)
	if !errors.Is(err, unix.ENOMEM) {
		t.Errorf("BindQP on rxe = %v, want ENOMEM", err)
	}
	// Measured on 6.1 and 6.12: no counter 0 (ENOENT), no such QP
	// (ENOENT), a QP not bound to the counter (EINVAL).
	err = c.BindQPToCounter(d.Index, 1, lqpn, 0)
	if !errors.Is(err, unix.ENOENT) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("BindQPToCounter(counter 0) = %v, want ENOENT", err)
	}
	if _, err = c.BindQP(d.Index, 1, 0xfffff0); !errors.Is(err, unix.ENOENT) {
		t.Errorf("BindQP(unknown QP) = %v, want ENOENT", err)
	}
	if err = c.UnbindQP(d.Index, 1, 0, lqpn); !errors.Is(err, unix.EINVAL) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("UnbindQP of a QP bound to no counter = %v, want EINVAL", err)
	}
	if _, err = c.QPCounter(d.Index, 1, 0); !errors.Is(err, unix.ENOENT) {
		t.Errorf("QPCounter(0) = %v, want ENOENT", err)
	}

	ctrs, err := c.QPCounters(d.Index, 0)
	if err != nil || len(ctrs) != 0 {
		t.Errorf("QPCounters = %+v, %v; want none", ctrs, err)
	}
	ctrs, err = c.QPCounters(d.Index, 1)
	if err != nil || len(ctrs) != 0 {
		t.Errorf("QPCounters(port 1) = %+v, %v; want none", ctrs, err)
	}
	if after, err := c.QPCounterMode(d.Index, 1); err != nil || !cmp.Equal(before, after) {
		t.Errorf("QP counter mode changed from %+v to %+v (%v)", before, after, err)
	}
}

// TestIntegrationStatStatus checks the counter status against the
// counters, and that unsetting the optional counters works on a port that
// has none (rxe).
func TestIntegrationStatStatus(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	ctrs, err := c.PortCounters(d.Index, 1)
	if err != nil {
		t.Fatal(err)
	}
	status, err := c.CounterStatus(d.Index, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != len(ctrs) {
		t.Fatalf("status lists %d counters, the port %d", len(status), len(ctrs))
	}
	for i, ci := range status {
		if ci.Name != ctrs[i].Name || ci.Index != uint32(i) || ci.Optional || ci.Enabled {
			t.Errorf("status %d = %+v, want %s, index %d, not optional", i, ci, ctrs[i].Name, i)
		}
	}
	if err := c.UnsetOptionalCounters(d.Index, 1); err != nil {
		t.Fatalf("UnsetOptionalCounters: %v", err)
	}
	again, err := c.CounterStatus(d.Index, 1)
	if err != nil || !cmp.Equal(status, again) {
		t.Errorf("status changed: %+v, %v", again, err)
	}
}

// TestIntegrationStatMR compares the MR statistics of a running
// ibv_rc_pingpong's MR with iproute2's.
func TestIntegrationStatMR(t *testing.T) {
	c := dialVM(t)
	d := statDev(t, c)
	startQP(t, d.Name)
	mrs, err := c.MRStats(d.Index)
	if err != nil {
		t.Fatal(err)
	}
	if len(mrs) == 0 {
		t.Fatal("no MR statistics while ibv_rc_pingpong holds an MR")
	}
	var theirs []map[string]any
	if err := json.Unmarshal(testenv.Run(t, testenv.Oracle(t, "rdma"), "-j", "statistic", "show", "mr"), &theirs); err != nil {
		t.Fatal(err)
	}
	var ours []map[string]any
	for _, m := range mrs {
		if m.DevIndex != d.Index || m.DevName != d.Name || m.Counters != nil {
			t.Errorf("MR statistics %+v: want device %s and no counters (rxe)", m, d.Name)
		}
		ours = append(ours, map[string]any{"ifindex": float64(m.DevIndex), "ifname": m.DevName, "mrn": float64(m.MRN)})
		one, err := c.MRStat(d.Index, m.MRN)
		if err != nil || !cmp.Equal(m, one) {
			t.Errorf("MRStat(%d) = %+v, %v; the dump says %+v", m.MRN, one, err, m)
		}
	}
	if diff := cmp.Diff(theirs, ours); diff != "" {
		t.Errorf("MR statistics differ from iproute2 (-iproute2 +ours):\n%s", diff)
	}
	_, err = c.MRStat(d.Index, 1<<30)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MRStat of an unknown MR = %v, want os.ErrNotExist", err)
	}
}
