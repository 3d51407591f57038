package vmi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

type fixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	kv       *fake.Clientset
	c        *Controller
	vmiStore cache.Indexer
	podStore cache.Indexer
}

func newFixture(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance, pods ...*corev1.Pod) *fixture {
	t.Helper()
	var kubeObjs []runtime.Object
	for _, p := range pods {
		kubeObjs = append(kubeObjs, p)
	}
	kube := kubefake.NewSimpleClientset(kubeObjs...)
	// The fake tracker does not generate names.
	n := 0
	kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pod := a.(clienttesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" {
			n++
			pod.Name = fmt.Sprintf("%sx%d", pod.GenerateName, n)
			pod.UID = types.UID(pod.Name + "-uid")
		}
		return false, nil, nil
	})
	kv := fake.NewSimpleClientset(vmi)
	podInf := kubeinformers.NewSharedInformerFactory(kube, 0).Core().V1().Pods()
	vmiInf := externalversions.NewSharedInformerFactory(kv, 0).Kubevirt().V1().VirtualMachineInstances()
	c, err := New(kube, kv, vmiInf, podInf, launcherpod.Config{UseEmulation: true}, nil, record.NewFakeRecorder(100))
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return testNow }
	f := &fixture{t: t, kube: kube, kv: kv, c: c, vmiStore: vmiInf.Informer().GetIndexer(), podStore: podInf.Informer().GetIndexer()}
	_ = f.vmiStore.Add(vmi)
	for _, p := range pods {
		_ = f.podStore.Add(p)
	}
	return f
}

// sync runs one sync and returns the writes made, as "verb resource[/subresource]".
func (f *fixture) sync() []string {
	f.t.Helper()
	f.kube.ClearActions()
	f.kv.ClearActions()
	if _, err := f.c.sync(context.Background(), "default/vmi"); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	var writes []string
	for _, a := range append(f.kv.Actions(), f.kube.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			w += "/" + a.GetSubresource()
		}
		writes = append(writes, w)
	}
	// Two clients: their relative order means nothing.
	sort.Strings(writes)
	return writes
}

// refresh copies the stored instance into the cache, as the informer would.
func (f *fixture) refresh() *kubevirtv1.VirtualMachineInstance {
	f.t.Helper()
	vmi, err := f.kv.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "vmi", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	_ = f.vmiStore.Update(vmi)
	f.c.vmiChanged(vmi)
	return vmi
}

func (f *fixture) pods() []corev1.Pod {
	f.t.Helper()
	list, err := f.kube.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

func testVMI(opts ...func(*kubevirtv1.VirtualMachineInstance)) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi", Namespace: "default", UID: "vmi-uid", ResourceVersion: "1",
			Finalizers: []string{Finalizer}},
		Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("128Mi")}}}},
	}
	for _, o := range opts {
		o(vmi)
	}
	return vmi
}

func TestSyncStartWrites(t *testing.T) {
	f := newFixture(t, testVMI())
	// 1. The pod is created; the Scheduling write waits for the scheduling grace (the binding
	// normally comes first, and Pending goes straight to Scheduled).
	if diff := cmp.Diff([]string{"create pods"}, f.sync()); diff != "" {
		t.Fatalf("first sync (-want +got):\n%s", diff)
	}
	pods := f.pods()
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}

	// 2. Until the informer shows the pod, nothing happens (never a second pod).
	if got := f.sync(); len(got) != 0 {
		t.Errorf("sync before the pod was observed wrote %v", got)
	}
	pod := pods[0].DeepCopy()
	_ = f.podStore.Add(pod)
	f.c.podEvents.OnAdd(pod, false)
	if got := f.sync(); len(got) != 0 {
		t.Errorf("sync with the unbound pod observed inside the grace wrote %v", got)
	}

	// 3. Bound (containers still starting): Scheduled with the node name, in one write.
	bound("node1")(pod)
	pod.Status.Phase = corev1.PodPending
	_ = f.podStore.Update(pod)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("scheduled sync (-want +got):\n%s", diff)
	}
	vmi := f.refresh()
	if vmi.Status.Phase != kubevirtv1.Scheduled || vmi.Status.NodeName != "node1" {
		t.Errorf("after scheduling: phase %s node %q", vmi.Status.Phase, vmi.Status.NodeName)
	}
	if got := f.sync(); len(got) != 0 {
		t.Errorf("steady state writes %v", got)
	}

	// 4. Running pod: nothing new for this controller.
	pod.Status.Phase = corev1.PodRunning
	_ = f.podStore.Update(pod)
	if got := f.sync(); len(got) != 0 {
		t.Errorf("running pod: writes %v", got)
	}

	// 5. The node agent takes over: Running is not touched.
	vmi.Status.Phase = kubevirtv1.Running
	_ = f.vmiStore.Update(vmi)
	f.c.vmiChanged(vmi)
	if got := f.sync(); len(got) != 0 {
		t.Errorf("running instance: writes %v", got)
	}
}

