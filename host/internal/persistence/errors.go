package persistence

import (
	"fmt"
)

// CorruptRecordError is a progress record or diff-base that cannot be
// decoded. The reactor treats it as a framework error (the object is
// throttled), as Kopf does with undecodable JSON.
type CorruptRecordError struct {
	Key string
	Err error
}

func (e *CorruptRecordError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("corrupt stored state: %v", e.Err)
	}
	return fmt.Sprintf("corrupt stored state[%s]: %v", e.Key, e.Err)
}

func (e *CorruptRecordError) Unwrap() error { return e.Err }

// InvalidOutputError is a handler's result or patch that the host cannot
// use. The reactor treats it as the handler's arbitrary error.
type InvalidOutputError struct {
	Handler string
	What    string
	Err     error
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("handler[%s] returned an invalid %s: %v", e.Handler, e.What, e.Err)
}

func (e *InvalidOutputError) Unwrap() error { return e.Err }
