// Command kopf-wasm runs Kubernetes operators whose handlers are
// WebAssembly modules, with Kopf's programming model. The command line
// lives in internal/app; this file only connects it to the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	os.Exit(app.Run(ctx, app.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args[1:]))
}
