// Package recording is the record of handler calls the host can keep for
// `kopf-wasm replay` (issue 33, item 4): the format (one JSON line per call,
// [Record]), the [Recorder] that appends records to a file up to a bound,
// the [Host] wrapper that notes a call's host calls with their answers,
// [Redact] that blanks Secrets' data before anything is written, and
// [Replayer], the host of a replayed call, which answers from a record.
// The execution layer records (execution.Executor.Call); the offline
// package replays. It calls abi and wasmrt only.
package recording

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Record is one handler call: what the module was sent, what it answered
// and the host calls it made. One JSON line in a recording.
type Record struct {
	// Module is the module's name; Digest the sha256 of its code.
	Module string `json:"module"`
	Digest string `json:"digest,omitempty"`
	// Request is what the handler was called with (Secrets redacted).
	Request *abi.Request `json:"request"`
	// Outcome, Result and Patch are the module's response; Error, instead,
	// the call's own failure (a trap, a timeout, bad output).
	Outcome *abi.Outcome    `json:"outcome,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Patch   *abi.Patch      `json:"patch,omitempty"`
	Error   string          `json:"error,omitempty"`
	// HostCalls are the module's host calls in the order it made them.
	HostCalls []HostCall `json:"hostCalls,omitempty"`
}

// HostCall is one host call of a module and its answer: exactly one of
// Kube, Event and Index is set, with its answer beside it.
type HostCall struct {
	Kube        *abi.KubeRequest         `json:"kube,omitempty"`
	KubeAnswer  *abi.KubeResponse        `json:"kubeAnswer,omitempty"`
	Event       *abi.EventRequest        `json:"event,omitempty"`
	EventError  string                   `json:"eventError,omitempty"`
	Index       *abi.IndexLookupRequest  `json:"index,omitempty"`
	IndexAnswer *abi.IndexLookupResponse `json:"indexAnswer,omitempty"`
}

// Read reads a recording: one [Record] a line. The error names the line
// that is not one.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	var out []Record
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d is not a recorded call: %w", n, err)
		}
		if rec.Request == nil {
			return nil, fmt.Errorf("line %d is not a recorded call: it has no request", n)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the recording: %w", err)
	}
	return out, nil
}
