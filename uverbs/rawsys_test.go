package uverbs

import "testing"

func TestWaitForever(t *testing.T) {
	for godebug, want := range map[string]int{
		"":                                 -1,
		"asyncpreemptoff=0":                -1,
		"asyncpreemptoff=1":                10,
		"gctrace=1, asyncpreemptoff=1":     10,
		"madvdontneed=1,asyncpreemptoff=1": 10,
		"xasyncpreemptoff=1":               -1,
	} {
		if got := waitForever(godebug); got != want {
			t.Errorf("waitForever(%q) = %d, want %d", godebug, got, want)
		}
	}
}
