package app

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const replayLong = `Run a recording of handler calls against a module offline, with no cluster,
and print what changed: the outcome, the result (what the host stores under
status.<handler-id>) and the patch of each call whose replay differs from
its record, then a summary line.

The host writes a recording when its settings name one (recording.path,
bounded by recording.maxBytes; Secrets' data and stringData are redacted):
one JSON line per handler call with the request, the module's response and
the answers to its host calls. replay sends each recorded request of the
module's name (the manifest's, as kopf-wasm inspect shows it) to the given
module again, answers its Kubernetes requests, Events and index look-ups
from the record (a call the record does not hold answers a 501 error that
says so, and is listed), and tells daemons and timers to stop at their
first sleep.

The exit code is 0 when every replayed call matches its record, 1 when any
differs, 2 when the input is bad (no such recording, a line that is not a
recorded call, no call of the module, a file that is not a module).

Example - Record a run, then replay it against a new build of the module:
  kopf-wasm run handlers.wasm --config recording.yaml   # recording: {path: calls.jsonl}
  kopf-wasm replay calls.jsonl --module new/handlers.wasm

Example - The differences as JSON, for a CI job:
  kopf-wasm replay calls.jsonl --module new/handlers.wasm -o json`

type replayOptions struct {
	option.Output
	module string
}

func replayCmd(g *globals) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay RECORDING --module FILE",
		Short: "Replay recorded handler calls against a module and print what changed",
		Long:  replayLong,
		Args:  args(1, 1, "RECORDING (a file the host recorded with recording.path)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if o.module == "" {
				return clierr.Usagef(errors.New("replay: no module given"), "pass --module FILE (a .wasm file)")
			}
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			rep, err := host.Replay(cmd.Context(), host.Replaying{Recording: a[0], Module: o.module, Settings: offlineSettings(), Logger: log})
			switch {
			case errors.Is(err, host.ErrBadInput):
				return clierr.Usagef(err, "")
			case err != nil:
				return err
			}
			if o.Format == "json" {
				err = writeJSON(g.streams.Out, rep)
			} else {
				err = writeReplay(g.streams.Out, a[0], rep)
			}
			if err != nil {
				return err
			}
			if n := rep.Changed(); n > 0 {
				return clierr.New(fmt.Errorf("replay: %d of %s changed", n, callCount(len(rep.Calls))), "")
			}
			return nil
		},
	}
	o.Output.ApplyFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.module, "module", "", "the module to replay the recording against (a .wasm file)")
	return cmd
}

// writeReplay prints one block per changed call and a summary line.
func writeReplay(w io.Writer, path string, rep host.ReplayReport) error {
	fmt.Fprintf(w, "Replaying %s against module %s (%s)\n", path, rep.Module, rep.Digest)
	for _, c := range rep.Calls {
		if len(c.Changes) == 0 && len(c.Unrecorded) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nLine %d: %s\n", c.Line, c.Call)
		for _, ch := range c.Changes {
			fmt.Fprintf(w, "  %s:\n    recorded: %s\n    replayed: %s\n", ch.What, ch.Recorded, ch.Replayed)
		}
		for _, u := range c.Unrecorded {
			fmt.Fprintf(w, "  not in the recording (answered with an error): %s\n", u)
		}
	}
	changed := rep.Changed()
	line := fmt.Sprintf("\n%s replayed: %d changed, %d unchanged", callCount(len(rep.Calls)), changed, len(rep.Calls)-changed)
	if rep.Skipped > 0 {
		line += fmt.Sprintf(" (%s of other modules skipped)", callCount(rep.Skipped))
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// callCount is "1 call" or "n calls".
func callCount(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}
