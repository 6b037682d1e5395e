package main

import (
	"strings"
	"testing"
)

// TestPatchSIWAccept: the fix goes in once, after the hand-over and
// before the ESTABLISHED upcall; a source without the anchor, or with it
// twice, is refused rather than built unpatched.
func TestPatchSIWAccept(t *testing.T) {
	src := "int siw_accept(...)\n{\n\tif (wait_for_peer_rts) {\n\t\tsiw_sk_assign_rtr_upcalls(cep);\n\t} else {\n" +
		siwAcceptAnchor + "\t\tif (rv)\n\t\t\tgoto error;\n\t}\n}\n"
	got, err := patchSIWAccept(src)
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
	if again, err := patchSIWAccept(got); err == nil {
		t.Errorf("a patched source patched again:\n%s", again)
	}
	for _, bad := range []string{"int siw_accept(...) {}\n", src + src} {
		if _, err := patchSIWAccept(bad); err == nil {
			t.Errorf("patched a source with the anchor %d times", strings.Count(bad, siwAcceptAnchor))
		}
	}
}
