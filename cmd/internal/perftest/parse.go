package perftest

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// optstring is perftest's short options.
const optstring = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"

const (
	req  = cflags.RequiredArgument
	none = cflags.NoArgument
)

// Long options without a short letter get Vals from 1000 on.
const (
	lForceLink = 1000 + iota
	lRemoteMAC
	lLocalMAC
	lRemoteIP
	lLocalIP
	lRemotePort
	lLocalPort
	lRunInf
	lGbits
	lSRQ
	lReportBoth
	lReversed
	lPKey
	lInlineRecv
	lTCP
	lBurst
	lTypicalPkt
	lRateLimit
	lRateLimitType
	lRateUnits
	lOutput
	lCPUUtil
	lJSON
	lJSONFile
	lLatGap
	lFlowLabel
	lRetry
	lNoVersion
	lMmap
	lMmapOffset
	lIPv6
	lRawIPv6
	lPerPort
	lODP
	lHugepages
	lOldPostSend
	lPromisc
	lSniffer
	lRawMcast
	lMRPerQP
	lDLID
	lTClass
	lWaitDestroy
	lFlows
	lFlowsBurst
	lReplyEvery
	lWarmUp
	lVlanEn
	lVlanPCP
	lRecvPostList
	lAESXTS
	lEncryptTx
	lSigBefore
	lAESBlock
	lKEKPath
	lCredPath
	lDEKNumber
	lDEKAppPath
	lDCIStreams
	lActiveDCI
	lNoPCIR
	lSourceIP
)

