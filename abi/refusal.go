package abi

import (
	"fmt"
	"sort"
	"strings"
)

// CallbackRefusal says which of a handler's guest-side filters refused
// when its callback filter (When) answered false, in the words the host's
// and the SDKs' explanations share ("its when filter returned false",
// "its callable annotations filter on owner (or its when filter, if it
// has one) returned false"). The guest answers for its when function and
// every callable filter at once, so this names the ones the manifest
// declares, not the one that said no.
func (f Filters) CallbackRefusal() string {
	var callables []string
	for _, m := range []struct {
		what    string
		filters map[string]MetaFilter
	}{{"labels", f.Labels}, {"annotations", f.Annotations}} {
		keys := make([]string, 0, len(m.filters))
		for k, mf := range m.filters {
			if mf.Callback {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			callables = append(callables, fmt.Sprintf("%s filter on %s", m.what, k))
		}
	}
	for _, v := range []struct {
		what   string
		filter *ValueFilter
	}{{"value", f.Value}, {"old", f.Old}, {"new", f.New}} {
		if v.filter != nil && v.filter.Callback {
			callables = append(callables, fmt.Sprintf("%s filter on %s", v.what, f.Field))
		}
	}
	switch len(callables) {
	case 0:
		return "its when filter returned false"
	case 1:
		return fmt.Sprintf("its callable %s (or its when filter, if it has one) returned false", callables[0])
	}
	return fmt.Sprintf("one of its callable filters (%s) or its when filter, if it has one, returned false", strings.Join(callables, ", "))
}
