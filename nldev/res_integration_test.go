package nldev

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// resWorkload is a set of rdma-core tools running in the background, which
// create every kind of tracked object: ibv_rc_pingpong (ctx, pd, mr, cq, an
// RC QP) on rxe0, ibv_srq_pingpong (an SRQ and many QPs, enough for a QP
// table that spans several dump messages) on rxe1, and rping (a listening
// cm_id) on rxe0's address.
type resWorkload struct {
	cmds []*exec.Cmd
	pids map[string]uint32 // tool name -> pid
}

// srqQPs is how many QPs ibv_srq_pingpong opens: about 9 KiB of QP table,
// more than one dump message holds.
const srqQPs = 100

func startWorkload(t *testing.T) *resWorkload {
	t.Helper()
	w := &resWorkload{pids: map[string]uint32{}}
	w.start(t, "ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-p", "18601")
	w.start(t, "ibv_srq_pingpong", "-d", "rxe1", "-g", "1", "-p", "18602", "-q", strconv.Itoa(srqQPs))
	w.start(t, "rping", "-s", "-a", "10.77.0.1", "-p", "18603")
	return w
}

func (w *resWorkload) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := testenv.Start(t, name, args...)
	w.cmds = append(w.cmds, cmd)
	w.pids[name] = uint32(cmd.Process.Pid)
}

// stop kills the tools and waits for them; the kernel has released their
// objects when their files are closed.
func (w *resWorkload) stop() {
	for _, cmd := range w.cmds {
		testenv.Stop(cmd)
	}
	w.cmds = nil
}

// devByName finds a device index by name.
func devByName(t *testing.T, c *Client, name string) uint32 {
	t.Helper()
	d, err := c.DeviceByName(name)
	if err != nil {
		t.Fatalf("DeviceByName(%s): %v", name, err)
	}
	return d.Index
}

// workloadReady waits until every tool has created its objects.
func workloadReady(t *testing.T, c *Client, w *resWorkload) {
	t.Helper()
	rxe0, rxe1 := devByName(t, c, "rxe0"), devByName(t, c, "rxe1")
	testenv.WaitFor(t, "the tools' objects", func() bool {
		s0, err0 := c.ResourceSummaryOf(rxe0)
		s1, err1 := c.ResourceSummaryOf(rxe1)
		if err0 != nil || err1 != nil {
			t.Fatalf("summary: %v %v", err0, err1)
		}
		cm, _ := s0.Count(ResourceCMID)
		ctx0, _ := s0.Count(ResourceCtx)
		mr0, _ := s0.Count(ResourceMR)
		srq, _ := s1.Count(ResourceSRQ)
		pd0, _ := s0.Count(ResourcePD)
		qp1, _ := s1.Count(ResourceQP)
		// rping makes its PD a little after its context.
		return cm >= 1 && ctx0 >= 2 && pd0 >= 3 && mr0 >= 1 && srq >= 1 && qp1 >= srqQPs+1
	})
}

// iproute2JSON runs "rdma -j ARGS" and parses its output.
func iproute2JSON(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	out := testenv.Run(t, testenv.Oracle(t, "rdma"), append([]string{"-j"}, args...)...)
	var v []map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("rdma -j %q: %v in %q", args, err, out)
	}
	return v
}

// ownerKeys are iproute2's owner keys of an object: pid for processes,
// comm for kernel objects.
func ownerKeys(m map[string]any, o Owner) {
	if o.PID != 0 {
		m["pid"] = float64(o.PID)
	}
	if o.Kernel != "" {
		m["comm"] = o.Kernel
	}
}

// pick keeps only the listed keys of iproute2's objects (comm only for
// kernel objects: for processes it is what /proc says, not netlink).
func pick(objs []map[string]any, keys ...string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		m := map[string]any{}
		for _, k := range keys {
			if v, ok := o[k]; ok {
				m[k] = v
			}
		}
		if _, user := o["pid"]; user {
			delete(m, "comm")
		}
		out = append(out, m)
	}
	return out
}

