package rdma

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// What iWARP's connection manager (the kernel's iw_cm, over TCP) forbids
// or limits. An iWARP device has RC QPs only: no UD (so no SIDR, a UD
// id's Connect and Accept) and no multicast. The kernel does not refuse
// a UD id's Connect there (it hands the QP number to the iWARP driver,
// which fails it or connects whatever RC QP has that number), and a
// join fails with ENOSYS; both are refused here before anything reaches
// the kernel, with an error matching ErrNotSupported. Creating a UD QP
// there fails in uverbs, as rdma-core's does (EOPNOTSUPP).

// iwarpPrivateData is the most private data an iWARP Connect, Accept or
// Reject carries: the kernel passes its length in a byte (rdma_ucm's and
// iw_cm's private_data_len), and MPA version 2's 4-byte IRD/ORD word
// (RFC 6581), which leads the private data of MPA's request and reply
// frames, counts in that byte. Seen on siw: with 252 bytes the frame's
// length wraps to 0, and the peer's kernel drops the connection (a
// request never arrives; a reject ends in CONNECT_ERROR, EINVAL).
const iwarpPrivateData = 255 - 4

// iWARP reports whether d is an iWARP device.
func (d *Device) iWARP() bool {
	return d != nil && d.ctx.Device().Transport() == uverbs.TransportIWARP
}

// iWARP reports whether the id is bound to an iWARP device.
func (id *ID) iWARP() bool { return id.Device().iWARP() }

// iwarpForbidsUD is the error of op, which a UD id cannot do on iWARP
// (what names it), when the id is a UD one bound to an iWARP device;
// nil otherwise. It matches ErrNotSupported and errno (what the kernel
// answers where it refuses, so that a program that prints errno prints
// what rdma-core's does).
func (id *ID) iwarpForbidsUD(op, what string, errno unix.Errno) error {
	if id.qpType != ib.QPTypeUD || !id.iWARP() {
		return nil
	}
	return fmt.Errorf("rdma: %s: %s on %s (iWARP): %w (%w)", op, what, id.Device().Name(), ErrNotSupported, errno)
}
