package persistence

// Sub-handlers' records live in the same State as their parent's, under
// their own ids ("parent/child"), read on demand from the parent's
// subrefs. They are stored with the other records and purged with their
// parent (Kopf's subrefs), but they are not the cause's handlers: Done,
// Delay, Awakened and Counts look at the parent only, whose own record
// says when its sub-handlers are due (Kopf's HandlerChildrenRetry).

// Subrecords returns the records of a handler's sub-handlers of every
// depth, those listed in its record's subrefs and stored on the object,
// by id. Records read once stay in the state.
func (st *State) Subrecords(id string) (map[string]Record, error) {
	e, ok := st.entries[id]
	if !ok || len(e.rec.Subrefs) == 0 {
		return nil, nil
	}
	out := make(map[string]Record, len(e.rec.Subrefs))
	for _, sub := range e.rec.Subrefs {
		if se, ok := st.entries[sub]; ok {
			out[sub] = se.rec
			continue
		}
		rec, found, err := st.storage.FetchRecord(st.body, sub)
		if err != nil {
			return nil, err
		}
		if found {
			origin := rec
			st.add(sub, &entry{rec: rec, origin: &origin, sub: true})
			out[sub] = rec
		}
	}
	return out, nil
}

// SetSub replaces a sub-handler's record (a step of a sub-handler); it is
// stored with the others.
func (st *State) SetSub(id string, rec Record) {
	if e, ok := st.entries[id]; ok {
		e.rec = rec
		return
	}
	st.add(id, &entry{rec: rec, sub: true})
}
