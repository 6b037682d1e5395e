package perftest

import (
	"github.com/rdmastack/rdmastack/uverbs"
)

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
