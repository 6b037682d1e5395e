package rsocket

import (
	"errors"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
)

// TestIntegrationRSCloseConcurrent: 8 Closes of one Conn at once, while
// 4 goroutines read from it and 4 write to it (a peer that does not
// read, so that writes block once its buffer is full): every Close
// returns the same result, every Read and Write ends (with net.ErrClosed
// once Close began), the peer reads io.EOF or an error, and nothing is
// left: fds, goroutines, and the kernel's QPs, CQs, PDs, MRs and cm_ids.
func TestIntegrationRSCloseConcurrent(t *testing.T) {
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	l, _ := rsListen(t)
	for round := range 5 {
		cli, srv, err := rsPairErr(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		var busy sync.WaitGroup
		ioErrs := make(chan error, 8)
		for range 4 {
			busy.Add(2)
			go func() {
				defer busy.Done()
				b := make([]byte, 512)
				for {
					if _, err := cli.Read(b); err != nil {
						ioErrs <- err
						return
					}
				}
			}()
			go func() {
				defer busy.Done()
				b := make([]byte, 32<<10)
				for {
					if _, err := cli.Write(b); err != nil {
						ioErrs <- err
						return
					}
				}
			}()
		}
		time.Sleep(100 * time.Millisecond) // the writers fill the peer's buffer and block
		errs := make([]error, 8)
		var fns []func()
		for i := range errs {
			fns = append(fns, func() { errs[i] = cli.Close() })
		}
		testenv.Together(fns...)
		for i, err := range errs {
			if err != errs[0] {
				t.Fatalf("round %d: Close %d returned %v, Close 0 %v", round, i, err, errs[0])
			}
		}
		done := make(chan struct{})
		go func() { busy.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: a Read or Write was not woken by Close", round)
		}
		close(ioErrs)
		for err := range ioErrs {
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("round %d: Read or Write ended by Close: %v", round, err)
			}
		}
		// The peer drains what came, then sees the end.
		srv.SetReadDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, 64<<10)
		var rerr error
		for rerr == nil {
			_, rerr = srv.Read(b)
		}
		// io.EOF after the DISCONNECT message, or a reset when Close
		// gave up waiting for its sends; never a timeout.
		if rerr != io.EOF && (errors.Is(rerr, net.ErrClosed) || errors.Is(rerr, os.ErrDeadlineExceeded)) {
			t.Fatalf("round %d: the peer's Read: %v", round, rerr)
		}
		if err := srv.Close(); err != nil {
			t.Fatalf("round %d: the peer's Close: %v", round, err)
		}
	}
}

// TestIntegrationRSListenerCloseConcurrent: 8 Closes of one Listener at
// once, while 4 goroutines are blocked in Accept: every Close returns
// the same result, every Accept ends with net.ErrClosed, and nothing is
// left.
func TestIntegrationRSListenerCloseConcurrent(t *testing.T) {
	addr, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	for round := range 10 {
		l, err := Listen("rdma", netip.AddrPortFrom(addr, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		accepts := make(chan error, 4)
		for range 4 {
			go func() {
				c, err := l.Accept()
				if c != nil {
					c.Close()
				}
				accepts <- err
			}()
		}
		time.Sleep(50 * time.Millisecond)
		errs := make([]error, 8)
		var fns []func()
		for i := range errs {
			fns = append(fns, func() { errs[i] = l.Close() })
		}
		testenv.Together(fns...)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Close %d: %v", round, i, err)
			}
		}
		for range 4 {
			select {
			case err := <-accepts:
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("round %d: Accept ended by Close: %v", round, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: an Accept was not woken by Close", round)
			}
		}
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("round %d: Accept after Close: %v", round, err)
		}
	}
}
