package catalog_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// TestMain lets the test binary act as the killed process: with
// CATALOG_KILL_HELPER=op:db it runs that catalog operation on db with a
// BeforeCommit hook that reports and then blocks, so the parent can
// SIGKILL it between its writes and its commit.
func TestMain(m *testing.M) {
	if spec := os.Getenv("CATALOG_KILL_HELPER"); spec != "" {
		op, db, _ := strings.Cut(spec, ":")
		os.Exit(killHelper(op, db))
	}
	os.Exit(m.Run())
}

func killHelper(op, db string) int {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, store.Config{BeforeCommit: func(string) {
		fmt.Println("in-commit")
		select {} // wait for SIGKILL
	}})
	if err != nil {
		fmt.Println(err)
		return 3
	}
	cat, err := catalog.New(catalog.Config{Store: st, User: func() string { return "helper" }})
	if err != nil {
		return 3
	}
	switch op {
	case "add":
		_, err = cat.AddFile(ctx, transferFile)
	case "approve":
		_, err = cat.Approve(ctx, "memberdesk.transfer_funds", catalog.ApproveParams{Once: true,
			Inputs: map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "1.00"}})
	}
	fmt.Println("finished", err)
	return 0
}

// killDuring runs op in a helper process and SIGKILLs it inside its write
// transaction.
func killDuring(t *testing.T, op, db string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CATALOG_KILL_HELPER="+op+":"+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case got := <-line:
		if got != "in-commit" {
			_ = cmd.Process.Kill()
			t.Fatalf("helper %s said %q before its commit", op, got)
		}
	case <-time.After(120 * time.Second): // a subprocess on a loaded CI machine; passing ends at its line
		_ = cmd.Process.Kill()
		t.Fatalf("helper %s never reached its commit", op)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

func TestKillDuringAddOrApproveLeavesTheStoreConsistent(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "cua.db")
	ctx := t.Context()
	killDuring(t, "add", db)
	st, err := sqlite.Open(ctx, db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cat, err := catalog.New(catalog.Config{Store: st, User: func() string { return "bob" }})
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := cat.List(ctx, ""); err != nil || len(vs) != 0 {
		t.Fatalf("after a kill inside add: %d versions, %v; want none", len(vs), err)
	}
	if _, err := cat.AddFile(ctx, transferFile); err != nil {
		t.Fatalf("add after the kill: %v", err)
	}
	killDuring(t, "approve", db)
	as, err := st.ListApprovals(ctx, store.ApprovalFilter{})
	if err != nil || len(as) != 0 {
		t.Fatalf("after a kill inside approve: %d approvals, %v; want none", len(as), err)
	}
	d, err := cat.Show(ctx, "memberdesk.transfer_funds@1.3.0")
	if err != nil || d.Integrity != catalog.IntegritySealed {
		t.Fatalf("after the kills: %+v, %v; want the version sealed and intact", d, err)
	}
}
