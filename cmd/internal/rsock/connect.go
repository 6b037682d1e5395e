package rsock

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// FailedInPoll says how client_connect (rstream's and riostream's)
// ends when a non-blocking connect fails with err after it returned,
// and whether it does: rconnect (or connect) answered EINPROGRESS, the
// program polled for POLLOUT, do_poll returned revents&(POLLERR|POLLHUP)
// and perror printed the errno the connect left, EINPROGRESS, on
// stderr. sockets is rstream's -T s (the kernel's TCP).
//
// A refusal (the peer's RST, or the CM's REJ) and a timeout are answers
// from the network, which a non-blocking call does not wait for. The
// kernel's TCP polls POLLERR|POLLHUP for such a socket; rsockets' rpoll
// POLLERR for one in rs_connect_error. rdma-core's rconnect can also
// find the REJ already queued when it reads its CM channel without
// waiting, and then reports it itself (perror "rconnect", -1); and
// rpoll, which drives the connect too, can leave another errno than
// EINPROGRESS: which it prints is a race in rdma-core (the outcomes are
// listed in TestIntegrationRstreamRDMAErrors). Ours ends, every time,
// as rdma-core's does when the connect returned EINPROGRESS and its CM
// thread took the answer (rpoll, EINPROGRESS): an answer that comes
// over the wire after the REQ is not there when a non-blocking connect
// returns, and our Dial, not the poll, waits for it. Any other error is
// the call's own, which rconnect reports.
func FailedInPoll(stderr io.Writer, err error, nonblocking, sockets bool) (int, bool) {
	if !nonblocking {
		return 0, false
	}
	if en, _ := Errno(err); en != unix.ECONNREFUSED && en != unix.ETIMEDOUT {
		return 0, false
	}
	fmt.Fprintln(stderr, cmnode.Perror("rpoll", unix.EINPROGRESS))
	if sockets {
		return unix.POLLERR | unix.POLLHUP, true
	}
	return unix.POLLERR, true
}

// LookupFailed prints a failed getaddrinfo as the programs do (what,
// then gai_strerror's text, on stdout) and returns its code.
func LookupFailed(stdout io.Writer, what string, err error) int {
	var le *cmnode.LookupError
	if errors.As(err, &le) {
		fmt.Fprintln(stdout, what+le.Text)
		return le.Code
	}
	fmt.Fprintln(stdout, what+err.Error())
	return -1
}
