package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValidAndKopfCompatible(t *testing.T) {
	s := Default()
	if err := s.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	p := s.Persistence
	if p.Prefix != "kopf.zalando.org" || p.Finalizer != "kopf.zalando.org/KopfFinalizerMarker" ||
		p.DiffBaseKey != "last-handled-configuration" || !p.V1Keys || p.ConsistencyTimeout != 5*time.Second {
		t.Errorf("persistence defaults differ from Kopf's: %+v", p)
	}
	if s.Execution.DefaultBackoff != 60*time.Second {
		t.Errorf("default backoff = %v", s.Execution.DefaultBackoff)
	}
	d := s.Queueing.ErrorDelays
	if len(d) != 15 || d[0] != time.Second || d[len(d)-1] != 610*time.Second {
		t.Errorf("error delays = %v", d)
	}
	if b := s.Kube.ErrorBackoffs; len(b) != 8 || b[7] != 21*time.Second {
		t.Errorf("error backoffs = %v", b)
	}
	if w := s.Watching; w.ReconnectBackoff != 100*time.Millisecond || w.InactivityTimeout != 70*time.Second || w.ServerTimeout != 0 {
		t.Errorf("watching = %+v, want Kopf's", w)
	}
	if s.Posting.EventNamePrefix != "kopf-event-" {
		t.Errorf("event name prefix = %q", s.Posting.EventNamePrefix)
	}
}

func TestDefaultReturnsFreshSlices(t *testing.T) {
	a := Default()
	a.Queueing.ErrorDelays[0] = time.Hour
	a.Kube.ErrorBackoffs[0] = time.Hour
	if b := Default(); b.Queueing.ErrorDelays[0] != time.Second || b.Kube.ErrorBackoffs[0] != time.Second {
		t.Errorf("Default shares its slices")
	}
}

// TestEveryFieldHasAName keeps config keys possible for every field.
func TestEveryFieldHasAName(t *testing.T) {
	seen := map[string]bool{}
	walk(reflect.TypeFor[Settings](), "", func(key string, _ reflect.StructField) {
		if seen[key] {
			t.Errorf("two fields are named %s", key)
		}
		seen[key] = true
	}, func(f reflect.StructField) { t.Errorf("field %s has no json tag", f.Name) })
}

