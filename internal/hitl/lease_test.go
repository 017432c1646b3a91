package hitl_test

import (
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
)

func TestNewLease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		holder string
	}{
		{"automation", "automation"},
		{"human", "human:alice"},
		{"empty holder", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := hitl.NewLease(tt.holder)
			h, e := l.Holder()
			if h != tt.holder || e != 1 {
				t.Errorf("Holder() = (%q, %d), want (%q, 1)", h, e, tt.holder)
			}
			if err := l.Check(tt.holder, 1); err != nil {
				t.Errorf("Check(%q, 1): %v", tt.holder, err)
			}
		})
	}
}

func TestLeaseTransfer(t *testing.T) {
	t.Parallel()
	l := hitl.NewLease("automation")
	steps := []struct {
		to        string
		wantEpoch uint64
	}{
		{"human:alice", 2},
		{"automation", 3},
		{"automation", 4}, // to the same holder still starts a new epoch
		{"human:bob", 5},
	}
	for _, s := range steps {
		if got := l.Transfer(s.to); got != s.wantEpoch {
			t.Fatalf("Transfer(%q) = %d, want %d", s.to, got, s.wantEpoch)
		}
		if h, e := l.Holder(); h != s.to || e != s.wantEpoch {
			t.Fatalf("after Transfer(%q): Holder() = (%q, %d), want (%q, %d)", s.to, h, e, s.to, s.wantEpoch)
		}
	}
}

func TestLeaseCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		transfers []string
		holder    string
		epoch     uint64
		wantErr   bool
	}{
		{"holder at current epoch", nil, "automation", 1, false},
		{"wrong holder", nil, "human", 1, true},
		{"empty holder", nil, "", 1, true},
		{"epoch zero", nil, "automation", 0, true},
		{"future epoch", nil, "automation", 2, true},
		{"after transfer away", []string{"human"}, "automation", 1, true},
		{"new holder at new epoch", []string{"human"}, "human", 2, false},
		{"new holder at old epoch", []string{"human"}, "human", 1, true},
		{"stale epoch after the lease returns", []string{"human", "automation"}, "automation", 1, true},
		{"current epoch after the lease returns", []string{"human", "automation"}, "automation", 3, false},
		{"previous holder at current epoch", []string{"human", "automation"}, "human", 3, true},
		{"stale epoch after a self-transfer", []string{"automation"}, "automation", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := hitl.NewLease("automation")
			for _, to := range tt.transfers {
				l.Transfer(to)
			}
			err := l.Check(tt.holder, tt.epoch)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Check(%q, %d): %v", tt.holder, tt.epoch, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%q, %d) = nil, want LEASE_LOST", tt.holder, tt.epoch)
			}
			if code := domain.ErrorCode(err); code != domain.CodeLeaseLost {
				t.Fatalf("Check(%q, %d) code = %s (%v), want LEASE_LOST", tt.holder, tt.epoch, code, err)
			}
		})
	}
}

func TestLeaseConcurrentUse(t *testing.T) {
	t.Parallel()
	l := hitl.NewLease("automation")
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	epochs := make(chan uint64, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := []string{"automation", "human"}[w%2]
			for range rounds {
				epochs <- l.Transfer(holder)
				h, e := l.Holder()
				_ = l.Check(h, e) // may race with a transfer; must not be torn
				if e == 0 {
					t.Error("epoch 0 observed")
				}
			}
		}()
	}
	wg.Wait()
	close(epochs)
	seen := map[uint64]bool{}
	for e := range epochs {
		if seen[e] {
			t.Fatalf("two transfers returned epoch %d", e)
		}
		seen[e] = true
	}
	h, e := l.Holder()
	if e != 1+workers*rounds {
		t.Errorf("final epoch = %d, want %d", e, 1+workers*rounds)
	}
	if err := l.Check(h, e); err != nil {
		t.Errorf("Check(current): %v", err)
	}
	for old := uint64(1); old < e; old += 97 {
		if err := l.Check(h, old); domain.ErrorCode(err) != domain.CodeLeaseLost {
			t.Errorf("Check(%q, %d) = %v, want LEASE_LOST", h, old, err)
		}
	}
}

func TestLeaseCheckIsConsistentWithHolder(t *testing.T) {
	t.Parallel()
	// A reader that takes (holder, epoch) from Holder and checks it while
	// nobody transfers must always pass.
	l := hitl.NewLease("automation")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				h, e := l.Holder()
				if err := l.Check(h, e); err != nil {
					t.Errorf("Check(Holder()): %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
