// Command vm runs commands and test binaries of this module inside QEMU
// virtual machines that boot Debian's kernels with Soft-RoCE (rdma_rxe)
// devices, so that code needing a real kernel RDMA stack can be tested on a
// machine without RDMA hardware or RDMA support in its own kernel.
//
// Usage:
//
//	go run ./test/vm [flags] setup
//	go run ./test/vm [flags] run [flags] -- command [args...]
//	go run ./test/vm [flags] test [flags] [-- test binary flags...]
//
// setup checks the prerequisites (Debian packages, installed with apt-get
// when missing and running as root) and lists the kernels found. run boots
// one VM per kernel (-kernels, default all installed kernels with rdma_rxe)
// and rxe device count (-devices, default 2) and runs the command there
// with sh -c, from the module's root directory, with the module's ./cmd/...
// binaries (built with CGO_ENABLED=0) first on PATH. test runs go test ./...
// on the host, then every package's test binary inside each VM with
// -test.v -test.count=1 from the package's directory, counts the results
// (a skip inside the VM is a failure) and ends with "vm: X passed, Y failed".
//
// The guest is an initramfs built here: static busybox, the rxe, uverbs
// and 9p modules and an /init script. It mounts the host's root read-only
// over 9p and chroots into it, so it runs the host's own binaries: ours, and
// iproute2 and rdma-core for differential checks. Device k is rxe<k> on
// veth<k>; veth pair i (veth<2i>, veth<2i+1>) has 10.77.i.1/24 and
// 10.77.i.2/24, fd77:i::1/64 and fd77:i::2/64 and link-local addresses (no
// duplicate address detection: all usable at once). Every port is ACTIVE
// before the payload runs. The payload
// sees:
//
//	RDMASTACK_VM=1              tests fail, not skip, without a device
//	RDMASTACK_VM_KERNEL=<release>
//	RDMASTACK_VM_DEVICES=<N>
//	RDMASTACK_OUT=<dir>         writable; it is WORK/out/<release>-<N> on the host
//
// Wire tests (TestWire*, see internal/testkit/testenv.Wire) do not run there: test
// mode runs them last, in pairs of guests joined by a wire (an e1000 NIC on
// a host UDP socket each, sending to the other's), every two kernels in
// both orders and the oldest with itself (-wire-self), two pairs at a
// time (-wire-parallel; one when wire benchmarks run). A wire guest has
// one device, rxe0 on eth0, with the address 10.88.0.1/24 (side a) or
// 10.88.0.2/24 (side b), and runs each test binary with wire tests with only those; both
// halves of each must report a result. Its payload also sees
// RDMASTACK_WIRE_SIDE (0 or 1), RDMASTACK_WIRE_SELF, RDMASTACK_WIRE_PEER
// (the two addresses) and RDMASTACK_WIRE_PEER_KERNEL. -test.run selects
// among them as among the others; -wire=false leaves the pairs out. Wire
// benchmarks (BenchmarkWire*) are the same: -test.bench selects them, they
// run in the pairs only, and with a count (-test.benchtime Nx, 1x unless
// one is given) so that both halves run the same b.N:
//
//	go run ./test/vm test -unit=false -scale= -- -test.run '^$' -test.bench BenchmarkWireRstream
//
// Soft-iWARP: test/vm builds siw.ko for each kernel from Debian's
// linux-headers and linux-source packages (cached under
// /var/cache/rdmastack-vm/siw) and every guest loads it. Tests whose names
// contain SIW run only in a siw guest of their own per kernel (and a race
// one), which has siw0 on vsiw0 (10.78.0.1/24) and siw1 on its veth peer
// vsiw1 (10.78.0.2/24) in the network namespace /run/netns/siwb, and
// exports RDMASTACK_SIW_DEV, RDMASTACK_SIW_ADDR, RDMASTACK_SIW_PEER_DEV,
// RDMASTACK_SIW_PEER_ADDR and RDMASTACK_SIW_PEER_NETNS (see
// internal/testkit/testenv.SIW). Wire tests named SIW run in pairs of their own,
// whose guests have siw0 on eth0 instead of rxe0 (RDMASTACK_WIRE_SIW_DEV),
// every two kernels in both orders and no kernel with itself.
//
// The work directory (-work, default a temporary one) holds bin/ (the
// commands), tests/ (the test binaries), kernels/ and initramfs/ (cached
// boot files), run/<release>-<N>/payload.sh and out/; the guest sees it as
// /tmp/vm. QEMU runs under TCG (KVM hangs on this project's machines).
// The facts this design rests on are in the project's vm-harness notes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vm:", err)
		os.Exit(1)
	}
}
