package main

import (
	"fmt"
	"net/netip"

	"github.com/rdmastack/rdmastack/nldev"
)

// Each show function prints one device's (and for qp and cm_id one port's)
// objects of its kind, with iproute2's filters, fields and order
// (rdma/res-*.c).

func showQPs(rs *resSession, d nldev.Device, port uint32) error {
	if rs.o.raw {
		return fetchShowRaw(rs, true, func(id uint32) (nldev.RawResource, error) { return rs.c.RawQP(d.Index, port, id) },
			func() ([]nldev.RawResource, error) {
				if port == 0 {
					return rs.c.RawQPs(d.Index, rs.opts()...)
				}
				return rs.c.RawQPsOfPort(d.Index, port, rs.opts()...)
			})
	}
	qps, err := fetch(rs, func(id uint32) (nldev.QP, error) { return rs.c.QP(d.Index, port, id) },
		func() ([]nldev.QP, error) {
			if port == 0 {
				return rs.c.QPs(d.Index, rs.opts()...)
			}
			return rs.c.QPsOfPort(d.Index, port, rs.opts()...)
		})
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, q := range qps {
		pmState := "MIGRATED"
		if q.PathMigState != nil {
			pmState = q.PathMigState.String()
		}
		if q.Port != port ||
			fs.num("lqpn", q.LQPN, true) ||
			fs.num("pdn", deref(q.PDN), q.PDN != nil) ||
			fs.num("rqpn", deref(q.RQPN), q.RQPN != nil) ||
			fs.num("rq-psn", deref(q.RQPSN), q.RQPSN != nil) ||
			fs.num("sq-psn", q.SQPSN, true) ||
			fs.str("path-mig-state", pmState) ||
			fs.str("type", q.Type.String()) ||
			fs.str("state", q.State.String()) ||
			fs.num("pid", q.Owner.PID, q.Owner.PID != 0) {
			continue
		}
		printLink(p, q.DevIndex, q.DevName, q.Port)
		resU32(p, "lqpn", &q.LQPN)
		if q.RQPN != nil {
			p.uint("rqpn", "rqpn %d ", uint64(*q.RQPN))
		}
		p.str("type", "type %s ", q.Type.String())
		if q.Type == 0xFF && q.Subtype != "" {
			p.str("subtype", "subtype %s ", q.Subtype)
		}
		p.str("state", "state %s ", q.State.String())
		if q.RQPSN != nil {
			p.uint("rq-psn", "rq-psn %d ", uint64(*q.RQPSN))
		}
		resU32(p, "sq-psn", &q.SQPSN)
		if q.PathMigState != nil {
			p.str("path-mig-state", "path-mig-state %s ", q.PathMigState.String())
		}
		resU32(p, "pdn", q.PDN)
		if err := endObject(rs, q.Owner, q.Driver); err != nil {
			return err
		}
	}
	return nil
}

