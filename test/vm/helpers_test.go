package main

import (
	"strings"
	"testing"
)

// wantAll fails t for each of wants that s lacks; what names s, which a
// failure prints whole.
func wantAll(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