// longOptions is the long-option table of Debian's perftest 4.5-0.17
// build (with AES-XTS, DC streams, relaxed ordering, raw IPv6 and the
// sniffer; without CUDA, ROCm and out-of-order), in its order, which
// decides what a prefix abbreviates.
var longOptions = []cflags.LongOption{
	{Name: "port", Arg: req, Val: 'p'}, {Name: "ib-dev", Arg: req, Val: 'd'}, {Name: "ib-port", Arg: req, Val: 'i'},
	{Name: "mtu", Arg: req, Val: 'm'}, {Name: "size", Arg: req, Val: 's'}, {Name: "iters", Arg: req, Val: 'n'},
	{Name: "tx-depth", Arg: req, Val: 't'}, {Name: "qp-timeout", Arg: req, Val: 'u'}, {Name: "sl", Arg: req, Val: 'S'},
	{Name: "gid-index", Arg: req, Val: 'x'}, {Name: "all", Arg: none, Val: 'a'}, {Name: "CPU-freq", Arg: none, Val: 'F'},
	{Name: "connection", Arg: req, Val: 'c'}, {Name: "qp", Arg: req, Val: 'q'}, {Name: "events", Arg: none, Val: 'e'},
	{Name: "vector", Arg: req, Val: 'X'}, {Name: "inline_size", Arg: req, Val: 'I'}, {Name: "outs", Arg: req, Val: 'o'},
	{Name: "mcg", Arg: none, Val: 'g'}, {Name: "comm_rdma_cm", Arg: none, Val: 'z'}, {Name: "rdma_cm", Arg: none, Val: 'R'},
	{Name: "tos", Arg: req, Val: 'T'}, {Name: "hop_limit", Arg: req, Val: 'L'}, {Name: "help", Arg: none, Val: 'h'},
	{Name: "MGID", Arg: req, Val: 'M'}, {Name: "rx-depth", Arg: req, Val: 'r'}, {Name: "bidirectional", Arg: none, Val: 'b'},
	{Name: "cq-mod", Arg: req, Val: 'Q'}, {Name: "noPeak", Arg: none, Val: 'N'}, {Name: "version", Arg: none, Val: 'V'},
	{Name: "report-cycles", Arg: none, Val: 'C'}, {Name: "report-histogrm", Arg: none, Val: 'H'},
	{Name: "report-unsorted", Arg: none, Val: 'U'}, {Name: "atomic_type", Arg: req, Val: 'A'},
	{Name: "dualport", Arg: none, Val: 'O'}, {Name: "post_list", Arg: req, Val: 'l'}, {Name: "duration", Arg: req, Val: 'D'},
	{Name: "margin", Arg: req, Val: 'f'}, {Name: "source_mac", Arg: req, Val: 'B'}, {Name: "dest_mac", Arg: req, Val: 'E'},
	{Name: "dest_ip", Arg: req, Val: 'J'}, {Name: "source_ip", Arg: req, Val: 'j'}, {Name: "dest_port", Arg: req, Val: 'K'},
	{Name: "source_port", Arg: req, Val: 'k'}, {Name: "ethertype", Arg: req, Val: 'Y'}, {Name: "limit_bw", Arg: req, Val: 'w'},
	{Name: "limit_msgrate", Arg: req, Val: 'y'}, {Name: "server", Arg: none, Val: 'Z'}, {Name: "client", Arg: none, Val: 'P'},
	{Name: "mac_fwd", Arg: none, Val: 'v'}, {Name: "use_rss", Arg: none, Val: 'G'}, {Name: "report-counters", Arg: req, Val: 'W'},
	{Name: "force-link", Arg: req, Val: lForceLink}, {Name: "remote_mac", Arg: req, Val: lRemoteMAC},
	{Name: "local_mac", Arg: req, Val: lLocalMAC}, {Name: "remote_ip", Arg: req, Val: lRemoteIP},
	{Name: "local_ip", Arg: req, Val: lLocalIP}, {Name: "remote_port", Arg: req, Val: lRemotePort},
	{Name: "local_port", Arg: req, Val: lLocalPort}, {Name: "run_infinitely", Arg: none, Val: lRunInf},
	{Name: "report_gbits", Arg: none, Val: lGbits}, {Name: "use-srq", Arg: none, Val: lSRQ},
	{Name: "report-both", Arg: none, Val: lReportBoth}, {Name: "reversed", Arg: none, Val: lReversed},
	{Name: "pkey_index", Arg: req, Val: lPKey}, {Name: "inline_recv", Arg: req, Val: lInlineRecv},
	{Name: "tcp", Arg: none, Val: lTCP}, {Name: "burst_size", Arg: req, Val: lBurst},
	{Name: "typical_pkt_size", Arg: req, Val: lTypicalPkt}, {Name: "rate_limit", Arg: req, Val: lRateLimit},
	{Name: "rate_limit_type", Arg: req, Val: lRateLimitType}, {Name: "rate_units", Arg: req, Val: lRateUnits},
	{Name: "output", Arg: req, Val: lOutput}, {Name: "cpu_util", Arg: none, Val: lCPUUtil},
	{Name: "out_json", Arg: none, Val: lJSON}, {Name: "out_json_file", Arg: req, Val: lJSONFile},
	{Name: "latency_gap", Arg: req, Val: lLatGap}, {Name: "flow_label", Arg: req, Val: lFlowLabel},
	{Name: "retry_count", Arg: req, Val: lRetry}, {Name: "dont_xchg_versions", Arg: none, Val: lNoVersion},
	{Name: "mmap", Arg: req, Val: lMmap}, {Name: "mmap-offset", Arg: req, Val: lMmapOffset},
	{Name: "ipv6", Arg: none, Val: lIPv6}, {Name: "raw_ipv6", Arg: none, Val: lRawIPv6},
	{Name: "report-per-port", Arg: none, Val: lPerPort}, {Name: "odp", Arg: none, Val: lODP},
	{Name: "use_hugepages", Arg: none, Val: lHugepages}, {Name: "use_old_post_send", Arg: none, Val: lOldPostSend},
	{Name: "promiscuous", Arg: none, Val: lPromisc}, {Name: "sniffer", Arg: none, Val: lSniffer},
	{Name: "raw_mcast", Arg: none, Val: lRawMcast}, {Name: "mr_per_qp", Arg: none, Val: lMRPerQP},
	{Name: "dlid", Arg: req, Val: lDLID}, {Name: "tclass", Arg: req, Val: lTClass},
	{Name: "wait_destroy", Arg: req, Val: lWaitDestroy}, {Name: "flows", Arg: req, Val: lFlows},
	{Name: "flows_burst", Arg: req, Val: lFlowsBurst}, {Name: "reply_every", Arg: req, Val: lReplyEvery},
	{Name: "perform_warm_up", Arg: none, Val: lWarmUp}, {Name: "vlan_en", Arg: none, Val: lVlanEn},
	{Name: "vlan_pcp", Arg: req, Val: lVlanPCP}, {Name: "recv_post_list", Arg: req, Val: lRecvPostList},
	{Name: "aes_xts", Arg: none, Val: lAESXTS}, {Name: "encrypt_on_tx", Arg: none, Val: lEncryptTx},
	{Name: "sig_before", Arg: none, Val: lSigBefore}, {Name: "aes_block_size", Arg: req, Val: lAESBlock},
	{Name: "kek_path", Arg: req, Val: lKEKPath}, {Name: "credentials_path", Arg: req, Val: lCredPath},
	{Name: "data_enc_keys_number", Arg: req, Val: lDEKNumber}, {Name: "data_enc_key_app_path", Arg: req, Val: lDEKAppPath},
	{Name: "log_dci_streams", Arg: req, Val: lDCIStreams}, {Name: "log_active_dci_streams", Arg: req, Val: lActiveDCI},
	{Name: "disable_pcie_relaxed", Arg: none, Val: lNoPCIR}, {Name: "source_ip", Arg: req, Val: lSourceIP},
}

