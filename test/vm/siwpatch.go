package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The siw.ko test/vm builds carries one fix to the kernel's siw_cm.c,
// for a race that is the kernel's (6.1 and 6.12 alike) and stalls
// rdma-core's programs as it does ours: siw_accept sends the MPA reply
// and only then hands the socket's receive upcall to the QP
// (siw_qp_socket_assoc). What the active side sends in between (it may
// send as soon as the reply makes it ESTABLISHED) meets the CM's upcall,
// which ignores data in RDMA mode, and lies in the socket unread until
// more comes: both sides then wait for ever at their first exchange.
// Across the wire under TCG a 6.12 passive side lost the race in about
// half of the perftest runs (4 of 8 in one run of TestWireSIWPerftest,
// 3 runs in a row in CI), which no retry budget covers. The fix reads
// what is already queued once the socket is the QP's, as the upcall
// would have, under the socket's lock with bottom halves off, the
// context the upcall runs in. Nothing else in the module changes.

// siwPatchTag names the patched module in the cache, so that a module
// built before the fix (or with another revision of it) is never used.
const siwPatchTag = "accept-race-1"

// siwAcceptAnchor is the passive side's hand-over in siw_accept
// (siw_cm.c), the same in 6.1 and 6.12; siwAcceptFix adds the read.
const (
	siwAcceptAnchor = "\t\tsiw_qp_socket_assoc(cep, qp);\n\t\trv = siw_cm_upcall(cep, IW_CM_EVENT_ESTABLISHED, 0);\n"
	siwAcceptFix    = "\t\tsiw_qp_socket_assoc(cep, qp);\n" +
		"\t\t/* rdmastack test/vm: read what came before the hand-over */\n" +
		"\t\tlock_sock(cep->sock->sk);\n" +
		"\t\tlocal_bh_disable();\n" +
		"\t\tsiw_qp_llp_data_ready(cep->sock->sk);\n" +
		"\t\tlocal_bh_enable();\n" +
		"\t\trelease_sock(cep->sock->sk);\n" +
		"\t\trv = siw_cm_upcall(cep, IW_CM_EVENT_ESTABLISHED, 0);\n"
)

// patchSIWSource applies the fix to siw_cm.c in siw's source directory
// dir, failing unless the anchor is there exactly once.
func patchSIWSource(dir string) error {
	path := filepath.Join(dir, "siw_cm.c")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src, err := patchSIWAccept(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(src), 0o644)
}

// patchSIWAccept is siw_cm.c's text with the fix applied.
func patchSIWAccept(src string) (string, error) {
	if n := strings.Count(src, siwAcceptAnchor); n != 1 {
		return "", fmt.Errorf("siw_accept's hand-over to the QP found %d times, want 1: the fix (test/vm/siwpatch.go) needs updating for this kernel", n)
	}
	return strings.Replace(src, siwAcceptAnchor, siwAcceptFix, 1), nil
}
