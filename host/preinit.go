package host

import (
	"context"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Mount is a folder of the host that [Preinitialize] lets the module read,
// read-only, at the path Guest.
type Mount struct {
	// Host is the folder on this machine; Guest the path the module
	// reads it at.
	Host, Guest string
}

// Preinitialization is one run of a module's initialisation for
// [Preinitialize].
type Preinitialization struct {
	// Module is the module's bytes.
	Module []byte
	// Export is the entry point that initialises it (after WASI's
	// _initialize), and Input its input.
	Export string
	Input  []byte
	// Mounts are the folders the initialisation reads; the module that
	// results has none.
	Mounts []Mount
	// Settings supply the memory limit (nil: settings.Default()).
	Settings *settings.Settings
	// Logger receives the module's log records (nil: discarded).
	Logger *slog.Logger
}

// Preinitialize runs a module's initialisation once and returns a module
// that starts where it ended, with its memory and globals as they were
// then: `kopf-wasm build` makes Python modules this way, so that an
// instance starts with CPython running and the author's handlers
// registered, in the time it takes to copy its memory. The error is one
// line: the module's own (a Python traceback's last line, say) or why the
// module cannot be snapshotted.
func Preinitialize(ctx context.Context, p Preinitialization) ([]byte, error) {
	s := p.Settings
	if s == nil {
		d := settings.Default()
		s = &d
	}
	log := p.Logger
	if log == nil {
		log = discardLogger
	}
	rt, err := modules.NewRuntime(s.Wasm, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mounts := make([]wasmrt.Mount, len(p.Mounts))
	for i, m := range p.Mounts {
		mounts[i] = wasmrt.Mount(m)
	}
	return rt.Preinitialize(ctx, p.Module, wasmrt.PreinitOptions{Export: p.Export, Input: p.Input, Mounts: mounts})
}
