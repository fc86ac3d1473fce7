package kopf

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestOutcome(t *testing.T) {
	five, zero := 5.0, 0.0
	tests := []struct {
		name string
		err  error
		want abi.Outcome
	}{
		{"success", nil, abi.Outcome{Status: abi.OutcomeSuccess}},
		{"temporary with delay", TemporaryError{Message: "wait", Delay: 5 * time.Second}, abi.Outcome{Status: abi.OutcomeTemporary, Message: "wait", Delay: &five}},
		{"temporary pointer", &TemporaryError{Message: "wait", Delay: 5 * time.Second}, abi.Outcome{Status: abi.OutcomeTemporary, Message: "wait", Delay: &five}},
		{"temporary, host's delay", TemporaryError{Message: "wait"}, abi.Outcome{Status: abi.OutcomeTemporary, Message: "wait"}},
		{"temporary, at once", TemporaryError{Message: "now", Delay: -1}, abi.Outcome{Status: abi.OutcomeTemporary, Message: "now", Delay: &zero}},
		{"wrapped temporary keeps the whole message", fmt.Errorf("child: %w", TemporaryError{Message: "wait", Delay: 5 * time.Second}),
			abi.Outcome{Status: abi.OutcomeTemporary, Message: "child: wait", Delay: &five}},
		{"permanent", PermanentError{Message: "no"}, abi.Outcome{Status: abi.OutcomePermanent, Message: "no"}},
		{"admission", AdmissionError{Message: "bad", Code: 422}, abi.Outcome{Status: abi.OutcomePermanent, Message: "bad", Code: 422}},
		{"admission without code", &AdmissionError{Message: "bad"}, abi.Outcome{Status: abi.OutcomePermanent, Message: "bad", Code: 500}},
		{"joined", errors.Join(errors.New("a"), PermanentError{Message: "b"}), abi.Outcome{Status: abi.OutcomePermanent, Message: "a\nb"}},
		{"arbitrary", errors.New("boom"), abi.Outcome{Status: abi.OutcomeError, Message: "boom"}},
		{"api error is arbitrary", &APIError{Code: 404, Message: "gone", Call: "get pods x", Origin: OriginCluster},
			abi.Outcome{Status: abi.OutcomeError, Message: "kopf: get pods x: gone (404 from the cluster)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcome(tt.err); jsonString(t, got) != jsonString(t, tt.want) {
				t.Errorf("outcome = %s, want %s", jsonString(t, got), jsonString(t, tt.want))
			}
		})
	}
}

func TestAPIErrorIs(t *testing.T) {
	tests := []struct {
		err  *APIError
		is   []error
		isnt []error
	}{
		{&APIError{Code: 404, Reason: "NotFound"}, []error{ErrNotFound}, []error{ErrConflict, ErrForbidden, ErrAlreadyExists}},
		{&APIError{Code: 409, Reason: "Conflict"}, []error{ErrConflict}, []error{ErrAlreadyExists, ErrNotFound}},
		{&APIError{Code: 409, Reason: "AlreadyExists"}, []error{ErrAlreadyExists}, []error{ErrConflict}},
		{&APIError{Code: 403, Reason: "Forbidden", Origin: OriginHost}, []error{ErrForbidden}, []error{ErrNotFound}},
	}
	for _, tt := range tests {
		wrapped := fmt.Errorf("handler: %w", tt.err)
		for _, target := range tt.is {
			if !errors.Is(wrapped, target) {
				t.Errorf("%d %s is not %v", tt.err.Code, tt.err.Reason, target)
			}
		}
		for _, target := range tt.isnt {
			if errors.Is(wrapped, target) {
				t.Errorf("%d %s is %v", tt.err.Code, tt.err.Reason, target)
			}
		}
	}
}
