package rsock

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// socketErrnos are the errnos a socket call can end in that an error
// may match (errors.Is) without holding a unix.Errno, as package rdma's
// rejection matches ECONNREFUSED.
var socketErrnos = []unix.Errno{
	unix.ECONNREFUSED, unix.ECONNRESET, unix.ETIMEDOUT, unix.EPIPE, unix.ENETUNREACH,
	unix.EHOSTUNREACH, unix.EADDRINUSE, unix.EADDRNOTAVAIL, unix.ENODEV, unix.EPROTO,
	unix.ECONNABORTED, unix.ENOTCONN,
}

// Errno is the errno err holds or matches, for perror; false if none.
func Errno(err error) (unix.Errno, bool) {
	var en unix.Errno
	if errors.As(err, &en) {
		return en, true
	}
	for _, e := range socketErrnos {
		if errors.Is(err, e) {
			return e, true
		}
	}
	return 0, false
}

// Perror is perror(what)'s line for err: glibc's text for its errno
// (Errno), or err itself where it has none.
func Perror(what string, err error) string {
	if en, ok := Errno(err); ok {
		return cmnode.Perror(what, en)
	}
	return what + ": " + err.Error()
}
