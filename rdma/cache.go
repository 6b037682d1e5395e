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
	"github.com/rdmastack/rdmastack/uverbs"
)

// cache is the process's devices and outstanding lists (librdmacm's
// cma_dev_list and its refcounts).
type cache struct {
	mu    sync.Mutex
	src   source
	gen   uint64 // the source's generation devs and unopened are up to date with; 0: none
	devs  map[ident]*Device
	lists map[weak.Pointer[*Device]]*listState
	// unopened are the devices present but not opened yet: a device is
	// opened when a list must hold it (get) or an id is bound to it
	// (getWith), as librdmacm opens a device only when rdma_get_devices
	// or an id needs it (ucma_init_device), not all at its start.
	unopened map[ident]uverbs.Device

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
		unopened: make(map[ident]uverbs.Device), leak: reportToStderr}
}

// GetDevices returns every RDMA device of the caller's network namespace,
// opened and queried, in a slice the caller owns and must pass to
// FreeDevices. With no device at all the error matches ErrNoDevices.
//
// The devices are those of package device's snapshot (device.List),
// which both packages keep current from the kernel's events over one
// RDMA netlink socket and one uevent socket; GetDevices opens only the
// devices not opened before. A CM id bound to a device opens that one
// alone: a process that only connects never opens the host's other
// devices (a node's virtual functions, say).
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
// the source's generation says they may have changed: new ones are noted
// as unopened, vanished ones forgotten or marked dead (and closed when
// unreferenced).
func (c *cache) sync() error {
	gen, present, err := c.src.devices(c.gen)
	if err != nil {
		return fmt.Errorf("rdma: get devices: %w", err)
	}
	if gen == c.gen {
		return nil
	}
	ids := make(map[ident]bool, len(present))
	clear(c.unopened)
	for _, dev := range present {
		id := identOf(dev)
		ids[id] = true
		if d, ok := c.devs[id]; ok && !d.dead {
			continue
		}
		if dev.Uverbs == "" {
			continue // nothing to open until a snapshot names its node
		}
		c.unopened[id] = dev
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
	c.gen = gen
	return nil
}

// open opens the unopened device id. A device that fails to open stays
// unopened, to be tried again when it is next needed; as librdmacm, a
// list leaves it out.
func (c *cache) open(id ident) error {
	d, err := c.src.open(c.unopened[id])
	if err != nil {
		return err
	}
	// A dead device of the same identity (one seen again after the
	// thread came back to its namespace) stays with its lists.
	c.devs[id] = d
	delete(c.unopened, id)
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
	for id := range c.unopened {
		c.open(id) // one that fails is left out, as librdmacm skips it
	}
	return c.listLocked()
}

// getWith is get for an id the kernel has just bound to the device of
// index and guid, less the opening of every device: it opens that device
// if it is not open yet, and makes the list of the devices open. It asks
// the source whether anything changed only when the cache does not know
// that index (two system calls, for every incoming connection). That is
// safe because the kernel numbers devices without reusing an index (it
// allocates them cyclically in 32 bits): a device with the index the
// kernel reports is the one the id is bound to, so it is still there.
// librdmacm likewise looks the id's device up in its array, reads the
// kernel's list again only when the GUID is not in it, and opens only
// that device (ucma_get_device, ucma_init_device).
func (c *cache) getWith(guid ib.GUID, index uint32) ([]*Device, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	found := func() (ident, bool) {
		for id, d := range c.devs {
			if !d.dead && id.index == index && d.attr.NodeGUID == guid {
				return id, true
			}
		}
		for id := range c.unopened {
			if id.index == index {
				return id, true
			}
		}
		return ident{}, false
	}
	id, ok := ident{}, false
	if c.gen != 0 {
		id, ok = found()
	}
	if !ok {
		if err := c.sync(); err != nil {
			return nil, err
		}
		id, ok = found()
	}
	if !ok {
		return nil, errNoBoundDevice(guid, index)
	}
	if _, unopened := c.unopened[id]; unopened {
		if err := c.open(id); err != nil {
			return nil, fmt.Errorf("rdma: open %s: %w", id.name, err)
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