// resultLine is perftest's RESULT_LINE.
const resultLine = "---------------------------------------------------------------------------------------\n"

// parserFailed is what perftest's mains print when the parser returns 1.
const parserFailed = " Parser function exited with Error\n"

// Parse reads args as perftest's parser does for the program prog (verb
// v, test t). What perftest prints on stdout while parsing (the usage,
// a RESULT_LINE before some refusals) goes to stdout; a refusal is
// returned as a *Failure with perftest's stderr text and exit status.
func Parse(stdout, stderr io.Writer, prog string, v Verb, t Test, args []string) (*Config, error) {
	c := defaults(prog, v, t)
	p := parser{c: c, stdout: stdout, stderr: stderr}
	if err := p.options(args); err != nil {
		return nil, err
	}
	if err := p.dependencies(); err != nil {
		return nil, err
	}
	return c, nil
}

type parser struct {
	c      *Config
	stdout io.Writer
	stderr io.Writer
	arg    string
	// the refusal to give once the loop ends, for an option perftest
	// takes but this engine does not carry out
	unsupported string
}

func (p *parser) warn(msg string) { io.WriteString(p.stderr, msg) }

// refuse is the parser's "return 1": the message, then main's line.
func refuse(msg string) error { return &Failure{Stderr: msg + parserFailed, Code: 1} }

// value is CHECK_VALUE: strtol base 0 over the whole argument.
func (p *parser) value(name, ctype string) (int64, error) {
	v, n, _ := cflags.Strtol(p.arg, 0)
	if n != len(p.arg) {
		return 0, refuse(" " + name + " argument " + p.arg + " should be " + ctype + "\n")
	}
	return v, nil
}

func (p *parser) intValue(name string) (int, error) {
	v, err := p.value(name, "int")
	return int(int32(v)), err
}

func (p *parser) u8Value(name string) (int, error) {
	v, err := p.value(name, "uint8_t")
	return int(uint8(v)), err
}

func (p *parser) inRange(name string, lo, hi int) (int, error) {
	v, err := p.intValue(name)
	if err == nil && (v < lo || v > hi) {
		err = refuse(fmt.Sprintf(" %s should be between %d and %d\n", name, lo, hi))
	}
	return v, err
}

