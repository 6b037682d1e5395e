package nldev

import (
	"net/netip"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// The res-* fixtures were captured by TestIntegrationResCaptureFixtures
// with two rxe devices while ibv_rc_pingpong (rxe0), ibv_srq_pingpong with
// 100 QPs (rxe1) and rping (listening on 10.77.0.1:18603) ran.

func decodeFixtureTable[T any, P resEntry[T]](t *testing.T, kernel string, msgs []netlink.Message, k *resKind) []T {
	t.Helper()
	var out []T
	for _, m := range msgs {
		vs, err := decodeTable[T, P](m.Data, k.table, k.entry)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		out = append(out, vs...)
	}
	return out
}

func decodeFixtureEntry[T any, P resEntry[T]](t *testing.T, kernel string, msgs []netlink.Message) T {
	t.Helper()
	if len(msgs) != 1 {
		t.Fatalf("%s: %d messages, want 1", kernel, len(msgs))
	}
	ad, err := netlink.NewAttributeDecoder(msgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeEntry[T, P](ad)
	if err != nil {
		t.Fatalf("%s: %v", kernel, err)
	}
	return v
}

// requireKernels fails unless fixtures of both kernels are there.
func requireKernels[V any](t *testing.T, name string, all map[string]V) {
	t.Helper()
	if len(all) < 2 {
		t.Fatalf("found %d kernels' %s fixtures, want 6.1 and 6.12", len(all), name)
	}
}

func TestFixtureResourceSummary(t *testing.T) {
	all := fixtures(t, "res-summary")
	requireKernels(t, "res-summary", all)
	order := []ResourceType{ResourcePD, ResourceCQ, ResourceQP, ResourceCMID, ResourceMR, ResourceCtx, ResourceSRQ}
	for kernel, msgs := range all {
		if len(msgs) != 2 {
			t.Fatalf("%s: %d summaries, want 2", kernel, len(msgs))
		}
		for i, m := range msgs {
			s, err := decodeResourceSummary(m.Data)
			if err != nil {
				t.Fatalf("%s: %v", kernel, err)
			}
			if s.DevIndex != uint32(i) || s.DevName != "rxe"+itoa(i) || len(s.Counts) != len(order) {
				t.Fatalf("%s: summary %+v", kernel, s)
			}
			for j, c := range s.Counts {
				if c.Type != order[j] {
					t.Errorf("%s: entry %d is %q, want %q", kernel, j, c.Type, order[j])
				}
			}
		}
		s0, _ := decodeResourceSummary(msgs[0].Data)
		s1, _ := decodeResourceSummary(msgs[1].Data)
		if n, _ := s0.Count(ResourceCtx); n != 2 {
			t.Errorf("%s: rxe0 has %d contexts, want 2 (ibv_rc_pingpong, rping)", kernel, n)
		}
		if n, _ := s0.Count(ResourceCMID); n != 1 {
			t.Errorf("%s: rxe0 has %d cm_ids, want 1", kernel, n)
		}
		if n, _ := s1.Count(ResourceQP); n != srqQPs+1 {
			t.Errorf("%s: rxe1 has %d QPs, want %d", kernel, n, srqQPs+1)
		}
	}
}

func TestFixtureQPs(t *testing.T) {
	all := fixtures(t, "res-qp-rxe1")
	requireKernels(t, "res-qp-rxe1", all)
	for kernel, msgs := range all {
		if len(msgs) < 2 {
			t.Errorf("%s: the QP table came in %d message(s); the fixture should span several", kernel, len(msgs))
		}
		qps := decodeFixtureTable[QP](t, kernel, msgs, &qpKind)
		if len(qps) != srqQPs+1 {
			t.Fatalf("%s: %d QPs, want %d", kernel, len(qps), srqQPs+1)
		}
		seen := map[uint32]bool{}
		var gsi int
		for _, q := range qps {
			if seen[q.LQPN] {
				t.Errorf("%s: QP %d twice", kernel, q.LQPN)
			}
			seen[q.LQPN] = true
			if q.DevName != "rxe1" || q.DevIndex != 1 || q.Port != 1 {
				t.Errorf("%s: QP %+v", kernel, q)
			}
			switch {
			case q.Owner.IsKernel():
				gsi++
				if q.LQPN != 1 || q.Type != ib.QPTypeGSI || q.Owner.Kernel != "ib_core" || q.PDN != nil || q.RQPN != nil || q.PathMigState != nil {
					t.Errorf("%s: kernel QP %+v", kernel, q)
				}
			default:
				if q.Type != ib.QPTypeRC || q.State != ib.QPStateInit || q.Owner.PID == 0 || q.PDN == nil ||
					q.RQPN == nil || q.RQPSN == nil || q.PathMigState == nil || *q.PathMigState != ib.MigMigrated {
					t.Errorf("%s: user QP %+v", kernel, q)
				}
			}
		}
		if gsi != 1 {
			t.Errorf("%s: %d kernel QPs, want the GSI QP", kernel, gsi)
		}
	}
	for kernel, msgs := range fixtures(t, "res-qp-get") {
		q := decodeFixtureEntry[QP](t, kernel, msgs)
		if q.LQPN != 1 || q.Port != 1 || q.DevName != "rxe0" || q.Type != ib.QPTypeGSI || q.State != ib.QPStateRTS || q.Owner.Kernel != "ib_core" {
			t.Errorf("%s: GSI QP %+v", kernel, q)
		}
	}
	for kernel, msgs := range fixtures(t, "res-qp-rxe0") {
		qps := decodeFixtureTable[QP](t, kernel, msgs, &qpKind)
		if len(qps) != 2 {
			t.Errorf("%s: rxe0 has %d QPs, want ibv_rc_pingpong's and GSI", kernel, len(qps))
		}
	}
}

func TestFixtureCMIDs(t *testing.T) {
	all := fixtures(t, "res-cmid")
	requireKernels(t, "res-cmid", all)
	want := netip.MustParseAddrPort("10.77.0.1:18603")
	check := func(kernel string, m CMID) {
		if m.DevName != "rxe0" || m.Port != 1 || m.State != CMListen || m.PortSpace != PortSpaceTCP || m.QP != nil ||
			m.SrcFamily != nlabi.AF_INET || m.SrcAddr != want || m.DstFamily != nlabi.AF_INET ||
			m.DstAddr != netip.MustParseAddrPort("0.0.0.0:0") || m.Owner.PID == 0 {
			t.Errorf("%s: rping's cm_id %+v", kernel, m)
		}
	}
	for kernel, msgs := range all {
		ms := decodeFixtureTable[CMID](t, kernel, msgs, &cmidKind)
		if len(ms) != 1 {
			t.Fatalf("%s: %d cm_ids", kernel, len(ms))
		}
		check(kernel, ms[0])
	}
	for kernel, msgs := range fixtures(t, "res-cmid-get") {
		check(kernel, decodeFixtureEntry[CMID](t, kernel, msgs))
	}
}

func TestFixtureCQMRPDCtx(t *testing.T) {
	all := fixtures(t, "res-cq")
	requireKernels(t, "res-cq", all)
	for kernel, msgs := range all {
		cqs := decodeFixtureTable[CQ](t, kernel, msgs, &cqKind)
		var kern, user int
		for _, q := range cqs {
			if q.AdaptiveModeration == nil || *q.AdaptiveModeration {
				t.Errorf("%s: CQ %+v: want adaptive moderation off", kernel, q)
			}
			if q.Owner.IsKernel() {
				kern++
				if q.PollCtx == nil || *q.PollCtx != PollWorkqueue || q.CTXN != nil {
					t.Errorf("%s: kernel CQ %+v", kernel, q)
				}
			} else {
				user++
				if q.PollCtx != nil || q.CTXN == nil || q.CQE == 0 {
					t.Errorf("%s: user CQ %+v", kernel, q)
				}
			}
		}
		if kern != 1 || user != 1 {
			t.Errorf("%s: %d kernel and %d user CQs, want 1 and 1", kernel, kern, user)
		}
	}
	for kernel, msgs := range fixtures(t, "res-mr") {
		mrs := decodeFixtureTable[MR](t, kernel, msgs, &mrKind)
		if len(mrs) != 1 || mrs[0].Length != 4096 || mrs[0].LKey == nil || mrs[0].RKey == nil || mrs[0].PDN == nil || mrs[0].IOVA != nil {
			t.Errorf("%s: MRs %+v", kernel, mrs)
		}
	}
	for kernel, msgs := range fixtures(t, "res-pd") {
		pds := decodeFixtureTable[PD](t, kernel, msgs, &pdKind)
		if len(pds) != 3 {
			t.Errorf("%s: %d PDs, want ib_core's, ibv_rc_pingpong's and rping's", kernel, len(pds))
		}
		for _, p := range pds {
			if p.LocalDMALKey == nil || p.Owner.IsKernel() == (p.CTXN != nil) || p.UnsafeGlobalRKey != nil {
				t.Errorf("%s: PD %+v", kernel, p)
			}
		}
	}
	for kernel, msgs := range fixtures(t, "res-ctx") {
		xs := decodeFixtureTable[Context](t, kernel, msgs, &ctxKind)
		if len(xs) != 2 || xs[0].CTXN == xs[1].CTXN || xs[0].Owner.PID == 0 || xs[1].Owner.PID == 0 {
			t.Errorf("%s: contexts %+v", kernel, xs)
		}
	}
}

func TestFixtureSRQ(t *testing.T) {
	all := fixtures(t, "res-srq")
	requireKernels(t, "res-srq", all)
	for kernel, msgs := range all {
		srqs := decodeFixtureTable[SRQ](t, kernel, msgs, &srqKind)
		if len(srqs) != 1 {
			t.Fatalf("%s: %d SRQs", kernel, len(srqs))
		}
		s := srqs[0]
		var n uint32
		for _, r := range s.QPs {
			n += r.Last - r.First + 1
		}
		if s.DevName != "rxe1" || s.Type != ib.SRQTypeBasic || s.CQN != nil || n != srqQPs || s.Owner.PID == 0 {
			t.Errorf("%s: SRQ %+v", kernel, s)
		}
		got := decodeFixtureEntry[SRQ](t, kernel, fixtures(t, "res-srq-get")[kernel])
		if got.SRQN != s.SRQN || len(got.QPs) != len(s.QPs) {
			t.Errorf("%s: SRQ by id %+v, dump %+v", kernel, got, s)
		}
	}
}

// The fuzz tests feed every captured message (and mutations) to each
// decoder: none may panic, and what they accept must be consistent.

func FuzzDecodeResourceSummary(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeResourceSummary(b)
		if err == nil && len(b) < 8 {
			t.Fatalf("summary %+v from %d bytes", s, len(b))
		}
	})
}

