package node

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newNode(schedulable string, beat string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{}, Annotations: map[string]string{}}}
	if schedulable != "" {
		n.Labels[SchedulableLabel] = schedulable
	}
	if beat != "" {
		n.Annotations[HeartbeatAnnotation] = beat
	}
	return n
}

func ago(d time.Duration) string { return testNow.Add(-d).Format(time.RFC3339) }

func TestHeartbeat(t *testing.T) {
	tests := []struct {
		name      string
		node      *corev1.Node
		wantStale bool
		wantMark  bool
		wantIn    time.Duration
	}{
		{name: "fresh", node: newNode("true", ago(30*time.Second)), wantIn: 91 * time.Second},
		{name: "just in time", node: newNode("true", ago(120*time.Second)), wantIn: time.Second},
		{name: "stale", node: newNode("true", ago(121*time.Second)), wantStale: true, wantMark: true},
		{name: "missing while schedulable", node: newNode("true", ""), wantStale: true, wantMark: true},
		{name: "garbage", node: newNode("true", "yesterday"), wantStale: true, wantMark: true},
		{name: "already unschedulable", node: newNode("false", ago(time.Hour)), wantStale: true},
		{name: "not a NativeVirt node", node: newNode("", ""), wantStale: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hb := heartbeat(tc.node, testNow)
			if hb.stale != tc.wantStale || hb.recheckIn != tc.wantIn {
				t.Errorf("heartbeat = %+v, want stale %v recheck %s", hb, tc.wantStale, tc.wantIn)
			}
			if got := shouldMarkUnschedulable(tc.node, hb); got != tc.wantMark {
				t.Errorf("shouldMarkUnschedulable = %v, want %v", got, tc.wantMark)
			}
		})
	}
}

func vmiOn(name, node string, phase kubevirtv1.VirtualMachineInstancePhase) *kubevirtv1.VirtualMachineInstance {
	v := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: apitypes.UID("uid-" + name)}}
	v.Status.NodeName, v.Status.Phase = node, phase
	return v
}

func launcherPod(vmiName, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + vmiName, Namespace: "default",
		Labels: map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "uid-" + vmiName}},
		Spec: corev1.PodSpec{NodeName: node}}
}

func withPod(p *corev1.Pod, change func(*corev1.Pod)) *corev1.Pod {
	change(p)
	return p
}

func terminated(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}
}

