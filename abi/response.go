package abi

import "encoding/json"

// Response is the output of [ExportHandle].
type Response struct {
	Outcome Outcome `json:"outcome"`
	// Result is stored under status.<handler id>: an object is merged into
	// it, anything else replaces it; absent or null writes nothing.
	Result json.RawMessage `json:"result,omitempty"`
	// Patch is applied to the object with the cycle's other changes.
	Patch *Patch `json:"patch,omitempty"`
	// Memo replaces the memo the request carried when present (the
	// object's, or the operator's for activities); callback filters' and
	// conversions' memos are not kept, nor those of reviews of objects
	// being created.
	Memo json.RawMessage `json:"memo,omitempty"`
	// Admission is the verdict of a validate or mutate handler; a mutation
	// is in Patch.
	Admission *AdmissionResponse `json:"admission,omitempty"`
	// Matched answers a [CallWhen] request.
	Matched *bool `json:"matched,omitempty"`
	// Subhandlers are the sub-handlers registered during the call, of every
	// depth, in registration order (see [SubhandlerOutcome]).
	Subhandlers []SubhandlerOutcome `json:"subhandlers,omitempty"`
}

// OutcomeStatus is how a handler call ended.
type OutcomeStatus string

// Outcome statuses.
const (
	// OutcomeSuccess: done for this cause.
	OutcomeSuccess OutcomeStatus = "success"
	// OutcomeTemporary: Kopf's TemporaryError, retried after Delay.
	OutcomeTemporary OutcomeStatus = "temporary"
	// OutcomePermanent: Kopf's PermanentError, not retried for this cause.
	OutcomePermanent OutcomeStatus = "permanent"
	// OutcomeError: any other error; the handler's errors mode decides.
	OutcomeError OutcomeStatus = "error"
	// OutcomeChildren: the handler has unfinished sub-handlers (Kopf's
	// HandlerChildrenRetry); it is called again when the earliest of them
	// is due. An addition to ABI v1.
	OutcomeChildren OutcomeStatus = "children"
)

// Outcome is the status of a handler call with its message and delay.
type Outcome struct {
	Status  OutcomeStatus `json:"status"`
	Message string        `json:"message,omitempty"`
	// Delay in seconds before a retry (temporary errors); nil means the
	// host's default backoff, 0 means at once.
	Delay *float64 `json:"delay,omitempty"`
	// Code is the HTTP code of an admission denial (Kopf's AdmissionError).
	Code int `json:"code,omitempty"`
}

// Patch is a change to the object: a JSON merge patch (RFC 7396) and JSON
// patch operations (RFC 6902) applied after it.
type Patch struct {
	Merge json.RawMessage `json:"merge,omitempty"`
	JSON  []JSONPatchOp   `json:"json,omitempty"`
}

// JSONPatchOp is one RFC 6902 operation.
type JSONPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// AdmissionResponse is a webhook handler's verdict.
type AdmissionResponse struct {
	Allowed  bool     `json:"allowed"`
	Code     int      `json:"code,omitempty"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}
