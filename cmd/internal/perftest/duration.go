package perftest

// Duration mode (-D): perftest drives a state machine from SIGALRM —
// START for the margin, SAMPLE (measured) for duration-2×margin, STOP
// for the margin, then END. Our loops poll it with the clock instead.

type phase int

const (
	phaseStart phase = iota
	phaseSample
	phaseStop
	phaseEnd
)

// durClock is one run's duration state; begin starts it.
type durClock struct {
	c       *Config
	now     func() int64 // nanoseconds on the run's clock
	phase   phase
	next    int64 // when the current phase ends, on k
	started bool
	// sampled is the clock at SAMPLE's start and at its end (perftest's
	// tposted[0] and tcompleted[0]).
	from, to int64
}

func newDur(c *Config, k clock) *durClock { return &durClock{c: c, now: k.now} }

// begin is catch_alarm's first call: at once when there is no margin.
func (d *durClock) begin() {
	if d.started {
		return
	}
	d.started = true
	now := d.now()
	d.phase, d.next = phaseStart, now+int64(d.c.Margin)*1e9
	d.tick()
}

// tick moves through the phases whose time has come and returns the
// phase now.
func (d *durClock) tick() phase {
	if !d.started {
		return phaseStart
	}
	now := d.now()
	for d.phase != phaseEnd && now >= d.next {
		switch d.phase {
		case phaseStart:
			d.phase, d.from, d.next = phaseSample, now, d.next+int64(d.c.Duration-2*d.c.Margin)*1e9
		case phaseSample:
			d.phase, d.to, d.next = phaseStop, now, d.next+int64(d.c.Margin)*1e9
		case phaseStop:
			d.phase = phaseEnd
		}
	}
	return d.phase
}

func (d *durClock) sampling() bool { return d.tick() == phaseSample }
func (d *durClock) ended() bool    { return d.tick() == phaseEnd }
