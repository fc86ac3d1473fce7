package persistence

import (
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The annotation value of Kopf's documentation example, re-encoded in the
// order Kopf 1.44 writes (started, stopped, delayed, purpose, retries,
// success, failure, message, subrefs).
func TestRecordEncodeAsKopf(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{
			name: "retrying",
			rec: Record{
				Started: ts("2026-01-02T03:04:05.123456Z"), Delayed: ts("2026-01-02T03:05:05.123456Z"),
				Purpose: abi.ReasonCreate, Retries: 1, Message: "Not ready",
			},
			want: `{"started":"2026-01-02T03:04:05.123456+00:00","delayed":"2026-01-02T03:05:05.123456+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"Not ready"}`,
		},
		{
			name: "succeeded, whole seconds keep six digits",
			rec: Record{
				Started: ts("2026-01-02T03:04:05Z"), Stopped: ts("2026-01-02T03:04:06.5Z"),
				Purpose: abi.ReasonUpdate, Retries: 1, Success: true,
			},
			want: `{"started":"2026-01-02T03:04:05.000000+00:00","stopped":"2026-01-02T03:04:06.500000+00:00","purpose":"update","retries":1,"success":true,"failure":false}`,
		},
		{
			name: "non-ascii message and sorted subrefs",
			rec:  Record{Retries: 0, Failure: true, Message: "é <x>", Subrefs: []string{"fn/b", "fn/a"}},
			want: `{"retries":0,"success":false,"failure":true,"message":"\u00e9 <x>","subrefs":["fn/a","fn/b"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.rec.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			back, err := DecodeRecord([]byte(got))
			if err != nil || !back.Equal(tt.rec) {
				t.Errorf("round trip = %+v, %v", back, err)
			}
		})
	}
}

func TestDecodeRecordKopfVariants(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Record
	}{
		{
			name: "kopf docs example",
			in:   `{"started":"2026-01-02T03:04:05.123456+00:00","purpose":"create","retries":1,"success":false,"failure":false,"delayed":"2026-01-02T03:05:05.123456+00:00","message":"Not ready"}`,
			want: Record{Started: ts("2026-01-02T03:04:05.123456Z"), Delayed: ts("2026-01-02T03:05:05.123456Z"), Purpose: abi.ReasonCreate, Retries: 1, Message: "Not ready"},
		},
		{
			name: "old records without a timezone",
			in:   `{"started":"2020-02-14T16:58:25.396364","stopped":"2020-02-14T16:58:25.401844","retries":1,"success":true}`,
			want: Record{Started: ts("2020-02-14T16:58:25.396364Z"), Stopped: ts("2020-02-14T16:58:25.401844Z"), Retries: 1, Success: true},
		},
		{
			name: "comma fraction and nulls",
			in:   `{"started":"2018-12-31T23:59:59,999999","delayed":null,"retries":null,"message":null}`,
			want: Record{Started: ts("2018-12-31T23:59:59.999999Z")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRecord([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := DecodeRecord([]byte(`{"started":"yesterday"}`)); err == nil {
		t.Errorf("a bad time must fail")
	}
}

func TestRecordTiming(t *testing.T) {
	now := ts("2026-01-01T00:01:00Z")
	tests := []struct {
		name     string
		rec      Record
		awakened bool
		dueIn    time.Duration
		runtime  time.Duration
		finished bool
	}{
		{"fresh", NewRecord(abi.ReasonCreate, now), true, 0, 0, false},
		{"sleeping", Record{Started: ts("2026-01-01T00:00:00Z"), Delayed: ts("2026-01-01T00:01:30Z")}, false, 30 * time.Second, time.Minute, false},
		{"delay passed", Record{Started: ts("2026-01-01T00:00:00Z"), Delayed: ts("2026-01-01T00:00:30Z")}, true, 0, time.Minute, false},
		{"succeeded", Record{Started: ts("2026-01-01T00:00:00Z"), Success: true}, false, 0, time.Minute, true},
		{"failed", Record{Failure: true}, false, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rec.Awakened(now); got != tt.awakened {
				t.Errorf("Awakened = %v", got)
			}
			if got := tt.rec.DueIn(now); got != tt.dueIn {
				t.Errorf("DueIn = %v", got)
			}
			if got := tt.rec.Runtime(now); got != tt.runtime {
				t.Errorf("Runtime = %v", got)
			}
			if got := tt.rec.Finished(); got != tt.finished {
				t.Errorf("Finished = %v", got)
			}
		})
	}
}
