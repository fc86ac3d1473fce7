package settings

import "time"

// Modules tunes how module files and OCI tags are followed while the host
// runs.
type Modules struct {
	// ReloadInterval is how often module files are checked for a new
	// version, which is then loaded in the background and swapped in
	// between processing cycles; a version that does not load leaves the
	// old one serving. 0: never (modules are loaded once).
	ReloadInterval time.Duration `json:"reloadInterval"`
	// TagPollInterval is how often modules named by an OCI tag are
	// resolved again; a new digest is pulled and swapped in as a changed
	// file is. Digests are pinned and never polled. 0: never.
	TagPollInterval time.Duration `json:"tagPollInterval"`
}

// defaultModules checks files every second and tags every 30 s.
func defaultModules() Modules {
	return Modules{ReloadInterval: time.Second, TagPollInterval: 30 * time.Second}
}

// validate reports negative intervals.
func (m Modules) validate(v *validator) {
	v.notNegative("modules.reloadInterval", m.ReloadInterval)
	v.notNegative("modules.tagPollInterval", m.TagPollInterval)
}
