package settings

import (
	"fmt"
	"regexp"
	"strings"
)

// Posting tunes the Kubernetes Events the host posts about handlers.
type Posting struct {
	// Enabled turns posting of any Event on or off, including those a guest
	// posts explicitly.
	Enabled bool `json:"enabled"`
	// Level is the minimum severity of the host's own handler-outcome
	// Events: "warning" posts failures only, "info" also successes. Events a
	// guest posts explicitly are not filtered by it. Kopf 1.44 no longer
	// posts success messages either by default; each Event is an API write.
	Level Level `json:"level"`
	// ReportingComponent is the Event's reportingComponent and
	// source.component.
	ReportingComponent string `json:"reportingComponent"`
	// ReportingInstance is the Event's reportingInstance. Empty: the host
	// name (the pod's name in a cluster).
	ReportingInstance string `json:"reportingInstance"`
	// EventNamePrefix is the Event's metadata.generateName: the API server
	// appends a random suffix. Kopf's.
	EventNamePrefix string `json:"eventNamePrefix"`
}

// defaultPosting posts failures only, under Kopf's Event names.
func defaultPosting() Posting {
	return Posting{
		Enabled:            true,
		Level:              LevelWarning,
		ReportingComponent: "kopf-wasm",
		EventNamePrefix:    "kopf-event-",
	}
}

// namePrefix is what metadata.generateName may be: the start of a DNS
// subdomain.
var namePrefix = regexp.MustCompile(`^[a-z0-9][-a-z0-9.]*$`)

// validate reports Event fields the API server would refuse.
func (po Posting) validate(v *validator) {
	if _, ok := po.Level.name(); !ok {
		v.fail("posting.level", "must be info or warning, got %d", int(po.Level))
	}
	if po.ReportingComponent == "" || len(po.ReportingComponent) > 128 {
		v.fail("posting.reportingComponent", "must be 1 to 128 characters, got %q", po.ReportingComponent)
	}
	if len(po.ReportingInstance) > 128 {
		v.fail("posting.reportingInstance", "must be at most 128 characters")
	}
	if !namePrefix.MatchString(po.EventNamePrefix) || len(po.EventNamePrefix) > 200 {
		v.fail("posting.eventNamePrefix", "must be the start of a DNS subdomain (lower case, digits, '-' and '.'), 1 to 200 characters, got %q",
			po.EventNamePrefix)
	}
}

// Level is the severity of a posted Event. In YAML and JSON it is "info" or
// "warning".
type Level int

// Levels, in increasing severity.
const (
	LevelInfo Level = iota
	LevelWarning
)

// name is the level's name in YAML and JSON; false for no level.
func (l Level) name() (string, bool) {
	switch l {
	case LevelInfo:
		return "info", true
	case LevelWarning:
		return "warning", true
	}
	return "", false
}

// String is the level's name, or Level(n) for no level.
func (l Level) String() string {
	if name, ok := l.name(); ok {
		return name
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) {
	if _, ok := l.name(); !ok {
		return nil, fmt.Errorf("unknown level %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText reads a level's name, in any case.
func (l *Level) UnmarshalText(text []byte) error {
	for _, level := range []Level{LevelInfo, LevelWarning} {
		if name, _ := level.name(); strings.EqualFold(string(text), name) {
			*l = level
			return nil
		}
	}
	return fmt.Errorf("want info or warning, got %q", text)
}
