package objects

// ApplyMerge applies a JSON merge patch (RFC 7396) to a copy of target and
// returns the result: objects merge key by key, null removes a key, anything
// else replaces. target is not modified.
func ApplyMerge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return DeepCopy(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	} else {
		t = DeepCopyMap(t)
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = ApplyMerge(t[k], v)
	}
	return t
}

// MergeInto folds the merge patch src into the merge patch dst, so that
// applying dst afterwards equals applying the old dst and then src. Nested
// objects merge, anything else (null included) replaces. src is copied.
func MergeInto(dst, src map[string]any) {
	for k, v := range src {
		sv, srcIsMap := v.(map[string]any)
		dv, dstIsMap := dst[k].(map[string]any)
		if srcIsMap && dstIsMap {
			MergeInto(dv, sv)
			continue
		}
		dst[k] = DeepCopy(v)
	}
}

// PruneEmpty removes empty objects from m, recursively (an object left empty
// by the pruning goes too), and reports whether m itself ended up empty. In a
// merge patch an empty object changes nothing on an existing object.
func PruneEmpty(m map[string]any) bool {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && PruneEmpty(sub) {
			delete(m, k)
		}
	}
	return len(m) == 0
}

// Minimize removes from the merge patch p the entries that would not change
// obj: values equal to what obj holds, and nulls for keys obj lacks. Empty
// objects left behind are pruned (as are objects of only nulls where obj has
// nothing). It reports whether p ended up empty.
func Minimize(p map[string]any, obj any) bool {
	o, _ := obj.(map[string]any)
	for k, v := range p {
		cur, present := o[k]
		switch sub := v.(type) {
		case nil:
			if !present {
				delete(p, k)
			}
		case map[string]any:
			if _, curIsMap := cur.(map[string]any); (curIsMap || !present) && Minimize(sub, cur) {
				delete(p, k)
			}
		default:
			if present && Equal(v, cur) {
				delete(p, k)
			}
		}
	}
	return len(p) == 0
}
