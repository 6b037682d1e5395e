package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// WireDev is the guest's network device on the wire of a pair (rxe0's
// netdev).
const WireDev = "eth0"

// WireFaults is issue #22's fault mix, for netem on both guests' egress:
// loss, reordering, duplication and corruption (which rxe's ICRC drops)
// at once, behind a 1 ms delay.
const WireFaults = "loss 1% reorder 5% duplicate 1% corrupt 0.1% delay 1ms"

// Netem puts a netem qdisc with the given parameters (as tc takes them:
// "loss 1% delay 1ms reorder 5%") on this guest's egress of the wire,
// replacing one set before; cleanup removes it. Each guest shapes only its
// own egress: a fault on both directions needs both halves to call it.
// The test/vm pairs load sch_netem.
func (w *WireEnv) Netem(t testing.TB, params string) {
	t.Helper()
	tc := Oracle(t, "tc")
	Run(t, tc, append([]string{"qdisc", "replace", "dev", WireDev, "root", "netem"}, strings.Fields(params)...)...)
	t.Cleanup(func() { w.NetemOff(t) })
}

// NetemOff removes this guest's netem qdisc, if there is one: the wire
// is clean again in this direction.
func (w *WireEnv) NetemOff(t testing.TB) {
	t.Helper()
	tc := Oracle(t, "tc")
	out, err := exec.Command(tc, "qdisc", "show", "dev", WireDev, "root").CombinedOutput()
	if err != nil {
		t.Errorf("tc qdisc show dev %s: %v\n%s", WireDev, err, out)
		return
	}
	if strings.Contains(string(out), "netem") {
		Run(t, tc, "qdisc", "del", "dev", WireDev, "root")
	}
}
