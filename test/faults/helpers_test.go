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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHelpers checks the suite's own parsing (no cluster needed).
func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		cmdline []string
		want    string
	}{
		{[]string{"/usr/bin/qemu-system-x86_64", "-name", "guest=ns-1_vm-a,debug-threads=on", "-S"}, "ns-1_vm-a"},
		{[]string{"/usr/bin/qemu-system-x86_64", "-name", "guest=ns_vm"}, "ns_vm"},
		{[]string{"/usr/bin/qemu-system-x86_64", "-machine", "q35"}, ""},
	} {
		if got := qemuDomain(tc.cmdline); got != tc.want {
			t.Errorf("qemuDomain(%q) = %q, want %q", tc.cmdline, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cgroups []string
		want    string
	}{
		{[]string{"/nativevirt-localhost2/kubepods/burstable/pod1234/abcd"}, "/nativevirt-localhost2/kubepods"},
		{[]string{"/", "/kubepods/besteffort/pod1/c"}, "/kubepods"},
		{[]string{"/user.slice"}, ""},
	} {
		if got := podsCgroup(procInfo{cgroups: tc.cgroups}); got != tc.want {
			t.Errorf("podsCgroup(%q) = %q, want %q", tc.cgroups, got, tc.want)
		}
	}
	p := procInfo{cgroups: []string{"/nativevirt-localhost2/kubepods/burstable/pod1/c"}}
	if p.underCgroup("/kubepods") || !p.underCgroup("/nativevirt-localhost2/kubepods") {
		t.Error("underCgroup confuses node 1's pods with node 2's")
	}
	for name, want := range map[string]int{"localhost": 1, "localhost2": 2, "localhost8": 8} {
		if got, err := nodeIndex(name); err != nil || got != want {
			t.Errorf("nodeIndex(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	if _, err := nodeIndex("worker-1"); err == nil {
		t.Error("nodeIndex accepted a node hack/cluster does not make")
	}
	table := formatTable([]result{
		{fault: "a", sent: 10, failed: 2, probeFailed: 3, apiBack: 1500 * time.Millisecond, compBack: 2 * time.Second, converged: 3 * time.Second},
		{fault: "b", probeFailed: 1, apiBack: -1, problems: []string{"lost"}},
		{fault: "c"},
	})
	for _, want := range []string{"| a | 10 | 2 | 3 | 1.5 | 2.0 | 3.0 | yes |", "did not answer again", "NO: lost", "| c | 0 | 0 | 0 | kept answering |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestNodeToLose: the node lost leaves an API server and an etcd quorum on the other.
func TestNodeToLose(t *testing.T) {
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	for _, tc := range []struct {
		name        string
		api, etcd   map[string]int
		lost, other string
	}{
		{"default: the node without the API server", map[string]int{"a": 1}, nil, "b", "a"},
		{"HA: the node with one etcd member", map[string]int{"a": 1, "b": 1}, map[string]int{"a": 2, "b": 1}, "b", "a"},
		{"HA: the node with one etcd member, the other", map[string]int{"a": 1, "b": 1}, map[string]int{"a": 1, "b": 2}, "a", "b"},
		{"HA: both API servers on the node with two members", map[string]int{"a": 2}, map[string]int{"a": 2, "b": 1}, "b", "a"},
		{"HA: the node without the API servers, one etcd member", map[string]int{"b": 2}, map[string]int{"a": 1, "b": 2}, "a", "b"},
		{"no node leaves a quorum", map[string]int{"a": 1, "b": 1}, map[string]int{"a": 2, "b": 2}, "", "a"},
	} {
		lost, other := nodeToLose(nodes, tc.api, tc.etcd)
		if lost != tc.lost || other != tc.other {
			t.Errorf("%s: lose %q, keep %q; want %q, %q", tc.name, lost, other, tc.lost, tc.other)
		}
	}
}
