package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned/fake"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newRS(replicas int32, opts ...func(*kubevirtv1.VirtualMachineInstanceReplicaSet)) *kubevirtv1.VirtualMachineInstanceReplicaSet {
	rs := &kubevirtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default", UID: "rs-uid", ResourceVersion: "1"},
		Spec: kubevirtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			},
		},
	}
	for _, o := range opts {
		o(rs)
	}
	return rs
}

type vmiOpt func(*kubevirtv1.VirtualMachineInstance)

func newVMI(name string, opts ...vmiOpt) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "1",
		Labels:            map[string]string{"app": "web"},
		CreationTimestamp: metav1.NewTime(testNow.Add(-time.Hour)),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: rsKind, Name: "rs", UID: "rs-uid",
			Controller: ptr.To(true)}},
	}}
	for _, o := range opts {
		o(vmi)
	}
	return vmi
}

func phase(p kubevirtv1.VirtualMachineInstancePhase) vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = p }
}

func ready() vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) {
		v.Status.Phase = kubevirtv1.Running
		v.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}}
	}
}

func age(d time.Duration) vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) { v.CreationTimestamp = metav1.NewTime(testNow.Add(-d)) }
}

func orphan() vmiOpt { return func(v *kubevirtv1.VirtualMachineInstance) { v.OwnerReferences = nil } }

func labelled(l map[string]string) vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) { v.Labels = l }
}

func deleting() vmiOpt {
	return func(v *kubevirtv1.VirtualMachineInstance) { t := metav1.NewTime(testNow); v.DeletionTimestamp = &t }
}

func names(vs []*kubevirtv1.VirtualMachineInstance) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func TestPlanScale(t *testing.T) {
	tests := []struct {
		name       string
		want       int
		active     []*kubevirtv1.VirtualMachineInstance
		wantCreate int
		wantDelete []string
	}{
		{name: "0 to 3", want: 3, wantCreate: 3},
		{name: "burst cap", want: 25, wantCreate: burst},
		{name: "steady", want: 1, active: []*kubevirtv1.VirtualMachineInstance{newVMI("a")}},
		{
			name: "3 to 1: not ready and newest go first",
			want: 1,
			active: []*kubevirtv1.VirtualMachineInstance{
				newVMI("old-ready", ready(), age(3*time.Hour)),
				newVMI("new-ready", ready(), age(time.Hour)),
				newVMI("scheduling", phase(kubevirtv1.Scheduling), age(5*time.Hour)),
			},
			wantDelete: []string{"scheduling", "new-ready"},
		},
		{
			name: "earlier phases before later ones",
			want: 1,
			active: []*kubevirtv1.VirtualMachineInstance{
				newVMI("running", phase(kubevirtv1.Running)),
				newVMI("scheduled", phase(kubevirtv1.Scheduled)),
				newVMI("pending", phase(kubevirtv1.Pending)),
			},
			wantDelete: []string{"pending", "scheduled"},
		},
		{name: "to zero", want: 0, active: []*kubevirtv1.VirtualMachineInstance{newVMI("a"), newVMI("b")}, wantDelete: []string{"b", "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planScale(tc.want, tc.active)
			if p.create != tc.wantCreate {
				t.Errorf("create = %d, want %d", p.create, tc.wantCreate)
			}
			if diff := cmp.Diff(tc.wantDelete, names(p.delete)); diff != "" {
				t.Errorf("delete (-want +got):\n%s", diff)
			}
		})
	}
}

type ownStub struct {
	fresh   *kubevirtv1.VirtualMachineInstanceReplicaSet
	patches []string
}

func (s *ownStub) api() *ownershipAPI {
	return &ownershipAPI{
		patch: func(_ context.Context, _, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
			s.patches = append(s.patches, name)
			return newVMI(name), nil
		},
		getRS: func(_ context.Context, _, name string) (*kubevirtv1.VirtualMachineInstanceReplicaSet, error) {
			if s.fresh == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{}, name)
			}
			return s.fresh, nil
		},
	}
}