// walk calls leaf for every setting below t, by key.
func walk(t reflect.Type, prefix string, leaf func(key string, f reflect.StructField), untagged func(reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			walk(f.Type, prefix, leaf, untagged) // a shared type's fields are its group's
			continue
		}
		name := JSONName(f)
		if name == "" {
			untagged(f)
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			walk(f.Type, key, leaf, untagged)
			continue
		}
		leaf(key, f)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		change func(*Settings)
		want   string
	}{
		{func(s *Settings) { s.Persistence.Prefix = "" }, "persistence.prefix: must not be empty"},
		{func(s *Settings) { s.Persistence.Prefix = strings.Repeat("x", 190) }, "persistence.prefix: must be a DNS subdomain"},
		{func(s *Settings) { s.Persistence.Prefix = "Kopf/x" }, "persistence.prefix: must be a DNS subdomain"},
		{func(s *Settings) { s.Persistence.Finalizer = "marker" }, "persistence.finalizer: must be a qualified name"},
		{func(s *Settings) { s.Persistence.DiffBaseKey = "" }, "persistence.diffBaseKey: "},
		{func(s *Settings) { s.Persistence.ConsistencyTimeout = 0 }, "persistence.consistencyTimeout: must be above 0"},
		{func(s *Settings) { s.Persistence.DiffBaseAnnotationBytes = 0 }, "persistence.diffBaseAnnotationBytes: must be at least 1024"},
		{func(s *Settings) { s.Persistence.DiffBaseObjectBytes = 1000 }, "persistence.diffBaseObjectBytes: must be at least 65536"},
		{func(s *Settings) { s.Execution.DefaultBackoff = -time.Second }, "execution.defaultBackoff: must be 0 or more"},
		{func(s *Settings) { s.Execution.Workers = 0 }, "execution.workers: must be at least 1, got 0"},
		{func(s *Settings) { s.Execution.MaxDaemons = 0 }, "execution.maxDaemons: must be at least 1"},
		{func(s *Settings) { s.Execution.CancellationPolling = 0 }, "execution.cancellationPolling: must be above 0"},
		{func(s *Settings) { s.Posting.Level = 7 }, "posting.level: must be info or warning"},
		{func(s *Settings) { s.Posting.ReportingComponent = "" }, "posting.reportingComponent: "},
		{func(s *Settings) { s.Posting.ReportingInstance = strings.Repeat("x", 129) }, "posting.reportingInstance: "},
		{func(s *Settings) { s.Posting.EventNamePrefix = "Kopf_" }, "posting.eventNamePrefix: "},
		{func(s *Settings) { s.Posting.EventNamePrefix = "" }, "posting.eventNamePrefix: "},
		{func(s *Settings) { s.Queueing.ErrorDelays = nil }, "queueing.errorDelays: must list at least one delay"},
		{func(s *Settings) { s.Queueing.ErrorDelays = []time.Duration{1, -1} }, "queueing.errorDelays[1]: must be 0 or more"},
		{func(s *Settings) { s.Watching.ServerTimeout = 1500 * time.Millisecond }, "watching.serverTimeout: must be whole seconds"},
		{func(s *Settings) { s.Watching.ReconnectBackoff = -1 }, "watching.reconnectBackoff: "},
		{func(s *Settings) { s.Watching.InactivityTimeout = time.Millisecond }, "watching.inactivityTimeout: must be 0 (never) or at least 1s"},
		{func(s *Settings) { s.Watching.MaxEventBytes = 100 }, "watching.maxEventBytes: must be 0 (no cap) or at least 1024"},
		{func(s *Settings) { s.Watching.MaxEventDepth = 10001 }, "watching.maxEventDepth: must be 0 to 10000"},
		{func(s *Settings) { s.Wasm.CallTimeout = 0 }, "wasm.callTimeout: must be above 0"},
		{func(s *Settings) { s.Wasm.MaxMemoryPages = 0 }, "wasm.maxMemoryPages: must be 1 to 65536"},
		{func(s *Settings) { s.Wasm.MaxMemoryPages = 65537 }, "wasm.maxMemoryPages: must be 1 to 65536"},
		{func(s *Settings) { s.Wasm.MaxOutputBytes = 0 }, "wasm.maxOutputBytes: "},
		{func(s *Settings) { s.Wasm.PoolSize = 0 }, "wasm.poolSize: must be at least 1"},
		{func(s *Settings) { s.Wasm.RecycleAfterCalls = -1 }, "wasm.recycleAfterCalls: must be at least 0"},
		{func(s *Settings) { s.Wasm.RecycleAboveBytes = 1 << 40 }, "wasm.recycleAboveBytes: must be 0 (never) to the memory limit"},
		{func(s *Settings) { s.Wasm.GuestGOGC = 0 }, "wasm.guestGOGC: must be -1 (unset) or at least 1"},
		{func(s *Settings) { s.Kube.QPS, s.Kube.Burst = 10, 0 }, "kube.burst: must be at least 1 when kube.qps is above 0"},
		{func(s *Settings) { s.Kube.RequestTimeout = 0 }, "kube.requestTimeout: must be above 0"},
		{func(s *Settings) { s.Kube.ConnProbeTimeout = 0 }, "kube.connProbeTimeout: must be above 0"},
		{func(s *Settings) { s.Kube.ErrorBackoffs = []time.Duration{-1} }, "kube.errorBackoffs[0]: "},
		{func(s *Settings) { s.Kube.DiscoveryRefresh = -1 }, "kube.discoveryRefresh: "},
		{func(s *Settings) { s.Kube.UserAgent = "" }, "kube.userAgent: must not be empty"},
		{func(s *Settings) { s.Kube.FieldManager = "" }, "kube.fieldManager: "},
		{func(s *Settings) { s.Isolation.Workers = -1 }, "isolation.workers: must be at least 0"},
		{func(s *Settings) { s.Isolation.QPS, s.Isolation.Burst = 5, 0 }, "isolation.burst: must be at least 1 when isolation.qps is above 0"},
		{func(s *Settings) { s.Isolation.MemoryBytes = -1 }, "isolation.memoryBytes: must be 0 or more"},
		{func(s *Settings) { s.Isolation.StatusInterval = -1 }, "isolation.statusInterval: "},
		{func(s *Settings) { s.Modules.ReloadInterval = -1 }, "modules.reloadInterval: "},
		{func(s *Settings) { s.Modules.TagPollInterval = -1 }, "modules.tagPollInterval: "},
		{func(s *Settings) { s.Process.ShutdownTimeout = 0 }, "process.shutdownTimeout: must be above 0"},
		{func(s *Settings) { s.Process.CleanupTimeout = 0 }, "process.cleanupTimeout: must be above 0"},
		{func(s *Settings) { s.Process.CleanupTimeout = time.Minute }, "process.cleanupTimeout: must not exceed process.shutdownTimeout"},
	}
	for _, tt := range tests {
		key, _, _ := strings.Cut(tt.want, ":")
		t.Run(key, func(t *testing.T) {
			s := Default()
			tt.change(&s)
			err := s.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate() = %v, want one line starting with %q", err, tt.want)
			}
		})
	}
	t.Run("several", func(t *testing.T) {
		s := Default()
		s.Execution.Workers, s.Wasm.PoolSize = 0, 0
		err := s.Validate()
		if err == nil || err.Error() != "execution.workers: must be at least 1, got 0; wasm.poolSize: must be at least 1, got 0" {
			t.Errorf("Validate() = %v", err)
		}
	})
	t.Run("off values", func(t *testing.T) {
		s := Default()
		s.Watching = Watching{}
		s.Kube.ErrorBackoffs = nil
		s.Kube.QPS = 0
		s.Modules = Modules{}
		s.Wasm.GuestGOGC = -1
		if err := s.Validate(); err != nil {
			t.Errorf("Validate() = %v; zero watching and modules, no backoffs, no QPS and GOGC -1 are allowed", err)
		}
	})
}

