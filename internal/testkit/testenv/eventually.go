package testenv

import (
	"testing"
	"time"
)

// Eventually calls fn until it succeeds, retrying while retry(err) holds
// and the timeout has not passed, and fails the test otherwise. It is for
// kernel state that settles asynchronously (a deleted network namespace is
// torn down by a workqueue, so the netns mode stays busy for a moment).
func Eventually(t testing.TB, timeout time.Duration, what string, retry func(error) bool, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if !retry(err) || time.Now().After(deadline) {
			t.Errorf("%s: %v", what, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
