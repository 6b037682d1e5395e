package main

import (
	"net/netip"
	"slices"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// The per-link kinds, with iproute2's fields, print order and filters
// (rdma/res-qp.c, res-cmid.c; the filter ranks follow rdma/res.h).

func qpInfo(q *nldev.QP) nldev.ResourceInfo { return q.ResourceInfo }

var qpKind = &resKind[nldev.QP]{
	name: "qp", perLink: true,
	info:  qpInfo,
	port:  func(q *nldev.QP) uint32 { return q.Port },
	skip:  func(q *nldev.QP, port uint32) bool { return q.Port != port },
	query: linkQuery((*nldev.Client).QPs, (*nldev.Client).QPsOfPort, (*nldev.Client).QP),
	raw:   linkQuery((*nldev.Client).RawQPs, (*nldev.Client).RawQPsOfPort, (*nldev.Client).RawQP),
	fields: append([]resField[nldev.QP]{
		{"lqpn", fmtNum, idFilter(1), func(q *nldev.QP) value { return num(q.LQPN) }},
		{"rqpn", fmtNum, numberFilter(2), func(q *nldev.QP) value { return optNum(q.RQPN) }},
		{"type", fmtStr, stringFilter(6), func(q *nldev.QP) value { return str(q.Type.String()) }},
		{"subtype", fmtStr, noFilter, func(q *nldev.QP) value {
			return orDefault(q.Subtype, q.Type == ib.QPTypeDriver && q.Subtype != "")
		}},
		{"state", fmtStr, stringFilter(8), func(q *nldev.QP) value { return str(q.State.String()) }},
		{"rq-psn", fmtNum, numberFilter(5), func(q *nldev.QP) value { return optNum(q.RQPSN) }},
		{"sq-psn", fmtNum, numberFilter(4), func(q *nldev.QP) value { return num(q.SQPSN) }},
		{"path-mig-state", fmtStr, stringFilter(7), func(q *nldev.QP) value {
			return orDefault(deref(q.PathMigState).String(), q.PathMigState != nil) // MIGRATED when absent
		}},
		{"pdn", fmtNum, numberFilter(9), func(q *nldev.QP) value { return optNum(q.PDN) }},
	}, ownerFields(qpInfo, 3)...),
}

func cmidInfo(m *nldev.CMID) nldev.ResourceInfo { return m.ResourceInfo }

var cmidKind = &resKind[nldev.CMID]{
	name: "cm_id", perLink: true,
	info: cmidInfo,
	port: func(m *nldev.CMID) uint32 { return m.Port },
	// A cm_id bound to no port shows with every port. iproute2 leaves out
	// one with an address of a family it cannot print.
	skip: func(m *nldev.CMID, port uint32) bool {
		return (m.Port != 0 && m.Port != port) || !printable(m.SrcFamily, m.SrcAddr) || !printable(m.DstFamily, m.DstAddr)
	},
	query: linkQuery((*nldev.Client).CMIDs, (*nldev.Client).CMIDsOfPort, (*nldev.Client).CMID),
	fields: slices.Concat([]resField[nldev.CMID]{
		{"cm-idn", fmtNum, idFilter(12), func(m *nldev.CMID) value { return num(m.ID) }},
		{"lqpn", fmtNum, numberFilter(1), func(m *nldev.CMID) value {
			if m.QP == nil {
				return value{state: absent}
			}
			return num(m.QP.LQPN)
		}},
		{"qp-type", fmtStr, stringFilter(2), func(m *nldev.CMID) value {
			return orDefault(deref(m.QP).Type.String(), m.QP != nil)
		}},
		{"state", fmtStr, stringFilter(3), func(m *nldev.CMID) value { return str(m.State.String()) }},
		{"ps", fmtStr, stringFilter(4), func(m *nldev.CMID) value { return str(m.PortSpace.String()) }},
		{"dev-type", nil, inert(stringFilter(5)), nil},
		{"transport-type", nil, inert(stringFilter(6)), nil},
	}, ownerFields(cmidInfo, 7), []resField[nldev.CMID]{
		{"src-addr", fmtAddr, stringFilter(8), func(m *nldev.CMID) value { return addrValue(m.SrcFamily, m.SrcAddr) }},
		{"src-port", nil, numberFilter(9), func(m *nldev.CMID) value { return portValue(m.SrcFamily, m.SrcAddr) }},
		{"dst-addr", fmtAddr, stringFilter(10), func(m *nldev.CMID) value { return addrValue(m.DstFamily, m.DstAddr) }},
		{"dst-port", nil, numberFilter(11), func(m *nldev.CMID) value { return portValue(m.DstFamily, m.DstAddr) }},
	}),
}

// printable reports whether iproute2 can print a cm_id's address: it has
// none (family 0), or one of AF_INET or AF_INET6.
func printable(family uint16, ap netip.AddrPort) bool { return family == 0 || ap.IsValid() }

// addrValue is the address as inet_ntop writes it (no zone), with its
// port; an absent address compares as "".
func addrValue(family uint16, ap netip.AddrPort) value {
	if family == 0 || !ap.IsValid() {
		return value{state: absent}
	}
	return value{s: ap.Addr().WithZone("").String(), n: uint64(ap.Port())}
}

func portValue(family uint16, ap netip.AddrPort) value {
	if family == 0 {
		return value{state: absent}
	}
	return num(uint32(ap.Port()))
}