func (p *parser) options(args []string) error {
	c := p.c
	g := cflags.New(c.Prog, args, optstring, longOptions)
	for g.Next() {
		p.arg = g.Arg()
		if err := p.option(g.Opt()); err != nil {
			if err == errBadOption {
				io.WriteString(p.stdout, usageText(c))
				return &Failure{Stderr: g.Err().Error() + "\n Invalid Command or flag.\n Please check command line and run again.\n\n" + parserFailed, Code: 1}
			}
			return err
		}
	}
	switch rest := g.Args(); len(rest) {
	case 0:
	case 1:
		c.Server = rest[0]
	default:
		return refuse(" Invalid Command line. Please check command rerun \n")
	}
	if p.unsupported != "" {
		return refuse(" " + p.unsupported + " is not supported by this implementation\n")
	}
	return nil
}

var errBadOption = &Failure{}

func (p *parser) notHere(what string) {
	if p.unsupported == "" {
		p.unsupported = what
	}
}

func (p *parser) option(opt rune) error {
	c := p.c
	var err error
	switch opt {
	case 'p':
		c.Port, err = p.intValue("Port")
	case 'd':
		c.Dev = p.arg
	case 'i':
		if c.IBPort, err = p.u8Value("IB Port"); err == nil && c.IBPort < 1 {
			err = refuse("IB Port can't be less than 1\n")
		}
	case 'm':
		c.MTU, err = p.intValue("MTU")
	case 'n':
		c.Iters, err = p.inRange("Iteration num", 5, 100000000)
	case 't':
		c.TxDepth, err = p.inRange("Tx depth", 1, 15000)
	case 'T':
		c.TOS, err = p.inRange("TOS", 0, 255)
	case 'L':
		c.HopLimit, err = p.inRange("Hop Limit", 0, 255)
	case 'u':
		c.QPTimeout, err = p.u8Value("QP Timeout")
	case 'S':
		if c.SL, err = p.u8Value("Service Level"); err == nil && c.SL > 15 {
			err = refuse(" Only 15 Service levels\n")
		}
	case 'x':
		var v int
		if v, err = p.u8Value("Gid index"); err == nil && v > 64 {
			err = refuse(" Gid index should be between 0 and 64\n")
		}
		c.GIDIndex, c.UserGID = v, true
	case 'c':
		return p.conn()
	case 'q':
		if c.Test != BW {
			return refuse(" Multiple QPs only available on bw tests\n")
		}
		c.NumQPs, err = p.inRange("num of Qps", 1, 16384)
	case 'I':
		if c.Inline, err = p.inRange("Max inline", 0, 912); err == nil && c.Verb == Read {
			err = refuse(" Inline feature not available on READ/Atomic verbs\n")
		}
	case 'o':
		if c.OutReads, err = p.intValue("Outstanding Reads"); err == nil && c.Verb != Read {
			err = refuse(" Setting Outstanding reads only available on READ verb\n")
		}
	case 'r':
		if c.RxDepth, err = p.inRange(" Rx depth", 1, 16384); err == nil && c.Verb != Send && c.RxDepth > defRxRDMA {
			err = refuse(" On RDMA verbs rx depth can be only 1\n")
		}
	case 'Q':
		c.CQMod, err = p.inRange("CQ moderation", 1, 1024)
		c.ReqCQMod = true
	case 'A':
		return refuse(" You are not running the atomic_lat/bw test!\n To change the atomic action type, you must run one of the atomic tests\n")
	case 'l':
		var n int
		if n, err = p.intValue("Send Post List size"); err == nil && n != 1 {
			p.notHere("--post_list")
		}
	case 'D':
		if c.Duration, err = p.intValue("Duration period"); err == nil && c.Duration <= 0 {
			err = refuse(" Duration period must be positive\n")
		}
		c.DurMode = true
	case 'f':
		if c.Margin, err = p.intValue("Margin"); err == nil && c.Margin < 0 {
			err = refuse(" Margin must be non-negative\n")
		}
	case 'O':
		p.notHere("--dualport")
	case 'a':
		c.RunAll = true
	case 'F':
		c.CPUFreqF = true
	case 'V':
		io.WriteString(p.stdout, "Version: "+version+"\n")
		return &Failure{Code: 1}
	case 'h':
		io.WriteString(p.stdout, usageText(c))
		return &Failure{Code: 1}
	case 'z':
		p.notHere("--comm_rdma_cm")
		c.CommCM = true
	case 'R':
		c.RdmaCM = true
	case 's':
		return p.size()
	case 'e':
		c.Events = true
		if c.Verb == Write {
			return refuse(" Events feature not available on WRITE verb\n")
		}
	case 'X':
		if c.Verb == Write {
			return refuse(" Events feature not available on WRITE verb\n")
		}
		var n int
		if n, err = p.inRange("EQN", 0, 2048); err == nil && n != 0 {
			p.notHere("--vector")
		}
	case 'b':
		c.Duplex = true
		if c.Test == Lat {
			return refuse(" Bidirectional is only available in BW test\n")
		}
	case 'N':
		c.NoPeak = true
		if c.Test == Lat {
			return refuse(" NoPeak only valid for BW tests\n")
		}
	case 'C':
		if c.Test != Lat {
			return refuse(" Available only on Latency tests\n")
		}
		c.Cycles = true
	case 'g':
		if c.Verb != Send {
			return refuse(" MultiCast feature only available on SEND verb\n")
		}
		p.notHere("--mcg")
	case 'H':
		if c.Test == BW {
			return refuse(" Available only on Latency tests\n")
		}
		c.Histogram = true
	case 'U':
		if c.Test == BW {
			return refuse(" is Available only on Latency tests\n")
		}
		c.Unsorted = true
	case 'M':
		p.notHere("--MGID")
	case 'B', 'E', 'J', 'j', 'K', 'k', 'Y', 'Z', 'P', 'v', 'G':
		p.notHere("Raw Ethernet")
	case 'w', 'y':
		p.notHere("a bandwidth or message rate limit")
	case 'W':
		p.notHere("--report-counters")
	case lGbits:
		c.Gbits = true
	case lReversed:
		c.Reversed = true
	case lRetry:
		if c.Retry, err = p.intValue("Retry Count"); err == nil && c.Retry < 0 {
			err = refuse(" Retry Count must be non-negative\n")
		}
	case lNoVersion:
		c.NoVersion = true
	case lOutput:
		switch p.arg {
		case "bandwidth":
			c.Output = OutputBW
		case "message_rate":
			c.Output = OutputMR
		case "latency":
			c.Output = OutputLat
		default:
			return refuse(" Invalid verbosity level output flag. Please use bandwidth, latency, message_rate\n")
		}
	case lLatGap:
		if c.LatGap, err = p.intValue("Latency gap time"); err == nil && c.LatGap < 0 {
			err = refuse(" Latency gap time must be non-negative\n")
		}
	case lTClass:
		var v int64
		v, err = p.value("traffic class", "uint16_t")
		c.TClass = int(uint16(v))
	case lPKey:
		c.PKeyIndex, err = p.intValue("Pkey index")
		if err == nil && c.PKeyIndex != 0 {
			p.notHere("--pkey_index")
		}
	case lOldPostSend, lNoPCIR, lIPv6, lSourceIP:
		// Ours always posts with ibv_post_send's equivalent, picks IPv4
		// GIDs and connects from the routing table's address.
	case lSRQ:
		p.notHere("--use-srq")
	case lRunInf:
		p.notHere("--run_infinitely")
	default:
		if opt >= 1000 {
			name := "--" + longName(opt)
			p.notHere(name)
			return nil
		}
		return errBadOption
	}
	return err
}

