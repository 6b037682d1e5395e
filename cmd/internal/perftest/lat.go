package perftest

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