func TestClaim(t *testing.T) {
	other := func(v *kubevirtv1.VirtualMachineInstance) { v.OwnerReferences[0].UID = "other" }
	tests := []struct {
		name        string
		rs          *kubevirtv1.VirtualMachineInstanceReplicaSet
		fresh       *kubevirtv1.VirtualMachineInstanceReplicaSet
		vmis        []*kubevirtv1.VirtualMachineInstance
		wantOwned   []string
		wantPatches []string
		wantErr     bool
	}{
		{name: "owned and matching", rs: newRS(1), vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a")}, wantOwned: []string{"a"}},
		{name: "another controller's", rs: newRS(1), vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", other)}},
		{name: "orphan adopted", rs: newRS(1), fresh: newRS(1), vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", orphan())},
			wantOwned: []string{"a"}, wantPatches: []string{"a"}},
		{name: "non-matching orphan ignored", rs: newRS(1), fresh: newRS(1),
			vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", orphan(), labelled(map[string]string{"app": "db"}))}},
		{name: "finished orphan not adopted", rs: newRS(1), fresh: newRS(1), vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", orphan(), phase(kubevirtv1.Succeeded))}},
		{name: "orphan not adopted by a replaced replica set", rs: newRS(1),
			fresh: newRS(1, func(r *kubevirtv1.VirtualMachineInstanceReplicaSet) { r.UID = "new" }),
			vmis:  []*kubevirtv1.VirtualMachineInstance{newVMI("a", orphan())}},
		{name: "fresh read fails", rs: newRS(1), vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", orphan())}, wantErr: true},
		{name: "relabelled instance released", rs: newRS(1),
			vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", labelled(map[string]string{"app": "debug"}))}, wantPatches: []string{"a"}},
		{name: "relabelled terminating instance left alone", rs: newRS(1),
			vmis: []*kubevirtv1.VirtualMachineInstance{newVMI("a", labelled(nil), deleting())}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &ownStub{fresh: tc.fresh}
			sel, _ := metav1.LabelSelectorAsSelector(tc.rs.Spec.Selector)
			owned, err := s.api().claim(context.Background(), tc.rs, sel, tc.vmis)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantOwned, names(owned)); diff != "" {
				t.Errorf("owned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPatches, s.patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	earlier := metav1.NewTime(testNow.Add(-time.Hour))
	paused := newRS(2, func(r *kubevirtv1.VirtualMachineInstanceReplicaSet) {
		r.Spec.Paused = true
		r.Status.Conditions = []kubevirtv1.VirtualMachineInstanceReplicaSetCondition{{Type: kubevirtv1.VirtualMachineInstanceReplicaSetReplicaPaused,
			Status: corev1.ConditionTrue, LastTransitionTime: earlier}}
	})
	got := computeStatus(paused, []*kubevirtv1.VirtualMachineInstance{newVMI("a", ready()), newVMI("b")}, "app=web",
		ReasonFailedCreate, errors.New("quota"), testNow)
	want := kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, LabelSelector: "app=web",
		Conditions: []kubevirtv1.VirtualMachineInstanceReplicaSetCondition{
			{Type: kubevirtv1.VirtualMachineInstanceReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: ReasonFailedCreate,
				Message: "quota", LastTransitionTime: metav1.NewTime(testNow)},
			{Type: kubevirtv1.VirtualMachineInstanceReplicaSetReplicaPaused, Status: corev1.ConditionTrue, Reason: "Paused",
				Message: "the replica set is paused: it neither creates nor deletes instances", LastTransitionTime: earlier},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// fixture runs the controller against fake clients; the test fills the caches.
type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	c       *Controller
	rsStore cache.Indexer
	vmi     cache.Indexer
}

func newFixture(t *testing.T, rs *kubevirtv1.VirtualMachineInstanceReplicaSet, vmis ...*kubevirtv1.VirtualMachineInstance) *fixture {
	objs := []runtime.Object{rs}
	for _, v := range vmis {
		objs = append(objs, v)
	}
	client := fake.NewSimpleClientset(objs...)
	n := 0
	client.PrependReactor("create", "virtualmachineinstances", func(a clienttesting.Action) (bool, runtime.Object, error) {
		vmi := a.(clienttesting.CreateAction).GetObject().(*kubevirtv1.VirtualMachineInstance)
		if vmi.Name == "" {
			n++
			vmi.Name = fmt.Sprintf("%sx%04d", vmi.GenerateName, n)
			vmi.UID = types.UID(vmi.Name + "-uid")
		}
		return false, nil, nil
	})
	factory := externalversions.NewSharedInformerFactory(client, 0)
	rsInf, vmiInf := factory.Kubevirt().V1().VirtualMachineInstanceReplicaSets(), factory.Kubevirt().V1().VirtualMachineInstances()
	c, err := New(client, rsInf, vmiInf, record.NewFakeRecorder(100))
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return testNow }
	f := &fixture{t: t, client: client, c: c, rsStore: rsInf.Informer().GetIndexer(), vmi: vmiInf.Informer().GetIndexer()}
	_ = f.rsStore.Add(rs)
	for _, v := range vmis {
		_ = f.vmi.Add(v)
	}
	return f
}

func (f *fixture) sync() []string {
	f.t.Helper()
	f.client.ClearActions()
	if _, err := f.c.sync(context.Background(), "default/rs"); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	var writes []string
	for _, a := range f.client.Actions() {
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
	return writes
}

// observe copies the stored instances into the cache and fires the add events.
func (f *fixture) observe() []*kubevirtv1.VirtualMachineInstance {
	f.t.Helper()
	list, err := f.client.KubevirtV1().VirtualMachineInstances("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*kubevirtv1.VirtualMachineInstance
	for i := range list.Items {
		v := &list.Items[i]
		if _, exists, _ := f.vmi.Get(v); !exists {
			_ = f.vmi.Add(v)
			f.c.vmiEvents.OnAdd(v, false)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (f *fixture) setReplicas(n int32) {
	rs, err := f.client.KubevirtV1().VirtualMachineInstanceReplicaSets("default").Get(context.Background(), "rs", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	rs.Spec.Replicas = &n
	_ = f.rsStore.Update(rs)
	f.c.rsChanged(rs)
}

func (f *fixture) status() kubevirtv1.VirtualMachineInstanceReplicaSetStatus {
	rs, err := f.client.KubevirtV1().VirtualMachineInstanceReplicaSets("default").Get(context.Background(), "rs", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	_ = f.rsStore.Update(rs)
	f.c.rsChanged(rs)
	return rs.Status
}

func count(writes []string, w string) int {
	n := 0
	for _, x := range writes {
		if x == w {
			n++
		}
	}
	return n
}

func TestSyncScaleUpDown(t *testing.T) {
	f := newFixture(t, newRS(0))
	if got := f.sync(); count(got, "update virtualmachineinstancereplicasets/status") != 1 {
		t.Errorf("first sync writes %v, want the labelSelector status write", got)
	}
	if got := f.status(); got.LabelSelector != "app=web" {
		t.Errorf("labelSelector = %q", got.LabelSelector)
	}

	// 0 → 3
	f.setReplicas(3)
	if got := f.sync(); count(got, "create virtualmachineinstances") != 3 {
		t.Fatalf("scale up writes %v, want 3 creates", got)
	}
	// Not yet observed: the expectations stop a second round of creates.
	if got := f.sync(); count(got, "create virtualmachineinstances") != 0 {
		t.Fatalf("sync before observation created more: %v", got)
	}
	created := f.observe()
	if len(created) != 3 {
		t.Fatalf("%d instances, want 3", len(created))
	}
	for _, v := range created {
		if v.GenerateName != "rs-" || v.Labels["app"] != "web" || metav1.GetControllerOf(v) == nil || len(v.Finalizers) != 1 {
			t.Errorf("instance %s: generateName %q labels %v controller %v finalizers %v", v.Name, v.GenerateName, v.Labels,
				metav1.GetControllerOf(v), v.Finalizers)
		}
	}
	f.sync()
	if got := f.status(); got.Replicas != 3 {
		t.Errorf("status.replicas = %d, want 3", got.Replicas)
	}

	// 3 → 1: the two not-ready newest go.
	v0 := created[0].DeepCopy()
	ready()(v0)
	_ = f.vmi.Update(v0)
	f.setReplicas(1)
	got := f.sync()
	if count(got, "delete virtualmachineinstances") != 2 {
		t.Fatalf("scale down writes %v, want 2 deletes", got)
	}
	remaining, err := f.client.KubevirtV1().VirtualMachineInstances("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(remaining.Items) != 1 || remaining.Items[0].Name != v0.Name {
		t.Errorf("remaining %v, want the ready %s", remaining.Items, v0.Name)
	}
}

func TestSyncReplacesFinishedAndAdopts(t *testing.T) {
	f := newFixture(t, newRS(2),
		newVMI("done", phase(kubevirtv1.Failed)),
		newVMI("stray", orphan()),
		newVMI("foreign", orphan(), labelled(map[string]string{"app": "db"})))
	got := f.sync()
	want := map[string]int{
		"patch virtualmachineinstances":  1, // adopt stray
		"delete virtualmachineinstances": 1, // replace done
		"create virtualmachineinstances": 1, // stray + 1 new = 2
	}
	for w, n := range want {
		if c := count(got, w); c != n {
			t.Errorf("%q: %d, want %d (all writes %v)", w, c, n, got)
		}
	}
	stray, err := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "stray", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(stray); ref == nil || ref.UID != "rs-uid" {
		t.Errorf("stray's controller = %v", ref)
	}
	foreign, _ := f.client.KubevirtV1().VirtualMachineInstances("default").Get(context.Background(), "foreign", metav1.GetOptions{})
	if len(foreign.OwnerReferences) != 0 {
		t.Errorf("foreign instance adopted: %v", foreign.OwnerReferences)
	}
}

func TestSyncPaused(t *testing.T) {
	f := newFixture(t, newRS(3, func(r *kubevirtv1.VirtualMachineInstanceReplicaSet) { r.Spec.Paused = true }))
	got := f.sync()
	if count(got, "create virtualmachineinstances") != 0 {
		t.Errorf("paused replica set created instances: %v", got)
	}
	if st := f.status(); len(st.Conditions) != 1 || st.Conditions[0].Type != kubevirtv1.VirtualMachineInstanceReplicaSetReplicaPaused {
		t.Errorf("conditions = %+v", st.Conditions)
	}
}

func TestEnqueueMatching(t *testing.T) {
	f := newFixture(t, newRS(1))
	other := newRS(1, func(r *kubevirtv1.VirtualMachineInstanceReplicaSet) {
		r.Name, r.UID = "other", "other-uid"
		r.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	})
	_ = f.rsStore.Add(other)
	f.c.vmiEvents.OnAdd(newVMI("x", orphan()), false)
	if n := f.c.queue.Len(); n != 1 {
		t.Errorf("queued %d replica sets for an orphan matching one", n)
	}
}
