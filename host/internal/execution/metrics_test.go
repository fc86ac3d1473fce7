package execution

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

func TestOutcomeNames(t *testing.T) {
	cases := []struct {
		step Step
		want string
	}{
		{Step{Finished: true}, metrics.OutcomeSuccess},
		{Step{Err: &TemporaryError{Handler: "h"}}, metrics.OutcomeTemporary},
		{Step{Finished: true, Err: &PermanentError{Handler: "h"}}, metrics.OutcomePermanent},
		{Step{Finished: true, Err: &HandlerTimeoutError{Handler: "h"}}, metrics.OutcomeTimeout},
		{Step{Finished: true, Err: &HandlerRetriesError{Handler: "h"}}, metrics.OutcomeRetries},
		{Step{Finished: true, Err: &IgnoredError{Handler: "h", Err: errors.New("x")}}, metrics.OutcomeIgnored},
	}
	for _, tc := range cases {
		if got := outcome(tc.step); got != tc.want {
			t.Errorf("outcome(%T) = %q, want %q", tc.step.Err, got, tc.want)
		}
	}
}
