package uverbs_test

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationAHFromWC: a UD datagram from one QP of rxe0 to another,
// sent from the link-local GID (an IPv6 GRH) and from the IPv4 one (the
// IPv4 header in the GRH's last 20 bytes): the reply address built from
// the receive completion and the GRH goes back to the sender's GID from
// the same local GID index, with the sender's hop limit, and a reply
// through CreateAHFromWC reaches the sender's QP (the immediate data
// names it).
func TestIntegrationAHFromWC(t *testing.T) {
	e := newEnv(t)
	gids, err := e.c.QueryGIDTable()
	if err != nil {
		t.Fatal(err)
	}
	var v4 uverbs.GIDEntry
	for _, g := range gids {
		if g.Type == ib.GIDTypeRoCEv2 && g.Port == 1 && g.GID.Addr().Is4In6() {
			v4 = g
			break
		}
	}
	if v4.GID.IsZero() {
		t.Fatalf("no IPv4 RoCE v2 GID in %v", gids)
	}
	ca, cb := e.newCQ(t, 16), e.newCQ(t, 16)
	a := e.newQP(t, ca, ca, qpOpts{typ: ib.QPTypeUD})
	b := e.newQP(t, cb, cb, qpOpts{typ: ib.QPTypeUD})
	co := uverbs.ConnectOptions{}
	for _, qp := range []*uverbs.QP{a, b} {
		if err := qp.Init(co); err != nil {
			t.Fatal(err)
		}
		if err := qp.Connect(co, uverbs.Peer{}); err != nil {
			t.Fatal(err)
		}
	}
	const qkey, size = 0x11111111, 64
	for _, sgid := range []uverbs.GIDEntry{e.sgid, v4} {
		t.Run(sgid.GID.String(), func(t *testing.T) {
			ah, err := e.pd.CreateAH(uverbs.AHAttr{IsGlobal: true, DGID: sgid.GID, SGIDIndex: uint8(sgid.Index), HopLimit: 64, Port: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ah.Close()
			// b receives at 0 (GRH, then the datagram), a at 4096.
			if err := b.PostRecv(&uverbs.RecvWR{ID: 1, SGE: []uverbs.SGE{e.sge(0, uverbs.GRHLen+size)}}); err != nil {
				t.Fatal(err)
			}
			if err := a.PostRecv(&uverbs.RecvWR{ID: 2, SGE: []uverbs.SGE{e.sge(4096, uverbs.GRHLen+size)}}); err != nil {
				t.Fatal(err)
			}
			if err := a.PostSend(&uverbs.SendWR{ID: 3, Opcode: uverbs.OpSendWithImm, Flags: uverbs.SendSignaled, Imm: a.Num(),
				SGE: []uverbs.SGE{e.sge(8192, size)}, AH: ah, RemoteQPN: b.Num(), RemoteQKey: qkey}); err != nil {
				t.Fatal(err)
			}
			wc := cb.wait(t, 1)[0]
			checkWC(t, wc, 1, uverbs.WCRecv, uverbs.WCSuccess)
			if wc.Flags&uverbs.WCWithGRH == 0 || wc.Imm != a.Num() {
				t.Fatalf("receive %+v: want a GRH and immediate data %d", wc, a.Num())
			}
			ca.wait(t, 1) // the send
			grh := e.buf.Bytes()[:uverbs.GRHLen]
			attr, err := e.c.AHAttrFromWC(1, &wc, grh)
			if err != nil {
				t.Fatalf("AHAttrFromWC(%x): %v", grh, err)
			}
			if !attr.IsGlobal || attr.DGID != sgid.GID || attr.SGIDIndex != uint8(sgid.Index) || attr.HopLimit != 64 ||
				attr.TrafficClass != 0 || attr.Port != 1 {
				t.Fatalf("AHAttrFromWC(%x) = %+v: want DGID %v from index %d, hop limit 64", grh, attr, sgid.GID, sgid.Index)
			}
			reply, err := e.pd.CreateAHFromWC(1, &wc, grh)
			if err != nil {
				t.Fatal(err)
			}
			defer reply.Close()
			if err := b.PostSend(&uverbs.SendWR{ID: 4, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{e.sge(8192, size)}, AH: reply, RemoteQPN: wc.Imm, RemoteQKey: qkey}); err != nil {
				t.Fatal(err)
			}
			checkWC(t, ca.wait(t, 1)[0], 2, uverbs.WCRecv, uverbs.WCSuccess)
			checkWC(t, cb.wait(t, 1)[0], 4, uverbs.WCSend, uverbs.WCSuccess)
		})
	}
}
