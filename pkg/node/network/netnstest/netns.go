// Package netnstest runs code of a test inside a named network namespace (`ip netns add NAME`):
// sockets made there stay there, which is how the tests stand in for a pod's or a node's network.
package netnstest

import (
	"os"

	"github.com/nativevirt/nativevirt/pkg/node/network/enter"
)

// Run runs f on an OS thread in the namespace /run/netns/<name> and returns f's error.
func Run(name string, f func() error) error {
	target, err := os.Open("/run/netns/" + name)
	if err != nil {
		return err
	}
	defer target.Close()
	return enter.Do(target, f)
}
