package metrics

// Sample returns the value of the metric called name whose labels include
// every pair of labelPairs (name, value, name, value, ...): a counter's or
// gauge's value, a histogram's sample count, summed over every match. ok
// is false when no metric matched. For tests and diagnostics; a scrape is
// what Prometheus does.
func Sample(name string, labelPairs ...string) (value float64, ok bool) {
	families, err := Registry.Gather()
	if err != nil {
		return 0, false
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labelPairs); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labelPairs[i] && l.GetValue() == labelPairs[i+1] {
						found = true
						break
					}
				}
				if !found {
					continue next
				}
			}
			ok = true
			switch {
			case m.Counter != nil:
				value += m.Counter.GetValue()
			case m.Gauge != nil:
				value += m.Gauge.GetValue()
			case m.Histogram != nil:
				value += float64(m.Histogram.GetSampleCount())
			case m.Untyped != nil:
				value += m.Untyped.GetValue()
			}
		}
	}
	return value, ok
}
