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
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nodectl "github.com/nativevirt/nativevirt/pkg/controllers/node"
)

// nvNamespace is where NativeVirt's components run (artifacts/deploy/base).
const nvNamespace = "nativevirt"

// backTimeout bounds the wait for a killed component to answer again.
const backTimeout = 4 * time.Minute

// fault is one thing the suite breaks. inject breaks it (and, for a node's processes, starts
// them again as an operator or systemd would) and returns how to tell that the component
// answers again; killsGuest names the guest it takes down on purpose.
type fault struct {
	name       string
	killsGuest string
	inject     func(e *env) (back func() (bool, error), err error)
}

// componentPods lists NativeVirt's pods of one component: app.kubernetes.io/name=NAME.
func (e *env) componentPods(name string) []corev1.Pod {
	e.t.Helper()
	list, err := e.kube.CoreV1().Pods(nvNamespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// restarts is the sum of the restart counts of a pod's containers.
func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// killInPod kills -9 the processes of pod whose command name starts with comm; the pod's
// container restarts in place. back reports the pod Ready again with more restarts than before.
func (e *env) killInPod(pod corev1.Pod, comm string) (func() (bool, error), error) {
	procs := podProcs(pod.UID, comm)
	if len(procs) == 0 {
		return nil, fmt.Errorf("no process %q in pod %s", comm, pod.Name)
	}
	before := restarts(&pod)
	for _, p := range procs {
		if err := kill(p); err != nil {
			return nil, err
		}
	}
	e.t.Logf("killed -9 %s %v in pod %s on %s", comm, procs, pod.Name, pod.Spec.NodeName)
	return func() (bool, error) {
		p, err := e.kube.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if restarts(p) <= before || !podReady(p) {
			return false, fmt.Errorf("pod %s: %d restarts (was %d), ready %t", p.Name, restarts(p), before, podReady(p))
		}
		return true, nil
	}, nil
}

// podKillFaults are one fault per pod of a component: kill -9 its process comm. The component
// answers again when its pod is Ready with one more restart and, when given, answers(pod,
// killed) says so too.
func (e *env) podKillFaults(name, comm, what string, answers func(p corev1.Pod, killed time.Time) (bool, error)) []fault {
	var out []fault
	for _, p := range e.componentPods(name) {
		p := p
		out = append(out, fault{
			name: fmt.Sprintf("kill -9 %s (%s on %s)", what, p.Name, p.Spec.NodeName),
			inject: func(e *env) (func() (bool, error), error) {
				killed := time.Now()
				ready, err := e.killInPod(p, comm)
				if err != nil || answers == nil {
					return ready, err
				}
				return func() (bool, error) {
					if ok, err := ready(); !ok {
						return false, err
					}
					return answers(p, killed)
				}, nil
			},
		})
	}
	return out
}

// apiAnswers: the aggregated API serves the namespace's VMs.
func (e *env) apiAnswers(corev1.Pod, time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.kv.KubevirtV1().VirtualMachines(e.ns).List(ctx, metav1.ListOptions{Limit: 1})
	return err == nil, err
}

// agentBeats: the node agent of the pod's node wrote its heartbeat after the kill (what the
// node controller judges the node by).
func (e *env) agentBeats(p corev1.Pod, killed time.Time) (bool, error) {
	n, err := e.kube.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	raw := n.Annotations[nodectl.HeartbeatAnnotation]
	beat, err := time.Parse(time.RFC3339, raw)
	if err != nil || beat.Before(killed.Truncate(time.Second)) {
		return false, fmt.Errorf("node %s: heartbeat %q older than the kill", n.Name, raw)
	}
	return true, nil
}

// controllerLease is the leader Lease of nativevirt-controller: the one whose holder is one of
// its pods (identity POD_UUID).
func (e *env) controllerLease() (*coordinationv1.Lease, error) {
	list, err := e.kube.CoordinationV1().Leases(nvNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if h := list.Items[i].Spec.HolderIdentity; h != nil && strings.HasPrefix(*h, "nativevirt-controller") {
			return &list.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no Lease in %s held by a nativevirt-controller pod", nvNamespace)
}

// leaderFault kills -9 the controller that holds the Lease; back: a controller acquired the
// Lease after the kill (the other replica, or the killed one restarted).
func (e *env) leaderFault() fault {
	return fault{name: "kill -9 the nativevirt-controller leader", inject: func(e *env) (func() (bool, error), error) {
		lease, err := e.controllerLease()
		if err != nil {
			return nil, err
		}
		holder := *lease.Spec.HolderIdentity
		podName, _, _ := strings.Cut(holder, "_")
		pod, err := e.kube.CoreV1().Pods(nvNamespace).Get(context.Background(), podName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("the leader %s: %w", holder, err)
		}
		if _, err := e.killInPod(*pod, "nativevirt-cont"); err != nil {
			return nil, err
		}
		killed := time.Now()
		return func() (bool, error) {
			l, err := e.controllerLease()
			if err != nil {
				return false, err
			}
			if l.Spec.AcquireTime == nil || l.Spec.AcquireTime.Time.Before(killed.Truncate(time.Second)) ||
				l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == holder {
				return false, fmt.Errorf("lease still held by %s", holder)
			}
			e.t.Logf("new leader %s (acquired %s)", *l.Spec.HolderIdentity, l.Spec.AcquireTime.UTC().Format(time.RFC3339Nano))
			return true, nil
		}, nil
	}}
}

// libvirtdFault kills -9 the libvirtd of one guest's launcher pod. As in KubeVirt, that
// instance fails and the VM (runStrategy Always) starts a new one.
func (e *env) libvirtdFault(g *guests, name string) fault {
	return fault{name: "kill -9 libvirtd in " + name + "'s launcher", killsGuest: name, inject: func(e *env) (func() (bool, error), error) {
		old := g.all[name]
		pods, err := e.livePods(old.UID)
		if err != nil || len(pods) != 1 {
			return nil, fmt.Errorf("launcher pods of %s: %d (%v)", name, len(pods), err)
		}
		procs := podProcs(pods[0].UID, "libvirtd")
		if len(procs) == 0 {
			return nil, fmt.Errorf("no libvirtd in %s", pods[0].Name)
		}
		for _, p := range procs {
			if err := kill(p); err != nil {
				return nil, err
			}
		}
		e.t.Logf("killed -9 libvirtd %v in %s", procs, pods[0].Name)
		return func() (bool, error) {
			vmi, err := e.kv.KubevirtV1().VirtualMachineInstances(e.ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if vmi.UID == old.UID || vmi.Status.Phase != "Running" {
				return false, fmt.Errorf("instance %s %s", vmi.UID, vmi.Status.Phase)
			}
			return true, nil
		}, nil
	}}
}

// nodeIndex is the index of a node of hack/cluster by its name (localhost, localhost2, ...).
func nodeIndex(name string) (int, error) {
	rest, ok := strings.CutPrefix(name, "localhost")
	if !ok {
		return 0, fmt.Errorf("node %q is not one of hack/cluster's", name)
	}
	if rest == "" {
		return 1, nil
	}
	return strconv.Atoi(rest)
}

// nodeProcFault kills -9 a node's containerd or kubelet by its PID file and starts it again
// with hack/cluster/node-proc.sh, the way hack/cluster/up.sh started it; back: the node is Ready
// with a heartbeat of the new kubelet (the script waits for that) and its agent's pod is Ready.
func (e *env) nodeProcFault(node, what string) fault {
	return fault{name: fmt.Sprintf("restart %s of %s (kill -9, start)", what, node), inject: func(e *env) (func() (bool, error), error) {
		i, err := nodeIndex(node)
		if err != nil {
			return nil, err
		}
		p, err := nodeProc(e.c.Dir(), what+"-"+node)
		if err != nil {
			return nil, err
		}
		if err := kill(p); err != nil {
			return nil, err
		}
		e.t.Logf("killed -9 %s-%s %s", what, node, p)
		if err := poll(30*time.Second, 100*time.Millisecond, func() (bool, error) { return !alive(p), nil }); err != nil {
			return nil, fmt.Errorf("%s still alive", p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), backTimeout)
		defer cancel()
		if err := e.c.Run(ctx, "hack/cluster/node-proc.sh", strconv.Itoa(i), what); err != nil {
			return nil, err
		}
		return func() (bool, error) { return e.nodeHealthy(node) }, nil
	}}
}

// nodeHealthy: the node is Ready and schedulable and its node agent's pod is Ready.
func (e *env) nodeHealthy(node string) (bool, error) {
	n, err := e.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if !nodeReady(n) || n.Labels["kubevirt.io/schedulable"] != "true" || n.Spec.Unschedulable {
		return false, fmt.Errorf("node %s: ready %t, schedulable label %q", node, nodeReady(n), n.Labels["kubevirt.io/schedulable"])
	}
	for _, p := range e.componentPods("nativevirt-handler") {
		if p.Spec.NodeName == node {
			if !podReady(&p) {
				return false, fmt.Errorf("node agent %s not ready", p.Name)
			}
			return true, nil
		}
	}
	return false, fmt.Errorf("no node agent pod on %s", node)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// doubles reports every instance of the namespace with more than one live launcher pod.
func (e *env) doubles() []string {
	list, err := e.kube.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubevirt.io/created-by"})
	if err != nil {
		return []string{fmt.Sprintf("listing launcher pods: %v", err)}
	}
	per := map[types.UID][]string{}
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
			uid := types.UID(p.Labels["kubevirt.io/created-by"])
			per[uid] = append(per[uid], p.Name)
		}
	}
	var out []string
	for uid, pods := range per {
		if len(pods) > 1 {
			out = append(out, fmt.Sprintf("instance %s has launcher pods %v", uid, pods))
		}
	}
	return out
}
