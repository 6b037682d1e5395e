package perftest

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandReportsArgv0 checks that Command parses argv[1:] and that the
// program names itself by argv[0], as Main called directly does.
func TestCommandReportsArgv0(t *testing.T) {
	for name, p := range programs {
		args := []string{"-h"}
		var out, errb, wantOut, wantErr bytes.Buffer
		err := Command(name, &out, &errb, append([]string{"/opt/x/" + name + "_renamed"}, args...))
		wantE := Main(&wantOut, &wantErr, "/opt/x/"+name+"_renamed", p.v, p.t, args)
		if !strings.Contains(out.String()+errb.String(), name+"_renamed") {
			t.Errorf("%s -h: output does not name argv[0]: %q %q", name, out.String(), errb.String())
		}
		if out.String() != wantOut.String() || errb.String() != wantErr.String() {
			t.Errorf("%s: Command printed %q, %q; Main %q, %q", name, out.String(), errb.String(), wantOut.String(), wantErr.String())
		}
		if (err == nil) != (wantE == nil) || (err != nil && err.Error() != wantE.Error()) {
			t.Errorf("%s: Command = %v, Main = %v", name, err, wantE)
		}
	}
}

func TestCommandUnknownName(t *testing.T) {
	err := Command("ib_atomic_bw", new(bytes.Buffer), new(bytes.Buffer), []string{"ib_atomic_bw"})
	if err == nil || !strings.Contains(err.Error(), `"ib_atomic_bw"`) {
		t.Fatalf("Command(unknown) = %v, want an error naming it", err)
	}
}
