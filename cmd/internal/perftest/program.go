package perftest

import (
	"fmt"
	"io"
)

// program is what one of the six drop-ins tests.
type program struct {
	v Verb
	t Test
}

// programs are the drop-ins by their name: each is one verb and one test.
var programs = map[string]program{
	"ib_send_bw": {Send, BW}, "ib_write_bw": {Write, BW}, "ib_read_bw": {Read, BW},
	"ib_send_lat": {Send, Lat}, "ib_write_lat": {Write, Lat}, "ib_read_lat": {Read, Lat},
}

// Command is the whole of drop-in name (one of cmd/ib_*) run as argv:
// argv[0] is the name it reports itself by, as perftest uses its own
// argv[0] (name when argv is empty); the rest are its arguments. The
// error is Main's.
func Command(name string, stdout, stderr io.Writer, argv []string) error {
	p, ok := programs[name]
	if !ok {
		return fmt.Errorf("perftest: unknown program %q", name)
	}
	prog, args := name, argv
	if len(argv) > 0 {
		prog, args = argv[0], argv[1:]
	}
	return Main(stdout, stderr, prog, p.v, p.t, args)
}
