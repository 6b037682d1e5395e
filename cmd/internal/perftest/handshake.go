package perftest

import (
	"math/rand/v2"
	"net/netip"

	"github.com/rdmastack/rdmastack/ib"
)

// hs is one ctx_hand_shake of QP i's key message.
func (s *session) hs(i int, line string) error {
	d, err := s.x.handshake(&s.my[i], s.r.withGID, s.c.GIDIndex)
	if err != nil {
		return withLine(err, line)
	}
	s.rem[i] = d
	return nil
}

func (s *session) hsAll(line string) error {
	for i := range s.my {
		if err := s.hs(i, line); err != nil {
			return err
		}
	}
	return nil
}

// versions is exchange_versions, check_version_compatibility,
// check_sys_data and check_mtu.
func (s *session) versions() error {
	c, r := s.c, s.r
	var rem []byte
	if !c.NoVersion {
		b, err := s.x.xchg(dataMsg, versionMsg(version))
		if err != nil {
			return withLine(err, xchgFailed1)
		}
		rem = b
	}
	s.remVer = parseVersion(rem)
	if s.remVer < 5.70 {
		return fail("Current implementation is not compatible with versions older than 5.70\n")
	}
	if !c.NoVersion {
		b, err := s.x.xchg(dataMsg, be32(uint32(r.cycleBuffer)))
		if err != nil {
			return withLine(err, " Failed to exchange Page Size data between server and client\n")
		}
		r.cycleBuffer = max(r.cycleBuffer, int(int32(beUint32(b))))
		if b, err = s.x.xchg(dataMsg, be32(uint32(r.cacheLine))); err != nil {
			return withLine(err, " Failed to exchange Cache Line Size data between server and client\n")
		}
		r.cacheLine = max(r.cacheLine, int(int32(beUint32(b))))
	}
	cur := r.pickMTU(s.out, s.errw)
	r.mtu = cur
	if !c.NoVersion {
		b, err := s.x.xchg(dataMsg, mtuMsg(cur))
		if err != nil {
			return withLine(err, xchgFailed1)
		}
		if rm := parseMTU(b); rm >= int(ib.MTU256) && rm <= int(ib.MTU4096) && int(cur) > rm {
			r.mtu = ib.MTU(rm)
		}
	}
	if c.Conn == UD && c.Size > uint64(r.mtu.Bytes()) {
		if c.RunAll || !c.ReqSize {
			s.errw(" Max msg size in UD is MTU " + itoa(r.mtu.Bytes()) + "\n Changing to this MTU\n")
			c.Size = uint64(r.mtu.Bytes())
		} else {
			return fail(" Max message size in UD cannot be greater than MTU \n Couldn't get context for the device\n")
		}
	}
	return nil
}

// setUp is set_up_connection: the GID, and each QP's key message.
func (s *session) setUp() error {
	c, r := s.c, s.r
	var gid ib.GID
	if c.GIDIndex != -1 {
		if !c.UserGID {
			i, err := r.bestGID()
			if err != nil {
				return fail(" Unable to set up socket connection\n")
			}
			c.GIDIndex = i
		}
		e, err := r.ctx.QueryGID(c.IBPort, c.GIDIndex)
		if err != nil {
			return fail(" Unable to set up socket connection\n")
		}
		gid = e.GID
		r.withGID = true
	}
	for i, qp := range r.qps {
		s.my[i] = Dest{LID: r.port.LID, OutReads: uint16(c.OutReads), QPN: qp.Num(), PSN: rand.Uint32() & 0xffffff,
			RKey: r.mr.RKey(), VAddr: r.targetAddr(i), GID: gid}
	}
	return nil
}

// connect checks the GIDs and connects the QPs by hand, unless rdma_cm
// connected them (-R).
func (s *session) connect() error {
	if s.c.RdmaCM {
		return nil
	}
	if err := s.gidCheck(); err != nil {
		return err
	}
	return s.r.connect(s.my, s.rem)
}

// gidCheck is ctx_check_gid_compatibility.
func (s *session) gidCheck() error {
	v4 := func(g ib.GID) bool { return netip.AddrFrom16(g).Is4In6() }
	if v4(s.my[0].GID) != v4(s.rem[0].GID) {
		return fail("\n Found Incompatibility issue with GID types.\n Please Try to use a different IP version.\n\n")
	}
	return nil
}

func (s *session) printDests(mine bool) {
	for i := range s.my {
		if mine {
			s.out(destLine(s.c, "local", &s.my[i], s.r.withGID))
		} else {
			s.out(destLine(s.c, "remote", &s.rem[i], s.r.withGID))
		}
	}
}

// printRemote is the per-QP exchange that prints each peer's address.
func (s *session) printRemote() error {
	for i := range s.my {
		if err := s.hs(i, xchgFailed1); err != nil {
			return err
		}
		s.out(destLine(s.c, "remote", &s.rem[i], s.r.withGID))
	}
	return nil
}

// closeConn is ctx_close_connection: one more exchange, then "done".
func (s *session) closeConn(line string) error {
	if err := s.hs(0, ""); err != nil {
		return withLine(err, line)
	}
	if !s.c.RdmaCM {
		s.x.ch.write([]byte("done\x00"))
	}
	return nil
}

// armEvents requests the first completion events of the test's CQs.
func (s *session) armEvents() error {
	if !s.c.Events {
		return nil
	}
	if err := s.r.sendCQ.RequestNotify(false); err != nil {
		return fail("Couldn't request CQ notification\n")
	}
	if s.r.recvCQ != nil {
		if err := s.r.recvCQ.RequestNotify(false); err != nil {
			return fail("Couldn't request RCQ notification\n")
		}
	}
	return nil
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
