package rsocket

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
)

// CompletionError is the cause of a connection that failed because one
// of its work requests completed with an error: a send the peer's QP did
// not acknowledge (it is gone, or refused our RDMA write), or a receive
// on a QP that went into the error state. It matches unix.EIO.
type CompletionError struct {
	Op     string          // what completed: "receive", or the message sent ("DATA", "SGL", "CTRL")
	Status uverbs.WCStatus // how it completed
}

func (e *CompletionError) Error() string {
	return fmt.Sprintf("%s completion: %v", e.Op, e.Status)
}

// Unwrap returns unix.EIO.
func (e *CompletionError) Unwrap() error { return unix.EIO }
