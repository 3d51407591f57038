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

package faults

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

// proc is one process: its PID and its start time (clock ticks after boot), which tell a
// restarted process from the one before even when the PID is reused.
type proc struct {
	PID   int
	Start string
}

func (p proc) String() string { return fmt.Sprintf("PID %d (start %s)", p.PID, p.Start) }

// procInfo is what the scanners read of one process.
type procInfo struct {
	proc
	comm    string
	cmdline []string
	cgroups []string
}

// scanProcs reads every process of the machine whose command name starts with one of comms
// (all when comms is empty): both nodes of the local cluster are processes of this host, so
// this sees every node's guests at once.
func scanProcs(comms ...string) []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(b))
		if len(comms) > 0 && !hasAnyPrefix(comm, comms) {
			continue
		}
		p := procInfo{proc: proc{PID: pid, Start: framework.ProcStartTime(pid)}, comm: comm}
		if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
			p.cmdline = strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		}
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
					p.cgroups = append(p.cgroups, parts[2])
				}
			}
		}
		if p.Start == "" {
			continue // gone while read
		}
		out = append(out, p)
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// qemuDomain is the libvirt domain a QEMU process runs (its `-name guest=NAME,...`), or "".
func qemuDomain(cmdline []string) string {
	for i, a := range cmdline {
		v := a
		if a == "-name" && i+1 < len(cmdline) {
			v = cmdline[i+1]
		} else if !strings.HasPrefix(a, "guest=") {
			continue
		}
		for _, opt := range strings.Split(v, ",") {
			if name, ok := strings.CutPrefix(opt, "guest="); ok {
				return name
			}
		}
	}
	return ""
}

// qemuByDomain maps each libvirt domain (namespace_name) to its QEMU processes on the machine.
func qemuByDomain() map[string][]proc {
	out := map[string][]proc{}
	for _, p := range scanProcs("qemu-system") {
		if d := qemuDomain(p.cmdline); d != "" {
			out[d] = append(out[d], p.proc)
		}
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	}
	return out
}

// inPod reports whether a process's cgroups are those of the pod with uid (cgroupfs
// `pod<uid>` or systemd `pod<uid with _>`).
func (p procInfo) inPod(uid types.UID) bool {
	dash := "pod" + string(uid)
	underscore := "pod" + strings.ReplaceAll(string(uid), "-", "_")
	for _, cg := range p.cgroups {
		if strings.Contains(cg, dash) || strings.Contains(cg, underscore) {
			return true
		}
	}
	return false
}

// underCgroup reports whether one of the process's cgroups is dir or below it.
func (p procInfo) underCgroup(dir string) bool {
	for _, cg := range p.cgroups {
		if cg == dir || strings.HasPrefix(cg, dir+"/") {
			return true
		}
	}
	return false
}

// podProcs lists the processes of the pod with uid whose command name starts with comm.
func podProcs(uid types.UID, comm string) []proc {
	var out []proc
	for _, p := range scanProcs(comm) {
		if p.inPod(uid) {
			out = append(out, p.proc)
		}
	}
	return out
}

// kill sends SIGKILL to p unless its PID now names another process.
func kill(p proc) error {
	if framework.ProcStartTime(p.PID) != p.Start {
		return fmt.Errorf("%s is gone", p)
	}
	return syscall.Kill(p.PID, syscall.SIGKILL)
}

// alive reports whether p still runs (same PID, same start time).
func alive(p proc) bool { return framework.ProcStartTime(p.PID) == p.Start }

// nodeProc is a process hack/cluster started for a node (containerd-NODE, kubelet-NODE), read
// from its PID file and checked against the executable recorded beside it.
func nodeProc(stateDir, name string) (proc, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, "pids", name+".pid"))
	if err != nil {
		return proc{}, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return proc{}, fmt.Errorf("%s.pid: %w", name, err)
	}
	want, err := os.ReadFile(filepath.Join(stateDir, "pids", name+".exe"))
	if err != nil {
		return proc{}, err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || exe != strings.TrimSpace(string(want)) {
		return proc{}, fmt.Errorf("%s (PID %d) does not run (%v)", name, pid, err)
	}
	return proc{PID: pid, Start: framework.ProcStartTime(pid)}, nil
}

// podsCgroup is the cgroup under which a node's kubelet puts its pods: kubepods under the
// node's cgroupRoot (hack/cluster/lib.sh: "/" for node 1, /nativevirt-NAME for the others),
// read off one of its pods' processes.
func podsCgroup(p procInfo) string {
	for _, cg := range p.cgroups {
		if i := strings.Index(cg, "/kubepods"); i >= 0 {
			return cg[:i] + "/kubepods"
		}
	}
	return ""
}
