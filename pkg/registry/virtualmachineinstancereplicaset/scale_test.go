package virtualmachineinstancereplicaset

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func replicaSet(replicas *int32) *kubevirtv1.VirtualMachineInstanceReplicaSet {
	return &kubevirtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", ResourceVersion: "7"},
		Spec: kubevirtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
		Status: kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 2},
	}
}

func TestScaleOf(t *testing.T) {
	three := int32(3)
	got, err := scaleOf(replicaSet(&three))
	if err != nil {
		t.Fatal(err)
	}
	want := autoscalingv1.ScaleSpec{Replicas: 3}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if got.Status.Selector != "app=web" || got.Status.Replicas != 2 || got.ResourceVersion != "7" {
		t.Errorf("status/meta = %+v %q", got.Status, got.ResourceVersion)
	}
	if s, _ := scaleOf(replicaSet(nil)); s.Spec.Replicas != 1 {
		t.Errorf("nil replicas should read as 1, got %d", s.Spec.Replicas)
	}
}

func TestScaleUpdate(t *testing.T) {
	three := int32(3)
	cases := []struct {
		name     string
		replicas int32
		wantErr  bool
	}{
		{"scale to zero", 0, false},
		{"scale up", 10, false},
		{"negative is invalid", -1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := &scaleUpdate{name: "rs", inner: setReplicas(c.replicas)}
			obj, err := u.UpdatedObject(context.Background(), replicaSet(&three))
			if c.wantErr {
				if err == nil {
					t.Fatalf("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rs := obj.(*kubevirtv1.VirtualMachineInstanceReplicaSet)
			if *rs.Spec.Replicas != c.replicas {
				t.Errorf("replicas = %d, want %d", *rs.Spec.Replicas, c.replicas)
			}
		})
	}
}

// setReplicas is the caller's side of a scale write: it changes the replicas of the Scale it gets.
type setReplicas int32

func (setReplicas) Preconditions() *metav1.Preconditions { return nil }

func (r setReplicas) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	s := old.(*autoscalingv1.Scale).DeepCopy()
	s.Spec.Replicas = int32(r)
	return s, nil
}

var _ rest.UpdatedObjectInfo = setReplicas(0)

func TestTable(t *testing.T) {
	five := int32(5)
	rs := replicaSet(&five)
	rs.CreationTimestamp = metav1.Now()
	table, err := Table().ConvertToTable(context.Background(), rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"rs", int64(5), int64(2), int64(0), "0s"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
