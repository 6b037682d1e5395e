package testenv

import "sync"

// Together runs fns at once (as near as goroutines allow) and waits for
// all of them.
func Together(fns ...func()) {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for _, fn := range fns {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			fn()
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
}
