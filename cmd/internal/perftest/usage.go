package perftest

import "strings"

// The usage table's program bits (progBit).
const (
	sBW  = 1 << 0
	wBW  = 1 << 1
	rBW  = 1 << 2
	sLat = 1 << 3
	wLat = 1 << 4
	rLat = 1 << 5
	all  = 0x3f
)

// usageLines is perftest 4.5-0.17's help text as Debian's build prints
// it (-h), line by line, with the programs that print each line; %PROG%
// stands for argv[0].
var usageLines = []struct {
	progs uint8
	text  string
}{
	{all, "Usage:"},
	{all, "  %PROG%            start a server and wait for connection"},
	{all, "  %PROG% <host>     connect to server at <host>"},
	{all, ""},
	{all, "Options:"},
	{all, "  -a, --all  Run sizes from 2 till 2^23"},
	{sBW | wBW | rBW, "  -b, --bidirectional  Measure bidirectional bandwidth (default unidirectional)"},
	{sBW | sLat, "  -c, --connection=<RC/XRC/UC/UD/DC/SRD>  Connection type RC/XRC/UC/UD/DC/SRD (default RC)"},
	{wBW | wLat, "  -c, --connection=<RC/XRC/UC/DC>  Connection type RC/XRC/UC/DC (default RC)"},
	{rBW | rLat, "  -c, --connection=<RC/XRC/DC>  Connection type RC/XRC/DC (default RC)"},
	{all, "      --log_dci_streams=<log_num_dci_stream_channels> (default 0)  Run DC initiator as DCS instead of DCI with <log_num dci_stream_channels>"},
	{all, "      --log_active_dci_streams=<log_num_active_dci_stream_channels> (default log_num_dci_stream_channels)"},
	{all, "\t  --aes_xts Runs traffic with AES_XTS feature (encryption)"},
	{all, "\t  --encrypt_on_tx Runs traffic with encryption on tx (default decryption on tx)"},
	{all, "\t  --sig_before Puts signature on data before encrypting it (default after)"},
	{all, "      --aes_block_size=<512,520,4048,4096,4160> (default 512)"},
	{all, "\t  --data_enc_keys_number=<number of data encryption keys> (default 1)"},
	{all, "\t  --kek_path path to the key encryption key file"},
	{all, "\t  --credentials_path path to the credentials file"},
	{all, "\t  --data_enc_key_app_path path to the data encryption key app"},
	{sLat | wLat | rLat, "  -C, --report-cycles  report times in cpu cycle units (default microseconds)"},
	{all, "  -d, --ib-dev=<dev>  Use IB device <dev> (default first device found)"},
	{all, "  -D, --duration  Run test for a customized period of seconds."},
	{sBW | rBW | sLat | rLat, "  -e, --events  Sleep on CQ events (default poll)"},
	{sBW | rBW | sLat | rLat, "  -X, --vector=<completion vector>  Set <completion vector> used for events"},
	{all, "  -f, --margin  measure results within margins. (default=2sec)"},
	{all, "  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded, and cpu-freq is not on max."},
	{sBW | sLat, "  -g, --mcg  Send messages to multicast group with 1 QP attached to it."},
	{all, "  -h, --help  Show this help screen."},
	{sLat | wLat | rLat, "  -H, --report-histogram  Print out all results (default print summary only)"},
	{all, "  -i, --ib-port=<port>  Use port <port> of IB device (default 1)"},
	{sBW | wBW | sLat | wLat, "  -I, --inline_size=<size>  Max size of message to be sent in inline"},
	{sBW | wBW | rBW, "  -l, --post_list=<list size>"},
	{sBW | wBW | rBW, " Post list of send WQEs of <list size> size (instead of single post)"},
	{sBW | wBW | rBW, "      --recv_post_list=<list size> Post list of receive WQEs of <list size> size (instead of single post)"},
	{all, "  -L, --hop_limit=<hop_limit>  Set hop limit value (ttl for IPv4 RawEth QP). Values 0-255 (default 64)"},
	{all, "  -m, --mtu=<mtu>  MTU size : 256 - 4096 (default port mtu)"},
	{sBW | sLat, "  -M, --MGID=<multicast_gid>  In multicast, uses <multicast_gid> as the group MGID."},
	{sBW | rBW | sLat | wLat | rLat, "  -n, --iters=<iters>  Number of exchanges (at least 5, default 1000)"},
	{wBW, "  -n, --iters=<iters>  Number of exchanges (at least 5, default 5000)"},
	{sBW | wBW | rBW, "  -N, --noPeak Cancel peak-bw calculation (default with peak up to iters=20000)"},
	{rBW | rLat, "  -o, --outs=<num>  num of outstanding read/atom(default max of device)"},
	{sBW | wBW | rBW, "  -O, --dualport  Run test in dual-port mode."},
	{all, "  -p, --port=<port>  Listen on/connect to port <port> (default 18515)"},
	{sBW | wBW | rBW, "  -q, --qp=<num of qp's>  Num of qp's(default 1)"},
	{sBW | wBW | rBW, "  -Q, --cq-mod  Generate Cqe only after <--cq-mod> completion"},
	{sBW | sLat, "  -r, --rx-depth=<dep>  Rx queue size (default 512). If using srq, rx-depth controls max-wr size of the srq"},
	{all, "  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs"},
	{sBW | wBW | rBW, "  -s, --size=<size>  Size of message to exchange (default 65536)"},
	{sLat | wLat | rLat, "  -s, --size=<size>  Size of message to exchange (default 2)"},
	{all, "  -S, --sl=<sl>  SL (default 0)"},
	{sBW | wBW | rBW, "  -t, --tx-depth=<dep>  Size of tx queue (default 128)"},
	{all, "  -T, --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag. values 0-256 (default off)"},
	{all, "  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout), default 14"},
	{sLat | wLat | rLat, "  -U, --report-unsorted  (implies -H) print out unsorted results (default sorted)"},
	{all, "  -V, --version  Display version number"},
	{sBW | wBW | rBW, "  -w, --limit_bw=<value>  Set verifier limit for bandwidth"},
	{all, "  -W, --report-counters=<list of counter names>  Report performance counter change (example: \"counters/port_xmit_data,hw_counters/out_of_buffer\")"},
	{all, "  -x, --gid-index=<index>  Test uses GID with GID index (Default : IB - no gid . ETH - 0)"},
	{sBW | wBW | rBW, "  -y, --limit_msgrate=<value>  Set verifier limit for Msg Rate"},
	{all, "  -z, --com_rdma_cm  Communicate with rdma_cm module to exchange data - use regular QPs"},
	{all, ""},
	{all, "      --out_json  Save the report in a json file"},
	{all, "      --out_json_file=<file>  Name of the report json file. (Default: perftest_out.json in the working directory) "},
	{all, "      --cpu_util  Show CPU Utilization in report, valid only in Duration mode "},
	{all, "      --dlid  Set a Destination LID instead of getting it from the other side."},
	{all, "      --dont_xchg_versions  Do not exchange versions and MTU with other side "},
	{all, "      --force-link=<value>  Force the link(s) to a specific type: IB or Ethernet."},
	{sBW | rBW | sLat | rLat, "      --inline_recv=<size>  Max size of message to be sent in inline receive"},
	{sBW | sLat, "      --use-srq  Use a Shared Receive Queue. --rx-depth controls max-wr size of the SRQ "},
	{all, "      --ipv6  Use IPv6 GID. Default is IPv4"},
	{all, "      --source_ip  Source IP of the interface used for connection establishment. By default taken from routing table."},
	{sLat | wLat | rLat, "      --latency_gap=<delay_time>  delay time between each post send"},
	{all, "      --mmap=file  Use an mmap'd file as the buffer for testing P2P transfers."},
	{all, "      --mmap-offset=<offset>  Use an mmap'd file as the buffer for testing P2P transfers."},
	{sBW | wBW | rBW, "      --mr_per_qp  Create memory region for each qp."},
	{all, "      --odp  Use On Demand Paging instead of Memory Registration."},
	{all, "      --output=<units> Set verbosity output level: bandwidth , message_rate, latency "},
	{all, " Latency measurement is Average calculation "},
	{all, "      --use_old_post_send Use old post send flow (ibv_post_send)."},
	{all, "      --perform_warm_up Perform some iterations before start measuring in order to warming-up memory cache, valid in Atomic, Read and Write BW tests"},
	{all, "      --pkey_index=<pkey index> PKey index to use for QP"},
	{sBW | wBW | rBW, "      --report-both  Report RX & TX results separately on Bidirectional BW tests"},
	{sBW | wBW | rBW, "      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)"},
	{sBW | wBW | rBW, "        Note: MiB=2^20 byte, while Gb=10^9 bits. Use these formulas for conversion:"},
	{sBW | wBW | rBW, "        Factor=10^9/(2^20*8)=119.2; MiB=Gb_result * factor; Gb=MiB_result / factor"},
	{sBW | wBW | rBW, "      --report-per-port  Report BW data on both ports when running Dualport and Duration mode"},
	{sBW | wBW | rBW, "      --reversed  Reverse traffic direction - Server send to client"},
	{sBW | wBW | rBW, "      --run_infinitely  Run test forever, print results every <duration> seconds"},
	{all, "      --retry_count=<value>  Set retry count value in rdma_cm mode"},
	{all, "      --tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)"},
	{all, "      --use_hugepages  Use Hugepages instead of contig, memalign allocations."},
	{sBW | wBW | rBW, "      --wait_destroy=<seconds>  Wait <seconds> before destroying allocated resources (QP/CQ/PD/MR..)"},
	{sBW | wBW | rBW, "      --disable_pcie_relaxed Disable PCIe relaxed ordering"},
	{sBW | wBW | rBW, ""},
	{sBW | wBW | rBW, " Rate Limiter:"},
	{sBW | wBW | rBW, "      --burst_size=<size> Set the amount of messages to send in a burst when using rate limiter"},
	{sBW | wBW | rBW, "      --typical_pkt_size=<bytes> Set the size of packet to send in a burst. Only supports PP rate limiter"},
	{sBW | wBW | rBW, "      --rate_limit=<rate> Set the maximum rate of sent packages. default unit is [Gbps]. use --rate_units to change that."},
	{sBW | wBW | rBW, "      --rate_units=<units> [Mgp] Set the units for rate limit to MiBps (M), Gbps (g) or pps (p). default is Gbps (g)."},
	{sBW | wBW | rBW, "        Note (1): pps not supported with HW limit."},
	{sBW | wBW | rBW, "        Note (2): When using PP rate_units is forced to Kbps."},
	{sBW | wBW | rBW, "      --rate_limit_type=<type> [HW/SW/PP] Limit the QP's by HW, PP or by SW. Disabled by default. When rate_limit is not specified HW limit is Default."},
	{sBW | wBW | rBW, "        Note: in Latency under load test SW rate limit is forced"},
	{all, ""},
	{all, ""},
}

// usageText is the help text for c's program.
func usageText(c *Config) string {
	var sel []string
	bit := c.progMask()
	for _, l := range usageLines {
		if l.progs&bit != 0 {
			sel = append(sel, strings.ReplaceAll(l.text, "%PROG%", c.Prog))
		}
	}
	return strings.Join(sel, "\n")
}
