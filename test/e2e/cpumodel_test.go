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

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// TestCPUModelScheduling: node agents label their nodes with the CPU models their QEMU can give
// guests (here TCG's: Nehalem yes, Skylake-Client no), and a guest that names a model is
// scheduled only where it is, as KubeVirt's node labeller and scheduling do.
func TestCPUModelScheduling(t *testing.T) {
	e := newCtrlEnv(t, "e2e-cpumodel")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()

	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: launcherpod.SchedulableLabel + "=true"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("schedulable nodes: %v (%d)", err, len(nodes.Items))
	}
	for _, n := range nodes.Items {
		var models []string
		for k := range n.Labels {
			if m, ok := strings.CutPrefix(k, launcherpod.CPUModelLabelPrefix); ok {
				models = append(models, m)
			}
		}
		t.Logf("node %s: CPU models %v", n.Name, models)
		if n.Labels[launcherpod.CPUModelLabelPrefix+"Nehalem"] != "true" || n.Labels[launcherpod.CPUModelLabelPrefix+"Skylake-Client"] != "" {
			t.Errorf("node %s: CPU model labels %v; want Nehalem (TCG has it) and not Skylake-Client", n.Name, models)
		}
	}

	for name, model := range map[string]string{"vmi-nehalem": "Nehalem", "vmi-skylake": "Skylake-Client"} {
		spec := e.demoVM(kubevirtv1.RunStrategyManual).Spec.Template.Spec
		spec.Domain.CPU = &kubevirtv1.CPU{Model: model}
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: spec}
		if _, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The model no node offers: the launcher pod waits, and the instance says why.
	f.waitFor("vmi-skylake PodScheduled=False naming the node selector", controllerTimeout, func() (bool, error) {
		v, err := f.vmi("vmi-skylake")
		if err != nil {
			return false, err
		}
		for _, c := range v.Status.Conditions {
			if c.Type == kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled) && c.Status == corev1.ConditionFalse {
				t.Logf("vmi-skylake: PodScheduled False %s: %s", c.Reason, c.Message)
				return strings.Contains(c.Message, "selector"), fmt.Errorf("message %q", c.Message)
			}
		}
		return false, fmt.Errorf("phase %s, no PodScheduled=False", v.Status.Phase)
	})

	// The model TCG has: the guest runs with it.
	running, _ := f.running("vmi-nehalem", "")
	s := f.cli.console(running.Name)
	defer s.close()
	if s.expect(promptRE, bootTimeout, true) == nil {
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("echo cpu-$(grep -c 'Nehalem' /proc/cpuinfo)-end")
	if s.expect(regexp.MustCompile(`cpu-[1-9][0-9]*-end`), time.Minute, false) == nil {
		t.Errorf("the guest's CPU is not a Nehalem:\n%s", s.all())
	}
	if v, err := f.vmi("vmi-skylake"); err != nil || v.Status.Phase == kubevirtv1.Running {
		t.Errorf("vmi-skylake: %v, phase %s; want not running", err, phaseOf(v))
	}

	for _, name := range []string{"vmi-nehalem", "vmi-skylake"} {
		if _, err := e.c.Kubectl("delete", "vmi", name, "-n", e.ns, "--wait=false"); err != nil {
			t.Fatal(err)
		}
	}
	f.goneWithPods("vmi-nehalem", running.UID)
}
