package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// maxDevices bounds -devices: device k sits on veth k, and veth pair i gets
// the subnet 10.77.i.0/24, so a count must stay below 2*256.
const maxDevices = 256

// options are the command-line settings shared by all modes.
type options struct {
	mode         string
	kernels      string        // "all" or a comma list of releases (or unique prefixes)
	devices      []int         // rxe device counts, one VM run each per kernel
	timeout      time.Duration // per VM run, boot to power-off
	mem          int           // guest memory in MiB
	smp          int           // guest vCPUs
	install      bool          // install missing Debian packages when root
	work         string        // work directory; empty means a fresh temporary one
	keep         bool          // keep the temporary work directory
	verbose      bool          // echo the guest's boot console too
	unit         bool          // test mode: run go test ./... on the host first
	scale        string        // test mode: "N:REGEX", one more run per kernel with N devices and only the matching tests
	race         string        // test mode: "all", "none" or a comma list of kernels whose race run to make
	parallel     int           // guests booted at once
	wire         bool          // test mode: run the selected wire tests in pairs of guests
	wireSelf     string        // test mode: the kernels paired with themselves, as race
	wireNIC      string        // test mode: QEMU's NIC model on the wire
	wireParallel int           // test mode: wire pairs at once; 0: by what runs
	append       string        // more arguments for the guest kernel's command line
	cpu          string        // QEMU's -cpu model
	args         []string      // after "--": the command (run) or test binary flags (test)
}

const usageText = `usage:
  go run ./test/vm [flags] setup
  go run ./test/vm [flags] run [flags] -- command [args...]
  go run ./test/vm [flags] test [flags] [-- test binary flags...]

modes:
  setup  check (and install) the prerequisites and list the kernels found
  run    boot a VM per kernel and device count and run the command inside it
  test   run go test on the host, then every test binary inside each VM

flags:
`

// parseOptions parses args; flags may come before and after the mode.
func parseOptions(args []string, usage io.Writer) (*options, error) {
	o := &options{devices: []int{2}}
	fs := flag.NewFlagSet("vm", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.kernels, "kernels", "all", "comma list of kernel releases (as in /boot/vmlinuz-RELEASE, or a unique prefix such as 6.12), or all: every installed kernel with rdma_rxe")
	fs.Var((*deviceCounts)(&o.devices), "devices", "comma list of rxe device counts; each count is one VM run per kernel (default 2; 2,16 in test mode)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "limit for each VM run, boot to power-off (race runs get "+strconv.Itoa(raceSlowdown)+" times as long)")
	fs.IntVar(&o.mem, "mem", 1024, "guest memory in MiB")
	fs.IntVar(&o.smp, "smp", 1, "guest vCPUs (TCG)")
	fs.BoolVar(&o.install, "install", true, "install missing Debian packages with apt-get when running as root")
	fs.StringVar(&o.work, "work", "", "work directory (default: a fresh temporary directory, removed at the end unless -keep)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary work directory")
	fs.BoolVar(&o.verbose, "v", false, "also echo the guest's kernel console and boot lines")
	fs.BoolVar(&o.unit, "unit", true, "test mode: run go test ./... on the host before the VM runs")
	fs.StringVar(&o.scale, "scale", defaultScale, "test mode: N:REGEX runs the tests matching REGEX once more per kernel with N devices (empty: no such run)")
	fs.StringVar(&o.race, "race", "newest", "test mode: the kernels (comma list as for -kernels, newest, oldest, all or none) on which the integration-test binaries, built with -race, run once more with the first device count")
	fs.BoolVar(&o.wire, "wire", true, "test mode: run the selected wire tests and benchmarks (TestWire*, BenchmarkWire*) in pairs of guests joined by a wire, after the single-guest runs: each two kernels in both orders, and those of -wire-self each with itself")
	fs.StringVar(&o.wireSelf, "wire-self", "oldest", "test mode: the kernels (comma list as for -kernels, oldest, newest, all or none) that also meet themselves on the wire; oldest by default: 6.12's rxe corrupted its slab when both ends ran it on virtio-net (docs/testing.md)")
	fs.StringVar(&o.wireNIC, "wire-nic", "e1000", "test mode: QEMU's device model of a wire guest's NIC (e1000 or virtio-net-pci); not virtio by default, since 6.12 guests crashed with it on the wire (docs/testing.md)")
	fs.IntVar(&o.wireParallel, "wire-parallel", 0, "test mode: wire pairs run at once (each is two guests); 0: 2 for tests, which mostly wait, and 1 when wire benchmarks run")
	fs.StringVar(&o.cpu, "cpu", "max", "QEMU's CPU model for every guest (as qemu-system-x86_64 -cpu takes it)")
	fs.StringVar(&o.append, "append", "", "more arguments for each guest kernel's command line (e.g. slub_debug=FZPU to chase a kernel crash)")
	fs.IntVar(&o.parallel, "parallel", defaultParallel(), "guests booted at once (each has -smp vCPUs; default: the host's CPUs divided by -smp)")

	printUsage := func() {
		fmt.Fprint(usage, usageText)
		fs.SetOutput(usage)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	parse := func(args []string) ([]string, error) {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage()
				return nil, err
			}
			return nil, fmt.Errorf("%v (see go run ./test/vm -h)", err)
		}
		return fs.Args(), nil
	}

	rest, err := parse(args)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		printUsage()
		return nil, errors.New("missing mode: setup, run or test")
	}
	o.mode = rest[0]
	// Flags may also follow the mode; fs.Parse consumes a "--" terminator.
	rest, err = parse(rest[1:])
	if err != nil {
		return nil, err
	}
	o.args = rest

	switch o.mode {
	case "setup":
		if len(o.args) > 0 {
			return nil, fmt.Errorf("setup takes no arguments, got %q", o.args)
		}
	case "run":
		if len(o.args) == 0 {
			return nil, errors.New("run needs a command: go run ./test/vm run -- command [args...]")
		}
	case "test":
		// The tests compare with the oracles at two scales unless told otherwise.
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "devices" })
		if !set {
			o.devices = []int{2, 16}
		}
	default:
		return nil, fmt.Errorf("unknown mode %q: want setup, run or test", o.mode)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("-timeout must be positive, got %v", o.timeout)
	}
	if o.mem < 256 {
		return nil, fmt.Errorf("-mem must be at least 256 (MiB), got %d", o.mem)
	}
	if o.smp < 1 || o.smp > 8 {
		return nil, fmt.Errorf("-smp must be between 1 and 8, got %d", o.smp)
	}
	parallelSet := false
	fs.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "parallel" })
	if !parallelSet {
		o.parallel = max(1, o.parallel/o.smp)
	}
	if o.parallel < 1 || o.parallel > 16 {
		return nil, fmt.Errorf("-parallel must be between 1 and 16, got %d", o.parallel)
	}
	if o.wireParallel < 0 || o.wireParallel > 8 {
		return nil, fmt.Errorf("-wire-parallel must be between 0 (by what runs) and 8, got %d", o.wireParallel)
	}
	if strings.TrimSpace(o.race) == "" {
		return nil, errors.New("-race is empty: give a comma list of kernels, all or none")
	}
	if o.wireNIC != "e1000" && o.wireNIC != "virtio-net-pci" {
		return nil, fmt.Errorf("-wire-nic %q: want e1000 or virtio-net-pci (the guests load those drivers)", o.wireNIC)
	}
	if strings.TrimSpace(o.wireSelf) == "" {
		return nil, errors.New("-wire-self is empty: give a comma list of kernels, oldest, newest, all or none")
	}
	if _, _, _, err := parseScale(o.scale); err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.kernels) == "" {
		return nil, errors.New("-kernels is empty: give a comma list of releases, or all")
	}
	return o, nil
}

