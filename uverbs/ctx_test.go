package uverbs

import (
	"context"
	"testing"
	"time"
)

// until is a context whose deadline is d, cancelled when the test ends.
func until(t testing.TB, d time.Time) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