// endObject prints what every object but a cm_id ends with, its owner and
// driver attributes, and ends the record.
func endObject(rs *resSession, owner nldev.Owner, driver []nldev.DriverAttr) error {
	printPID(rs.p, owner)
	printComm(rs.p, owner)
	printDriver(rs, driver)
	return rs.p.end()
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

func showCMIDs(rs *resSession, d nldev.Device, port uint32) error {
	ms, err := fetch(rs, func(id uint32) (nldev.CMID, error) { return rs.c.CMID(d.Index, port, id) },
		func() ([]nldev.CMID, error) {
			if port == 0 {
				return rs.c.CMIDs(d.Index, rs.opts()...)
			}
			return rs.c.CMIDsOfPort(d.Index, port, rs.opts()...)
		})
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, m := range ms {
		var lqpn uint32
		var qpType nldev.CMIDQP
		if m.QP != nil {
			lqpn, qpType = m.QP.LQPN, *m.QP
		}
		src, srcOK := sockaddrText(m.SrcFamily, m.SrcAddr)
		dst, dstOK := sockaddrText(m.DstFamily, m.DstAddr)
		if (m.Port != 0 && m.Port != port) || !srcOK || !dstOK ||
			fs.num("lqpn", lqpn, m.QP != nil) ||
			fs.str("qp-type", qpType.Type.String()) ||
			fs.str("ps", m.PortSpace.String()) ||
			fs.str("state", m.State.String()) ||
			fs.str("src-addr", src) ||
			fs.num("src-port", uint32(m.SrcAddr.Port()), m.SrcFamily != 0) ||
			fs.str("dst-addr", dst) ||
			fs.num("dst-port", uint32(m.DstAddr.Port()), m.DstFamily != 0) ||
			fs.num("pid", m.Owner.PID, m.Owner.PID != 0) ||
			fs.num("cm-idn", m.ID, true) {
			continue
		}
		printLink(p, m.DevIndex, m.DevName, m.Port)
		resU32(p, "cm-idn", &m.ID)
		if m.QP != nil {
			resU32(p, "lqpn", &m.QP.LQPN)
			p.str("qp-type", "qp-type %s ", m.QP.Type.String())
		}
		p.str("state", "state %s ", m.State.String())
		p.str("ps", "ps %s ", m.PortSpace.String())
		printPID(p, m.Owner)
		printComm(p, m.Owner)
		if m.SrcFamily != 0 {
			printAddr(p, "src-addr", src, m.SrcAddr.Port())
		}
		if m.DstFamily != 0 {
			printAddr(p, "dst-addr", dst, m.DstAddr.Port())
		}
		printDriver(rs, m.Driver)
		if err := p.end(); err != nil {
			return err
		}
	}
	return nil
}

// sockaddrText is the address as inet_ntop writes it (no zone), and
// whether iproute2 can print the family at all: it skips an entry with an
// address of another family. An absent address is "".
func sockaddrText(family uint16, ap netip.AddrPort) (string, bool) {
	if family == 0 {
		return "", true
	}
	if !ap.IsValid() {
		return "", false
	}
	return ap.Addr().WithZone("").String(), true
}

// printAddr is print_ipaddr: "key ADDR:PORT " in text, "ADDR:PORT" in JSON.
func printAddr(p *printer, key, addr string, port uint16) {
	s := fmt.Sprintf("%s:%d", addr, port)
	jsonOnly(p, key, s)
	textOnly(p, key+" "+s+" ")
}

func showCQs(rs *resSession, d nldev.Device, _ uint32) error {
	if rs.o.raw {
		return fetchShowRaw(rs, false, func(id uint32) (nldev.RawResource, error) { return rs.c.RawCQ(d.Index, id) },
			func() ([]nldev.RawResource, error) { return rs.c.RawCQs(d.Index, rs.opts()...) })
	}
	cqs, err := fetch(rs, func(id uint32) (nldev.CQ, error) { return rs.c.CQ(d.Index, id) },
		func() ([]nldev.CQ, error) { return rs.c.CQs(d.Index, rs.opts()...) })
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, q := range cqs {
		users := uint32(q.Users)
		pc := nldev.PollCtx(0)
		if q.PollCtx != nil {
			pc = *q.PollCtx
		}
		if fs.num("users", users, true) ||
			fs.str("poll-ctx", pc.String()) ||
			fs.num("pid", q.Owner.PID, q.Owner.PID != 0) ||
			fs.num("cqn", q.CQN, true) ||
			fs.num("ctxn", deref(q.CTXN), q.CTXN != nil) {
			continue
		}
		printDev(p, q.DevIndex, q.DevName)
		resU32(p, "cqn", &q.CQN)
		resU32(p, "cqe", &q.CQE)
		resU32(p, "users", &q.Users)
		if q.PollCtx != nil {
			p.str("poll-ctx", "poll-ctx %s ", q.PollCtx.String())
		}
		if q.AdaptiveModeration != nil {
			p.onOff("adaptive-moderation", "adaptive-moderation %s ", *q.AdaptiveModeration)
		}
		resU32(p, "ctxn", q.CTXN)
		if err := endObject(rs, q.Owner, q.Driver); err != nil {
			return err
		}
	}
	return nil
}

func showMRs(rs *resSession, d nldev.Device, _ uint32) error {
	if rs.o.raw {
		return fetchShowRaw(rs, false, func(id uint32) (nldev.RawResource, error) { return rs.c.RawMR(d.Index, id) },
			func() ([]nldev.RawResource, error) { return rs.c.RawMRs(d.Index, rs.opts()...) })
	}
	mrs, err := fetch(rs, func(id uint32) (nldev.MR, error) { return rs.c.MR(d.Index, id) },
		func() ([]nldev.MR, error) { return rs.c.MRs(d.Index, rs.opts()...) })
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, m := range mrs {
		if fs.num("mrlen", uint32(m.Length), true) ||
			fs.num("pid", m.Owner.PID, m.Owner.PID != 0) ||
			fs.num("mrn", m.MRN, true) ||
			fs.num("pdn", deref(m.PDN), m.PDN != nil) {
			continue
		}
		printDev(p, m.DevIndex, m.DevName)
		resU32(p, "mrn", &m.MRN)
		printKey(p, "rkey", m.RKey)
		printKey(p, "lkey", m.LKey)
		printKey(p, "iova", m.IOVA)
		resU32(p, "mrlen", &m.Length)
		resU32(p, "pdn", m.PDN)
		if err := endObject(rs, m.Owner, m.Driver); err != nil {
			return err
		}
	}
	return nil
}

func showPDs(rs *resSession, d nldev.Device, _ uint32) error {
	pds, err := fetch(rs, func(id uint32) (nldev.PD, error) { return rs.c.PD(d.Index, id) },
		func() ([]nldev.PD, error) { return rs.c.PDs(d.Index, rs.opts()...) })
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, x := range pds {
		if fs.num("users", uint32(x.Users), true) ||
			fs.num("pid", x.Owner.PID, x.Owner.PID != 0) ||
			fs.num("ctxn", deref(x.CTXN), x.CTXN != nil) ||
			fs.num("pdn", x.PDN, true) {
			continue
		}
		printDev(p, x.DevIndex, x.DevName)
		resU32(p, "pdn", &x.PDN)
		printKey(p, "local_dma_lkey", x.LocalDMALKey)
		resU32(p, "users", &x.Users)
		printKey(p, "unsafe_global_rkey", x.UnsafeGlobalRKey)
		resU32(p, "ctxn", x.CTXN)
		if err := endObject(rs, x.Owner, x.Driver); err != nil {
			return err
		}
	}
	return nil
}

func showContexts(rs *resSession, d nldev.Device, _ uint32) error {
	xs, err := fetch(rs, func(id uint32) (nldev.Context, error) { return rs.c.Context(d.Index, id) },
		func() ([]nldev.Context, error) { return rs.c.Contexts(d.Index, rs.opts()...) })
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, x := range xs {
		if fs.num("pid", x.Owner.PID, x.Owner.PID != 0) || fs.num("ctxn", x.CTXN, true) {
			continue
		}
		printDev(p, x.DevIndex, x.DevName)
		resU32(p, "ctxn", &x.CTXN)
		if err := endObject(rs, x.Owner, x.Driver); err != nil {
			return err
		}
	}
	return nil
}

func showSRQs(rs *resSession, d nldev.Device, _ uint32) error {
	if rs.o.raw {
		return fetchShowRaw(rs, false, func(id uint32) (nldev.RawResource, error) { return rs.c.RawSRQ(d.Index, id) },
			func() ([]nldev.RawResource, error) { return rs.c.RawSRQs(d.Index, rs.opts()...) })
	}
	srqs, err := fetch(rs, func(id uint32) (nldev.SRQ, error) { return rs.c.SRQ(d.Index, id) },
		func() ([]nldev.SRQ, error) { return rs.c.SRQs(d.Index, rs.opts()...) })
	if err != nil {
		return err
	}
	p, fs := rs.p, rs.fs
	for _, s := range srqs {
		if fs.num("pid", s.Owner.PID, s.Owner.PID != 0) ||
			fs.num("srqn", s.SRQN, true) ||
			fs.str("type", s.Type.String()) ||
			fs.num("pdn", s.PDN, true) ||
			fs.num("cqn", deref(s.CQN), s.CQN != nil) {
			continue
		}
		qps, ok := srqQPList(fs, s.QPs)
		if !ok {
			continue
		}
		printDev(p, s.DevIndex, s.DevName)
		resU32(p, "srqn", &s.SRQN)
		p.str("type", "type %s ", s.Type.String())
		if len(qps) > 0 {
			p.list("lqpn", "lqpn ", qps, ",", " ")
		}
		resU32(p, "pdn", &s.PDN)
		resU32(p, "cqn", s.CQN)
		if err := endObject(rs, s.Owner, s.Driver); err != nil {
			return err
		}
	}
	return nil
}
