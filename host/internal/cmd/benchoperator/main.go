// Command benchoperator is the kopf-wasm contender of the kopfexamples
// benchmark (internal/cmd/bench): it runs the reactor with one wasm module,
// settings.Default() and one watched namespace, in a process of its own so
// that the benchmark can measure its CPU time and peak RSS.
//
// It lives under host/ because the reactor is internal to host; the
// benchmark builds and starts it. It prints "ready" on stdout once the
// reactor runs, and stops on SIGINT or SIGTERM. It is a stand-in for
// `kopf-wasm run` until that command exists.
//
//	benchoperator -kubeconfig KUBECONFIG -namespace NS -wasm kopfexample.wasm
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchoperator:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	kubeconfig, namespace, wasm string
	userAgent, cpuProfile       string
	logLevel                    slog.Level
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("benchoperator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (required)")
	fs.StringVar(&o.namespace, "namespace", "", "the one namespace to serve (required)")
	fs.StringVar(&o.wasm, "wasm", "", "the module to load (required)")
	fs.StringVar(&o.userAgent, "user-agent", "kopf-wasm", "the HTTP user agent of the Kubernetes client")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file, from SIGUSR1 on")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.kubeconfig == "" || o.namespace == "" || o.wasm == "" {
		return o, errors.New("-kubeconfig, -namespace and -wasm are required")
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("-log-level: %w", err)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stopProfile, err := profileOnSignal(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	slog.SetDefault(log)

	set := settings.Default()
	cfg, err := kube.LoadConfig(o.kubeconfig, "")
	if err != nil {
		return err
	}
	kc, err := kube.New(cfg, kube.Options{
		QPS: set.Kube.QPS, Burst: set.Kube.Burst, RequestTimeout: set.Kube.RequestTimeout,
		Backoffs: set.Kube.ErrorBackoffs, UserAgent: o.userAgent, Logger: log,
	})
	if err != nil {
		return err
	}
	rt, err := wasmrt.New(wasmrt.Options{
		Timeout: set.Wasm.CallTimeout, MemoryLimitPages: set.Wasm.MaxMemoryPages,
		MaxOutputBytes: set.Wasm.MaxOutputBytes, PoolSize: set.Wasm.PoolSize, Logger: log,
	})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	wasm, err := os.ReadFile(o.wasm)
	if err != nil {
		return fmt.Errorf("reading the module: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(o.wasm), ".wasm")
	mod, err := rt.Load(ctx, name, wasm)
	if err != nil {
		return err
	}
	namespaces, err := kube.ParseNamespaces(o.namespace)
	if err != nil {
		return err
	}
	op, err := reactor.New(ctx, reactor.Options{
		Kube: kc, Modules: []*wasmrt.Module{mod}, Namespaces: namespaces, Settings: set, Logger: log,
	})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	fmt.Fprintln(stdout, "ready")
	err = <-done
	st := op.Stats().Kube
	log.Info("client requests", "reads", st.Reads, "writes", st.Writes, "patches", st.Patches,
		"updates", st.Updates, "creates", st.Creates, "deletes", st.Deletes)
	return err
}

// profileOnSignal writes a CPU profile to path from the first SIGUSR1 on
// (the benchmark sends it when its phases begin, so that start-up is left
// out) until the returned function is called.
func profileOnSignal(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", "cpu profile", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	started := make(chan bool, 1)
	go func() {
		<-sig
		started <- pprof.StartCPUProfile(f) == nil
	}()
	return func() {
		signal.Stop(sig)
		select {
		case sig <- syscall.SIGUSR1: // not started yet: nothing to stop
		default:
		}
		if <-started {
			pprof.StopCPUProfile()
		}
		_ = f.Close()
	}, nil
}
