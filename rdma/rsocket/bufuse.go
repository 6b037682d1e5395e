package rsocket

import "sync"

// bufUse counts the calls that use a Conn's registered buffers without
// holding its lock: ReadFrom reads a source straight into the send
// buffer, WriteTo writes the receive buffer straight to a destination,
// and either may block there for as long as the other side wants. Close
// cannot wait for them, and must not unmap memory they use: it hands the
// freeing to bufUse, which frees at once when nobody uses the buffers,
// or else when the last user leaves.
type bufUse struct {
	mu   sync.Mutex
	n    int
	free func() error // set by close; nil while open
}

// acquire reports whether the buffers may be used (until release): false
// once close was called.
func (u *bufUse) acquire() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.free != nil {
		return false
	}
	u.n++
	return true
}

// release ends a use; the last one after close frees.
func (u *bufUse) release() {
	u.mu.Lock()
	u.n--
	var free func() error
	if u.n == 0 && u.free != nil {
		free = u.free
	}
	u.mu.Unlock()
	if free != nil {
		free() // Close has returned: nobody to tell
	}
}

// close frees with free now, returning its error, if nobody uses the
// buffers; else the last release frees and close returns nil.
func (u *bufUse) close(free func() error) error {
	u.mu.Lock()
	u.free = free
	busy := u.n > 0
	u.mu.Unlock()
	if busy {
		return nil
	}
	return free()
}
