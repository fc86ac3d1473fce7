package recording

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
)

// Recorder appends records to a writer, one JSON line each, until the next
// line would take it past its bound: then it stops for good and logs that
// once. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	w       io.Writer
	closer  io.Closer
	max     int64
	written int64
	full    bool
	log     *slog.Logger
}

// New returns a recorder that writes up to maxBytes to w.
func New(w io.Writer, maxBytes int64, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{w: w, max: maxBytes, log: log}
}

// Open returns a recorder that appends to the file at path (created if
// missing), counting what the file already holds against maxBytes.
func Open(path string, maxBytes int64, log *slog.Logger) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the recording: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open the recording: %w", err)
	}
	r := New(f, maxBytes, log)
	r.closer, r.written = f, st.Size()
	return r, nil
}

// Add redacts rec and appends it; it reports whether it was written (false
// once the bound is reached, or when it could not be).
func (r *Recorder) Add(rec Record) bool {
	RedactRecord(&rec)
	line, err := json.Marshal(rec)
	if err != nil {
		r.log.Error(fmt.Sprintf("Recording: a call of module %s cannot be encoded: %v", rec.Module, err))
		return false
	}
	line = append(line, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.full {
		return false
	}
	if r.written+int64(len(line)) > r.max {
		r.full = true
		r.log.Warn(fmt.Sprintf("Recording stopped: the next call would take it past recording.maxBytes (%d bytes); %d bytes are recorded", r.max, r.written))
		return false
	}
	if _, err := r.w.Write(line); err != nil {
		r.full = true
		r.log.Error(fmt.Sprintf("Recording stopped: %v", err))
		return false
	}
	r.written += int64(len(line))
	return true
}

// Close closes the file of a recorder from [Open].
func (r *Recorder) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}
