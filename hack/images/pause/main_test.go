/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// zombie reports whether pid is an exited, not yet collected child.
func zombie(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // collected: the PID is gone
	}
	// Field 3 is the state; the command in field 2 is "(true)", without spaces.
	var p int
	var comm, state string
	if _, err := fmt.Sscan(string(b), &p, &comm, &state); err != nil {
		t.Fatalf("parse /proc/%d/stat: %v", pid, err)
	}
	return state == "Z"
}

func TestReapCollectsEveryExitedChild(t *testing.T) {
	tests := []struct {
		name     string
		children int
	}{
		{name: "one child", children: 1},
		{name: "several children coalesced into one SIGCHLD", children: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pids []int
			for i := 0; i < tc.children; i++ {
				cmd := exec.Command("/bin/true")
				if err := cmd.Start(); err != nil {
					t.Fatalf("start child: %v", err)
				}
				pids = append(pids, cmd.Process.Pid)
			}
			// Let every child exit and become a zombie before reaping.
			deadline := time.Now().Add(10 * time.Second)
			for _, pid := range pids {
				for !zombie(t, pid) {
					if time.Now().After(deadline) {
						t.Fatalf("child %d did not exit", pid)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			reap()
			for _, pid := range pids {
				if zombie(t, pid) {
					t.Errorf("child %d is still a zombie after reap", pid)
				}
			}
		})
	}
}
