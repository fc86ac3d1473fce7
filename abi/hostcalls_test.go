package abi

import (
	"log/slog"
	"testing"
)

func TestLogLevelSlog(t *testing.T) {
	tests := []struct {
		level  LogLevel
		want   slog.Level
		wantOK bool
	}{
		{LogDebug, slog.LevelDebug, true},
		{LogInfo, slog.LevelInfo, true},
		{LogWarn, slog.LevelWarn, true},
		{LogError, slog.LevelError, true},
		{"", 0, false},
		{"warn", 0, false}, // slog's name, not the ABI's
		{"trace", 0, false},
	}
	for _, tt := range tests {
		if got, ok := tt.level.Slog(); got != tt.want || ok != tt.wantOK {
			t.Errorf("LogLevel(%q).Slog() = %v, %v; want %v, %v", tt.level, got, ok, tt.want, tt.wantOK)
		}
	}
}
