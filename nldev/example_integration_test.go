package nldev_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationExamples runs Example, which has no Output comment (what
// it prints depends on the machine), and checks what it prints: one line
// per device of /sys/class/infiniband, as "rdma dev" shows it (in any
// order).
func TestIntegrationExamples(t *testing.T) {
	testenv.RequireRDMA(t)
	ents, err := os.ReadDir("/sys/class/infiniband")
	if err != nil {
		t.Fatal(err)
	}
	out := testenv.Stdout(t, Example)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	line := regexp.MustCompile(`^\d+: (\w+): node_type ca node_guid [0-9a-f]{4}(:[0-9a-f]{4}){3}$`)
	var names []string
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("Example printed %q, want index, name, node type and GUID", l)
		}
		names = append(names, m[1])
	}
	var want []string
	for _, e := range ents {
		want = append(want, e.Name())
	}
	slices.Sort(names) // in index order; ReadDir's are by name (rxe10 before rxe2)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("Example listed %v, /sys/class/infiniband has %v", names, want)
	}
}
