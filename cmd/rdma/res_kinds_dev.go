package main

import (
	"github.com/rdmastack/rdmastack/nldev"
)

// The per-device kinds, with iproute2's fields, print order and filters
// (rdma/res-cq.c, res-mr.c, res-pd.c, res-ctx.c, res-srq.c; the filter
// ranks follow rdma/res.h).

func cqInfo(q *nldev.CQ) nldev.ResourceInfo { return q.ResourceInfo }

var cqKind = &resKind[nldev.CQ]{
	name:  "cq",
	info:  cqInfo,
	query: devQuery((*nldev.Client).CQs, (*nldev.Client).CQ),
	raw:   devQuery((*nldev.Client).RawCQs, (*nldev.Client).RawCQ),
	fields: append([]resField[nldev.CQ]{
		{"cqn", fmtNum, idFilter(4), func(q *nldev.CQ) value { return num(q.CQN) }},
		{"cqe", fmtNum, noFilter, func(q *nldev.CQ) value { return num(q.CQE) }},
		{"users", fmtNum, numberFilter(1), func(q *nldev.CQ) value { return num(q.Users) }},
		{"poll-ctx", fmtStr, stringFilter(2), func(q *nldev.CQ) value {
			return orDefault(deref(q.PollCtx).String(), q.PollCtx != nil) // DIRECT when absent
		}},
		{"adaptive-moderation", fmtOnOff, noFilter, func(q *nldev.CQ) value {
			if q.AdaptiveModeration == nil {
				return value{state: absent}
			}
			return num(b2u(*q.AdaptiveModeration))
		}},
		{"ctxn", fmtNum, numberFilter(5), func(q *nldev.CQ) value { return optNum(q.CTXN) }},
	}, ownerFields(cqInfo, 3)...),
}

func mrInfo(m *nldev.MR) nldev.ResourceInfo { return m.ResourceInfo }

var mrKind = &resKind[nldev.MR]{
	name:  "mr",
	info:  mrInfo,
	query: devQuery((*nldev.Client).MRs, (*nldev.Client).MR),
	raw:   devQuery((*nldev.Client).RawMRs, (*nldev.Client).RawMR),
	fields: append([]resField[nldev.MR]{
		{"mrn", fmtNum, idFilter(5), func(m *nldev.MR) value { return num(m.MRN) }},
		{"rkey", fmtHex, inert(numberFilter(1)), func(m *nldev.MR) value { return optNum(m.RKey) }},
		{"lkey", fmtHex, inert(numberFilter(2)), func(m *nldev.MR) value { return optNum(m.LKey) }},
		{"iova", fmtHex, noFilter, func(m *nldev.MR) value { return optNum(m.IOVA) }},
		{"mrlen", fmtNum, numberFilter(3), func(m *nldev.MR) value { return num(m.Length) }},
		{"pdn", fmtNum, numberFilter(6), func(m *nldev.MR) value { return optNum(m.PDN) }},
	}, ownerFields(mrInfo, 4)...),
}

func pdInfo(x *nldev.PD) nldev.ResourceInfo { return x.ResourceInfo }

var pdKind = &resKind[nldev.PD]{
	name:  "pd",
	info:  pdInfo,
	query: devQuery((*nldev.Client).PDs, (*nldev.Client).PD),
	fields: append([]resField[nldev.PD]{
		{"pdn", fmtNum, idFilter(4), func(x *nldev.PD) value { return num(x.PDN) }},
		{"local_dma_lkey", fmtHex, noFilter, func(x *nldev.PD) value { return optNum(x.LocalDMALKey) }},
		{"users", fmtNum, numberFilter(1), func(x *nldev.PD) value { return num(x.Users) }},
		{"unsafe_global_rkey", fmtHex, noFilter, func(x *nldev.PD) value { return optNum(x.UnsafeGlobalRKey) }},
		{"ctxn", fmtNum, numberFilter(3), func(x *nldev.PD) value { return optNum(x.CTXN) }},
	}, ownerFields(pdInfo, 2)...),
}

func ctxInfo(x *nldev.Context) nldev.ResourceInfo { return x.ResourceInfo }

var ctxKind = &resKind[nldev.Context]{
	name:  "ctx",
	info:  ctxInfo,
	query: devQuery((*nldev.Client).Contexts, (*nldev.Client).Context),
	fields: append([]resField[nldev.Context]{
		{"ctxn", fmtNum, idFilter(2), func(x *nldev.Context) value { return num(x.CTXN) }},
	}, ownerFields(ctxInfo, 1)...),
}

func srqInfo(s *nldev.SRQ) nldev.ResourceInfo { return s.ResourceInfo }

var srqKind = &resKind[nldev.SRQ]{
	name:  "srq",
	info:  srqInfo,
	query: devQuery((*nldev.Client).SRQs, (*nldev.Client).SRQ),
	raw:   devQuery((*nldev.Client).RawSRQs, (*nldev.Client).RawSRQ),
	fields: append([]resField[nldev.SRQ]{
		{"srqn", fmtNum, idFilter(2), func(s *nldev.SRQ) value { return num(s.SRQN) }},
		{"type", fmtStr, stringFilter(3), func(s *nldev.SRQ) value { return str(s.Type.String()) }},
		{"lqpn", fmtQPs, qpsFilter(6), func(s *nldev.SRQ) value { return value{qps: s.QPs} }},
		{"pdn", fmtNum, numberFilter(4), func(s *nldev.SRQ) value { return num(s.PDN) }},
		{"cqn", fmtNum, numberFilter(5), func(s *nldev.SRQ) value { return optNum(s.CQN) }},
	}, ownerFields(srqInfo, 1)...),
}