func TestIntegrationResourcesMatchIproute2(t *testing.T) {
	c := dialVM(t)
	w := startWorkload(t)
	workloadReady(t, c, w)
	devs, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}

	// The summary.
	sums, err := c.ResourceSummary()
	if err != nil {
		t.Fatalf("ResourceSummary: %v", err)
	}
	var ours []map[string]any
	for _, s := range sums {
		m := map[string]any{"ifindex": float64(s.DevIndex), "ifname": s.DevName}
		for _, rc := range s.Counts {
			m[string(rc.Type)] = float64(rc.Count)
		}
		ours = append(ours, m)
	}
	if diff := cmp.Diff(iproute2JSON(t, "res", "show"), ours); diff != "" {
		t.Errorf("summary (-iproute2 +ours):\n%s", diff)
	}
	if len(sums) != len(devs) {
		t.Errorf("%d summaries for %d devices", len(sums), len(devs))
	}

	// Every kind of object, device by device: the ids, owners and the
	// fields that do not depend on /proc.
	type kind struct {
		name string
		keys []string
		dump func(dev uint32) ([]map[string]any, error)
	}
	u := func(v uint32) float64 { return float64(v) }
	kinds := []kind{
		{"qp", []string{"ifindex", "port", "lqpn", "type", "state", "pdn", "pid", "comm"}, func(dev uint32) ([]map[string]any, error) {
			qs, err := c.QPs(dev)
			var out []map[string]any
			for _, q := range qs {
				m := map[string]any{"ifindex": u(q.DevIndex), "lqpn": u(q.LQPN), "type": q.Type.String(), "state": q.State.String()}
				if q.Port != 0 {
					m["port"] = u(q.Port)
				}
				if q.PDN != nil {
					m["pdn"] = u(*q.PDN)
				}
				ownerKeys(m, q.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"cm_id", []string{"ifindex", "port", "cm-idn", "state", "ps", "pid", "src-addr", "dst-addr"}, func(dev uint32) ([]map[string]any, error) {
			ms, err := c.CMIDs(dev)
			var out []map[string]any
			for _, x := range ms {
				m := map[string]any{"ifindex": u(x.DevIndex), "cm-idn": u(x.ID), "state": x.State.String(), "ps": x.PortSpace.String()}
				if x.Port != 0 {
					m["port"] = u(x.Port)
				}
				if x.SrcFamily != 0 {
					m["src-addr"] = x.SrcAddr.String()
				}
				if x.DstFamily != 0 {
					m["dst-addr"] = x.DstAddr.String()
				}
				ownerKeys(m, x.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"cq", []string{"ifindex", "cqn", "cqe", "users", "poll-ctx", "ctxn", "pid", "comm"}, func(dev uint32) ([]map[string]any, error) {
			qs, err := c.CQs(dev)
			var out []map[string]any
			for _, q := range qs {
				m := map[string]any{"ifindex": u(q.DevIndex), "cqn": u(q.CQN), "cqe": u(q.CQE), "users": float64(q.Users)}
				if q.PollCtx != nil {
					m["poll-ctx"] = q.PollCtx.String()
				}
				if q.CTXN != nil {
					m["ctxn"] = u(*q.CTXN)
				}
				ownerKeys(m, q.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"mr", []string{"ifindex", "mrn", "rkey", "lkey", "mrlen", "pdn", "pid", "comm"}, func(dev uint32) ([]map[string]any, error) {
			ms, err := c.MRs(dev)
			var out []map[string]any
			for _, x := range ms {
				m := map[string]any{"ifindex": u(x.DevIndex), "mrn": u(x.MRN), "mrlen": float64(x.Length)}
				if x.RKey != nil {
					m["rkey"] = strconv.FormatUint(uint64(*x.RKey), 16)
				}
				if x.LKey != nil {
					m["lkey"] = strconv.FormatUint(uint64(*x.LKey), 16)
				}
				if x.PDN != nil {
					m["pdn"] = u(*x.PDN)
				}
				ownerKeys(m, x.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"pd", []string{"ifindex", "pdn", "local_dma_lkey", "users", "ctxn", "pid", "comm"}, func(dev uint32) ([]map[string]any, error) {
			ps, err := c.PDs(dev)
			var out []map[string]any
			for _, p := range ps {
				m := map[string]any{"ifindex": u(p.DevIndex), "pdn": u(p.PDN), "users": float64(p.Users)}
				if p.LocalDMALKey != nil {
					m["local_dma_lkey"] = strconv.FormatUint(uint64(*p.LocalDMALKey), 16)
				}
				if p.CTXN != nil {
					m["ctxn"] = u(*p.CTXN)
				}
				ownerKeys(m, p.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"ctx", []string{"ifindex", "ctxn", "pid", "comm"}, func(dev uint32) ([]map[string]any, error) {
			xs, err := c.Contexts(dev)
			var out []map[string]any
			for _, x := range xs {
				m := map[string]any{"ifindex": u(x.DevIndex), "ctxn": u(x.CTXN)}
				ownerKeys(m, x.Owner)
				out = append(out, m)
			}
			return out, err
		}},
		{"srq", []string{"ifindex", "srqn", "type", "lqpn", "pdn", "pid"}, func(dev uint32) ([]map[string]any, error) {
			ss, err := c.SRQs(dev)
			var out []map[string]any
			for _, s := range ss {
				m := map[string]any{"ifindex": u(s.DevIndex), "srqn": u(s.SRQN), "type": s.Type.String(), "pdn": u(s.PDN)}
				var qps []any
				for _, r := range s.QPs {
					if r.First == r.Last {
						qps = append(qps, fmt.Sprint(r.First))
					} else {
						qps = append(qps, fmt.Sprintf("%d-%d", r.First, r.Last))
					}
				}
				if qps != nil {
					m["lqpn"] = qps
				}
				ownerKeys(m, s.Owner)
				out = append(out, m)
			}
			return out, err
		}},
	}
	for _, k := range kinds {
		var got []map[string]any
		for _, d := range devs {
			objs, err := k.dump(d.Index)
			if err != nil {
				t.Fatalf("%s of %s: %v", k.name, d.Name, err)
			}
			got = append(got, objs...)
		}
		want := pick(iproute2JSON(t, "res", "show", k.name), k.keys...)
		if diff := cmp.Diff(sortObjs(want), sortObjs(got)); diff != "" {
			t.Errorf("%s (-iproute2 +ours):\n%s", k.name, diff)
		}
	}
}

// sortObjs orders objects by their JSON text (iproute2 prints QPs port by
// port, the kernel sends them in its own order).
func sortObjs(objs []map[string]any) []map[string]any {
	sort.Slice(objs, func(i, j int) bool {
		a, _ := json.Marshal(objs[i])
		b, _ := json.Marshal(objs[j])
		return string(a) < string(b)
	})
	return objs
}

// TestIntegrationResourceLifecycle checks that each tool's objects are
// there, by dump and by id, while it runs, and gone after it exits.
func TestIntegrationResourceLifecycle(t *testing.T) {
	c := dialVM(t)
	w := startWorkload(t)
	workloadReady(t, c, w)
	rxe0, rxe1 := devByName(t, c, "rxe0"), devByName(t, c, "rxe1")
	rc, srqTool, rping := w.pids["ibv_rc_pingpong"], w.pids["ibv_srq_pingpong"], w.pids["rping"]

	// gets records how to fetch each of the tools' objects by id.
	var gets []func() error
	ctxs, err := c.Contexts(rxe0)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[uint32]bool{}
	for _, x := range ctxs {
		owners[x.Owner.PID] = true
		got, err := c.Context(rxe0, x.CTXN)
		if err != nil || got.CTXN != x.CTXN || got.Owner != x.Owner || got.DevName != "rxe0" {
			t.Errorf("Context(%d) = %+v, %v; dump has %+v", x.CTXN, got, err, x)
		}
		gets = append(gets, func() error { _, err := c.Context(rxe0, x.CTXN); return err })
	}
	if !owners[rc] || !owners[rping] {
		t.Errorf("contexts of rxe0 %+v lack ibv_rc_pingpong (%d) or rping (%d)", ctxs, rc, rping)
	}
	pds, err := c.PDs(rxe0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pds {
		if p.Owner.PID == rc {
			gets = append(gets, func() error { _, err := c.PD(rxe0, p.PDN); return err })
		}
		if p.Owner.IsKernel() && (p.Owner.Kernel != "ib_core" || p.CTXN != nil) {
			t.Errorf("kernel PD %+v", p)
		}
	}
	mrs, err := c.MRs(rxe0)
	if err != nil || len(mrs) == 0 {
		t.Fatalf("MRs: %v, %v", mrs, err)
	}
	for _, m := range mrs {
		if m.Owner.PID != rc || m.Length != 4096 || m.PDN == nil || m.LKey == nil {
			t.Errorf("MR %+v: want ibv_rc_pingpong's 4096-byte MR with its keys (we are root)", m)
		}
		got, err := c.MR(rxe0, m.MRN)
		if err != nil || got.MRN != m.MRN {
			t.Errorf("MR(%d) = %+v, %v", m.MRN, got, err)
		}
		gets = append(gets, func() error { _, err := c.MR(rxe0, m.MRN); return err })
	}
	cqs, err := c.CQs(rxe0)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range cqs {
		if q.Owner.PID == rc {
			gets = append(gets, func() error { _, err := c.CQ(rxe0, q.CQN); return err })
		}
	}
	qps, err := c.QPsOfPort(rxe0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sawRC, sawGSI bool
	for _, q := range qps {
		switch {
		case q.Owner.PID == rc:
			sawRC = q.Type == ib.QPTypeRC && q.RQPN != nil && q.PathMigState != nil && q.PDN != nil
			gets = append(gets, func() error { _, err := c.QP(rxe0, 1, q.LQPN); return err })
		case q.Owner.Kernel == "ib_core":
			sawGSI = q.Type == ib.QPTypeGSI && q.LQPN == 1 && q.PDN == nil && q.RQPN == nil
		}
		got, err := c.QP(rxe0, q.Port, q.LQPN)
		if err != nil || got.LQPN != q.LQPN || got.Type != q.Type {
			t.Errorf("QP(%d) = %+v, %v", q.LQPN, got, err)
		}
	}
	if !sawRC || !sawGSI {
		t.Errorf("QPs of rxe0/1 %+v: want ibv_rc_pingpong's RC QP and ib_core's GSI QP", qps)
	}
	cms, err := c.CMIDs(rxe0)
	if err != nil || len(cms) != 1 {
		t.Fatalf("CMIDs: %+v, %v", cms, err)
	}
	cm := cms[0]
	if cm.Owner.PID != rping || cm.State != CMListen || cm.PortSpace != PortSpaceTCP || cm.Port != 1 ||
		cm.SrcAddr.String() != "10.77.0.1:18603" || cm.SrcFamily != unix.AF_INET {
		t.Errorf("rping's cm_id %+v", cm)
	}
	if got, err := c.CMID(rxe0, 1, cm.ID); err != nil || got.ID != cm.ID || got.SrcAddr != cm.SrcAddr {
		t.Errorf("CMID(%d) = %+v, %v", cm.ID, got, err)
	}
	gets = append(gets, func() error { _, err := c.CMID(rxe0, 1, cm.ID); return err })
	srqs, err := c.SRQs(rxe1)
	if err != nil || len(srqs) != 1 {
		t.Fatalf("SRQs: %+v, %v", srqs, err)
	}
	s := srqs[0]
	if s.Owner.PID != srqTool || s.Type != ib.SRQTypeBasic || len(s.QPs) == 0 {
		t.Errorf("ibv_srq_pingpong's SRQ %+v", s)
	}
	var n uint32
	for _, r := range s.QPs {
		n += r.Last - r.First + 1
	}
	if n != srqQPs {
		t.Errorf("SRQ serves %d QPs (%+v), want %d", n, s.QPs, srqQPs)
	}
	if got, err := c.SRQ(rxe1, s.SRQN); err != nil || !cmp.Equal(got.QPs, s.QPs) {
		t.Errorf("SRQ(%d) = %+v, %v", s.SRQN, got, err)
	}
	gets = append(gets, func() error { _, err := c.SRQ(rxe1, s.SRQN); return err })
	qps1, err := c.QPs(rxe1)
	if err != nil || len(qps1) < srqQPs+1 {
		t.Fatalf("QPs(rxe1): %d, %v", len(qps1), err)
	}

	w.stop()
	testenv.WaitFor(t, "the tools' objects to go", func() bool {
		for _, dev := range []uint32{rxe0, rxe1} {
			s, err := c.ResourceSummaryOf(dev)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Count(ResourceCtx); n != 0 {
				return false
			}
		}
		return true
	})
	for i, get := range gets {
		if err := get(); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("object %d after its tool exited: %v, want os.ErrNotExist", i, err)
		}
	}
	for _, dev := range []uint32{rxe0, rxe1} {
		for name, n := range map[string]func() (int, error){
			"ctx": func() (int, error) { v, err := c.Contexts(dev); return len(v), err },
			"mr":  func() (int, error) { v, err := c.MRs(dev); return len(v), err },
			"srq": func() (int, error) { v, err := c.SRQs(dev); return len(v), err },
			"cm":  func() (int, error) { v, err := c.CMIDs(dev); return len(v), err },
			"qp": func() (int, error) {
				v, err := c.QPs(dev)
				for _, q := range v {
					if !q.Owner.IsKernel() {
						return len(v), err
					}
				}
				return 0, err
			},
		} {
			if got, err := n(); err != nil || got != 0 {
				t.Errorf("device %d: %d user %s objects after the tools exited (%v)", dev, got, name, err)
			}
		}
	}
}

// TestIntegrationResourceErrors: bad input gives typed errors.
func TestIntegrationResourceErrors(t *testing.T) {
	c := dialVM(t)
	rxe0 := devByName(t, c, "rxe0")
	const nodev = 1 << 30
	for name, err := range map[string]error{
		"summary of no device": second(c.ResourceSummaryOf(nodev)),
		"QPs of no device":     second(c.QPs(nodev)),
		"cm_ids of no device":  second(c.CMIDs(nodev)),
		"CQs of no device":     second(c.CQs(nodev)),
		"MRs of no device":     second(c.MRs(nodev)),
		"PDs of no device":     second(c.PDs(nodev)),
		"ctxs of no device":    second(c.Contexts(nodev)),
		"SRQs of no device":    second(c.SRQs(nodev)),
		"QPs of port 2":        second(c.QPsOfPort(rxe0, 2)),
		"cm_ids of port 2":     second(c.CMIDsOfPort(rxe0, 2)),
		"QP on port 2":         second(c.QP(rxe0, 2, 1)),
		"no QP 99999":          second(c.QP(rxe0, 1, 99999)),
		"no cm_id 99999":       second(c.CMID(rxe0, 1, 99999)),
		"no CQ 99999":          second(c.CQ(rxe0, 99999)),
		"no MR 99999":          second(c.MR(rxe0, 99999)),
		"no PD 99999":          second(c.PD(rxe0, 99999)),
		"no ctx 99999":         second(c.Context(rxe0, 99999)),
		"no SRQ 99999":         second(c.SRQ(rxe0, 99999)),
		"CQ of no device":      second(c.CQ(nodev, 0)),
	} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want os.ErrNotExist", name, err)
		}
	}
	for name, err := range map[string]error{
		"QPs of port 0": second(c.QPsOfPort(rxe0, 0)),
		"QP on port 0":  second(c.QP(rxe0, 0, 1)),
		"cm_id port 0":  second(c.CMID(rxe0, 0, 0)),
	} {
		var e *Error
		if !errors.Is(err, unix.EINVAL) || !errors.As(err, &e) {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	// The GSI QP lives on port 1 and is found there.
	if q, err := c.QP(rxe0, 1, 1); err != nil || q.Type != ib.QPTypeGSI || q.Owner.Kernel != "ib_core" {
		t.Errorf("QP(rxe0, 1, 1) = %+v, %v", q, err)
	}
}

// kernelAtLeast compares the running kernel's release with major.minor.
func kernelAtLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(testenv.KernelRelease(), "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}

// TestIntegrationResourceKernelFeatures checks the probes against the
// releases that bring the features, and that drivers without a raw format
// give ErrNotSupported.
func TestIntegrationResourceKernelFeatures(t *testing.T) {
	c := dialVM(t)
	rxe1 := devByName(t, c, "rxe1")
	has, err := c.HasDriverDetails()
	if err != nil {
		t.Fatal(err)
	}
	// 6.10 brought the attribute. Debian's 6.1.0-57 has it too: its
	// strict SYS_GET parser knows attributes up to 98 (RES_SUBTYPE), so
	// only the newer kernels are held to it.
	if kernelAtLeast(6, 10) && !has {
		t.Errorf("HasDriverDetails = false on %s", testenv.KernelRelease())
	}
	t.Logf("%s: HasDriverDetails = %v", testenv.KernelRelease(), has)
	_, err = c.QPs(rxe1, DriverDetails)
	if has && err != nil {
		t.Errorf("QPs with driver details: %v", err)
	}
	if !has && !errors.Is(err, ErrNotSupported) {
		t.Errorf("QPs with driver details on %s: %v, want ErrNotSupported", testenv.KernelRelease(), err)
	}
	if _, err := c.ResourceSummary(DriverDetails); has != (err == nil) {
		t.Errorf("ResourceSummary(DriverDetails): %v", err)
	}

	w := startWorkload(t)
	workloadReady(t, c, w)
	// rxe has no raw format: with objects there, the raw dumps fail.
	for name, err := range map[string]error{
		"QPs":  second(c.RawQPs(rxe1)),
		"CQs":  second(c.RawCQs(rxe1)),
		"MRs":  second(c.RawMRs(rxe1)),
		"SRQs": second(c.RawSRQs(rxe1)),
		"QP":   second(c.RawQP(rxe1, 1, 1)),
	} {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("raw %s of rxe: %v, want ErrNotSupported", name, err)
		}
	}
	// The SRQ command came with 6.7; Debian's 6.1 has no backport of it.
	_, err = c.RawSRQs(rxe1)
	if e := err.Error(); kernelAtLeast(6, 7) == strings.Contains(e, "need Linux 6.7") {
		t.Errorf("raw SRQs on %s: %v", testenv.KernelRelease(), err)
	}
}

// TestIntegrationResCaptureFixtures records the kernel's resource replies
// for the unit tests, while the tools run.
func TestIntegrationResCaptureFixtures(t *testing.T) {
	c := dialVM(t)
	w := startWorkload(t)
	workloadReady(t, c, w)
	rxe0, rxe1 := devByName(t, c, "rxe0"), devByName(t, c, "rxe1")
	cms, err := c.CMIDs(rxe0)
	if err != nil || len(cms) == 0 {
		t.Fatalf("CMIDs: %v %v", cms, err)
	}
	srqs, err := c.SRQs(rxe1)
	if err != nil || len(srqs) == 0 {
		t.Fatalf("SRQs: %v %v", srqs, err)
	}
	u32 := func(kv ...uint32) func(*netlink.AttributeEncoder) {
		return func(ae *netlink.AttributeEncoder) {
			for i := 0; i+1 < len(kv); i += 2 {
				ae.Uint32(uint16(kv[i]), kv[i+1])
			}
		}
	}
	dev := func(d uint32) func(*netlink.AttributeEncoder) { return u32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, d) }
	for _, fx := range []struct {
		name  string
		cmd   uint16
		dump  bool
		attrs func(*netlink.AttributeEncoder)
		min   int // messages at least
	}{
		{"res-summary", nlabi.RDMA_NLDEV_CMD_RES_GET, true, nil, 2},
		{"res-qp-rxe0", nlabi.RDMA_NLDEV_CMD_RES_QP_GET, true, dev(rxe0), 1},
		{"res-qp-rxe1", nlabi.RDMA_NLDEV_CMD_RES_QP_GET, true, dev(rxe1), 2},
		{"res-qp-get", nlabi.RDMA_NLDEV_CMD_RES_QP_GET, false, u32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, rxe0,
			nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1, nlabi.RDMA_NLDEV_ATTR_RES_LQPN, 1|1<<24), 1},
		{"res-cmid", nlabi.RDMA_NLDEV_CMD_RES_CM_ID_GET, true, dev(rxe0), 1},
		{"res-cmid-get", nlabi.RDMA_NLDEV_CMD_RES_CM_ID_GET, false, u32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, rxe0,
			nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1, nlabi.RDMA_NLDEV_ATTR_RES_CM_IDN, cms[0].ID), 1},
		{"res-cq", nlabi.RDMA_NLDEV_CMD_RES_CQ_GET, true, dev(rxe0), 1},
		{"res-mr", nlabi.RDMA_NLDEV_CMD_RES_MR_GET, true, dev(rxe0), 1},
		{"res-pd", nlabi.RDMA_NLDEV_CMD_RES_PD_GET, true, dev(rxe0), 1},
		{"res-ctx", nlabi.RDMA_NLDEV_CMD_RES_CTX_GET, true, dev(rxe0), 1},
		{"res-srq", nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET, true, dev(rxe1), 1},
		{"res-srq-get", nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET, false, u32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, rxe1,
			nlabi.RDMA_NLDEV_ATTR_RES_SRQN, srqs[0].SRQN), 1},
	} {
		var data []byte
		if fx.attrs != nil {
			ae := netlink.NewAttributeEncoder()
			fx.attrs(ae)
			data, _ = ae.Encode()
		}
		flags := netlink.Request
		if fx.dump {
			flags |= netlink.Dump
		}
		msgs, err := c.c.Execute(netlink.Message{
			Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, fx.cmd)), Flags: flags},
			Data:   data,
		})
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if len(msgs) < fx.min {
			t.Errorf("%s: %d messages, want at least %d", fx.name, len(msgs), fx.min)
		}
		if out := testenv.OutDir(); out != "" {
			writeFixture(t, filepath.Join(out, "testdata", "nldev"), testenv.KernelRelease(), fx.name, msgs)
		}
	}
}