func TestLoad(t *testing.T) {
	const file = `
persistence:
  consistencyTimeout: 2s
execution:
  workers: 32
posting:
  level: Info
  eventNamePrefix: acme-
queueing:
  errorDelays: [1s, 500ms]
watching:
  serverTimeout: 10m
  inactivityTimeout: 0s
wasm:
  maxMemoryPages: 2048
kube:
  qps: 50.5
  burst: 100
  errorBackoffs: []
  keepManagedFields: true
process:
`
	s, err := Load(strings.NewReader(file), Default())
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Persistence.ConsistencyTimeout = 2 * time.Second
	want.Execution.Workers = 32
	want.Posting.Level = LevelInfo
	want.Posting.EventNamePrefix = "acme-"
	want.Queueing.ErrorDelays = []time.Duration{time.Second, 500 * time.Millisecond}
	want.Watching.ServerTimeout = 10 * time.Minute
	want.Watching.InactivityTimeout = 0
	want.Wasm.MaxMemoryPages = 2048
	want.Kube.QPS, want.Kube.Burst, want.Kube.ErrorBackoffs, want.Kube.KeepManagedFields = 50.5, 100, []time.Duration{}, true
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Load =\n %+v\nwant\n %+v", s, want)
	}
	for _, empty := range []string{"", "# nothing\n", "{}", "null"} {
		if s, err := Load(strings.NewReader(empty), Default()); err != nil || !reflect.DeepEqual(s, Default()) {
			t.Errorf("Load(%q) = %v, %v; want the defaults", empty, s, err)
		}
	}
	if s, err := Load(strings.NewReader(`{"execution": {"workers": 3}}`), Default()); err != nil || s.Execution.Workers != 3 {
		t.Errorf("JSON: workers %d, %v", s.Execution.Workers, err)
	}
	base := Default()
	base.Wasm.CacheDir = "/cache"
	if s, err := Load(strings.NewReader("wasm: {poolSize: 3}"), base); err != nil || s.Wasm.CacheDir != "/cache" || s.Wasm.PoolSize != 3 {
		t.Errorf("over a base: %+v, %v", s.Wasm, err)
	}
}

