package kube

import (
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Options tune a [Client]. The zero value is usable: it takes
// settings.Default().
type Options struct {
	// Settings are the host's settings; the client reads their Kube,
	// Watching and Posting groups (and copies them: later changes do not
	// reach it). Nil means settings.Default(), the one place the defaults
	// are written.
	Settings *settings.Settings

	// Logger receives warnings (watch errors, failed Events, retries).
	// Default slog.Default().
	Logger *slog.Logger
}

// clusterEventNamespace is where Events about cluster-scoped objects go, as
// Kopf does.
const clusterEventNamespace = "default"

// withDefaults returns o with every unset field set to its default, and its
// own copy of the settings.
func (o Options) withDefaults() Options {
	var s settings.Settings
	if o.Settings != nil {
		s = *o.Settings
	} else {
		s = settings.Default()
	}
	o.Settings = &s
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
