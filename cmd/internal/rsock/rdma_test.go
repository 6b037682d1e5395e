package rsock

import "testing"

// TestInline: Options' Inline (-1 default, 0 none) becomes rsocket's
// (0 default, < 0 none).
func TestInline(t *testing.T) {
	for in, want := range map[int]int{-1: 0, 0: -1, 1: 1, 64: 64} {
		if got := inline(in); got != want {
			t.Errorf("inline(%d) = %d, want %d", in, got, want)
		}
	}
}
