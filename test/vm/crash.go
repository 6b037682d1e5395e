package main

import (
	"regexp"
	"strings"
	"time"
)

// crashGrace is how long a guest whose kernel has begun a crash report
// may go on before it is stopped. panic_on_oops powers it off as soon as
// the report is printed; but a crash under TCG has also hung a guest in
// the middle of its report (CI of 2026-12-05: a 6.12 guest with 16
// devices printed its registers up to "PKRU:" 108 s after boot and then
// nothing, until the run's 15-minute limit). Half a minute prints any
// report in full.
const crashGrace = 30 * time.Second

// dieBanner is the line the kernel's die() prints for an oops, a general
// protection fault or a BUG() ("Oops: 0000 [#1] PREEMPT SMP NOPTI",
// "general protection fault, …: 0000 [#1] …").
var dieBanner = regexp.MustCompile(`: [0-9a-f]{4} \[#[0-9]+\]`)

// crashStarts reports whether a console line says the guest's kernel has
// crashed: die()'s banner, a double fault (which does not go through
// die()) or a panic.
func crashStarts(line string) bool {
	return dieBanner.MatchString(line) ||
		strings.Contains(line, "PANIC: double fault") ||
		strings.Contains(line, "Kernel panic - not syncing")
}

// crashHeadline is the line that best names a crash that lines (the
// console's last lines, the one that showed the crash last) show: the
// nearest "BUG:" or "kernel BUG at" line at most a few lines before it,
// which says what the fault was ("BUG: unable to handle page fault for
// address …"), else the line itself.
func crashHeadline(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	last := len(lines) - 1
	for i := last; i >= max(0, last-4); i-- {
		if strings.Contains(lines[i], "BUG: ") || strings.Contains(lines[i], "kernel BUG at") {
			return strings.TrimSpace(lines[i])
		}
	}
	return strings.TrimSpace(lines[last])
}

// consoleStamp is the kernel's timestamp at the start of a console line.
var consoleStamp = regexp.MustCompile(`^\[\s*[0-9]+\.[0-9]+\]\s?`)

// crashFrames is how many functions of a crash's call trace its place
// names.
const crashFrames = 4

// crashPlace collects, from the console lines that follow a crash's
// start, where the kernel was: the first RIP line ("RIP:
// 0010:rxe_comp+0x2c/0x60 [rdma_rxe]") and the first crashFrames
// functions of the first call trace, less the "?" guesses and the
// <TASK>/<IRQ> marks. A crash that names no test or module in its
// headline is found by these (the summary is often all a CI log shows).
type crashPlace struct {
	rip     string
	frames  []string
	inTrace bool
	done    bool // the first trace has ended
}

func (c *crashPlace) add(line string) {
	l := strings.TrimSpace(consoleStamp.ReplaceAllString(line, ""))
	switch {
	case c.rip == "" && strings.HasPrefix(l, "RIP: "):
		c.rip = l
	case c.done:
	case l == "Call Trace:":
		c.inTrace = true
	case !c.inTrace:
	case strings.HasPrefix(l, "</") || strings.HasPrefix(l, "RIP: ") || strings.HasPrefix(l, "---[ "):
		c.inTrace, c.done = false, len(c.frames) > 0
	case strings.HasPrefix(l, "?") || strings.HasPrefix(l, "<") || l == "":
	case len(c.frames) < crashFrames:
		c.frames = append(c.frames, l)
	}
}

// String is "RIP: …; called from a < b < c", or what of it was seen.
func (c *crashPlace) String() string {
	parts := []string{}
	if c.rip != "" {
		parts = append(parts, c.rip)
	}
	if len(c.frames) > 0 {
		parts = append(parts, "called from "+strings.Join(c.frames, " < "))
	}
	return strings.Join(parts, "; ")
}
