package rdma

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"weak"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/devcache"
)

// cache is the process's devices and outstanding lists (librdmacm's
// cma_dev_list and its refcounts).
type cache struct {
	mu    sync.Mutex
	src   source
	gen   uint64 // the source's generation devs is up to date with; 0: none
	devs  map[ident]*Device
	lists map[weak.Pointer[*Device]]*listState

	debug bool
	leak  func(LeakReport)
}

// listState is what the cache knows of one list it handed out. It must not
// point to the list itself, or the list could never be collected.
type listState struct {
	key   weak.Pointer[*Device]
	devs  []*Device // the references the list holds, whatever the caller did to the slice
	where string    // the stack of GetDevices' caller, with SetDebug
	freed bool
}

var global = newCache(kernelSource{verbs: devcache.Global.Verbs})

func newCache(src source) *cache {
	return &cache{src: src, devs: make(map[ident]*Device), lists: make(map[weak.Pointer[*Device]]*listState),
		leak: reportToStderr}
}

// GetDevices returns every RDMA device of the caller's network namespace,
// opened and queried, in a slice the caller owns and must pass to
// FreeDevices. With no device at all the error matches ErrNoDevices.
//
// The devices are those of package device's snapshot (device.List),
// which both packages keep current from the kernel's events over one
// RDMA netlink socket and one uevent socket; GetDevices opens only the
// devices it has not seen before.
func GetDevices() ([]*Device, error) { return global.get() }

// FreeDevices releases a list GetDevices returned: its references are
// dropped and the list forgotten; the devices stay open for their other
// users. FreeDevices(nil), a second call with the same list, and a slice
// GetDevices did not return do nothing.
func FreeDevices(list []*Device) { global.free(list) }

// Outstanding returns the number of lists not yet freed.
func Outstanding() int { return global.outstanding() }

// SetDebug makes GetDevices record where each list was obtained, for leak
// reports.
func SetDebug(on bool) {
	global.mu.Lock()
	defer global.mu.Unlock()
	global.debug = on
}

// LeakReport describes a list that was garbage-collected without
// FreeDevices.
type LeakReport struct {
	Devices []string // the devices the list held
	Where   string   // where it was obtained (with SetDebug), or ""
}

func (r LeakReport) String() string {
	s := "rdma: a device list of " + strings.Join(r.Devices, ", ") + " was never passed to FreeDevices"
	if r.Where != "" {
		s += "; it was obtained at:\n" + r.Where
	}
	return s
}

// SetLeakReporter sets what is called for each leaked list (by default it
// is printed on standard error). The list's references are released after
// the report. nil restores the default.
func SetLeakReporter(fn func(LeakReport)) {
	global.mu.Lock()
	defer global.mu.Unlock()
	if fn == nil {
		fn = reportToStderr
	}
	global.leak = fn
}

func reportToStderr(r LeakReport) { fmt.Fprintln(os.Stderr, r) }

// sync brings the cache up to date with the devices present now, when
// the source's generation says they may have changed: new ones are
// opened, vanished ones marked dead (and closed when unreferenced). A
// device that failed to open is tried again by the next sync.
func (c *cache) sync() error {
	gen, present, err := c.src.devices(c.gen)
	if err != nil {
		return fmt.Errorf("rdma: get devices: %w", err)
	}
	if gen == c.gen {
		return nil
	}
	ids := make(map[ident]bool, len(present))
	complete := true
	for _, dev := range present {
		id := identOf(dev)
		ids[id] = true
		if d, ok := c.devs[id]; ok && !d.dead {
			continue
		}
		if dev.Uverbs == "" {
			continue // nothing to open until a snapshot names its node
		}
		d, err := c.src.open(dev)
		if err != nil {
			complete = false // as librdmacm: a device that fails to open is skipped
			continue
		}
		// A dead device of the same identity (one seen again after the
		// thread came back to its namespace) stays with its lists.
		c.devs[id] = d
	}
	for id, d := range c.devs {
		if ids[id] || d.dead {
			continue
		}
		d.mu.Lock()
		d.dead = true
		unused := d.refs == 0
		d.mu.Unlock()
		if unused {
			c.drop(d)
		}
	}
	c.gen = 0
	if complete {
		c.gen = gen
	}
	return nil
}

// drop closes a dead, unreferenced device and forgets it.
func (c *cache) drop(d *Device) {
	d.close()
	id := ident{d.name, uint32(d.index)}
	if c.devs[id] == d {
		delete(c.devs, id)
	}
}

func (c *cache) get() ([]*Device, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.sync(); err != nil {
		return nil, err
	}
	return c.listLocked()
}

// getWith is get for an id the kernel has just bound to the device of
// index and guid: when the cache already holds that device, the list is
// made of what it holds, without asking the source whether anything
// changed (two system calls, for every incoming connection). That is
// safe because the kernel numbers devices without reusing an index (it
// allocates them cyclically in 32 bits): a device with the index the
// kernel reports is the one the id is bound to, so it is still there,
// and the list is one GetDevices could have returned a moment ago.
// librdmacm likewise looks the id's device up in its array and reads the
// kernel's list again only when the GUID is not in it.
func (c *cache) getWith(guid ib.GUID, index uint32) ([]*Device, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	known := false
	if c.gen != 0 {
		for _, d := range c.devs {
			if !d.dead && d.index == int64(index) && d.attr.NodeGUID == guid {
				known = true
				break
			}
		}
	}
	if !known {
		if err := c.sync(); err != nil {
			return nil, err
		}
	}
	return c.listLocked()
}

// listLocked makes a list of the live devices, a reference on each.
func (c *cache) listLocked() ([]*Device, error) {
	var list []*Device
	for _, d := range c.devs {
		if !d.dead {
			list = append(list, d)
		}
	}
	if len(list) == 0 {
		return nil, ErrNoDevices
	}
	sort.Slice(list, func(i, j int) bool { return list[i].index < list[j].index })
	for _, d := range list {
		d.mu.Lock()
		d.refs++
		d.mu.Unlock()
	}
	st := &listState{key: weak.Make(&list[0]), devs: append([]*Device(nil), list...)}
	if c.debug {
		st.where = stack()
	}
	c.lists[st.key] = st
	runtime.AddCleanup(&list[0], c.collected, st)
	return list, nil
}

func (c *cache) free(list []*Device) {
	if len(list) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.lists[weak.Make(&list[0])]
	if !ok || st.freed {
		return
	}
	c.release(st)
}

// collected runs when a list was garbage-collected: a leak unless freed.
func (c *cache) collected(st *listState) {
	c.mu.Lock()
	if st.freed {
		c.mu.Unlock()
		return
	}
	report := LeakReport{Where: st.where}
	for _, d := range st.devs {
		report.Devices = append(report.Devices, d.name)
	}
	c.release(st)
	leak := c.leak
	c.mu.Unlock()
	leak(report)
}

// release drops a list's references; a dead device's last one closes it.
func (c *cache) release(st *listState) {
	st.freed = true
	delete(c.lists, st.key)
	for _, d := range st.devs {
		d.mu.Lock()
		d.refs--
		last := d.refs == 0 && d.dead
		d.mu.Unlock()
		if last {
			c.drop(d)
		}
	}
}

func (c *cache) outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lists)
}

// stack is the caller of GetDevices and above.
func stack() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(4, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
	return b.String()
}
