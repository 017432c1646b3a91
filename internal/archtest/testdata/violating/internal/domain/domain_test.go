package domain

import (
	"os"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	_ = os.Getenv("HOME")
	_ = time.Now()
}