func TestSync(t *testing.T) {
	tests := []struct {
		name       string
		node       *corev1.Node
		vmis       []*kubevirtv1.VirtualMachineInstance
		pods       []*corev1.Pod
		wantMarked bool
		wantFailed []string
		wantIn     time.Duration
	}{
		{name: "live node: nothing, recheck when the heartbeat would expire", node: newNode("true", ago(10*time.Second)),
			vmis: []*kubevirtv1.VirtualMachineInstance{vmiOn("a", "n1", kubevirtv1.Running)}, wantIn: 111 * time.Second},
		{name: "dead node: marked, orphaned instances failed", node: newNode("true", ago(5*time.Minute)),
			vmis: []*kubevirtv1.VirtualMachineInstance{
				vmiOn("gone", "n1", kubevirtv1.Running),
				vmiOn("with-pod", "n1", kubevirtv1.Running),
				vmiOn("done", "n1", kubevirtv1.Succeeded),
				func() *kubevirtv1.VirtualMachineInstance {
					v := vmiOn("deleting", "n1", kubevirtv1.Running)
					v.DeletionTimestamp = &metav1.Time{Time: testNow}
					return v
				}(),
				vmiOn("elsewhere", "n2", kubevirtv1.Running),
			},
			pods:       []*corev1.Pod{launcherPod("with-pod", "n1")},
			wantMarked: true, wantFailed: []string{"gone"}},
		{name: "dead node: a pod that may still run keeps its instance, an ended one does not",
			node: newNode("false", ago(5*time.Minute)),
			vmis: []*kubevirtv1.VirtualMachineInstance{
				vmiOn("evicted", "n1", kubevirtv1.Running),
				vmiOn("pod-failed", "n1", kubevirtv1.Running),
				vmiOn("containers-ended", "n1", kubevirtv1.Running),
				vmiOn("one-container-left", "n1", kubevirtv1.Running),
			},
			pods: []*corev1.Pod{
				// Deleted by the taint manager, but nothing on the node stopped it: it may run.
				withPod(launcherPod("evicted", "n1"), func(p *corev1.Pod) {
					p.DeletionTimestamp = &metav1.Time{Time: testNow}
					p.Status.Phase = corev1.PodRunning
				}),
				withPod(launcherPod("pod-failed", "n1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
				withPod(launcherPod("containers-ended", "n1"), func(p *corev1.Pod) {
					p.Status.Phase = corev1.PodRunning
					p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("compute"), terminated("guest-console-log")}
				}),
				withPod(launcherPod("one-container-left", "n1"), func(p *corev1.Pod) {
					p.Status.Phase = corev1.PodRunning
					p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("guest-console-log"),
						{Name: "compute", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
				}),
			},
			wantFailed: []string{"containers-ended", "pod-failed"}},
		{name: "live node: an ended pod fails nothing (the instance's own controllers judge it)",
			node:   newNode("true", ago(10*time.Second)),
			vmis:   []*kubevirtv1.VirtualMachineInstance{vmiOn("pod-failed", "n1", kubevirtv1.Running)},
			pods:   []*corev1.Pod{withPod(launcherPod("pod-failed", "n1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })},
			wantIn: 111 * time.Second},
		{name: "node object deleted", vmis: []*kubevirtv1.VirtualMachineInstance{vmiOn("gone", "n1", kubevirtv1.Scheduled)},
			wantFailed: []string{"gone"}},
		{name: "already marked dead node: instances still failed", node: newNode("false", ago(time.Hour)),
			vmis: []*kubevirtv1.VirtualMachineInstance{vmiOn("gone", "n1", kubevirtv1.Running)}, wantFailed: []string{"gone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewSimpleClientset()
			kf := kubeinformers.NewSharedInformerFactory(kube, 0)
			vf := externalversions.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
			nodeInf, podInf, vmiInf := kf.Core().V1().Nodes(), kf.Core().V1().Pods(), vf.Kubevirt().V1().VirtualMachineInstances()
			c, err := New(kube, fake.NewSimpleClientset(), nodeInf, vmiInf, podInf)
			if err != nil {
				t.Fatal(err)
			}
			c.now = func() time.Time { return testNow }
			var marked bool
			var failed []string
			c.markUnschedulable = func(_ context.Context, node string) error { marked = true; return nil }
			c.failVMI = func(_ context.Context, vmi *kubevirtv1.VirtualMachineInstance) error {
				if vmi.Status.Phase != kubevirtv1.Failed || vmi.Status.Reason != ReasonNodeUnresponsive {
					t.Errorf("status written for %s: %s/%s", vmi.Name, vmi.Status.Phase, vmi.Status.Reason)
				}
				failed = append(failed, vmi.Name)
				return nil
			}
			if tc.node != nil {
				_ = nodeInf.Informer().GetIndexer().Add(tc.node)
			}
			for _, v := range tc.vmis {
				_ = vmiInf.Informer().GetIndexer().Add(v)
			}
			for _, p := range tc.pods {
				_ = podInf.Informer().GetIndexer().Add(p)
			}
			res, err := c.sync(context.Background(), "n1")
			if err != nil {
				t.Fatal(err)
			}
			if marked != tc.wantMarked {
				t.Errorf("marked unschedulable = %v, want %v", marked, tc.wantMarked)
			}
			sort.Strings(failed)
			if diff := cmp.Diff(tc.wantFailed, failed); diff != "" {
				t.Errorf("failed instances (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != tc.wantIn {
				t.Errorf("requeueAfter = %s, want %s", res.RequeueAfter, tc.wantIn)
			}
		})
	}
}

func TestMarkPatch(t *testing.T) {
	kube := kubefake.NewSimpleClientset(newNode("true", ""))
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vf := externalversions.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	c, err := New(kube, fake.NewSimpleClientset(), kf.Core().V1().Nodes(), vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.markUnschedulable(context.Background(), "n1"); err != nil {
		t.Fatal(err)
	}
	n, err := kube.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Labels[SchedulableLabel]; got != "false" {
		t.Errorf("label = %q, want false", got)
	}
}

// TestPodEndedRequeuesNode: a launcher pod that ends (its phase) while the node is dead brings
// the node back to the queue, so that its instance fails without waiting for the pod's deletion.
func TestPodEndedRequeuesNode(t *testing.T) {
	kube := kubefake.NewSimpleClientset()
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vf := externalversions.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	c, err := New(kube, fake.NewSimpleClientset(), kf.Core().V1().Nodes(), vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := launcherPod("a", "n1")
	pod.Status.Phase = corev1.PodRunning
	if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kf.Start(ctx.Done())
	vf.Start(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	if c.queue.Len() != 0 {
		t.Fatalf("queue holds %d keys before the pod ended", c.queue.Len())
	}
	ended := pod.DeepCopy()
	ended.Status.Phase = corev1.PodFailed
	if _, err := kube.CoreV1().Pods("default").UpdateStatus(ctx, ended, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c.queue.Len() == 0 {
		t.Fatal("node n1 not queued after its launcher pod ended")
	}
}
