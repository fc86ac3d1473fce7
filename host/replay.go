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

// Rendering is one render for [Render].
type Rendering struct {
	// Module is the .wasm file.
	Module string
	// Objects are the objects to render, as JSON.
	Objects [][]byte
	// Stored are objects (Lists are expanded) from which the module's
	// Kubernetes requests are served, as for [Invocation.Objects]; writes
	// change them in memory only.
	Stored []map[string]any
	// Settings supply the wasm limits; Settings.Recording.Path, when set,
	// records the calls, a baseline for [Replay]. Default
	// settings.Default().
	Settings *settings.Settings
	// Logger receives the module's log records. Default slog.Default().
	Logger *slog.Logger
}

// Rendered is what a module would do to one object: its due handlers'
// calls.
type Rendered = offline.Rendered

// RenderedCall is one handler call of a render: its response, or the
// call's failure.
type RenderedCall = offline.RenderedCall

// Render calls, for each object, the handlers the operator would call on
// first seeing it (the create cause: create and field handlers whose
// filters match), offline, with no cluster, and returns their responses:
// outcomes, results and patches. Nothing is written anywhere.
func Render(ctx context.Context, r Rendering) ([]Rendered, error) {
	if r.Settings == nil {
		s := settings.Default()
		r.Settings = &s
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return offline.Render(ctx, offline.RenderCall{Module: r.Module, Objects: r.Objects, Stored: r.Stored, Settings: r.Settings, Logger: r.Logger})
}
