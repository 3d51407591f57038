package migration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
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

// fixture runs the controller on fake clientsets. The informers are not started: observe copies
// the clientsets' objects into their caches and calls the event handlers, as the informers would,
// so that a test decides exactly what the controller has seen. Node agents, the scheduler and the
// kubelet are simulated by writes to the clientsets.
type fixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	kv       *fake.Clientset
	c        *Controller
	recorder *record.FakeRecorder
	migInf   cache.SharedIndexInformer
	vmiInf   cache.SharedIndexInformer
	podInf   cache.SharedIndexInformer
	now      time.Time

	mu     sync.Mutex
	writes []string
	rv     int
}

func newFixture(t *testing.T, cfg Config, objs ...runtime.Object) *fixture {
	t.Helper()
	var kubeObjs, kvObjs []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*corev1.Pod); ok {
			kubeObjs = append(kubeObjs, o)
		} else {
			kvObjs = append(kvObjs, o)
		}
	}
	f := &fixture{t: t, kube: kubefake.NewSimpleClientset(kubeObjs...), kv: fake.NewSimpleClientset(kvObjs...), now: testNow, rv: 100}
	n := 0
	f.kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pod := a.(clienttesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" {
			n++
			pod.Name = fmt.Sprintf("%s%d", pod.GenerateName, n)
		}
		pod.UID = types.UID(pod.Name + "-uid")
		pod.CreationTimestamp = metav1.NewTime(f.now)
		return false, nil, nil
	})
	// Every write gets a new resourceVersion, as from the apiserver, and is logged in order.
	for _, c := range []*clienttesting.Fake{&f.kube.Fake, &f.kv.Fake} {
		c.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
			switch a.GetVerb() {
			case "create", "update", "patch", "delete":
			default:
				return false, nil, nil
			}
			w := a.GetVerb() + " " + a.GetResource().Resource
			if a.GetSubresource() != "" {
				w += "/" + a.GetSubresource()
			}
			f.mu.Lock()
			f.writes = append(f.writes, w)
			f.rv++
			rv := fmt.Sprint(f.rv)
			f.mu.Unlock()
			if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
				if m, ok := o.GetObject().(metav1.Object); ok {
					m.SetResourceVersion(rv)
				}
			}
			return false, nil, nil
		})
	}
	kvFactory := externalversions.NewSharedInformerFactory(f.kv, 0)
	podInf := kubeinformers.NewSharedInformerFactory(f.kube, 0).Core().V1().Pods()
	migInf := kvFactory.Kubevirt().V1().VirtualMachineInstanceMigrations()
	vmiInf := kvFactory.Kubevirt().V1().VirtualMachineInstances()
	f.recorder = record.NewFakeRecorder(1000)
	cfg.Launcher = launcherpod.Config{UseEmulation: true}
	c, err := New(f.kube, f.kv, migInf, vmiInf, podInf, cfg, f.recorder)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return f.now }
	f.c = c
	f.migInf, f.vmiInf, f.podInf = migInf.Informer(), vmiInf.Informer(), podInf.Informer()
	f.observe()
	return f
}

// observe brings the caches up to the clientsets' objects, calling the event handlers.
func (f *fixture) observe() {
	f.t.Helper()
	ctx := context.Background()
	migs, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations("").List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	vmis, err := f.kv.KubevirtV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	pods, err := f.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var migObjs, vmiObjs, podObjs []runtime.Object
	for i := range migs.Items {
		migObjs = append(migObjs, &migs.Items[i])
	}
	for i := range vmis.Items {
		vmiObjs = append(vmiObjs, &vmis.Items[i])
	}
	for i := range pods.Items {
		podObjs = append(podObjs, &pods.Items[i])
	}
	// Pods first, so that a migration queued by a pod event sees its instance's latest state too.
	syncStore(f.podInf.GetIndexer(), podObjs, func(o any) { f.c.podChanged(nil, o, false) },
		func(old, cur any) { f.c.podChanged(old, cur, false) }, func(o any) { f.c.podChanged(nil, o, true) })
	syncStore(f.vmiInf.GetIndexer(), vmiObjs, f.c.vmiChanged, func(_, cur any) { f.c.vmiChanged(cur) }, f.c.vmiChanged)
	syncStore(f.migInf.GetIndexer(), migObjs, f.c.migrationChanged, f.c.migrationUpdated, f.c.migrationDeleted)
}

