package cmnode

import (
	"os"
	"runtime"
	"testing"
)

// TestKeepSpareP: one P becomes two unless GOMAXPROCS is in the
// environment; more than one is left alone.
func TestKeepSpareP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "1") // restored at the end
	for _, c := range []struct {
		env         bool
		procs, want int
	}{{false, 1, 2}, {true, 1, 1}, {false, 3, 3}, {true, 3, 3}} {
		if c.env {
			os.Setenv("GOMAXPROCS", "1")
		} else {
			os.Unsetenv("GOMAXPROCS")
		}
		runtime.GOMAXPROCS(c.procs)
		KeepSpareP()
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("GOMAXPROCS %d, in the environment %v: KeepSpareP made it %d, want %d", c.procs, c.env, got, c.want)
		}
	}
}
