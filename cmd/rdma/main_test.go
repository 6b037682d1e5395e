package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestMain lets a test run this test binary as the rdma command itself
// (RDMASTACK_AS_RDMA=1), e.g. under setpriv with fewer capabilities.
func TestMain(m *testing.M) {
	if os.Getenv("RDMASTACK_AS_RDMA") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestObjects: each object is reached by its prefixes in iproute2's order
// (its help needs no kernel), an unknown one fails with iproute2's words.
func TestObjects(t *testing.T) {
	for word, want := range map[string]string{
		"d": "Usage: rdma dev ", "dev": "Usage: rdma dev ", "l": "Usage: rdma link ",
		"r": "Usage: rdma resource", "s": "Usage: rdma system ", "sys": "Usage: rdma system ",
		"st": "statistic { COMMAND | help }", "m": "Usage: rdma monitor",
	} {
		var out bytes.Buffer
		if err := run(&out, []string{word, "help"}); err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("rdma %s help: %v, %q; want %q", word, err, out.String(), want)
		}
	}
	for _, word := range []string{"nosuch", "devx", "stats"} {
		err := run(io.Discard, []string{word})
		if want := "Unknown object '" + word + "'."; err == nil || err.Error() != want {
			t.Errorf("rdma %s: %v, want %q", word, err, want)
		}
	}
}
