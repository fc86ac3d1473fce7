package persistence

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// Patch gathers one processing cycle's changes to one object: a merge patch
// for the main endpoint, one for /status, and JSON-patch operations for
// each. Progress records, results, handler patches, the diff-base and the
// finalizer all land here, so that the reactor sends at most one merge patch
// per endpoint per cycle (plus a JSON patch only when a handler asked for
// JSON-patch operations) and nothing when nothing changes.
//
// Status goes to /status only when the resource has the status subresource;
// otherwise the main endpoint ignores nothing and everything, status
// included, goes there in one request (Kopf does the same).
//
// A Patch is not safe for concurrent use; one cycle owns it.
type Patch struct {
	statusSubresource  bool
	main, status       map[string]any
	mainOps, statusOps []abi.JSONPatchOp
	lock               string
	releases           bool // the main patch lets an object marked for deletion go
	reduced            *Reduced
	// digestOnly: the API server refused the object's last write as too
	// large; the diff-base goes in the digest form ([Patch.DigestOnly]).
	digestOnly bool
}

// NewPatch starts an empty patch. statusSubresource says whether the
// resource serves status through /status.
func NewPatch(statusSubresource bool) *Patch {
	return &Patch{statusSubresource: statusSubresource, main: map[string]any{}, status: map[string]any{}}
}

// doc returns the merge-patch document that a field with this path goes to.
func (p *Patch) doc(path objects.Path) map[string]any {
	if p.statusSubresource && len(path) > 0 && path[0] == "status" {
		return p.status
	}
	return p.main
}

// Set puts value at path (an object path such as status.fn or
// metadata.annotations.key); nil sends a null, which removes the field.
func (p *Patch) Set(path objects.Path, value any) {
	objects.Set(p.doc(path), path, objects.DeepCopy(value))
}

// Get returns what the patch holds at path so far.
func (p *Patch) Get(path objects.Path) (any, bool) {
	return objects.Get(p.doc(path), path)
}

// Unset drops path from the patch (so it is not sent at all).
func (p *Patch) Unset(path objects.Path) { objects.Remove(p.doc(path), path) }

// Merge folds an object-shaped merge patch into this one; its status part
// goes to /status when the resource has that subresource.
func (p *Patch) Merge(doc map[string]any) {
	for key, value := range doc {
		objects.MergeInto(p.doc(objects.Path{key}), map[string]any{key: value})
	}
}

// AddResult stores a handler's result under status.<id>, as Kopf does: a JSON
// object is merged into what is there, any other value replaces it, and an
// absent or null result writes nothing.
func (p *Patch) AddResult(id string, result json.RawMessage) error {
	if len(result) == 0 {
		return nil
	}
	v, err := objects.Decode(result)
	if err != nil {
		return &InvalidOutputError{Handler: id, What: "result", Err: err}
	}
	switch v := v.(type) {
	case nil:
	case map[string]any:
		p.Merge(map[string]any{"status": map[string]any{id: v}})
	default:
		p.Set(objects.Path{"status", id}, v)
	}
	return nil
}

// MergeHandlerPatch folds a handler's patch in: the merge part with the
// cycle's merge patches, the JSON-patch operations after them.
func (p *Patch) MergeHandlerPatch(id string, hp *abi.Patch) error {
	if hp == nil {
		return nil
	}
	if len(hp.Merge) > 0 {
		doc, err := objects.DecodeMap(hp.Merge)
		if err != nil {
			return &InvalidOutputError{Handler: id, What: "merge patch", Err: err}
		}
		p.Merge(doc)
	}
	for _, op := range hp.JSON {
		if err := validateOp(op); err != nil {
			return &InvalidOutputError{Handler: id, What: "json patch", Err: err}
		}
		if p.statusSubresource && (op.Path == "/status" || strings.HasPrefix(op.Path, "/status/")) {
			p.statusOps = append(p.statusOps, op)
		} else {
			p.mainOps = append(p.mainOps, op)
		}
	}
	return nil
}

func validateOp(op abi.JSONPatchOp) error {
	switch op.Op {
	case "add", "replace", "test":
		if len(op.Value) == 0 {
			return fmt.Errorf("op[%s] path[%s] has no value", op.Op, op.Path)
		}
	case "remove":
	case "move", "copy":
		if !strings.HasPrefix(op.From, "/") {
			return fmt.Errorf("op[%s] path[%s] has no from", op.Op, op.Path)
		}
	default:
		return fmt.Errorf("unknown op[%s]", op.Op)
	}
	if !strings.HasPrefix(op.Path, "/") {
		return fmt.Errorf("op[%s] path[%s] is not a JSON pointer", op.Op, op.Path)
	}
	return nil
}

// DropLoneResults removes the results of the handlers ids from the /status
// patch when, with the status subresource, they are all it holds, and
// reports whether it did: the patch then costs one request less.
func (p *Patch) DropLoneResults(ids []string) bool {
	if !p.statusSubresource || len(p.statusOps) > 0 {
		return false
	}
	rest := objects.DeepCopyMap(p.status)
	for _, id := range ids {
		objects.Remove(rest, objects.Path{"status", id})
	}
	if !objects.PruneEmpty(rest) {
		return false
	}
	p.status = map[string]any{}
	return true
}

