package execution

import (
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TemporaryError is a handler failure to retry after Delay: Kopf's
// TemporaryError, or an arbitrary error in the temporary errors mode (then
// Err is that error).
type TemporaryError struct {
	Handler string
	Message string
	Delay   time.Duration
	Err     error
}

func (e *TemporaryError) Error() string {
	return fmt.Sprintf("handler[%s] failed temporarily and will retry in %s: %s", e.Handler, e.Delay, e.Message)
}

func (e *TemporaryError) Unwrap() error { return e.Err }

// PermanentError is a handler failure not retried for this cause: Kopf's
// PermanentError, or an arbitrary error in the permanent errors mode.
type PermanentError struct {
	Handler string
	Message string
	Err     error
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("handler[%s] failed permanently: %s", e.Handler, e.Message)
}

func (e *PermanentError) Unwrap() error { return e.Err }

// HandlerTimeoutError fails a handler whose runtime reached its timeout, or
// would by its next attempt (then Ahead is the temporary failure that
// asked for it). It is permanent for the cause.
type HandlerTimeoutError struct {
	Handler string
	Timeout time.Duration
	Runtime time.Duration
	Ahead   *TemporaryError
}

func (e *HandlerTimeoutError) Error() string {
	if e.Ahead != nil {
		return fmt.Sprintf("handler[%s] failed temporarily but will time out after %s: %s", e.Handler, e.Timeout, e.Ahead.Message)
	}
	return fmt.Sprintf("handler[%s] has timed out after %s", e.Handler, e.Runtime)
}

func (e *HandlerTimeoutError) Unwrap() error {
	if e.Ahead == nil {
		return nil
	}
	return e.Ahead
}

// HandlerRetriesError fails a handler that used up its retries, or would by
// its next attempt (then Ahead is the temporary failure that asked for it).
// It is permanent for the cause.
type HandlerRetriesError struct {
	Handler  string
	Retries  int
	Attempts int
	Ahead    *TemporaryError
}

func (e *HandlerRetriesError) Error() string {
	if e.Ahead != nil {
		return fmt.Sprintf("handler[%s] failed temporarily but will exceed %d retries: %s", e.Handler, e.Retries, e.Ahead.Message)
	}
	return fmt.Sprintf("handler[%s] has exceeded %d retries", e.Handler, e.Attempts)
}

func (e *HandlerRetriesError) Unwrap() error {
	if e.Ahead == nil {
		return nil
	}
	return e.Ahead
}

// IgnoredError is an arbitrary error that the handler's errors mode ignores:
// the handler counts as succeeded, without a result.
type IgnoredError struct {
	Handler string
	Err     error
}

func (e *IgnoredError) Error() string {
	return fmt.Sprintf("handler[%s] failed and the error is ignored: %v", e.Handler, e.Err)
}

func (e *IgnoredError) Unwrap() error { return e.Err }

// UnknownOutcomeError is an outcome status this host does not know; it is
// treated as an arbitrary error.
type UnknownOutcomeError struct {
	Handler string
	Status  abi.OutcomeStatus
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("handler[%s] returned an unknown outcome status[%s]", e.Handler, e.Status)
}

// recordMessage is what a failure stores in the progress record: the
// handler's own message for its errors, the whole explanation for limits.
func recordMessage(err error) string {
	switch e := err.(type) {
	case *PermanentError:
		return e.Message
	case *TemporaryError:
		return e.Message
	}
	return err.Error()
}

// NotLoadedError says a handler's module is no longer loaded: a swap
// removed it between the handler's selection and its call (timers,
// daemons and activities outlive a swap).
type NotLoadedError struct {
	Module string
}

func (e *NotLoadedError) Error() string {
	return fmt.Sprintf("module %q is not loaded", e.Module)
}

// Reason is what a handler's failure says, without the handler's id and the
// consequence that the errors' Error adds: the log lines and Events that
// name both themselves ("Handler 'x' failed and will try again in 1m0s:
// ...") say each thing once with it.
func Reason(err error) string {
	switch e := err.(type) {
	case *TemporaryError:
		return e.Message
	case *PermanentError:
		return e.Message
	case *HandlerTimeoutError:
		if e.Ahead != nil {
			return fmt.Sprintf("%s; the next attempt would pass its timeout of %s", e.Ahead.Message, e.Timeout)
		}
		return fmt.Sprintf("timed out after %s", e.Runtime)
	case *HandlerRetriesError:
		if e.Ahead != nil {
			return fmt.Sprintf("%s; the next attempt would exceed its %d retries", e.Ahead.Message, e.Retries)
		}
		return fmt.Sprintf("exceeded %d retries", e.Attempts)
	case *IgnoredError:
		return e.Err.Error()
	case nil:
		return ""
	}
	return err.Error()
}
