package embeddedetcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// The member snapshots its raft log every snapshotCount entries (so that it does not keep a
// long log in memory) and a restart recovers from that snapshot plus the WAL after it.
func TestSnapshotAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := startMember(t, Options{DataDir: dir})

	writes := snapshotCount + snapshotCount/2
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < writes; i += 16 {
				key := fmt.Sprintf("/k/%05d", i)
				if _, err := s.etcd.Server.Put(ctx, &pb.PutRequest{Key: []byte(key), Value: []byte(key)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	snaps, err := filepath.Glob(filepath.Join(dir, "member-data", "member", "snap", "*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 {
		t.Fatalf("no raft snapshot after %d writes (snapshot every %d entries)", writes, snapshotCount)
	}

	s.Stop()
	s = startMember(t, Options{DataDir: dir})
	resp, err := s.etcd.Server.Range(ctx, &pb.RangeRequest{Key: []byte("/k/"), RangeEnd: []byte("/k0"), CountOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != int64(writes) {
		t.Errorf("after restart: %d keys, want %d", resp.Count, writes)
	}
}

// startMember starts a member for the test and stops it at its end.
func startMember(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// A port that is taken fails the start with EADDRINUSE, which Start answers by picking other
// ports; the failed attempt leaves the data directory usable.
func TestStartOnATakenPortFailsWithAddressInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	_, err = Start(context.Background(), Options{DataDir: dir, ClientPort: l.Addr().(*net.TCPAddr).Port})
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("start on a taken port: %v, want EADDRINUSE", err)
	}
	startMember(t, Options{DataDir: dir})
}
