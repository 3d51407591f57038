package embeddedetcd

import (
	"context"
	"errors"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"k8s.io/klog/v2"
)

// compactHistory drops the revisions a previous run of the server left. Nothing can use them
// after a restart: watches resume from the new watch cache, which starts at the current
// revision, and continue tokens are the cache's. k8s.io/apiserver compacts only revisions it saw
// one compaction interval earlier (at the earliest after two intervals, 10 minutes, of uptime),
// and etcd's own retention is an hour, so a server restarted more often than that never
// compacted, and its file grew with every run; etcd maps the whole file into this process.
func (s *Server) compactHistory(ctx context.Context, log klog.Logger) {
	kv := s.etcd.Server.KV()
	rev, first := kv.Rev(), kv.FirstRev()
	if rev <= first {
		return
	}
	start := time.Now()
	_, err := s.etcd.Server.Compact(ctx, &pb.CompactionRequest{Revision: rev, Physical: true})
	if err != nil && !errors.Is(err, mvcc.ErrCompacted) {
		log.Error(err, "Compacting the embedded etcd's history failed", "revision", rev)
		return
	}
	// The freed pages count as free once the backend's batch is committed and the next write
	// transaction begins with no older reader open. etcd closes its previous read transaction
	// asynchronously, so now and then they stay pending until the next write is committed: the
	// start-up defragmentation check then misses them, and the periodic one finds them.
	s.etcd.Server.Backend().ForceCommit()
	log.Info("Embedded etcd history compacted", "revision", rev, "from", first, "duration", time.Since(start).Round(time.Millisecond))
}
