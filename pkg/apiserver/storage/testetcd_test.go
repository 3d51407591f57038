package storage

import (
	"context"
	"testing"
	"time"

	"github.com/nativevirt/nativevirt/pkg/apiserver/embeddedetcd"
)

// testEtcd is a fresh embedded etcd reached in-process, compacted every compaction (0: never);
// both end with the test.
func testEtcd(t *testing.T, compaction time.Duration) *InProcessEtcd {
	t.Helper()
	etcd, err := embeddedetcd.Start(context.Background(), embeddedetcd.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	backend := NewInProcessEtcd(etcd.InProcessClient(), etcd.ClientURL(), compaction)
	t.Cleanup(backend.Stop)
	return backend
}