func syncStore(store cache.Indexer, objs []runtime.Object, add func(any), update func(any, any), del func(any)) {
	seen := map[string]bool{}
	for _, o := range objs {
		key, _ := cache.MetaNamespaceKeyFunc(o)
		seen[key] = true
		old, exists, _ := store.GetByKey(key)
		if exists {
			if apiequality.Semantic.DeepEqual(old, o) {
				continue
			}
			_ = store.Update(o)
			update(old, o)
			continue
		}
		_ = store.Add(o)
		add(o)
	}
	for _, key := range store.ListKeys() {
		if !seen[key] {
			old, _, _ := store.GetByKey(key)
			_ = store.Delete(old)
			del(old)
		}
	}
}

// sync syncs one migration and returns the API writes it made, in order.
func (f *fixture) sync(name string) ([]string, time.Duration) {
	f.t.Helper()
	f.mu.Lock()
	f.writes = nil
	f.mu.Unlock()
	res, err := f.c.sync(context.Background(), "default/"+name)
	if err != nil {
		f.t.Fatalf("sync %s: %v", name, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, res.RequeueAfter
}

// step observes, syncs and checks the writes.
func (f *fixture) step(name string, want ...string) time.Duration {
	f.t.Helper()
	f.observe()
	got, requeue := f.sync(name)
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		f.t.Fatalf("sync %s wrote %v, want %v", name, got, want)
	}
	return requeue
}

func (f *fixture) mig(name string) *kubevirtv1.VirtualMachineInstanceMigration {
	f.t.Helper()
	m, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) vmi(name string) *kubevirtv1.VirtualMachineInstance {
	f.t.Helper()
	v, err := f.kv.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// targetPods are the pods labelled as m's targets.
func (f *fixture) targetPods(uid types.UID) []corev1.Pod {
	f.t.Helper()
	list, err := f.kube.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{
		LabelSelector: kubevirtv1.MigrationJobLabel + "=" + string(uid)})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// agent writes the instance's migrationState as a node agent would.
func (f *fixture) agent(vmiName string, mutate func(ms *kubevirtv1.VirtualMachineInstanceMigrationState)) {
	f.t.Helper()
	v := f.vmi(vmiName)
	if v.Status.MigrationState == nil {
		f.t.Fatalf("instance %s has no migrationState for the node agent to write", vmiName)
	}
	mutate(v.Status.MigrationState)
	if _, err := f.kv.KubevirtV1().VirtualMachineInstances("default").UpdateStatus(context.Background(), v, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// pod changes a pod as the scheduler or the kubelet would.
func (f *fixture) pod(name string, opts ...podOpt) {
	f.t.Helper()
	p, err := f.kube.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, o := range opts {
		o(p)
	}
	if _, err := f.kube.CoreV1().Pods("default").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// deleteMig marks a migration deleted, as the apiserver does for an object with finalizers.
func (f *fixture) deleteMig(name string) {
	f.t.Helper()
	m := f.mig(name)
	m.DeletionTimestamp = at(0)
	if _, err := f.kv.KubevirtV1().VirtualMachineInstanceMigrations("default").Update(context.Background(), m, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventReasons are the reasons of the drained events ("Normal SuccessfulCreate ..." → "SuccessfulCreate").
func (f *fixture) eventReasons() []string {
	var out []string
	for _, e := range f.events() {
		if parts := strings.SplitN(e, " ", 3); len(parts) >= 2 {
			out = append(out, parts[1])
		}
	}
	return out
}

func phases(m *kubevirtv1.VirtualMachineInstanceMigration) []kubevirtv1.VirtualMachineInstanceMigrationPhase {
	var out []kubevirtv1.VirtualMachineInstanceMigrationPhase
	for _, ts := range m.Status.PhaseTransitionTimestamps {
		out = append(out, ts.Phase)
	}
	return out
}

func condition(m *kubevirtv1.VirtualMachineInstanceMigration, t kubevirtv1.VirtualMachineInstanceMigrationConditionType) *kubevirtv1.VirtualMachineInstanceMigrationCondition {
	for i := range m.Status.Conditions {
		if m.Status.Conditions[i].Type == t {
			return &m.Status.Conditions[i]
		}
	}
	return nil
}

// freshMig is a migration as a user creates it and the apiserver stores it: no status yet.
func freshMig(name, vmi string) *kubevirtv1.VirtualMachineInstanceMigration {
	m := newMig()
	m.Name, m.UID, m.Spec.VMIName = name, types.UID(name+"-uid"), vmi
	m.Labels = map[string]string{kubevirtv1.MigrationSelectorLabel: vmi}
	return m
}
