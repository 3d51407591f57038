package embeddedetcd

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

func TestFragmented(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		size, inUse int64
		want        bool
	}{
		{size: 16 * mib, inUse: 1 * mib, want: false},     // mostly free, but too little to matter
		{size: 1448 * mib, inUse: 65 * mib, want: true},   // the high-water mark of a big burst
		{size: 128 * mib, inUse: 64 * mib, want: true},    // exactly half and 64 MiB free
		{size: 128 * mib, inUse: 64*mib + 1, want: false}, // less than half free
		{size: 1000 * mib, inUse: 600 * mib, want: false}, // 400 MiB free, but most of the file in use
		{size: 64*mib + 10, inUse: 10, want: true},        // free ≥ 64 MiB and ≥ half
		{size: 64*mib + 10, inUse: 11, want: false},       // one byte short of 64 MiB free
	} {
		if got := fragmented(tc.size, tc.inUse); got != tc.want {
			t.Errorf("fragmented(size %d, inUse %d) = %v, want %v", tc.size, tc.inUse, got, tc.want)
		}
	}
}

// A file left mostly free by a previous run (data written, deleted and compacted away) is
// rewritten when the member starts again, and what is still stored survives.
func TestDefragmentsAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := startMember(t, Options{DataDir: dir})
	fillAndFree(ctx, t, s)
	before := s.etcd.Server.Backend().Size()
	if inUse := s.etcd.Server.Backend().SizeInUse(); !fragmented(before, inUse) {
		t.Fatalf("the test left the file unfragmented: size %d, in use %d", before, inUse)
	}

	s.Stop()
	s = startMember(t, Options{DataDir: dir})
	after := s.etcd.Server.Backend().Size()
	if after*4 > before {
		t.Errorf("file %d bytes after the restart, %d before: not defragmented", after, before)
	}
	checkKept(ctx, t, s, "the defragmentation")
}

// checkKept checks that /kept, which fillAndDelete writes, still holds its value after what.
func checkKept(ctx context.Context, t *testing.T, s *Server, what string) {
	t.Helper()
	resp, err := s.etcd.Server.Range(ctx, &pb.RangeRequest{Key: []byte("/kept")})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "still here" {
		t.Errorf("/kept after %s: %v", what, resp.Kvs)
	}
}

// A running member with a DefragInterval rewrites its file once it has become mostly free.
func TestDefragmentsPeriodically(t *testing.T) {
	ctx := context.Background()
	s := startMember(t, Options{DataDir: t.TempDir(), DefragInterval: 100 * time.Millisecond})
	fillAndFree(ctx, t, s)
	deadline := time.Now().Add(30 * time.Second)
	for {
		be := s.etcd.Server.Backend()
		if size := be.Size(); size < defragMinFree {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("file still %d bytes (%d in use) after 30 s", size, be.SizeInUse())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := s.etcd.Server.Range(ctx, &pb.RangeRequest{Key: []byte("/kept")})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Errorf("/kept lost in the defragmentation")
	}
}

// fillAndFree grows the member's file past 2×defragMinFree with values it then deletes and
// compacts away, and keeps one key, /kept.
func fillAndFree(ctx context.Context, t *testing.T, s *Server) {
	t.Helper()
	srv := s.etcd.Server
	rev := fillAndDelete(ctx, t, s)
	if _, err := srv.Compact(ctx, &pb.CompactionRequest{Revision: rev, Physical: true}); err != nil {
		t.Fatal(err)
	}
	// bbolt counts the pages a commit freed as free only when the next write transaction begins
	// with no older reader open; a reader that overlapped the compaction's commit keeps them
	// pending until another write is committed. A live server keeps writing; here a small write
	// stands in for it until the freed pages are counted.
	be := srv.Backend()
	deadline := time.Now().Add(10 * time.Second)
	for !fragmented(be.Size(), be.SizeInUse()) {
		if time.Now().After(deadline) {
			t.Fatalf("the compacted values' pages were never counted as free: size %d, in use %d", be.Size(), be.SizeInUse())
		}
		if _, err := srv.Put(ctx, &pb.PutRequest{Key: []byte("/nudge"), Value: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		be.ForceCommit()
		time.Sleep(50 * time.Millisecond)
	}
}

// fillAndDelete writes /kept and more than 2×defragMinFree of values under /big/, deletes those
// again, and returns the revision of the delete: the values stay in the history until a
// compaction.
func fillAndDelete(ctx context.Context, t *testing.T, s *Server) int64 {
	t.Helper()
	srv := s.etcd.Server
	if _, err := srv.Put(ctx, &pb.PutRequest{Key: []byte("/kept"), Value: []byte("still here")}); err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("x"), 512<<10)
	n := 2 * defragMinFree / len(value)
	for i := range n {
		if _, err := srv.Put(ctx, &pb.PutRequest{Key: []byte(fmt.Sprintf("/big/%04d", i)), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	del, err := srv.DeleteRange(ctx, &pb.DeleteRangeRequest{Key: []byte("/big/"), RangeEnd: []byte("/big0")})
	if err != nil {
		t.Fatal(err)
	}
	if del.Deleted != int64(n) {
		t.Fatalf("deleted %d keys, want %d", del.Deleted, n)
	}
	return del.Header.Revision
}
