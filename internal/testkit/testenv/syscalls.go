package testenv

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Syscalls is what strace saw one process (and its threads) call, read
// from an `strace -f -y -x -s 4 -o FILE` log by ParseStrace.
type Syscalls struct {
	Calls     map[string]int // by system call name, every call
	Total     int
	Doorbells int // POST_SEND writes on a uverbs char device

	// Runtime holds the calls the Go runtime makes for itself (see
	// RuntimeCall), by name; Library is Total less them: what the
	// program and its libraries asked the kernel for.
	Runtime map[string]int
	Library int
}

// RuntimeSyscalls are the system calls that only the Go runtime makes in
// our programs: the scheduler's parks and wake-ups (futex, nanosleep
// from sysmon, sched_yield), signals (tgkill, getpid, rt_sigreturn for
// preemption; rt_sigaction, rt_sigprocmask, sigaltstack to set them up),
// threads (clone, clone3, gettid), returning memory (madvise) and the
// netpoller (epoll_*, eventfd2). rdma-core's tools make almost none of
// them (ucmatose: two getpid a run; they poll no fd through epoll), so
// counting them apart is fair to both.
var RuntimeSyscalls = map[string]bool{
	"futex": true, "nanosleep": true, "sched_yield": true, "tgkill": true, "getpid": true,
	"rt_sigreturn": true, "rt_sigprocmask": true, "rt_sigaction": true, "sigaltstack": true,
	"clone": true, "clone3": true, "madvise": true, "gettid": true,
	"epoll_pwait": true, "epoll_wait": true, "epoll_ctl": true, "epoll_create1": true, "eventfd2": true,
}

// straceCall is the start of a traced call in `strace -f`'s output:
// "PID  name(" (a resumed call's "<... name resumed>" is not).
var straceCall = regexp.MustCompile(`^\d+\s+([a-z_0-9]+)\((.*)$`)

// straceResumed is the end of a call another thread's line interrupted.
var straceResumed = regexp.MustCompile(`^(\d+)\s+<\.\.\. ([a-z_0-9]+) resumed>`)

// straceRet is a call's result, at the end of its line.
var straceRet = regexp.MustCompile(`\) += (0x[0-9a-f]+|-?\d+)`)

// smallMap is the largest anonymous mapping counted as the program's
// (command pages, small message buffers): the runtime maps its heap in
// reservations it then maps MAP_FIXED, and its other anonymous maps are
// 64 KiB or more.
const smallMap = 16 << 10

// ParseStrace counts the calls of an strace -f -y -x -s 4 log. A
// doorbell is a write(2) to /dev/infiniband/uverbs* whose command word
// (the first four bytes, little-endian) is IB_USER_VERBS_CMD_POST_SEND
// (28): libsiw's, librxe's and ours carry no work request, the queue is
// mapped.
//
// mmap and munmap are split between the runtime and the program: a
// mapping of a file (a uverbs device's queues) is the program's, and so
// is an anonymous one of at most 16 KiB made at an address the kernel
// chose (our command pages and message buffers; libc's malloc too);
// other anonymous mappings are the runtime's (its heap reservations,
// mapped MAP_FIXED, and 64 KiB or larger chunks). A munmap belongs to
// whoever made the mapping at its address (the runtime's when unknown).
// A call strace shows as interrupted and resumed (another thread's line
// between) is counted and classed by its first line; the address a
// program's mmap returned is taken from its resumed line.
func ParseStrace(log string) Syscalls {
	c := Syscalls{Calls: map[string]int{}, Runtime: map[string]int{}}
	mine := map[string]bool{}    // addresses of the program's mappings
	pending := map[string]bool{} // threads in a program's mmap strace cut
	for _, line := range strings.Split(log, "\n") {
		if r := straceResumed.FindStringSubmatch(line); r != nil {
			if r[2] == "mmap" && pending[r[1]] {
				if ret := straceRet.FindStringSubmatch(line); ret != nil {
					mine[ret[1]] = true
				}
			}
			delete(pending, r[1])
			continue
		}
		m := straceCall.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, args := m[1], m[2]
		c.Calls[name]++
		c.Total++
		if name == "write" && strings.Contains(line, "</dev/infiniband/uverbs") && strings.Contains(line, `"\x1c\x00\x00\x00"`) {
			c.Doorbells++
		}
		runtime := RuntimeSyscalls[name]
		switch name {
		case "mmap":
			runtime = !programMap(args)
			if !runtime {
				if r := straceRet.FindStringSubmatch(line); r != nil {
					mine[r[1]] = true
				} else {
					pending[strings.Fields(line)[0]] = true
				}
			}
		case "munmap":
			addr, _, _ := strings.Cut(args, ",")
			runtime = !mine[addr]
			delete(mine, addr)
		}
		if runtime {
			c.Runtime[name]++
		} else {
			c.Library++
		}
	}
	return c
}

// programMap says whether mmap's arguments (strace's text) are a
// mapping of the program's (see ParseStrace).
func programMap(args string) bool {
	f := strings.Split(args, ", ")
	if len(f) < 5 {
		return false
	}
	if !strings.Contains(f[3], "MAP_ANONYMOUS") {
		return true // a file: the uverbs device's queues
	}
	if f[0] != "NULL" || strings.Contains(f[3], "MAP_FIXED") || f[2] == "PROT_NONE" {
		return false
	}
	n, err := strconv.Atoi(f[1])
	return err == nil && n <= smallMap
}

// RuntimeTotal is the number of calls the runtime made for itself.
func (c Syscalls) RuntimeTotal() int { return c.Total - c.Library }

func (c Syscalls) String() string {
	names := make([]string, 0, len(c.Calls))
	for n := range c.Calls {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if c.Calls[names[i]] != c.Calls[names[j]] {
			return c.Calls[names[i]] > c.Calls[names[j]]
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "total %d (library %d, runtime %d), doorbells %d:", c.Total, c.Library, c.RuntimeTotal(), c.Doorbells)
	for _, n := range names {
		if r := c.Runtime[n]; r != 0 && r != c.Calls[n] {
			fmt.Fprintf(&b, " %s=%d(runtime %d)", n, c.Calls[n], r)
		} else {
			fmt.Fprintf(&b, " %s=%d", n, c.Calls[n])
		}
	}
	return b.String()
}
