package testenv

import (
	"os/exec"
	"testing"
)

// Dummy creates a dummy network device, up, for an rxe device to be added
// on; cleanup deletes it, under its name or any of the names it may have
// been renamed to.
func Dummy(t testing.TB, name string, renamed ...string) {
	t.Helper()
	ip := Oracle(t, "ip")
	Run(t, ip, "link", "add", name, "type", "dummy")
	t.Cleanup(func() {
		for _, n := range append([]string{name}, renamed...) {
			exec.Command(ip, "link", "del", n).Run()
		}
	})
	Run(t, ip, "link", "set", name, "up")
}
