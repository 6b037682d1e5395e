package perftest

import (
	"context"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
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

func (s *session) out(str string) { io.WriteString(s.stdout, str) }

func (s *session) errw(str string) { io.WriteString(s.stderr, str) }

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
