package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The siw.ko test/vm builds carries two fixes to races that are the
// kernel's (6.1 and 6.12 alike) and fail rdma-core's programs as they
// fail ours; docs/testing.md tells how each was found and proved. Nothing
// else in the module changes.
//
// The accept race (siw_cm.c): siw_accept sends the MPA reply and only then
// hands the socket's receive upcall to the QP (siw_qp_socket_assoc). What
// the active side sends in between (it may send as soon as the reply makes
// it ESTABLISHED) meets the CM's upcall, which ignores data in RDMA mode,
// and lies in the socket unread until more comes: both sides then wait for
// ever at their first exchange. Across the wire under TCG a 6.12 passive
// side lost the race in about half of the perftest runs. The fix reads
// what is already queued once the socket is the QP's, as the upcall would
// have, under the socket's lock with bottom halves off, the context the
// upcall runs in.
//
// The last-segment race (siw_qp_tx.c): siw_qp_sq_proc_tx, once a DDP
// segment is in TCP, looks at tx_suspend (set when the peer's FIN or reset
// arrives) before it looks at whether that segment was the message's last.
// A peer that gets the whole message and closes at once (perftest's last
// handshake: read the peer's keys, then disconnect) can set tx_suspend in
// that window, and a message that went out whole completes with
// LOC_QP_OP_ERR (perftest: "Bad wc status 2", in CI). Stopping after a
// whole segment when the connection goes (the check's own comment, verbs
// 6.4) is for a message with segments still to send; the fix asks about
// the last segment first, so a message sent whole completes as sent.

// siwPatchTag names the patched module in the cache, so that a module
// built before these fixes (or with other revisions of them) is never used.
const siwPatchTag = "accept-race-1+last-segment-1"

// siwFix is one change to one of siw's source files: old, found exactly
// once, becomes new.
type siwFix struct {
	name     string // what the error says is missing
	file     string // in siw's source directory
	old, new string
}

var siwFixes = []siwFix{
	{
		name: "siw_accept's hand-over to the QP",
		file: "siw_cm.c",
		old:  "\t\tsiw_qp_socket_assoc(cep, qp);\n\t\trv = siw_cm_upcall(cep, IW_CM_EVENT_ESTABLISHED, 0);\n",
		new: "\t\tsiw_qp_socket_assoc(cep, qp);\n" +
			"\t\t/* rdmastack test/vm: read what came before the hand-over */\n" +
			"\t\tlock_sock(cep->sock->sk);\n" +
			"\t\tlocal_bh_disable();\n" +
			"\t\tsiw_qp_llp_data_ready(cep->sock->sk);\n" +
			"\t\tlocal_bh_enable();\n" +
			"\t\trelease_sock(cep->sock->sk);\n" +
			"\t\trv = siw_cm_upcall(cep, IW_CM_EVENT_ESTABLISHED, 0);\n",
	},
	{
		name: "siw_qp_sq_proc_tx's checks after a segment",
		file: "siw_qp_tx.c",
		old:  siwSuspendCheck + siwLastCheck,
		new:  "\t\t/* rdmastack test/vm: a message sent whole is done */\n" + siwLastCheck + siwSuspendCheck,
	},
}

// siwSuspendCheck and siwLastCheck are siw_qp_sq_proc_tx's two checks
// after a segment went out, in the order of 6.1 and 6.12.
const (
	siwSuspendCheck = "\t\tif (unlikely(c_tx->tx_suspend)) {\n" +
		"\t\t\t/*\n" +
		"\t\t\t * Verbs, 6.4.: Try stopping sending after a full\n" +
		"\t\t\t * DDP segment if the connection goes down\n" +
		"\t\t\t * (== peer halfclose)\n" +
		"\t\t\t */\n" +
		"\t\t\trv = -ECONNABORTED;\n" +
		"\t\t\tgoto tx_done;\n" +
		"\t\t}\n"
	siwLastCheck = "\t\tif (c_tx->pkt.ctrl.ddp_rdmap_ctrl & DDP_FLAG_LAST) {\n" +
		"\t\t\tsiw_dbg_qp(qp, \"WQE completed\\n\");\n" +
		"\t\t\tgoto tx_done;\n" +
		"\t\t}\n"
)

// patchSIWSource applies every fix to siw's source directory dir, failing
// unless each finds its code exactly once.
func patchSIWSource(dir string) error {
	for _, f := range siwFixes {
		path := filepath.Join(dir, f.file)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src, err := f.apply(string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// apply is src with the fix made.
func (f siwFix) apply(src string) (string, error) {
	if n := strings.Count(src, f.old); n != 1 {
		return "", fmt.Errorf("%s found %d times, want 1: the fix (test/vm/siwpatch.go) needs updating for this kernel", f.name, n)
	}
	return strings.Replace(src, f.old, f.new, 1), nil
}
