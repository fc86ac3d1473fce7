package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// ExampleRun embeds the host in a Go program: it serves a module built by
// `make wasm` in the namespace "default" of a cluster, with metrics and
// health probes, until its context ends. Pointed at a cluster by
// $KOPF_WASM_EXAMPLE_KUBECONFIG it runs for a few seconds there; without
// one it only says what it would print.
func ExampleRun() {
	kubeconfig := os.Getenv("KOPF_WASM_EXAMPLE_KUBECONFIG")
	module := filepath.Join("..", "bin", "wasm", "kopfexample.wasm")
	if _, err := os.Stat(module); kubeconfig == "" || err != nil {
		fmt.Println("served until the context ended") // no cluster or no module here: nothing to serve
		return
	}

	// An operator would stop on a signal:
	// ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()

	s := settings.Default()
	s.Peering.Standalone = true // one host: no peering objects needed
	err := host.Run(ctx, host.Options{
		Modules:    []string{module},
		Kubeconfig: kubeconfig, // or RestConfig: a *rest.Config of the program's own
		Namespaces: []string{"default"},
		Settings:   &s,
		Metrics:    host.MetricsOptions{BindAddress: "127.0.0.1:0"},
		Health:     host.HealthOptions{ProbeBindAddress: "127.0.0.1:0"},
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Println("run:", err)
		return
	}
	fmt.Println("served until the context ended")
	// Output: served until the context ended
}
