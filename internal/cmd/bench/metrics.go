package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text exposition format.
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseMetrics reads the Prometheus text format that the API server's
// /metrics serves: comments are skipped, timestamps ignored.
func parseMetrics(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		s, err := parseSample(text)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	return out, nil
}

func parseSample(text string) (sample, error) {
	s := sample{Labels: map[string]string{}}
	i := strings.IndexAny(text, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("no value in %q", text)
	}
	s.Name, text = text[:i], text[i:]
	if text[0] == '{' {
		rest, err := parseLabels(text[1:], s.Labels)
		if err != nil {
			return s, fmt.Errorf("%s: %w", s.Name, err)
		}
		text = rest
	}
	fields := strings.Fields(text)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("%s: want a value and an optional timestamp, got %q", s.Name, text)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.Name, err)
	}
	s.Value = v
	return s, nil
}

// parseLabels reads `name="value",...}` into labels and returns what
// follows the closing brace.
func parseLabels(text string, labels map[string]string) (string, error) {
	for {
		text = strings.TrimLeft(text, " \t,")
		if strings.HasPrefix(text, "}") {
			return text[1:], nil
		}
		eq := strings.IndexByte(text, '=')
		if eq <= 0 || len(text) < eq+2 || text[eq+1] != '"' {
			return "", fmt.Errorf("bad label in %q", text)
		}
		name := strings.TrimSpace(text[:eq])
		text = text[eq+2:]
		var val strings.Builder
		closed := false
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c == '\\' && i+1 < len(text) {
				i++
				switch text[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(text[i])
				}
				continue
			}
			if c == '"' {
				text, closed = text[i+1:], true
				break
			}
			val.WriteByte(c)
		}
		if !closed {
			return "", fmt.Errorf("unterminated value of label %s", name)
		}
		labels[name] = val.String()
	}
}

// writeVerbs are the verb labels of apiserver_request_total that write.
var writeVerbs = map[string]bool{
	"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "APPLY": true, "DELETECOLLECTION": true,
}

// writeRequests sums apiserver_request_total over the write verbs and the
// given resources.
func writeRequests(samples []sample, resources ...string) float64 {
	want := map[string]bool{}
	for _, r := range resources {
		want[r] = true
	}
	var sum float64
	for _, s := range samples {
		if s.Name == "apiserver_request_total" && writeVerbs[s.Labels["verb"]] && want[s.Labels["resource"]] {
			sum += s.Value
		}
	}
	return sum
}

// metricValue returns the value of the first sample named name (an
// unlabelled metric such as process_cpu_seconds_total), 0 if none.
func metricValue(samples []sample, name string) float64 {
	for _, s := range samples {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}
