package embeddedetcd

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// Defragmentation. etcd's bbolt file never shrinks: compaction frees the pages of old revisions
// for reuse, but the file keeps its high-water mark (a burst of 10,000 VMs created and deleted
// within one compaction interval leaves hundreds of MiB free). etcd maps the whole file with
// MAP_POPULATE when it opens it, so after a restart every free page is resident memory of this
// process too. The member is defragmented when it starts and, every DefragInterval, when most of
// the file is free.
const (
	// defragMinFree is the least free space worth a defragmentation.
	defragMinFree = 64 << 20
	// DefaultDefragInterval is how often a running member checks whether to defragment.
	DefaultDefragInterval = 10 * time.Minute
)

// fragmented tells whether a bbolt file of size bytes, of which inUse hold data, is worth
// rewriting: at least defragMinFree free, and at least half of the file.
func fragmented(size, inUse int64) bool {
	free := size - inUse
	return free >= defragMinFree && 2*free >= size
}

// defragIfFragmented rewrites the member's file when fragmented says so. Every request to the
// member waits while the file is rewritten (the time it takes to copy the data in use), which is
// why it is done only when at least half of the file is free.
func (s *Server) defragIfFragmented(log klog.Logger, why string) {
	be := s.etcd.Server.Backend()
	size, inUse := be.Size(), be.SizeInUse()
	if !fragmented(size, inUse) {
		log.V(4).Info("Embedded etcd not fragmented", "reason", why, "size", size, "inUse", inUse)
		return
	}
	start := time.Now()
	if err := s.etcd.Server.Defragment(); err != nil {
		log.Error(err, "Embedded etcd defragmentation failed", "reason", why, "size", size, "inUse", inUse)
		return
	}
	be = s.etcd.Server.Backend()
	log.Info("Embedded etcd defragmented", "reason", why, "duration", time.Since(start).Round(time.Millisecond),
		"sizeBefore", size, "inUseBefore", inUse, "sizeAfter", be.Size(), "inUseAfter", be.SizeInUse())
}

// defragLoop checks every interval until ctx is done.
func (s *Server) defragLoop(ctx context.Context, log klog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.defragIfFragmented(log, "periodic")
		}
	}
}