// TestLoadErrors has one case per class of error: each is one line that
// names the key.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"unknown group", "exection:\n  workers: 2\n", `exection: unknown settings group (known: persistence, execution, posting, queueing, watching, wasm, kube, modules, process, admission, sharding, peering, leaderElection, observability, recording, isolation, rollouts)`},
		{"unknown key", "execution:\n  wrokers: 2\n", `execution.wrokers: unknown execution setting (known: defaultBackoff, workers, maxDaemons, cancellationPolling, probeCache, indexInline, timerStopWait)`},
		{"Go name instead of the JSON name", "execution:\n  Workers: 2\n", `execution.Workers: unknown execution setting`},
		{"duplicate key", "execution:\n  workers: 2\n  workers: 3\n", `"workers" already set in map`},
		{"string for an integer", "execution:\n  workers: many\n", `execution.workers: want an integer, got "many"`},
		{"fraction for an integer", "execution:\n  workers: 1.5\n", `execution.workers: want an integer of 64 bits, got 1.5`},
		{"negative for unsigned", "wasm:\n  maxMemoryPages: -1\n", `wasm.maxMemoryPages: want an integer from 0 to 4294967295, got -1`},
		{"number for a duration", "execution:\n  defaultBackoff: 30\n", `execution.defaultBackoff: want a duration such as "30s", "1m30s" or "100ms", got the number 30`},
		{"bad duration", "watching:\n  serverTimeout: 10 minutes\n", `watching.serverTimeout: want a duration such as "30s", "1m30s" or "100ms", got "10 minutes"`},
		{"bad duration in a list", "queueing:\n  errorDelays: [1s, soon]\n", `queueing.errorDelays[1]: want a duration`},
		{"scalar for a list", "kube:\n  errorBackoffs: 1s\n", `kube.errorBackoffs: want a list, got "1s" ([] for none)`},
		{"null leaf", "execution:\n  workers:\n", `execution.workers: want an integer, got nothing (null)`},
		{"string for a bool", "kube:\n  keepManagedFields: \"yes\"\n", `kube.keepManagedFields: want true or false, got "yes"`},
		{"number for a string", "kube:\n  userAgent: 7\n", `kube.userAgent: want a string, got the number 7`},
		{"bad level", "posting:\n  level: debug\n", `posting.level: want info or warning, got "debug"`},
		{"scalar for a group", "execution: 3\n", `execution: want a mapping of settings, got the number 3`},
		{"list at the top", "- execution\n", `want a mapping of settings groups (persistence, execution, ...), got a list`},
		{"out of range", "execution:\n  workers: 0\n", `execution.workers: must be at least 1, got 0`},
		{"out of range across keys", "process:\n  cleanupTimeout: 1m\n", `process.cleanupTimeout: must not exceed process.shutdownTimeout (25s)`},
		{"not YAML", "execution: [\n", `yaml: line 1: did not find expected node content`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(strings.NewReader(tt.file), Default())
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load error = %v\nwant one line containing %s", err, tt.want)
			}
			if !reflect.DeepEqual(s, Default()) {
				t.Errorf("Load changed the base on error")
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(path, []byte("execution:\n  workers: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path, Default())
	if want := "config " + path + ": execution.workers: must be at least 1, got 0"; err == nil || err.Error() != want {
		t.Errorf("ReadFile error = %v, want %s", err, want)
	}
	_, err = ReadFile(filepath.Join(dir, "missing.yaml"), Default())
	if err == nil || !strings.HasPrefix(err.Error(), "config "+filepath.Join(dir, "missing.yaml")+": ") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}

func TestLevelText(t *testing.T) {
	for _, l := range []Level{LevelInfo, LevelWarning} {
		text, err := l.MarshalText()
		var back Level
		if err != nil || back.UnmarshalText(text) != nil || back != l {
			t.Errorf("level %d: %q, %v, back %d", l, text, err, back)
		}
	}
	if _, err := Level(9).MarshalText(); err == nil {
		t.Errorf("an unknown level marshals")
	}
}
