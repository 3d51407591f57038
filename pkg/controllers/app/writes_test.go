package app

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// writeLog records the API writes the controllers make (the test itself writes through the
// object trackers, which no reactor sees).
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (l *writeLog) reactor(a clienttesting.Action) (bool, runtime.Object, error) {
	switch a.GetVerb() {
	case "create", "update", "patch", "delete":
		w := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			w += "/" + a.GetSubresource()
		}
		l.mu.Lock()
		l.writes = append(l.writes, w)
		l.mu.Unlock()
	}
	return false, nil, nil
}

func (l *writeLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.writes...)
}

// mergePatchReactor applies JSON merge patches itself, so that the patched object gets a new
// resourceVersion (the fake tracker keeps the old one).
func mergePatchReactor(tracker clienttesting.ObjectTracker, nextRV func() string) clienttesting.ReactionFunc {
	return func(a clienttesting.Action) (bool, runtime.Object, error) {
		pa, ok := a.(clienttesting.PatchAction)
		if !ok || pa.GetPatchType() != types.MergePatchType {
			return false, nil, nil
		}
		obj, err := tracker.Get(pa.GetResource(), pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return true, nil, err
		}
		merged, err := jsonpatch.MergePatch(raw, pa.GetPatch())
		if err != nil {
			return true, nil, err
		}
		out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
		if err := json.Unmarshal(merged, out); err != nil {
			return true, nil, err
		}
		out.(metav1.Object).SetResourceVersion(nextRV())
		return true, out, tracker.Update(pa.GetResource(), out, pa.GetNamespace())
	}
}

// dumpOnFail logs the writes and the instance when the test fails, to show where a start stalled.
func dumpOnFail(t *testing.T, l *writeLog, get func() any) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("writes: %v", l.get())
			t.Logf("instance: %+v", get())
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestWritesPerStart runs every controller on shared informers and counts the API writes from
// a VM set to run until its instance is Scheduled (the pod bound, as
// kube-scheduler would make it).
func TestWritesPerStart(t *testing.T) {
	// The fake trackers keep resourceVersions as given; a server bumps them on every write, and the
	// controllers rely on that to know when their cache caught up with their own writes.
	var rvMu sync.Mutex
	rv := 100
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	vmisGVR := kubevirtv1.SchemeGroupVersion.WithResource("virtualmachineinstances")
	vmsGVR := kubevirtv1.SchemeGroupVersion.WithResource("virtualmachines")

	kube := kubefake.NewSimpleClientset()
	// CDIConfig config exists already (the CDIConfig controller creates it once per cluster).
	kv := fake.NewSimpleClientset(&cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: "config"}})
	// First prepended, last to run: merge patches bump the resourceVersion too, as on a server.
	kv.PrependReactor("patch", "*", mergePatchReactor(kv.Tracker(), func() string {
		rvMu.Lock()
		defer rvMu.Unlock()
		rv++
		return fmt.Sprint(rv)
	}))
	log := &writeLog{}
	kube.PrependReactor("*", "*", log.reactor)
	kv.PrependReactor("*", "*", log.reactor)
	bump := func(a clienttesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := a.(type) {
		case clienttesting.CreateAction: // updates too: UpdateAction has the same methods
			obj = a.GetObject()
		default:
			return false, nil, nil
		}
		if m, ok := obj.(metav1.Object); ok {
			rvMu.Lock()
			rv++
			m.SetResourceVersion(fmt.Sprint(rv))
			rvMu.Unlock()
		}
		return false, nil, nil
	}
	kube.PrependReactor("*", "*", bump)
	kv.PrependReactor("*", "*", bump)
	kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pod := a.(clienttesting.CreateAction).GetObject().(*corev1.Pod)
		pod.Name = pod.GenerateName + "abcde"
		pod.UID = types.UID("pod-uid")
		return false, nil, nil
	})
	kv.PrependReactor("create", "virtualmachineinstances", func(a clienttesting.Action) (bool, runtime.Object, error) {
		a.(clienttesting.CreateAction).GetObject().(*kubevirtv1.VirtualMachineInstance).UID = "vmi-uid"
		return false, nil, nil
	})

	dumpOnFail(t, log, func() any { o, _ := kv.Tracker().Get(vmisGVR, "default", "vm-cirros"); return o })
	ctrls, err := NewControllers(kube, kv, launcherpod.Config{UseEmulation: true}, nil, migration.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctrls.Run(ctx, 2) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	vm := &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-cirros", Namespace: "default", UID: "vm-uid", Generation: 1},
		Spec: kubevirtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(kubevirtv1.RunStrategyAlways),
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
				Domain: kubevirtv1.DomainSpec{Resources: kubevirtv1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64M")}}},
			}},
		},
	}
	if err := kv.Tracker().Add(vm); err != nil {
		t.Fatal(err)
	}

	// kube-scheduler binds the pod, the kubelet runs it.
	var pod *corev1.Pod
	waitFor(t, "the launcher pod", func() bool {
		obj, err := kube.Tracker().Get(podsGVR, "default", "virt-launcher-vm-cirros-abcde")
		if err != nil {
			return false
		}
		pod = obj.(*corev1.Pod).DeepCopy()
		return true
	})
	time.Sleep(200 * time.Millisecond) // kube-scheduler takes a moment (well inside the scheduling grace)
	pod.Spec.NodeName = "node1"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	if err := kube.Tracker().Update(podsGVR, pod, "default"); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the instance to be Scheduled", func() bool {
		obj, err := kv.Tracker().Get(vmisGVR, "default", "vm-cirros")
		if err != nil {
			return false
		}
		vmi := obj.(*kubevirtv1.VirtualMachineInstance)
		return vmi.Status.Phase == kubevirtv1.Scheduled && vmi.Status.NodeName == "node1"
	})
	// Anything still to come would be an extra write; wait past the scheduling grace too.
	time.Sleep(1500 * time.Millisecond)

	obj, err := kv.Tracker().Get(vmsGVR, "default", "vm-cirros")
	if err != nil {
		t.Fatal(err)
	}
	if st := obj.(*kubevirtv1.VirtualMachine).Status; !st.Created || st.PrintableStatus != kubevirtv1.VirtualMachineStatusStarting {
		t.Errorf("VM status = created %v %s, want created Starting", st.Created, st.PrintableStatus)
	}

	var writes, events []string
	for _, w := range log.get() {
		if strings.HasSuffix(w, " events") {
			events = append(events, w)
			continue
		}
		writes = append(writes, w)
	}
	sort.Strings(writes)
	want := []string{
		"create pods",                           // VMI controller: the launcher pod
		"create virtualmachineinstances",        // VM controller: the instance (with its finalizer)
		"update virtualmachineinstances/status", // VMI controller: Scheduled + nodeName (Pending → Scheduled)
		"update virtualmachines/status",         // VM controller: created, Starting
	}
	if fmt.Sprint(writes) != fmt.Sprint(want) {
		t.Errorf("writes per start:\n got %d: %v\nwant %d: %v", len(writes), writes, len(want), want)
	}
	t.Logf("API writes from VM start to VMI Scheduled: %d (%v), plus %d events", len(writes), writes, len(events))
}