func FuzzDecodeResTables(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(n int, err error) {
			if err == nil && n > 0 && len(b) < 16 {
				t.Fatalf("%d entries from %d bytes", n, len(b))
			}
		}
		qps, err := decodeTable[QP](b, qpKind.table, qpKind.entry)
		check(len(qps), err)
		cms, err := decodeTable[CMID](b, cmidKind.table, cmidKind.entry)
		check(len(cms), err)
		cqs, err := decodeTable[CQ](b, cqKind.table, cqKind.entry)
		check(len(cqs), err)
		mrs, err := decodeTable[MR](b, mrKind.table, mrKind.entry)
		check(len(mrs), err)
		pds, err := decodeTable[PD](b, pdKind.table, pdKind.entry)
		check(len(pds), err)
		xs, err := decodeTable[Context](b, ctxKind.table, ctxKind.entry)
		check(len(xs), err)
		ss, err := decodeTable[SRQ](b, srqKind.table, srqKind.entry)
		check(len(ss), err)
		rs, err := decodeTable[RawResource](b, qpKind.table, qpKind.entry)
		check(len(rs), err)
	})
}

func FuzzDecodeResEntry(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decode := func(fn func(ad *netlink.AttributeDecoder) error) {
			ad, err := netlink.NewAttributeDecoder(b)
			if err != nil {
				return
			}
			if err := fn(ad); err == nil && len(b) < 8 {
				t.Fatalf("an entry from %d bytes", len(b))
			}
		}
		decode(func(ad *netlink.AttributeDecoder) error { _, err := decodeEntry[QP](ad); return err })
		decode(func(ad *netlink.AttributeDecoder) error { _, err := decodeEntry[CMID](ad); return err })
		decode(func(ad *netlink.AttributeDecoder) error { _, err := decodeEntry[SRQ](ad); return err })
		decode(func(ad *netlink.AttributeDecoder) error { _, err := decodeEntry[MR](ad); return err })
	})
}

func FuzzDecodeDriverAttrs(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ad, err := netlink.NewAttributeDecoder(b)
		if err != nil {
			return
		}
		for _, a := range decodeDriverAttrs(ad) {
			if a.Value == nil {
				t.Fatalf("driver attribute %q without a value", a.Key)
			}
		}
	})
}

func FuzzDecodeSockaddr(f *testing.F) {
	f.Add(sockaddr(nlabi.AF_INET, 1, []byte{1, 2, 3, 4}, 0))
	f.Add(sockaddr(nlabi.AF_INET6, 1, make([]byte, 16), 5))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fam, ap := decodeSockaddr(b)
		if ap.IsValid() && fam != nlabi.AF_INET && fam != nlabi.AF_INET6 {
			t.Fatalf("family %d gave address %v", fam, ap)
		}
	})
}
