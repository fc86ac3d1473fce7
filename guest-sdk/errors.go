package kopf

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TemporaryError asks for a retry of the handler after Delay, as Kopf's
// kopf.TemporaryError. A zero Delay leaves the delay to the host (the
// handler's backoff); a negative Delay retries at once. Err, when set, is
// the cause: errors.Is and errors.As see through it ([Temporary] builds
// one from an error).
type TemporaryError struct {
	Message string
	Delay   time.Duration
	Err     error
}

// Error returns the message, then the cause's text: "message: cause".
func (e TemporaryError) Error() string { return joinMessage(e.Message, e.Err) }

// Unwrap returns the cause.
func (e TemporaryError) Unwrap() error { return e.Err }

// Temporary wraps err as a [TemporaryError] that retries after delay (0:
// the handler's backoff). The message is err's text.
//
//	if err != nil {
//		return nil, kopf.Temporary(err, 10*time.Second)
//	}
func Temporary(err error, delay time.Duration) TemporaryError {
	return TemporaryError{Err: err, Delay: delay}
}

// PermanentError fails the handler for the current cause without retries,
// as Kopf's kopf.PermanentError. Err, when set, is the cause, as for
// [TemporaryError].
type PermanentError struct {
	Message string
	Err     error
}

// Error returns the message, then the cause's text: "message: cause".
func (e PermanentError) Error() string { return joinMessage(e.Message, e.Err) }

// Unwrap returns the cause.
func (e PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as a [PermanentError]; the message is err's text.
func Permanent(err error) PermanentError { return PermanentError{Err: err} }

// joinMessage is "message: cause", or whichever of the two there is.
func joinMessage(msg string, err error) string {
	switch {
	case err == nil:
		return msg
	case msg == "":
		return err.Error()
	}
	return msg + ": " + err.Error()
}

// AdmissionError denies an admission request with an HTTP Code (500 when
// zero) and Message, as Kopf's kopf.AdmissionError. Elsewhere it is a
// permanent error. Err, when set, is the cause, as for [TemporaryError].
type AdmissionError struct {
	Message string
	Code    int
	Err     error
}

// Error returns the message, then the cause's text: "message: cause".
func (e AdmissionError) Error() string { return joinMessage(e.Message, e.Err) }

// Unwrap returns the cause.
func (e AdmissionError) Unwrap() error { return e.Err }

// Sentinels matched by [APIError] with errors.Is.
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	ErrConflict      = errors.New("conflict")
	ErrForbidden     = errors.New("forbidden")
)

// Origins of an [APIError]: the host refused the request (for example the
// module did not declare the permission), or the cluster did.
const (
	OriginHost    = abi.OriginHost
	OriginCluster = abi.OriginCluster
)

// APIError is a failed host request: a Kubernetes request, an Event, an
// index look-up. Code is an HTTP status code and Origin says who refused.
// It matches [ErrNotFound], [ErrAlreadyExists], [ErrConflict] and
// [ErrForbidden] with errors.Is.
type APIError struct {
	Code    int
	Reason  string
	Message string
	Origin  string
	// Call names the request, e.g. "get pods default/x".
	Call string
}

// Error names the request, the message, the code and who refused.
func (e *APIError) Error() string {
	status := strings.TrimSpace(fmt.Sprintf("%d %s", e.Code, e.Reason))
	if e.Origin != "" {
		status += " from the " + e.Origin
	}
	return fmt.Sprintf("kopf: %s: %s (%s)", e.Call, e.Message, status)
}

// Is matches the sentinels by code and reason, as Kubernetes clients do.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == 404
	case ErrAlreadyExists:
		return e.Code == 409 && e.Reason == "AlreadyExists"
	case ErrConflict:
		return e.Code == 409 && e.Reason != "AlreadyExists"
	case ErrForbidden:
		return e.Code == 403
	}
	return false
}

func apiError(call string, e *abi.HostError) *APIError {
	return &APIError{Code: e.Code, Reason: e.Reason, Message: e.Message, Origin: e.Origin, Call: call}
}

// classified is implemented by Kopf's error types (values and pointers).
type classified interface {
	error
	outcome(message string) abi.Outcome
}

func (e TemporaryError) outcome(msg string) abi.Outcome {
	return abi.Outcome{Status: abi.OutcomeTemporary, Message: msg, Delay: delaySeconds(e.Delay)}
}

func (e PermanentError) outcome(msg string) abi.Outcome {
	return abi.Outcome{Status: abi.OutcomePermanent, Message: msg}
}

func (e AdmissionError) outcome(msg string) abi.Outcome {
	return abi.Outcome{Status: abi.OutcomePermanent, Message: msg, Code: admissionCode(e.Code)}
}

// outcome classifies a handler's error as Kopf does: the first of Kopf's
// error types in the chain decides; anything else is an arbitrary error.
// The message is the whole error's text.
func outcome(err error) abi.Outcome {
	if err == nil {
		return abi.Outcome{Status: abi.OutcomeSuccess}
	}
	var c classified
	if errors.As(err, &c) {
		return c.outcome(err.Error())
	}
	return abi.Outcome{Status: abi.OutcomeError, Message: err.Error()}
}

func admissionCode(code int) int {
	if code == 0 {
		return 500
	}
	return code
}

func delaySeconds(d time.Duration) *float64 {
	switch {
	case d == 0:
		return nil
	case d < 0:
		zero := 0.0
		return &zero
	}
	s := d.Seconds()
	return &s
}
