package cmnode

import "testing"

func TestCountsOption(t *testing.T) {
	c := DefaultCounts()
	if c != (Counts{1, 10, 100}) {
		t.Fatalf("DefaultCounts() = %+v", c)
	}
	for _, o := range []struct {
		opt rune
		arg string
	}{{'c', "3"}, {'C', " 0x10"}, {'S', "64k"}} {
		if !c.Option(o.opt, o.arg) {
			t.Errorf("Option(%q) = false", o.opt)
		}
	}
	if c != (Counts{3, 0, 64}) { // atoi: " 0x10" is 0, "64k" is 64
		t.Errorf("after -c 3 -C ' 0x10' -S 64k: %+v", c)
	}
	if c.Option('s', "h") || c != (Counts{3, 0, 64}) {
		t.Errorf("Option('s') took the argument: %+v", c)
	}
}
