package embeddedetcd

import (
	"context"
	"errors"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
)

// The history a previous run left (here: values written and deleted, never compacted, as by a
// server restarted before its first compaction) is compacted when the member starts again, so
// that the file it took is freed and rewritten; the current data stays.
func TestCompactsHistoryAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := startMember(t, Options{DataDir: dir})
	deleted := fillAndDelete(ctx, t, s)
	before := s.etcd.Server.Backend().Size()
	if inUse := s.etcd.Server.Backend().SizeInUse(); fragmented(before, inUse) {
		t.Fatalf("the deleted values are free without a compaction: size %d, in use %d", before, inUse)
	}

	s.Stop()
	s = startMember(t, Options{DataDir: dir})
	_, err := s.etcd.Server.Range(ctx, &pb.RangeRequest{Key: []byte("/big/0000"), Revision: deleted - 1})
	if !errors.Is(err, mvcc.ErrCompacted) {
		t.Errorf("reading the history before the restart: %v, want %v", err, mvcc.ErrCompacted)
	}
	if after := s.etcd.Server.Backend().Size(); after*4 > before {
		t.Errorf("file %d bytes after the restart, %d before: the history's space was not given back", after, before)
	}
	checkKept(ctx, t, s, "the compaction")
}