func longName(val rune) string {
	for _, o := range longOptions {
		if o.Val == val {
			return o.Name
		}
	}
	return ""
}

// conn is change_conn_type: its refusals exit at once, without main's
// parser line.
func (p *parser) conn() error {
	c := p.c
	exit := func(msg string) error { return &Failure{Stderr: msg, Code: 1} }
	switch p.arg {
	case "RC":
		c.Conn = RC
	case "UC":
		c.Conn = UC
		if c.Verb == Read {
			return exit(" UC connection not possible in READ/ATOMIC verbs\n")
		}
	case "UD":
		c.Conn = UD
		if c.Verb != Send {
			return exit(" UD connection only possible in SEND verb\n")
		}
	case "RawEth", "XRC", "DC", "SRD":
		p.notHere("connection type " + p.arg)
	default:
		return exit(" Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}\n")
	}
	return nil
}

// size is -s: a number with an optional K or M suffix.
func (p *parser) size() error {
	s, factor := p.arg, int64(1)
	if strings.HasSuffix(s, "K") {
		s, factor = s[:len(s)-1], 1024
	}
	if strings.HasSuffix(s, "M") {
		s, factor = s[:len(s)-1], 1024*1024
	}
	v, _, _ := cflags.Strtol(s, 0)
	size := uint64(v * factor)
	p.c.Size, p.c.ReqSize = size, true
	if size < 1 || size > 0xffffffff/2 {
		return refuse(" Message Size should be between 1 and 2147483647\n")
	}
	return nil
}

