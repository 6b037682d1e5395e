package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/rdmastack/rdmastack/exporter/collector"
)

// serve runs the exporter until ctx ends or the server fails.
func serve(ctx context.Context, cfg *config, stderr io.Writer) error {
	hopts := &slog.HandlerOptions{Level: cfg.logLevel}
	var h slog.Handler = slog.NewTextHandler(stderr, hopts)
	if cfg.logJSON {
		h = slog.NewJSONHandler(stderr, hopts)
	}
	log := slog.New(h)
	if cfg.webConfig != "" {
		if err := web.Validate(cfg.webConfig); err != nil {
			return fmt.Errorf("--web.config.file %s: %v", cfg.webConfig, err)
		}
	}
	c, err := collector.New(collector.Options{
		SysfsRoot: cfg.sysfs, OptionalCounters: cfg.optional, QPCounters: cfg.qpCounters,
		NoVerbs: cfg.noVerbs, NodeExporter: cfg.nodeExporter, Logger: log,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if cfg.goMetrics {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	mux := http.NewServeMux()
	mux.Handle(cfg.metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(h, slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	if cfg.metricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "RDMA Exporter",
			Description: "Prometheus exporter for RDMA devices, ports, hardware counters and resources",
			Version:     version,
			Links:       []web.LandingLinks{{Address: cfg.metricsPath, Text: "Metrics"}},
		})
		if err != nil {
			return err
		}
		mux.Handle("/", landing)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	flags := &web.FlagConfig{WebListenAddresses: &cfg.listen, WebSystemdSocket: &cfg.systemd, WebConfigFile: &cfg.webConfig}
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, flags, log) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-errc; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return err
	}
}
