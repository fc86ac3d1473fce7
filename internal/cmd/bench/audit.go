package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// auditPolicy logs every write request once, when its response is
// complete, with metadata only: who sent it, what it touched, the code.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// auditEvent is the part of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// writeFilter selects the audit events of one contender's run.
type writeFilter struct {
	// Namespace is the contender's namespace.
	Namespace string
	// Since drops requests received earlier (the operator's start-up and
	// the canary).
	Since time.Time
	// Driver is the user agent prefix of the benchmark's own client.
	Driver string
}

// writeCount counts write requests.
type writeCount struct {
	Total int `json:"total"`
	// Failed are the requests answered with a code of 400 or above
	// (conflicts, mostly); they are in Total too.
	Failed int `json:"failed"`
	// ByRequest counts by "verb resource[/subresource]".
	ByRequest map[string]int `json:"by_request"`
}

func (c *writeCount) add(ev auditEvent) {
	c.Total++
	if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
		c.Failed++
	}
	what := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		what += "/" + ev.ObjectRef.Subresource
	}
	if c.ByRequest == nil {
		c.ByRequest = map[string]int{}
	}
	c.ByRequest[ev.Verb+" "+what]++
}

// merge adds the counts of o.
func (c *writeCount) merge(o writeCount) {
	c.Total += o.Total
	c.Failed += o.Failed
	for k, v := range o.ByRequest {
		if c.ByRequest == nil {
			c.ByRequest = map[string]int{}
		}
		c.ByRequest[k] += v
	}
}

// String lists the counts by request, largest first.
func (c writeCount) String() string {
	keys := make([]string, 0, len(c.ByRequest))
	for k := range c.ByRequest {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c.ByRequest[keys[i]] != c.ByRequest[keys[j]] {
			return c.ByRequest[keys[i]] > c.ByRequest[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, c.ByRequest[k])
	}
	s := strings.Join(parts, ", ")
	if c.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", c.Failed)
	}
	return s
}

// countWrites reads an audit log (JSON lines) and counts the completed
// write requests in f.Namespace received at or after f.Since: those of
// the driver (user agent starting with f.Driver) and all the others.
func countWrites(r io.Reader, f writeFilter) (others, driver writeCount, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return others, driver, fmt.Errorf("audit log line %d: %w", line, err)
		}
		if !isWrite(ev.Verb) || ev.ObjectRef == nil || ev.ObjectRef.Namespace != f.Namespace ||
			(ev.Stage != "ResponseComplete" && ev.Stage != "Panic") || ev.RequestReceivedTimestamp.Before(f.Since) {
			continue
		}
		if f.Driver != "" && strings.HasPrefix(ev.UserAgent, f.Driver) {
			driver.add(ev)
		} else {
			others.add(ev)
		}
	}
	if err := sc.Err(); err != nil {
		return others, driver, fmt.Errorf("reading the audit log: %w", err)
	}
	return others, driver, nil
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
