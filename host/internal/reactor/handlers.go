package reactor

import (
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// runHandlers calls every awakened due handler of the cause, in
// registration order, through the execution layer, and folds each outcome
// into the state and the patch.
func (c *cyc) runHandlers(state *persistence.State, due []*registry.Handler, now time.Time) error {
	byID := map[string]*registry.Handler{}
	for _, h := range due {
		byID[h.ID()] = h
	}
	for _, id := range state.Awakened(now) {
		h := byID[id]
		if h == nil || !c.share(h.Module) {
			continue
		}
		subs, err := state.Subrecords(id)
		if err != nil {
			return err
		}
		in := execution.Input{Subject: c.subj, Cause: c.cause, Record: state.Record(id), Subrecords: subs}
		r, err := c.o.exec.Call(c.ctx, h, in, execution.CallOptions{})
		if err != nil {
			return err
		}
		for _, child := range r.Children {
			state.SetSub(child.Handler.ID(), child.Step.Record)
			if child.Reported {
				c.o.exec.Report(c.ctx, c.subj, child.Handler, child.Step, "")
			}
		}
		state.Set(id, r.Step.Record)
		c.o.exec.Report(c.ctx, c.subj, h, r.Step, "")
		if r.Step.Record.Finished() {
			c.finished++
		}
		// Results of delete handlers are stored too, as Kopf does: they
		// are seen while the finalizer holds the object (a deletion whose
		// other handlers retry); the patch sends them before it releases
		// the object, unless they alone would cost that request
		// (dropLoneDeleteResults).
		c.o.exec.Fold(c.patch, c.subj, h, r, true)
		if c.cause.Reason == abi.ReasonDelete {
			c.deleteResults = append(c.deleteResults, h.ID())
			for _, child := range r.Children {
				c.deleteResults = append(c.deleteResults, child.Handler.ID())
			}
		}
	}
	return nil
}

// dropLoneDeleteResults drops the delete handlers' results from the patch
// of the cycle that releases the object when they are all it would write
// to /status (settings.Persistence.DeleteResultsOnRelease): a request for
// an object about to disappear.
func (c *cyc) dropLoneDeleteResults() {
	if len(c.deleteResults) > 0 && !c.o.opts.Settings.Persistence.DeleteResultsOnRelease {
		c.patch.DropLoneResults(c.deleteResults)
	}
}

// processing names a cause's processing as Kopf's log lines do.
func processing(r abi.Reason) string {
	switch r {
	case abi.ReasonCreate:
		return "Creation"
	case abi.ReasonUpdate:
		return "Updating"
	case abi.ReasonDelete:
		return "Deletion"
	case abi.ReasonResume:
		return "Resuming"
	}
	return title(r)
}

func title(r abi.Reason) string {
	s := string(r)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