// Reduced returns the note of a diff-base this patch stores reduced
// (compressed or as a digest) where the object held none or another form
// before; nil otherwise. Once the patch is applied, the reactor reports it.
func (p *Patch) Reduced() *Reduced { return p.reduced }

// DigestOnly makes the diff-base this patch stores go in the digest form,
// whatever room the object seems to have: the API server refused the
// object's last write as too large (kube.ErrTooLarge), which the measured
// room can miss (metadata.managedFields, not kept by the host, count
// toward etcd's limit). Without it the same write would be refused for
// ever (Kopf #1087).
func (p *Patch) DigestOnly() { p.digestOnly = true }

// Lock makes the main merge patch conditional on the object's
// resourceVersion (the API server answers 409 Conflict if it moved on). The
// finalizer helpers set it, so a finalizer list computed from a stale body
// never overwrites another controller's change.
func (p *Patch) Lock(resourceVersion string) { p.lock = resourceVersion }

// Minimize drops what would not change body: values it already has, and
// removals of fields it lacks. Call it with the body the cycle worked on,
// right before [Patch.Requests].
func (p *Patch) Minimize(body map[string]any) {
	objects.Minimize(p.main, body)
	objects.Minimize(p.status, body)
}

// Empty reports whether there is nothing to send.
func (p *Patch) Empty() bool {
	return objects.PruneEmpty(p.main) && objects.PruneEmpty(p.status) &&
		len(p.mainOps) == 0 && len(p.statusOps) == 0
}

// MergePatchType and JSONPatchType are the kinds a [Request] has.
const (
	MergePatchType = abi.PatchMerge
	JSONPatchType  = abi.PatchJSON
)

// Request is one PATCH to send: to the object ("" subresource) or to its
// "status" subresource, with its kind (abi.PatchMerge or abi.PatchJSON, as
// kube.Client.Patch takes them) and its body.
type Request struct {
	Subresource string
	Type        abi.PatchType
	Data        []byte
	// Relock says that the request's resourceVersion precondition is to
	// be the one the previous request returned ([Request.Relocked]).
	Relock bool
}

// Relocked returns the merge patch with the resourceVersion precondition
// rv.
func (r Request) Relocked(rv string) (Request, error) {
	var doc map[string]any
	if err := json.Unmarshal(r.Data, &doc); err != nil {
		return r, fmt.Errorf("relock merge patch: %w", err)
	}
	objects.Set(doc, objects.Path{"metadata", "resourceVersion"}, rv)
	raw, err := objects.Encode(doc)
	if err != nil {
		return r, fmt.Errorf("relock merge patch: %w", err)
	}
	r.Data, r.Relock = raw, false
	return r, nil
}

// Requests lists what to send, in Kopf's order: the main merge patch, the
// status merge patch, then JSON patches for main and status. It is empty
// when nothing changes. When the main merge patch releases an object
// marked for deletion, the object may be gone right after it, so it goes
// last (as Kopf removes its finalizer last), locked to the resourceVersion
// that the request before it returned: the delete handlers' results reach
// status before the object goes.
func (p *Patch) Requests() ([]Request, error) {
	out, err := p.requests()
	if err != nil || !p.releases || len(out) < 2 || out[0].Subresource != "" || out[0].Type != abi.PatchMerge {
		return out, err
	}
	release := out[0]
	release.Relock = p.lock != ""
	return append(out[1:], release), nil
}

func (p *Patch) requests() ([]Request, error) {
	var out []Request
	if !objects.PruneEmpty(p.main) {
		doc := p.main
		if p.lock != "" {
			doc = objects.DeepCopyMap(p.main)
			objects.Set(doc, objects.Path{"metadata", "resourceVersion"}, p.lock)
		}
		if err := appendRequest(&out, "", abi.PatchMerge, doc); err != nil {
			return nil, err
		}
	}
	if !objects.PruneEmpty(p.status) {
		if err := appendRequest(&out, "status", abi.PatchMerge, p.status); err != nil {
			return nil, err
		}
	}
	for _, ops := range []struct {
		sub string
		ops []abi.JSONPatchOp
	}{{"", p.mainOps}, {"status", p.statusOps}} {
		if len(ops.ops) == 0 {
			continue
		}
		raw, err := json.Marshal(ops.ops)
		if err != nil {
			return nil, fmt.Errorf("encode json patch: %w", err)
		}
		out = append(out, Request{Subresource: ops.sub, Type: abi.PatchJSON, Data: raw})
	}
	return out, nil
}

func appendRequest(out *[]Request, sub string, typ abi.PatchType, doc map[string]any) error {
	raw, err := objects.Encode(doc)
	if err != nil {
		return fmt.Errorf("encode merge patch: %w", err)
	}
	*out = append(*out, Request{Subresource: sub, Type: typ, Data: raw})
	return nil
}
