package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// version is the exporter's version, set at link time
// (-ldflags "-X main.version=...").
var version = "devel"

// config is what the flags say.
type config struct {
	listen       []string
	webConfig    string
	systemd      bool
	metricsPath  string
	sysfs        string
	optional     []string
	qpCounters   bool
	noVerbs      bool
	nodeExporter bool
	logLevel     slog.Level
	logJSON      bool
	goMetrics    bool
}

// listFlag is a flag that may be given more than once.
type listFlag struct {
	vals *[]string
	set  bool
}

func (l *listFlag) String() string {
	if l.vals == nil {
		return ""
	}
	return strings.Join(*l.vals, ",")
}

func (l *listFlag) Set(s string) error {
	if !l.set {
		*l.vals, l.set = nil, true
	}
	*l.vals = append(*l.vals, s)
	return nil
}

// parseFlags parses the command line; a nil config with no error means
// the help or the version was printed.
func parseFlags(args []string, stdout io.Writer) (*config, error) {
	cfg := &config{listen: []string{":9315"}}
	fs := flag.NewFlagSet("rdma_exporter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&listFlag{vals: &cfg.listen}, "web.listen-address", "address to listen on for the web interface and telemetry; repeatable (default :9315)")
	fs.StringVar(&cfg.webConfig, "web.config.file", "", "exporter-toolkit web configuration file: TLS and basic authentication")
	fs.BoolVar(&cfg.systemd, "web.systemd-socket", false, "use systemd socket activation listeners instead of port listeners")
	fs.StringVar(&cfg.metricsPath, "web.telemetry-path", "/metrics", "path under which to expose metrics")
	fs.StringVar(&cfg.sysfs, "path.sysfs", "/sys", "sysfs mountpoint")
	optional := fs.String("collector.optional", "", "optional hardware counters to enable on every port that has them, comma-separated (needs CAP_NET_ADMIN)")
	fs.BoolVar(&cfg.qpCounters, "collector.qp-counters", false, "put every port in QP counter auto mode (by QP type) and export the QP counters; changes kernel state, undone at exit (needs CAP_NET_ADMIN)")
	noVerbs := fs.Bool("no-collector.verbs", false, "do not open the devices' verbs interface (the ports' MTUs are then not exported)")
	fs.BoolVar(&cfg.nodeExporter, "compat.node-exporter", false, "also export node_exporter's node_infiniband_* metrics")
	fs.BoolVar(&cfg.goMetrics, "web.exporter-metrics", true, "also export the exporter's own Go runtime and process metrics")
	level := fs.String("log.level", "info", "only log messages with the given severity or above: debug, info, warn, error")
	format := fs.String("log.format", "logfmt", "output format of log messages: logfmt or json")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "usage: rdma_exporter [flags]")
			fs.PrintDefaults()
			return nil, nil
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *showVersion {
		fmt.Fprintf(stdout, "rdma_exporter, version %s\n", version)
		return nil, nil
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return nil, fmt.Errorf("--log.level: unknown level %q (debug, info, warn, error)", *level)
	}
	switch *format {
	case "logfmt":
	case "json":
		cfg.logJSON = true
	default:
		return nil, fmt.Errorf("--log.format: unknown format %q (logfmt, json)", *format)
	}
	for _, n := range strings.Split(*optional, ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.optional = append(cfg.optional, n)
		}
	}
	cfg.noVerbs = *noVerbs
	if !strings.HasPrefix(cfg.metricsPath, "/") {
		return nil, fmt.Errorf("--web.telemetry-path: %q does not start with /", cfg.metricsPath)
	}
	if len(cfg.listen) == 0 && !cfg.systemd {
		return nil, errors.New("--web.listen-address: no address")
	}
	return cfg, nil
}