// TestSyncSchedulingAfterGrace: a pod still unbound after the grace is reported as Scheduling,
// and a pod the scheduler already refused is reported at once.
func TestSyncSchedulingAfterGrace(t *testing.T) {
	f := newFixture(t, testVMI())
	f.sync()
	pod := f.pods()[0].DeepCopy()
	_ = f.podStore.Add(pod)
	f.c.podEvents.OnAdd(pod, false)
	if got := f.sync(); len(got) != 0 {
		t.Fatalf("inside the grace: writes %v", got)
	}
	now := testNow.Add(schedulingGrace)
	f.c.now = func() time.Time { return now }
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Fatalf("after the grace (-want +got):\n%s", diff)
	}
	if vmi := f.refresh(); vmi.Status.Phase != kubevirtv1.Scheduling {
		t.Errorf("phase = %s, want Scheduling", vmi.Status.Phase)
	}

	g := newFixture(t, testVMI())
	g.sync()
	pod = g.pods()[0].DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	_ = g.podStore.Add(pod)
	g.c.podEvents.OnAdd(pod, false)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, g.sync()); diff != "" {
		t.Fatalf("unschedulable pod inside the grace (-want +got):\n%s", diff)
	}
}

func TestSyncStandaloneGetsFinalizer(t *testing.T) {
	f := newFixture(t, testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Finalizers = nil }))
	if diff := cmp.Diff([]string{"create pods", "patch virtualmachineinstances"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if vmi := f.refresh(); !hasFinalizer(vmi) {
		t.Errorf("finalizers = %v", vmi.Finalizers)
	}
}

func TestSyncPodLostBeforeRunning(t *testing.T) {
	vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.Phase = kubevirtv1.Scheduled
		v.Status.NodeName = "n1"
	})
	f := newFixture(t, vmi)
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got := f.refresh(); got.Status.Phase != kubevirtv1.Failed || got.Status.Reason != ReasonPodNotExists {
		t.Errorf("phase %s reason %s, want Failed/%s", got.Status.Phase, got.Status.Reason, ReasonPodNotExists)
	}
	// A failed instance gets no new pod.
	if got := f.sync(); len(got) != 0 {
		t.Errorf("failed instance: writes %v", got)
	}
}

func TestSyncFinalInstanceStopsItsLauncher(t *testing.T) {
	vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = kubevirtv1.Failed })
	running := newPod("p1", bound("n1"), podPhase(corev1.PodRunning))
	done := newPod("p2", bound("n1"), podPhase(corev1.PodSucceeded))
	f := newFixture(t, vmi, running, done)
	if diff := cmp.Diff([]string{"delete pods"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

func TestSyncDeletion(t *testing.T) {
	deleting := func(v *kubevirtv1.VirtualMachineInstance) {
		ts := metav1.NewTime(testNow)
		v.DeletionTimestamp = &ts
		v.Status.Phase = kubevirtv1.Running
	}
	tests := []struct {
		name      string
		pods      []*corev1.Pod
		want      []string
		wantFinal bool
	}{
		{name: "pods are deleted first", pods: []*corev1.Pod{newPod("p", bound("n1"), podPhase(corev1.PodRunning))},
			want: []string{"delete pods"}, wantFinal: true},
		{name: "a terminating pod keeps the finalizer", pods: []*corev1.Pod{newPod("p", bound("n1"), podDeleting())}, wantFinal: true},
		{name: "no pod left: finalizer removed", want: []string{"patch virtualmachineinstances"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testVMI(deleting), tc.pods...)
			if diff := cmp.Diff(tc.want, f.sync()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if got := hasFinalizer(f.refresh()); got != tc.wantFinal {
				t.Errorf("finalizer present = %v, want %v", got, tc.wantFinal)
			}
		})
	}
}

func TestSyncUnschedulable(t *testing.T) {
	vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = kubevirtv1.Scheduling })
	f := newFixture(t, vmi, newPod("p", unschedulable("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity")))
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	got := f.refresh()
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Reason != "Unschedulable" {
		t.Errorf("conditions = %+v", got.Status.Conditions)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestSyncFailedCopy: a copy container that could not run leaves the launcher waiting for its
// file forever (restartPolicy Never): the instance fails, says why, and its pod is stopped.
func TestSyncFailedCopy(t *testing.T) {
	vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.Phase = kubevirtv1.Scheduled
		v.Status.NodeName = "n1"
	})
	pod := newPod("p1", bound("n1"), podPhase(corev1.PodRunning), containerEnded("container-disk-root", 128, "StartError"))
	pod.Status.ContainerStatuses[0].State.Terminated.Message = "runc create failed: unable to create new parent process"
	f := newFixture(t, vmi, pod)
	recorder := record.NewFakeRecorder(10)
	f.c.pods.event = func(vmi *kubevirtv1.VirtualMachineInstance, eventType, reason, message string) {
		recorder.Event(vmi, eventType, reason, message)
	}
	if diff := cmp.Diff([]string{"update virtualmachineinstances/status"}, f.sync()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got := f.refresh(); got.Status.Phase != kubevirtv1.Failed || got.Status.Reason != ReasonCopyFailed {
		t.Errorf("phase %s reason %s, want Failed/%s", got.Status.Phase, got.Status.Reason, ReasonCopyFailed)
	}
	select {
	case e := <-recorder.Events:
		if !strings.Contains(e, "Warning CopyFailed container container-disk-root of pod p1 ended with exit code 128 (StartError)") ||
			!strings.Contains(e, "runc create failed") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event says which copy failed")
	}
	if diff := cmp.Diff([]string{"delete pods"}, f.sync()); diff != "" {
		t.Errorf("the failed instance's pod: writes (-want +got):\n%s", diff)
	}
}
