package host

import (
	"context"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/internal/offline"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// ErrBadInput is wrapped by the errors of [Replay] about its input: a
// recording that cannot be read or holds no call of the module, a module
// that cannot be loaded.
var ErrBadInput = offline.ErrBadInput

// Replaying is one replay for [Replay].
type Replaying struct {
	// Recording is a file the host wrote with settings' recording.path.
	Recording string
	// Module is the .wasm file to replay against: the recorded calls of
	// the module of its name are replayed.
	Module string
	// Settings supply the wasm limits. Default settings.Default().
	Settings *settings.Settings
	// Logger receives the module's log records. Default slog.Default().
	Logger *slog.Logger
}

// ReplayReport is what [Replay] found: the replayed calls and their
// changes.
type ReplayReport = offline.ReplayReport

// ReplayedCall is one recorded call replayed, with its changes.
type ReplayedCall = offline.ReplayedCall

// Change is one difference of a replayed call from its record.
type Change = offline.Change

// Replay runs a recording against a module offline, with no cluster: each
// recorded request of the module's name is sent to it again, its host
// calls are answered from the record (a call the record does not hold
// answers a 501 error that says so; daemons are told to stop), and its
// outcome, result and patch are compared with the recorded ones.
func Replay(ctx context.Context, r Replaying) (ReplayReport, error) {
	if r.Settings == nil {
		s := settings.Default()
		r.Settings = &s
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return offline.Replay(ctx, offline.ReplayCall{Recording: r.Recording, Module: r.Module, Settings: r.Settings, Logger: r.Logger})
}
