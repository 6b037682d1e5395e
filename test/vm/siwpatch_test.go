package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchSIWAccept: the accept fix goes in once, after the hand-over
// and before the ESTABLISHED upcall.
func TestPatchSIWAccept(t *testing.T) {
	f := siwFixes[0]
	src := "int siw_accept(...)\n{\n\tif (wait_for_peer_rts) {\n\t\tsiw_sk_assign_rtr_upcalls(cep);\n\t} else {\n" +
		f.old + "\t\tif (rv)\n\t\t\tgoto error;\n\t}\n}\n"
	got, err := f.apply(src)
	if err != nil {
		t.Fatal(err)
	}
	assoc := strings.Index(got, "siw_qp_socket_assoc(cep, qp);")
	read := strings.Index(got, "siw_qp_llp_data_ready(cep->sock->sk);")
	upcall := strings.Index(got, "siw_cm_upcall(cep, IW_CM_EVENT_ESTABLISHED, 0);")
	if !(assoc >= 0 && assoc < read && read < upcall) {
		t.Errorf("the read is not between the hand-over and the upcall:\n%s", got)
	}
	if strings.Count(got, "lock_sock(cep->sock->sk);") != 1 || strings.Count(got, "release_sock(cep->sock->sk);") != 1 {
		t.Errorf("the read is not under the socket's lock once:\n%s", got)
	}
}

// TestPatchSIWLastSegment: after a segment went out, the last-segment
// check comes before the tx_suspend one, each once, and the rest of the
// function stays as it was.
func TestPatchSIWLastSegment(t *testing.T) {
	f := siwFixes[1]
	head := "\tif (!rv) {\n\t\t/*\n\t\t * One segment sent.\n\t\t */\n"
	tail := "\t\tc_tx->state = SIW_SEND_HDR;\n"
	got, err := f.apply(head + siwSuspendCheck + siwLastCheck + tail)
	if err != nil {
		t.Fatal(err)
	}
	last, suspend := strings.Index(got, siwLastCheck), strings.Index(got, siwSuspendCheck)
	if !(last >= 0 && suspend > last) || strings.Count(got, siwLastCheck) != 1 || strings.Count(got, siwSuspendCheck) != 1 {
		t.Errorf("want the last-segment check once, before the tx_suspend check once:\n%s", got)
	}
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, siwSuspendCheck+tail) {
		t.Errorf("the code around the checks changed:\n%s", got)
	}
}

// TestPatchSIWRefuses: a source without a fix's code, or with it twice,
// is refused rather than built unpatched, and a patched one is not
// patched again.
func TestPatchSIWRefuses(t *testing.T) {
	for _, f := range siwFixes {
		for _, bad := range []string{"int f(void) {}\n", f.old + f.old} {
			if _, err := f.apply(bad); err == nil || !strings.Contains(err.Error(), f.name) {
				t.Errorf("%s: a source with its code %d times: %v", f.name, strings.Count(bad, f.old), err)
			}
		}
		got, err := f.apply(f.old)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := f.apply(got); err == nil {
			t.Errorf("%s: a patched source patched again:\n%s", f.name, again)
		}
	}
}

// TestPatchSIWSource: patchSIWSource changes both files in a directory,
// and leaves a directory missing one file's code with an error naming it.
func TestPatchSIWSource(t *testing.T) {
	dir := t.TempDir()
	for _, f := range siwFixes {
		if err := os.WriteFile(filepath.Join(dir, f.file), []byte("/* before */\n"+f.old+"/* after */\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := patchSIWSource(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range siwFixes {
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		if want := "/* before */\n" + f.new + "/* after */\n"; string(b) != want {
			t.Errorf("%s: got\n%s\nwant\n%s", f.file, b, want)
		}
	}
	if err := patchSIWSource(dir); err == nil || !strings.Contains(err.Error(), siwFixes[0].name) {
		t.Errorf("patching twice: %v", err)
	}
}
