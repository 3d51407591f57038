package agent

import (
	"net"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// tunnelSet holds the open incoming migration tunnels, by migration uid, so
// that they end when their migration is over.
type tunnelSet struct {
	mu          sync.Mutex
	byMigration map[types.UID]map[net.Conn]struct{}
}

// newTunnelSet returns an empty set.
func newTunnelSet() *tunnelSet {
	return &tunnelSet{byMigration: map[types.UID]map[net.Conn]struct{}{}}
}

// trackedConn is an incoming tunnel's connection to the target launcher;
// the agent closes it when the migration is over.
type trackedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the unix connection.
func (c *trackedConn) CloseWrite() error {
	if wc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return wc.CloseWrite()
	}
	return c.Close()
}

// track makes conn one of the tunnels of migration uid.
func (s *tunnelSet) track(uid types.UID, conn net.Conn) net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byMigration[uid] == nil {
		s.byMigration[uid] = map[net.Conn]struct{}{}
	}
	s.byMigration[uid][conn] = struct{}{}
	return &trackedConn{Conn: conn, release: func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.byMigration[uid], conn)
		if len(s.byMigration[uid]) == 0 {
			delete(s.byMigration, uid)
		}
	}}
}

// close ends the incoming tunnels of a migration.
func (s *tunnelSet) close(uid types.UID) {
	s.mu.Lock()
	conns := s.byMigration[uid]
	delete(s.byMigration, uid)
	s.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

// closeAll ends every incoming tunnel (the agent stops).
func (s *tunnelSet) closeAll() {
	s.mu.Lock()
	var uids []types.UID
	for uid := range s.byMigration {
		uids = append(uids, uid)
	}
	s.mu.Unlock()
	for _, uid := range uids {
		s.close(uid)
	}
}
