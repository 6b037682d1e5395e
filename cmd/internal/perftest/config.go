package perftest

import (
	"fmt"
	"strings"
)

// Verb is a test's operation (perftest's VerbType).
type Verb int

// Verbs, in perftest's order (the value is what the report's address line
// switches on).
const (
	Send Verb = iota
	Write
	Read
)

// String is perftest's name for the verb in the test banner (testsStr).
func (v Verb) String() string {
	switch v {
	case Send:
		return "Send"
	case Write:
		return "RDMA_Write"
	case Read:
		return "RDMA_Read"
	}
	return fmt.Sprintf("Verb(%d)", int(v))
}

// Test is what a program measures (perftest's TestType).
type Test int

// Tests.
const (
	BW Test = iota
	Lat
)

// String names the test as the banner does.
func (t Test) String() string {
	switch t {
	case BW:
		return "BW"
	case Lat:
		return "Latency"
	}
	return fmt.Sprintf("Test(%d)", int(t))
}

// Conn is the transport of the test QPs (perftest's connection_type).
type Conn int

// Connection types, numbered as perftest's connStr.
const (
	RC Conn = iota
	UC
	UD
)

// String is perftest's name (connStr).
func (c Conn) String() string {
	switch c {
	case RC:
		return "RC"
	case UC:
		return "UC"
	case UD:
		return "UD"
	}
	return fmt.Sprintf("Conn(%d)", int(c))
}

// Output is the --output verbosity.
type Output int

// Verbosities.
const (
	FullVerbosity Output = iota
	OutputBW
	OutputMR
	OutputLat
)

// String names the verbosity as --output takes it.
func (o Output) String() string {
	switch o {
	case FullVerbosity:
		return "full"
	case OutputBW:
		return "bandwidth"
	case OutputMR:
		return "message_rate"
	case OutputLat:
		return "latency"
	}
	return fmt.Sprintf("Output(%d)", int(o))
}

// perftest's defaults and limits (perftest_parameters.h).
const (
	defPort       = 18515
	defSizeBW     = 65536
	defSizeLat    = 2
	defIters      = 1000
	defItersWB    = 5000
	defTxBW       = 128
	defTxLat      = 1
	defQPTimeout  = 14
	defRxSend     = 512
	defRxRDMA     = 1
	defCQMod      = 100
	defDuration   = 5
	defHopLimit   = 64
	defRetryCount = 7
	defCacheLine  = 64
	defPageSize   = 4096
	maxSize       = 8388608
	ucMaxRx       = 16000
	cqModLimit    = 8192 // MSG_SIZE_CQ_MOD_LIMIT
	latTail       = 2    // LAT_MEASURE_TAIL
	udAddition    = 40   // the GRH in front of a UD receive
	version       = "6.06"
	defQKey       = 0x11111111
)

// Config is one run's settings, as perftest's parser leaves them.
type Config struct {
	Prog   string
	Verb   Verb
	Test   Test
	Conn   Conn
	Server string // the peer to connect to; empty: be the server

	Port      int
	Dev       string
	IBPort    int
	MTU       int // user's -m in bytes; 0: the port's active MTU
	Size      uint64
	ReqSize   bool
	Iters     int
	TxDepth   int
	RxDepth   int
	QPTimeout int
	SL        int
	GIDIndex  int  // -1: pick the best (RoCE) or none (InfiniBand)
	UserGID   bool // -x given
	NumQPs    int
	Inline    int // -1: the default
	OutReads  int
	CQMod     int
	ReqCQMod  bool

	Duration  int  // seconds, with Duration mode
	Margin    int  // seconds at each end of a Duration run not measured
	DurMode   bool // -D: run for Duration seconds instead of Iters
	RunAll    bool // -a: sizes 2 to 2^23
	CPUFreqF  bool
	Events    bool
	Duplex    bool
	NoPeak    bool
	RdmaCM    bool // -R: test QPs connected with rdma_cm, exchange over it
	CommCM    bool // -z: exchange over rdma_cm, QPs connected by hand
	Gbits     bool // --report_gbits
	Output    Output
	Cycles    bool // -C
	Histogram bool // -H
	Unsorted  bool // -U
	TOS       int  // -1: none
	HopLimit  int
	Retry     int
	NoVersion bool // --dont_xchg_versions
	TClass    int
	LatGap    int // --latency_gap, µs between posts
	Reversed  bool
	PKeyIndex int
}

// isServer says whether this side listens (perftest's machine == SERVER).
func (c *Config) isServer() bool { return (c.Server == "") != c.Reversed }

// defaults are init_perftest_params' values for the program.
func defaults(prog string, v Verb, t Test) *Config {
	c := &Config{Prog: prog, Verb: v, Test: t, Port: defPort, IBPort: 1, Size: defSizeBW, Iters: defIters,
		TxDepth: defTxBW, RxDepth: defRxRDMA, QPTimeout: defQPTimeout, GIDIndex: -1, NumQPs: 1, Inline: -1,
		CQMod: defCQMod, Duration: defDuration, Margin: -1, TOS: -1, HopLimit: defHopLimit, Retry: defRetryCount}
	if t == Lat {
		c.Size, c.TxDepth = defSizeLat, defTxLat
	}
	if v == Send {
		c.RxDepth = defRxSend
	}
	if t == BW && v == Write {
		c.Iters = defItersWB
	}
	return c
}

// progMask is the usage table's bit for the program.
func (c *Config) progMask() uint8 { return progBit(c.Verb, c.Test) }

func progBit(v Verb, t Test) uint8 { return 1 << (uint(t)*3 + uint(v)) }

// title is the banner's test line ("Send BW Test").
func (c *Config) title() string {
	var b strings.Builder
	b.WriteString(c.Verb.String() + " ")
	if c.Test == BW {
		if c.Duplex {
			b.WriteString("Bidirectional ")
		}
		b.WriteString("BW ")
	} else {
		b.WriteString("Latency ")
	}
	b.WriteString("Test")
	return b.String()
}
