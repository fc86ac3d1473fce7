package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution/recording"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// ErrBadInput is wrapped by the errors of [Replay] about its input: a
// recording that cannot be read or holds no call of the module, a module
// that cannot be loaded.
var ErrBadInput = errors.New("bad input")

// ReplayCall is one replay of a recording against a module file.
type ReplayCall struct {
	// Recording is the recording's file (settings' recording.path).
	Recording string
	// Module is the .wasm file to replay against: its calls are the
	// recorded calls of the module of its name.
	Module string
	// Settings and Logger are required.
	Settings *settings.Settings
	Logger   *slog.Logger
}

// ReplayReport is what a replay found.
type ReplayReport struct {
	// Module is the replayed module's name, Digest its code's digest.
	Module string `json:"module"`
	Digest string `json:"digest"`
	// Calls are the replayed calls in the recording's order.
	Calls []ReplayedCall `json:"calls"`
	// Skipped counts the recorded calls of other modules.
	Skipped int `json:"skipped,omitempty"`
}

// Changed counts the calls whose outcome, result or patch differ, or that
// made a host call the recording does not hold.
func (r ReplayReport) Changed() int {
	n := 0
	for _, c := range r.Calls {
		if len(c.Changes) > 0 || len(c.Unrecorded) > 0 {
			n++
		}
	}
	return n
}

// ReplayedCall is one recorded call replayed.
type ReplayedCall struct {
	// Line is the record's line in the recording (from 1).
	Line int `json:"line"`
	// Call names the call: handler, kind and object.
	Call string `json:"call"`
	// Changes are what differs, in the order outcome, result, patch.
	Changes []Change `json:"changes,omitempty"`
	// Unrecorded lists host calls the module made that the recording does
	// not hold (they were answered with an error).
	Unrecorded []string `json:"unrecorded,omitempty"`
}

// Change is one difference of a replayed call: What ("outcome", "result",
// "patch", "json patch", "error"), as recorded and as replayed.
type Change struct {
	What     string `json:"what"`
	Recorded string `json:"recorded"`
	Replayed string `json:"replayed"`
}

// Replay calls the module with each recorded request of its name, answers
// its host calls from the record (see recording.Replayer), and compares
// its outcome, result and patch with the recorded ones.
func Replay(ctx context.Context, rc ReplayCall) (ReplayReport, error) {
	recs, err := readRecording(rc.Recording)
	if err != nil {
		return ReplayReport{}, err
	}
	rt, err := modules.NewRuntime(rc.Settings.Wasm, rc.Logger)
	if err != nil {
		return ReplayReport{}, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := modules.Load(ctx, rt, rc.Module)
	if err != nil {
		return ReplayReport{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	rep := ReplayReport{Module: mod.Manifest().Module.Name, Digest: mod.Digest()}
	exec := execution.New(execution.Options{Settings: *rc.Settings, Logger: rc.Logger})
	var names []string
	for i, rec := range recs {
		if rec.Module != rep.Module {
			rep.Skipped++
			names = append(names, rec.Module)
			continue
		}
		call, err := replayOne(ctx, exec, mod, rec)
		if err != nil {
			return rep, err
		}
		call.Line = i + 1
		rep.Calls = append(rep.Calls, call)
	}
	if len(rep.Calls) == 0 {
		sort.Strings(names)
		return rep, fmt.Errorf("%w: %s has no calls of module %s (it has calls of: %s)", ErrBadInput, rc.Recording, rep.Module,
			strings.Join(slices.Compact(names), ", "))
	}
	return rep, nil
}

// readRecording reads the recording's file.
func readRecording(path string) ([]recording.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	defer func() { _ = f.Close() }()
	recs, err := recording.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadInput, path, err)
	}
	return recs, nil
}

// replayOne calls the module with one recorded request and compares.
func replayOne(ctx context.Context, exec *execution.Executor, mod execution.Module, rec recording.Record) (ReplayedCall, error) {
	host := recording.NewReplayer(rec.HostCalls)
	resp, callErr := exec.Replay(ctx, mod, rec.Request, host)
	if callErr != nil && ctx.Err() != nil {
		return ReplayedCall{}, ctx.Err()
	}
	now := recording.Record{}
	if callErr != nil {
		now.Error = callErr.Error()
	} else {
		out := resp.Outcome
		now.Outcome, now.Result, now.Patch = &out, resp.Result, resp.Patch
	}
	recording.RedactRecord(&now) // compared as recorded
	return ReplayedCall{Call: callName(rec.Request), Changes: compare(rec, now), Unrecorded: host.Missed()}, nil
}

// callName names a recorded call: "create_fn (create) kopfexamples ns/name".
func callName(req *abi.Request) string {
	s := req.Handler
	if req.Kind != "" {
		s += " (" + string(req.Kind) + ")"
	}
	if req.Resource != nil {
		s += " " + req.Resource.Plural
	}
	if obj := strings.Trim(req.Namespace+"/"+req.Name, "/"); obj != "" {
		s += " " + obj
	}
	return s
}

// compare lists what differs between a recorded call and its replay.
func compare(was, now recording.Record) []Change {
	var out []Change
	add := func(what, a, b string) {
		if a != b {
			out = append(out, Change{What: what, Recorded: orNone(a), Replayed: orNone(b)})
		}
	}
	add("error", was.Error, now.Error)
	add("outcome", outcomeText(was.Outcome), outcomeText(now.Outcome))
	add("result", objects.CanonicalJSON(was.Result), objects.CanonicalJSON(now.Result))
	var wm, nm json.RawMessage
	var wj, nj []abi.JSONPatchOp
	if was.Patch != nil {
		wm, wj = was.Patch.Merge, was.Patch.JSON
	}
	if now.Patch != nil {
		nm, nj = now.Patch.Merge, now.Patch.JSON
	}
	add("patch", objects.CanonicalJSON(wm), objects.CanonicalJSON(nm))
	if !reflect.DeepEqual(canonicalOps(wj), canonicalOps(nj)) {
		a, _ := json.Marshal(wj)
		b, _ := json.Marshal(nj)
		out = append(out, Change{What: "json patch", Recorded: orNone(opsText(wj, a)), Replayed: orNone(opsText(nj, b))})
	}
	return out
}

// outcomeText is an outcome on one line: "temporary: message (retry in 5s)".
func outcomeText(o *abi.Outcome) string {
	if o == nil {
		return ""
	}
	s := string(o.Status)
	if o.Message != "" {
		s += ": " + o.Message
	}
	if o.Delay != nil {
		s += fmt.Sprintf(" (retry in %gs)", *o.Delay)
	}
	return s
}

// canonicalOps are JSON patch operations with their values as JSON values.
func canonicalOps(ops []abi.JSONPatchOp) []string {
	var out []string
	for _, op := range ops {
		raw, _ := json.Marshal(op)
		out = append(out, objects.CanonicalJSON(raw))
	}
	return out
}

func opsText(ops []abi.JSONPatchOp, raw []byte) string {
	if len(ops) == 0 {
		return ""
	}
	return string(raw)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