// dependencies is force_dependecies, for what this engine carries out.
func (p *parser) dependencies() error {
	c := p.c
	exit := func(out, msg string) error {
		io.WriteString(p.stdout, out)
		return &Failure{Stderr: msg, Code: 1}
	}
	if !c.DurMode {
		c.TxDepth = min(c.TxDepth, c.Iters)
		if c.Verb == Send {
			c.RxDepth = min(c.RxDepth, c.Iters)
		}
		if (c.Conn == UD || c.Conn == UC) && c.RxDepth == defRxSend {
			c.RxDepth = min(c.Iters, ucMaxRx)
		}
	}
	if c.Size > cqModLimit && c.Conn != UD && !c.RunAll && !c.Events {
		if !c.ReqCQMod {
			c.CQMod = 1
		} else if c.CQMod > 1 {
			io.WriteString(p.stdout, resultLine+"Warning: Large message requested and CQ moderation enabled\nWarning: It can lead to inaccurate results\n")
		}
	}
	c.CQMod = min(c.CQMod, c.TxDepth)
	if c.Verb == Read {
		c.Inline = 0
	}
	if c.RunAll {
		c.Size = maxSize
	}
	if c.DurMode {
		c.Iters, c.NoPeak = 0, true
		if c.Events {
			return exit(resultLine, "Duration mode doesn't work with events.\n")
		}
		if c.RunAll {
			return exit(resultLine, "Duration mode currently doesn't support running on all sizes.\n")
		}
	}
	if c.RdmaCM {
		if c.Conn == UC {
			return exit(resultLine+" UC is not supported in librdmacm\n", "")
		}
	} else if c.TOS != -1 {
		return exit(" TOS only valid for rdma_cm based QP and RawEth QP \n", "")
	}
	if c.HopLimit != defHopLimit {
		return exit(" Hop limit only valid for RawEth QP \n", "")
	}
	if c.Verb == Send && c.Test == BW && c.isServer() && !c.Duplex {
		c.NoPeak = true
	}
	if c.LatGap > 0 && c.Test != Lat {
		return exit(resultLine, " Latency gap feature is only for latency tests\n")
	}
	if c.DurMode && c.Margin == -1 {
		c.Margin = c.Duration / 4
	}
	if c.Conn == UD && c.Inline > 884 {
		io.WriteString(p.stdout, resultLine)
		p.warn("Setting inline size to 884 (Max inline size in UD)\n")
		c.Inline = 884
	}
	// perftest's workaround for an odd receive depth in SEND tests
	if c.Verb == Send && c.RxDepth%2 == 1 && !c.RunAll {
		c.RxDepth++
	}
	if !c.DurMode && c.Iters > 20000 && c.Test == BW {
		c.NoPeak = true
	}
	if !(c.Duration > 2*c.Margin) {
		return exit(resultLine, "please check that DURATION > 2*MARGIN\n")
	}
	return nil
}
