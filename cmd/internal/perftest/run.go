package perftest

import (
	"context"
	"io"
	"math/rand/v2"
	"net/netip"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Main is one whole program: prog's name, verb and test; args are the
// words after the name. What perftest prints goes to stdout and stderr;
// the error ends the process with perftest's status (cmnode.Exit).
func Main(stdout, stderr io.Writer, prog string, v Verb, t Test, args []string) error {
	c, err := Parse(stdout, stderr, prog, v, t, args)
	if err == nil {
		err = run(context.Background(), stdout, stderr, c)
	}
	if err == nil {
		return nil
	}
	code := 1
	if f, ok := err.(*Failure); ok {
		io.WriteString(stderr, f.Stderr)
		code = f.Code
	} else {
		io.WriteString(stderr, err.Error()+"\n")
	}
	return &cmnode.ExitError{Code: code}
}

// session is one run: the config, its resources, the exchange and the
// two ends' QP addresses.
type session struct {
	c       *Config
	stdout  io.Writer
	stderr  io.Writer
	r       *res
	x       *exchanger
	my, rem []Dest
	remVer  float64

	// the receive work requests postRecvs posts and the loops repost
	rwrs    []uverbs.RecvWR
	rsges   [][1]uverbs.SGE
	recvLen uint32

	waits eventWaits // the completion-event waits' context
}

func (s *session) out(str string)  { io.WriteString(s.stdout, str) }
func (s *session) errw(str string) { io.WriteString(s.stderr, str) }

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

const (
	xchgFailed  = "Failed to exchange data between server and clients\n"
	xchgFailed1 = " Failed to exchange data between server and clients\n"
)

func run(ctx context.Context, stdout, stderr io.Writer, c *Config) error {
	if c.RdmaCM && c.Conn == UD {
		return fail(" UD test QPs over rdma_cm (-R -c UD) are not supported by this implementation\n")
	}
	r, err := openDevice(c, stdout, stderr)
	if err != nil {
		return err
	}
	defer r.close()
	s := &session{c: c, stdout: stdout, stderr: stderr, r: r}
	defer s.stopWaits()
	if c.Output == FullVerbosity && c.isServer() {
		s.out("\n************************************\n* Waiting for client to connect... *\n************************************\n")
	}
	var ch channel
	switch {
	case c.RdmaCM && c.isServer():
		ch, err = listenCM(ctx, c)
	case c.RdmaCM:
		ch, err = dialCM(ctx, c)
	case c.isServer():
		ch, err = listenTCP(ctx, c.Port)
	default:
		ch, err = dialTCP(c.Server, c.Port)
	}
	if err != nil {
		return err
	}
	defer ch.close()
	s.x = &exchanger{ch: ch, client: c.Server != "", cm: c.RdmaCM}
	if err := s.versions(); err != nil {
		return err
	}
	size := c.Size
	if c.RunAll {
		size = maxSize
	}
	s.my = make([]Dest, c.NumQPs)
	s.rem = make([]Dest, c.NumQPs)
	if c.RdmaCM {
		if err := s.cmConnect(ctx, size); err != nil {
			return err
		}
	} else if err := r.create(size, true); err != nil {
		return err
	}
	if err := s.setUp(); err != nil {
		return err
	}
	s.out(testInfo(c, r.linkInfo()))
	switch {
	case c.Test == BW && c.Verb == Send:
		return s.sendBW()
	case c.Test == BW:
		return s.rdmaBW()
	}
	return s.lat()
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

// rdmaBW is write_bw.c and read_bw.c's main.
func (s *session) rdmaBW() error {
	c := s.c
	if err := s.hsAll(xchgFailed1); err != nil {
		return err
	}
	if err := s.connect(); err != nil {
		return err
	}
	s.printDests(true)
	if err := s.printRemote(); err != nil {
		return err
	}
	if err := s.hs(0, xchgFailed1); err != nil {
		return err
	}
	if err := s.armEvents(); err != nil {
		return err
	}
	s.out(bwHeader(c))
	if c.isServer() && !c.Duplex {
		if err := s.hs(0, xchgFailed1); err != nil {
			return err
		}
		rep, err := s.reports(Report{})
		if err != nil {
			return err
		}
		s.out(bwLine(c, rep))
		if err := s.closeConn("Failed to close connection between server and client\n"); err != nil {
			return err
		}
		if c.Output == FullVerbosity {
			s.out(resultLine)
		}
		return nil
	}
	var last Report
	sizes := []uint64{c.Size}
	if c.RunAll {
		sizes = allSizes(23)
	}
	const syncFailed = "Failed to sync between server and client between different msg sizes\n"
	for _, size := range sizes {
		if c.Duplex {
			if err := s.hs(0, syncFailed); err != nil {
				return err
			}
		}
		rep, err := s.bwClient(size)
		if err != nil {
			return withLine(err, " Failed to complete run_iter_bw function successfully\n")
		}
		if c.Duplex && c.RunAll {
			if err := s.hs(0, syncFailed); err != nil {
				return err
			}
		}
		last = rep
		if !c.Duplex {
			s.out(bwLine(c, rep))
			continue
		}
		rem, err := s.reports(rep)
		if err != nil {
			return err
		}
		s.out(bwLine(c, rep.sum(rem)))
	}
	if c.Output == FullVerbosity {
		s.out(resultLine)
	}
	if !c.Duplex {
		if err := s.hs(0, xchgFailed1); err != nil {
			return err
		}
		if _, err := s.reports(last); err != nil {
			return err
		}
	}
	return s.closeConn("Failed to close connection between server and client\n")
}

// allSizes is -a's sizes: 2 to 2^top.
func allSizes(top int) []uint64 {
	var s []uint64
	for i := 1; i <= top; i++ {
		s = append(s, 1<<i)
	}
	return s
}

// reports is xchg_bw_reports: each field is one exchange.
func (s *session) reports(my Report) (Report, error) {
	long := s.remVer >= 5.33
	var got [][]byte
	for _, f := range reportFields(&my, long) {
		b, err := s.x.xchg(dataMsg, f)
		if err != nil {
			return Report{}, withLine(err, xchgFailed1)
		}
		got = append(got, b)
	}
	r, err := decodeReport(got)
	if err != nil {
		return Report{}, fail(xchgFailed1)
	}
	return r, nil
}

// sendBW is send_bw.c's main.
func (s *session) sendBW() error {
	c := s.c
	if s.r.vctx.Device().Transport() == uverbs.TransportIWARP {
		if err := s.r.allocCredits(s.my); err != nil {
			return err
		}
	}
	if err := s.hsAll(xchgFailed1); err != nil {
		return err
	}
	if s.r.cred != nil {
		s.r.cred.setWRs(s.rem)
	}
	if err := s.connect(); err != nil {
		return err
	}
	if err := s.hs(0, xchgFailed1); err != nil {
		return err
	}
	s.printDests(true)
	if err := s.printRemote(); err != nil {
		return err
	}
	if err := s.armEvents(); err != nil {
		return err
	}
	s.out(bwHeader(c))
	for _, size := range s.sizes() {
		if c.isServer() || c.Duplex {
			if err := s.postRecvs(size); err != nil {
				return err
			}
		}
		if err := s.hs(0, xchgFailed); err != nil {
			return err
		}
		s.r.cred.reset()
		var rep Report
		var err error
		switch {
		case c.Duplex:
			rep, err = s.bwBi(size)
		case c.isServer():
			rep, err = s.bwServer(size)
		default:
			rep, err = s.bwClient(size)
		}
		if err != nil {
			return &Failure{Stderr: err.(*Failure).Stderr, Code: 17}
		}
		switch {
		case !c.Duplex || c.DurMode:
			s.out(bwLine(c, rep))
		default:
			rem, err := s.reports(rep)
			if err != nil {
				return err
			}
			s.out(bwLine(c, rep.sum(rem)))
		}
		if c.RunAll {
			if err := s.hs(0, xchgFailed); err != nil {
				return err
			}
		}
	}
	if c.Output == FullVerbosity {
		s.out(resultLine)
	}
	return s.closeConn(" Failed to close connection between server and client\n Trying to close this side resources\n")
}

func log2(n int) int {
	i := 0
	for 1<<(i+1) <= n {
		i++
	}
	return i
}

// lat is send_lat.c, write_lat.c and read_lat.c's main.
func (s *session) lat() error {
	c := s.c
	if c.Verb != Send {
		if err := s.hs(0, xchgFailed); err != nil {
			return err
		}
	}
	if err := s.hsAll(xchgFailed); err != nil {
		return err
	}
	if err := s.connect(); err != nil {
		return err
	}
	if c.Verb == Send {
		if err := s.hs(0, xchgFailed); err != nil {
			return err
		}
	}
	s.printDests(true)
	if err := s.printRemote(); err != nil {
		return err
	}
	if c.Verb != Send {
		if err := s.hs(0, xchgFailed); err != nil {
			return err
		}
	}
	if c.Verb == Read && c.isServer() {
		// Only the client reads; the server waits for its end.
		if err := s.closeConn("Failed to close connection between server and client\n"); err != nil {
			return err
		}
		if c.Output == FullVerbosity {
			s.out(resultLine)
		}
		return nil
	}
	if err := s.armEvents(); err != nil {
		return err
	}
	s.out(latHeader(c))
	for _, size := range s.sizes() {
		var m latOut
		var err error
		switch c.Verb {
		case Send:
			if err := s.postRecvs(size); err != nil {
				return err
			}
			if err := s.hs(0, xchgFailed); err != nil {
				return err
			}
			m, err = s.latSend(size)
			if err != nil {
				return &Failure{Stderr: err.(*Failure).Stderr, Code: 17}
			}
		case Write:
			if m, err = s.latWrite(size); err != nil {
				return withLine(err, "Test exited with Error\n")
			}
		case Read:
			if m, err = s.latRead(size); err != nil {
				return withLine(err, "Test exited with Error\n")
			}
		}
		if c.DurMode {
			s.out(latDurationReport(c, m.sample, m.iters, size))
		} else {
			s.out(latReport(c, m.posted, size))
		}
	}
	switch c.Verb {
	case Send:
		if c.Output == FullVerbosity {
			s.out(resultLine)
		}
		if err := s.closeConn("Failed to close connection between server and client\n Trying to close this side resources\n"); err != nil {
			s.errw(err.(*Failure).Stderr)
		}
	case Write:
		if c.Output == FullVerbosity {
			s.out(resultLine)
		}
	case Read:
		if err := s.closeConn("Failed to close connection between server and client\n"); err != nil {
			return err
		}
		if c.Output == FullVerbosity {
			s.out(resultLine)
		}
	}
	return nil
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// sizes are the message sizes a run tests: -s, or with -a every power
// of two up to 2^23 (UD: up to the MTU).
func (s *session) sizes() []uint64 {
	if !s.c.RunAll {
		return []uint64{s.c.Size}
	}
	top := 23
	if s.c.Conn == UD {
		top = log2(s.r.mtu.Bytes())
	}
	return allSizes(top)
}
