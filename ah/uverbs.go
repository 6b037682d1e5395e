package ah

import "github.com/rdmastack/rdmastack/uverbs"

// UVerbs is the uverbs address handle, which data-path work requests name
// (nil once closed).
func (ah *AH) UVerbs() *uverbs.AH {
	ah.mu.Lock()
	defer ah.mu.Unlock()
	return ah.u
}
