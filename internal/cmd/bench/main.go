// Command bench runs the kopfexamples workload against kopf-wasm and, side
// by side in the same run on the same control plane, a hand-written
// controller-runtime controller doing the same work (the native bound).
//
//	go run ./internal/cmd/bench -n 2000
//
// It starts one local control plane (internal/testenv) with the API
// server's audit log on, installs examples/crd.yaml, and then for each
// contender, in a fresh namespace of its own:
//
//  1. starts the operator as a separate process and waits until it has
//     handled a canary object (created, then deleted);
//  2. creates N KopfExample objects and waits until every one shows
//     status.create_fn.message;
//  3. patches spec.field of each and waits until every one shows
//     status.update_fn.message;
//  4. deletes each and waits until all are gone;
//  5. stops the operator.
//
// It reports each phase's wall time, the operator's API write requests per
// handled change (3N changes) counted from the audit log (every write in
// the namespace from the start of phase 2 on that did not come from the
// benchmark's own client), the operator's CPU time per change during the
// phases, and its peak RSS over its whole life.
//
// The kopf-wasm contender is host/internal/cmd/benchoperator (the reactor
// with the kopfexample module and settings.Default()), built by this
// command. The native contender is this binary itself, re-executed with the
// hidden subcommand "operator" (see native.go).
//
// Two more contenders run Python (kopf.go): "kopf-wasm-python" is
// benchoperator with the Python kopfexample module (examples/python/
// kopfexample, built with `kopf-wasm build`; -python-wasm for a prebuilt
// one), and "kopf" is Kopf 1.44.6 itself running that module's very file
// with Debian's python3 and packages, from a source extract (-kopf-source)
// the benchmark patches for Debian's click and aiohttp:
//
//	go run ./internal/cmd/bench -n 2000 -rounds 3 -contenders kopf-wasm,kopf-wasm-python,kopf
//
// With -scenario coldstart,steady it measures scale instead of the phases
// (coldstart.go, steady.go): for each contender, N objects created and
// handled, the operator restarted on them (time until ready and until
// every object was looked at, writes, peak RSS), then -rate changes per
// second for -duration and the latency from each change to its result:
//
//	go run ./internal/cmd/bench -scenario coldstart,steady -n 10000 -rate 50 -duration 5m
//
// The subcommand "spawning" measures timers and daemons instead (timer
// lateness with many 1 s timers, memory per running daemon; see
// spawning.go):
//
//	go run ./internal/cmd/bench spawning -timers 1000 -daemons 100
//
// The subcommand "sharding" runs the workload on 1, 2, 3 replicas sharing
// the objects (sharding.go):
//
//	go run ./internal/cmd/bench sharding -n 1000 -replicas 1,2,3
//
// The subcommand "metrics-cost" runs kopf-wasm with metrics (scraped every
// 5 s) and without side by side and reports the ratio of their CPU per
// change, per round and its spread (metricscost.go):
//
//	go run ./internal/cmd/bench metrics-cost -n 2000 -rounds 6
//
// The subcommand "density" runs many different generated operators on
// one control plane: in one kopf-wasm host, and one process each with
// controller-runtime and with Kopf (density.go):
//
//	go run ./internal/cmd/bench density -operators 20 -objects 100 -start-modules 100
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if len(os.Args) > 1 && os.Args[1] == operatorCommand {
		err = runOperator(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else if len(os.Args) > 1 && os.Args[1] == spawningCommand {
		err = runSpawning(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else if len(os.Args) > 1 && os.Args[1] == shardingCommand {
		err = runSharding(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else if len(os.Args) > 1 && os.Args[1] == densityCommand {
		err = runDensity(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else if len(os.Args) > 1 && os.Args[1] == metricsCostCommand {
		err = runMetricsCost(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else {
		err = runBench(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
