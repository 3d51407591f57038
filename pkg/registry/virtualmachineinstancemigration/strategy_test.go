package virtualmachineinstancemigration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

func TestSelectableFieldsAndTable(t *testing.T) {
	m := &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", CreationTimestamp: metav1.Now()},
		Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vmi1"},
		Status:     kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: kubevirtv1.MigrationRunning},
	}
	_, got, err := GetAttrs(m)
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "m", "metadata.namespace": "ns", "spec.vmiName": "vmi1", "status.phase": "Running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectable fields (-want +got):\n%s", diff)
	}
	table, err := Table().ConvertToTable(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interface{}{"m", "Running", "vmi1", "0s"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

func TestPrepareForCreateLabelsAndFinalizer(t *testing.T) {
	main, _ := store.NewStrategies(nil, Rules)
	tests := []struct {
		name           string
		in             *kubevirtv1.VirtualMachineInstanceMigration
		wantLabels     map[string]string
		wantFinalizers []string
	}{
		{name: "plain", in: &kubevirtv1.VirtualMachineInstanceMigration{Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"}},
			wantLabels:     map[string]string{kubevirtv1.MigrationSelectorLabel: "vm1"},
			wantFinalizers: []string{kubevirtv1.VirtualMachineInstanceMigrationFinalizer}},
		{name: "own labels and finalizers kept, no duplicate", in: &kubevirtv1.VirtualMachineInstanceMigration{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b", kubevirtv1.MigrationSelectorLabel: "other"},
				Finalizers: []string{"x", kubevirtv1.VirtualMachineInstanceMigrationFinalizer}},
			Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"}},
			wantLabels:     map[string]string{"a": "b", kubevirtv1.MigrationSelectorLabel: "vm1"},
			wantFinalizers: []string{"x", kubevirtv1.VirtualMachineInstanceMigrationFinalizer}},
		{name: "no label for a name validation refuses", in: &kubevirtv1.VirtualMachineInstanceMigration{
			Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "not a label value!"}},
			wantFinalizers: []string{kubevirtv1.VirtualMachineInstanceMigrationFinalizer}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Status.Phase = kubevirtv1.MigrationSucceeded
			main.PrepareForCreate(context.Background(), tc.in)
			if diff := cmp.Diff(tc.wantLabels, tc.in.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, tc.in.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if tc.in.Status.Phase != "" {
				t.Errorf("status not cleared: %+v", tc.in.Status)
			}
		})
	}
}

// stubGetter serves one instance (or none) and records the namespace asked for.
type stubGetter struct {
	vmi *kubevirtv1.VirtualMachineInstance
	err error
}

func (s stubGetter) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if s.err != nil {
		return nil, s.err
	}
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	if s.vmi == nil || s.vmi.Name != name || s.vmi.Namespace != ns {
		return nil, apierrors.NewNotFound(kubevirtv1.Resource("virtualmachineinstances"), name)
	}
	return s.vmi.DeepCopy(), nil
}

// stubLister lists migrations, honouring the spec.vmiName field selector.
type stubLister struct {
	items []kubevirtv1.VirtualMachineInstanceMigration
	err   error
}

func (s stubLister) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if s.err != nil {
		return nil, s.err
	}
	out := &kubevirtv1.VirtualMachineInstanceMigrationList{}
	for _, m := range s.items {
		if opts.FieldSelector == nil || opts.FieldSelector.Matches(SelectableFields(&m)) {
			out.Items = append(out.Items, m)
		}
	}
	return out, nil
}

func (stubLister) NewList() runtime.Object { return &kubevirtv1.VirtualMachineInstanceMigrationList{} }

func (stubLister) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return nil, nil
}

func TestCreateChecksTheInstance(t *testing.T) {
	plain, _ := store.NewStrategies(nil, Rules)
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns"},
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Running}}
	notMigratable := vmi.DeepCopy()
	notMigratable.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{{Type: kubevirtv1.VirtualMachineInstanceIsMigratable,
		Status: corev1.ConditionFalse, Reason: "DisksNotLiveMigratable", Message: "volume v is a claim"}}
	active := kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "m0", Namespace: "ns", UID: "m0-uid"},
		Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"}, Status: kubevirtv1.VirtualMachineInstanceMigrationStatus{Phase: kubevirtv1.MigrationRunning}}
	otherVMI := active
	otherVMI.Spec.VMIName = "vm2"
	tests := []struct {
		name    string
		vmiName string
		getter  stubGetter
		lister  stubLister
		want    string // "" = accepted
	}{
		{name: "accepted", vmiName: "vm1", getter: stubGetter{vmi: vmi}, lister: stubLister{items: []kubevirtv1.VirtualMachineInstanceMigration{otherVMI}}},
		{name: "no such instance", vmiName: "vm1", want: `spec.vmiName: Invalid value: "vm1": the VMI "ns/vm1" does not exist`},
		{name: "instance in another namespace", vmiName: "vm1", getter: stubGetter{vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := vmi.DeepCopy()
			v.Namespace = "elsewhere"
			return v
		}()}, want: "does not exist"},
		{name: "not migratable", vmiName: "vm1", getter: stubGetter{vmi: notMigratable},
			want: "Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: volume v is a claim"},
		{name: "in flight", vmiName: "vm1", getter: stubGetter{vmi: vmi}, lister: stubLister{items: []kubevirtv1.VirtualMachineInstanceMigration{active}},
			want: "spec.vmiName: Forbidden: in-flight migration detected. Active migration job (m0-uid)"},
		{name: "store failure is not a 500", vmiName: "vm1", getter: stubGetter{err: errors.New("etcd is down")}, want: "spec.vmiName: Internal error"},
		{name: "list failure is not a 500", vmiName: "vm1", getter: stubGetter{vmi: vmi}, lister: stubLister{err: errors.New("etcd is down")},
			want: "spec.vmiName: Internal error"},
		{name: "spec errors first, no lookup", vmiName: "", getter: stubGetter{err: errors.New("must not be called")}, want: "spec.vmiName: Required value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := checkedStrategy{Strategy: plain, check: &sourceCheck{instances: tc.getter, migrations: tc.lister}}
			m := &kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns", UID: "m1-uid"},
				Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: tc.vmiName}}
			ctx := genericapirequest.WithNamespace(context.Background(), "ns")
			errs := s.Validate(ctx, m)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Errorf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}
