package domain

import (
	"os"
	"testing"
	"time"
)

func TestNewRun(t *testing.T) {
	t.Parallel()
	_ = os.Getenv("HOME")
	if NewRun(time.Now).Started.IsZero() {
		t.Fatal("zero start")
	}
}