// defaultParallel is one guest per host CPU (TCG runs a vCPU on a host
// thread); it is set before -smp is known, so parse divides it by -smp
// unless -parallel was given.
func defaultParallel() int { return max(1, runtime.NumCPU()) }

// defaultScale is test mode's large-scale run: the enumeration tests with
// 64 devices (the whole suite at that scale would double CI's time), and
// the exporter's scrape compared with the oracles and promtool.
const defaultScale = "64:^TestIntegration(ListMatchesIproute2AndSysfs|GetDevices|DevicesMatchIproute2|DevShowJSON|Open|Collect|UnprivilegedPromtool)$"

// parseScale splits -scale's "N:REGEX"; ok is false for "".
func parseScale(v string) (n int, regex string, ok bool, err error) {
	if v == "" {
		return 0, "", false, nil
	}
	count, regex, found := strings.Cut(v, ":")
	if !found || regex == "" {
		return 0, "", false, fmt.Errorf("-scale %q: want N:REGEX", v)
	}
	counts, err := parseDeviceCounts(count)
	if err != nil || len(counts) != 1 {
		return 0, "", false, fmt.Errorf("-scale %q: %v", v, err)
	}
	return counts[0], regex, true, nil
}

// deviceCounts is the flag.Value of -devices.
type deviceCounts []int

func (d *deviceCounts) String() string {
	if d == nil {
		return ""
	}
	s := make([]string, len(*d))
	for i, n := range *d {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (d *deviceCounts) Set(v string) error {
	counts, err := parseDeviceCounts(v)
	if err != nil {
		return err
	}
	*d = counts
	return nil
}

// parseDeviceCounts parses a comma list of rxe device counts such as "2,16".
// Duplicates are dropped; the order is kept.
func parseDeviceCounts(v string) ([]int, error) {
	var counts []int
	seen := make(map[int]bool)
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("device count %q is not a number", f)
		}
		if n < 1 || n > maxDevices {
			return nil, fmt.Errorf("device count %d out of range 1..%d", n, maxDevices)
		}
		if !seen[n] {
			seen[n] = true
			counts = append(counts, n)
		}
	}
	return counts, nil
}
