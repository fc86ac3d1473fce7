package option

import (
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/logs"
)

// Logging holds Kopf's logging flags.
type Logging struct {
	// Verbose (-v) and Debug (-d) log at debug level; Quiet (-q) only
	// warnings and errors. Without them the level is info.
	Verbose, Debug, Quiet bool
	// LogFormat is plain, full (the default), json, or Kopf's own layouts
	// kopf, kopf-plain and kopf-json (see package logs).
	LogFormat string
}

// ApplyFlags declares -v/--verbose, -d/--debug, -q/--quiet and --log-format.
func (o *Logging) ApplyFlags(fs *pflag.FlagSet) {
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "log at debug level")
	fs.BoolVarP(&o.Debug, "debug", "d", false, "log at debug level (the same as -v here)")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "log warnings and errors only")
	fs.StringVar(&o.LogFormat, "log-format", "full", "log format: "+strings.Join(logs.Formats, ", ")+
		" (kopf, kopf-plain and kopf-json are Kopf's own full, plain and json layouts)")
}

// Level is the level the flags ask for.
func (o *Logging) Level() slog.Level {
	switch {
	case o.Verbose || o.Debug:
		return slog.LevelDebug
	case o.Quiet:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// Logger builds the logger the flags ask for, writing to w.
func (o *Logging) Logger(w io.Writer) (*slog.Logger, error) {
	if o.Quiet && (o.Verbose || o.Debug) {
		return nil, clierr.Usagef(errors.New("-q/--quiet excludes -v/--verbose and -d/--debug"), "pass one of them")
	}
	format := o.LogFormat
	if format == "" {
		format = "full"
	}
	h, err := logs.NewHandler(w, format, o.Level())
	if err != nil {
		return nil, clierr.Usagef(err, "")
	}
	return slog.New(h), nil
}
