package persistence

import (
	"slices"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// State is the progress of one object's changing handlers during one
// processing cycle, as read from the body and changed by the cycle's
// outcomes. It is bound to that body; create it with [Storage.LoadState].
type State struct {
	storage *Storage
	body    map[string]any
	purpose abi.Reason
	order   []string
	entries map[string]*entry
}

type entry struct {
	rec    Record
	origin *Record // as read from the body; nil when not stored there
	active bool    // due for the current cause
	sub    bool    // a sub-handler's record (see Subrecords)
}

// Counts tallies handlers by their state, for the "… is processed: N
// succeeded; M failed." log lines.
type Counts struct {
	Success, Failure, Running int
}

// LoadState reads the records of the resource's own changing handlers
// (owned: every changing handler id of the resource) from body.
func (s *Storage) LoadState(body map[string]any, owned []string) (*State, error) {
	st := &State{storage: s, body: body, entries: map[string]*entry{}}
	for _, id := range owned {
		if _, seen := st.entries[id]; seen {
			continue
		}
		rec, found, err := s.FetchRecord(body, id)
		if err != nil {
			return nil, err
		}
		if found {
			origin := rec
			st.add(id, &entry{rec: rec, origin: &origin})
		}
	}
	return st, nil
}

func (st *State) add(id string, e *entry) {
	st.entries[id] = e
	st.order = append(st.order, id)
}

// ForCause prepares the state for a cause: due handlers without a record
// get a fresh one started now, existing ones become active. Records left by
// a cause that this one supersedes (another purpose) are reported per
// purpose for the "… is superseded by …" log line; those of due handlers are
// taken over by this cause (they keep their retries), the others are purged
// into p.
func (st *State) ForCause(p *Patch, reason abi.Reason, due []string, now time.Time) map[abi.Reason]Counts {
	st.purpose = reason
	superseded := map[abi.Reason]Counts{}
	for _, id := range st.order {
		e := st.entries[id]
		if e.rec.Purpose != "" && e.rec.Purpose != reason {
			superseded[e.rec.Purpose] = tally(superseded[e.rec.Purpose], e.rec)
		}
	}
	for _, id := range due {
		if e, ok := st.entries[id]; ok {
			e.active = true
			if e.rec.Purpose != "" {
				e.rec.Purpose = reason
			}
			continue
		}
		st.add(id, &entry{rec: NewRecord(reason, now), active: true})
	}
	for _, id := range st.order {
		if e := st.entries[id]; !e.active && e.rec.Purpose != "" && e.rec.Purpose != reason {
			st.storage.purgeWithSubrefs(p, st.body, id, e.rec)
			delete(st.entries, id)
		}
	}
	st.order = slices.DeleteFunc(st.order, func(id string) bool { return st.entries[id] == nil })
	return superseded
}

func tally(c Counts, r Record) Counts {
	switch {
	case r.Success:
		c.Success++
	case r.Failure:
		c.Failure++
	default:
		c.Running++
	}
	return c
}

// Record returns a handler's current record (the zero Record if none).
func (st *State) Record(id string) Record {
	if e, ok := st.entries[id]; ok {
		return e.rec
	}
	return Record{}
}

// Set replaces a handler's record, usually with [Step.Record].
func (st *State) Set(id string, rec Record) {
	if e, ok := st.entries[id]; ok {
		e.rec = rec
		return
	}
	st.add(id, &entry{rec: rec, active: true})
}

// Awakened lists the due handlers that are to be called now, in order.
func (st *State) Awakened(now time.Time) []string {
	var out []string
	for _, id := range st.order {
		if e := st.entries[id]; e.active && e.rec.Awakened(now) {
			out = append(out, id)
		}
	}
	return out
}

// Done reports whether every due handler has finished (true with none).
func (st *State) Done() bool {
	for _, e := range st.entries {
		if e.active && !e.rec.Finished() {
			return false
		}
	}
	return true
}

// Delay is the time until the earliest unfinished due handler is due again;
// ok is false when none is unfinished.
func (st *State) Delay(now time.Time) (delay time.Duration, ok bool) {
	for _, e := range st.entries {
		if !e.active || e.rec.Finished() {
			continue
		}
		if d := e.rec.DueIn(now); !ok || d < delay {
			delay, ok = d, true
		}
	}
	return delay, ok
}

// Counts tallies the records of the current cause (and those of no purpose).
func (st *State) Counts() Counts {
	var c Counts
	for _, e := range st.entries {
		if e.sub {
			continue
		}
		if e.rec.Purpose == "" || st.purpose == "" || e.rec.Purpose == st.purpose {
			c = tally(c, e.rec)
		}
	}
	return c
}

// Store writes into p the records that differ from what the body holds.
func (st *State) Store(p *Patch) error {
	for _, id := range st.order {
		e := st.entries[id]
		if e.origin != nil && e.origin.Equal(e.rec) {
			continue
		}
		if err := st.storage.StoreRecord(p, st.body, id, e.rec); err != nil {
			return err
		}
	}
	return nil
}

// Purge removes from the object every record of the owned handlers, of any
// other handler in the state, and of their sub-handlers: the end of a cause.
func (st *State) Purge(p *Patch, owned []string) {
	for _, id := range owned {
		st.storage.PurgeRecord(p, st.body, id)
	}
	for _, id := range st.order {
		st.storage.purgeWithSubrefs(p, st.body, id, st.entries[id].rec)
	}
}

func (s *Storage) purgeWithSubrefs(p *Patch, body map[string]any, id string, rec Record) {
	s.PurgeRecord(p, body, id)
	for _, sub := range rec.Subrefs {
		s.PurgeRecord(p, body, sub)
	}
}
