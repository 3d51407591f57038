package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	clientset "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// setMigratable writes the instance's LiveMigratable condition, as the node agent would.
func setMigratable(t *testing.T, c clientset.Interface, vmi *kubevirtv1.VirtualMachineInstance, status corev1.ConditionStatus, reason, msg string) {
	t.Helper()
	vmi.Status.Conditions = append(vmi.Status.Conditions, kubevirtv1.VirtualMachineInstanceCondition{
		Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: status, Reason: reason, Message: msg})
	if _, err := c.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(context.Background(), vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("LiveMigratable of %s: %v", vmi.Name, err)
	}
}

func newMigration(name, vmi string) *kubevirtv1.VirtualMachineInstanceMigration {
	return &kubevirtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
	}
}

// TestMigrationCreateChecksTheInstance: the server refuses a migration of an instance that cannot
// be migrated, with a 422 naming spec.vmiName and KubeVirt's message, both when the migration is
// created directly and through the VM's migrate subresource (which creates one).
func TestMigrationCreateChecksTheInstance(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	client := srv.HTTPClient(t)
	ctx := context.Background()

	cases := []struct {
		name    string
		setup   func(t *testing.T, name string)
		wantMsg string // "" = accepted
		// subMsg, when set, is the subresource's own refusal (409): it checks the VM first.
		subMsg string
	}{
		{name: "running", setup: func(t *testing.T, name string) {
			setMigratable(t, c, makeVM(t, c, name, vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running}), corev1.ConditionTrue, "", "")
		}},
		{name: "no instance", setup: func(t *testing.T, name string) {
			makeVM(t, c, name, vmState{runStrategy: kubevirtv1.RunStrategyHalted})
		}, wantMsg: `the VMI "default/` + "%s" + `" does not exist`, subMsg: "VM is not running"},
		{name: "not migratable", setup: func(t *testing.T, name string) {
			setMigratable(t, c, makeVM(t, c, name, vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running}),
				corev1.ConditionFalse, "DisksNotLiveMigratable", "cannot migrate VMI: hostDisk volume hd is on this node")
		}, wantMsg: "Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: hostDisk volume hd is on this node"},
		{name: "in flight", setup: func(t *testing.T, name string) {
			makeVM(t, c, name, vmState{runStrategy: kubevirtv1.RunStrategyAlways, vmiPhase: kubevirtv1.Running})
			if _, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration(name+"-first", name), metav1.CreateOptions{}); err != nil {
				t.Fatalf("first migration: %v", err)
			}
		}, wantMsg: "in-flight migration detected. Active migration job ("},
	}
	for _, tc := range cases {
		for _, via := range []string{"vmim", "subresource"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				name := strings.ReplaceAll(tc.name, " ", "-") + "-" + via
				tc.setup(t, name)
				want := tc.wantMsg
				if strings.Contains(want, "%s") {
					want = strings.ReplaceAll(want, "%s", name)
				}
				wantCode := http.StatusUnprocessableEntity
				if via == "subresource" && tc.subMsg != "" {
					want, wantCode = tc.subMsg, http.StatusConflict
				}
				var code int
				var body string
				if via == "vmim" {
					_, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration(name, name), metav1.CreateOptions{})
					if err != nil {
						code, body = statusCode(err), err.Error()
						if !apierrors.IsInvalid(err) {
							t.Errorf("want 422 Invalid, got %v", err)
						} else if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) != 1 || causes[0].Field != "spec.vmiName" {
							t.Errorf("causes %+v, want one naming spec.vmiName", causes)
						}
					} else {
						code = http.StatusCreated
					}
				} else {
					resp := do(t, client, http.MethodPut, srv.Config.Host+actionPath("sub", "virtualmachines", name, "migrate"), "application/json", nil)
					code, body = resp.code, resp.body
					if code == http.StatusUnprocessableEntity {
						var st metav1.Status
						if err := json.Unmarshal([]byte(body), &st); err != nil || int(st.Code) != code || st.Details == nil ||
							len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "spec.vmiName" {
							t.Errorf("error body is not a Status naming spec.vmiName: %s", body)
						}
					}
				}
				switch {
				case want == "" && code >= 400:
					t.Fatalf("refused: %d %s", code, body)
				case want != "" && (code != wantCode || !strings.Contains(body, want)):
					t.Fatalf("got %d %s, want %d with %q", code, body, wantCode, want)
				}
			})
		}
	}
}

func statusCode(err error) int {
	if s, ok := err.(apierrors.APIStatus); ok {
		return int(s.Status().Code)
	}
	return 0
}

// TestMigrationGetsSelectorLabelAndFinalizer: as KubeVirt's mutating webhook does, the server
// labels a new migration with its instance and adds the migration controller's finalizer.
func TestMigrationGetsSelectorLabelAndFinalizer(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	ctx := context.Background()
	makeVMI(t, c, "vm1", kubevirtv1.Running, false)
	m, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("m1", "vm1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Labels[kubevirtv1.MigrationSelectorLabel]; got != "vm1" {
		t.Errorf("label %s = %q, want vm1", kubevirtv1.MigrationSelectorLabel, got)
	}
	if diff := cmp.Diff([]string{kubevirtv1.VirtualMachineInstanceMigrationFinalizer}, m.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	list, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.MigrationSelectorLabel + "=vm1"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("select by %s: %d items, err %v", kubevirtv1.MigrationSelectorLabel, len(list.Items), err)
	}
	// Once the first one is final, the next migration of the instance is accepted.
	m.Status.Phase = kubevirtv1.MigrationFailed
	if _, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("m2", "vm1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a migration after a failed one: %v", err)
	}
}

// TestMigrationTargetLabelMirrored: the /status strategy keeps kubevirt.io/migrationTargetNodeName
// in step with status.migrationState (what the target node agent watches), and a handover moves
// status.nodeName and the kubevirt.io/nodeName label to the target.
func TestMigrationTargetLabelMirrored(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	ctx := context.Background()
	vmis := c.KubevirtV1().VirtualMachineInstances(ns)
	makeVMIOn(t, c, "vm1", "node-a", kubevirtv1.Running, false)
	makeVMIOn(t, c, "bystander", "node-a", kubevirtv1.Running, false)

	onTarget := func() []string {
		t.Helper()
		list, err := vmis.List(ctx, metav1.ListOptions{LabelSelector: kubevirtv1.MigrationTargetNodeNameLabel + "=node-b"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range list.Items {
			names = append(names, v.Name)
		}
		return names
	}
	write := func(mutate func(st *kubevirtv1.VirtualMachineInstanceStatus)) *kubevirtv1.VirtualMachineInstance {
		t.Helper()
		cur, err := vmis.Get(ctx, "vm1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(&cur.Status)
		out, err := vmis.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("status update: %v", err)
		}
		return out
	}

	vmi := write(func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		st.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-a", TargetNode: "node-b",
			TargetPod: "virt-launcher-vm1-abcde", Mode: kubevirtv1.MigrationPreCopy}
	})
	if got := vmi.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; got != "node-b" {
		t.Errorf("label %s = %q after the target was set, want node-b", kubevirtv1.MigrationTargetNodeNameLabel, got)
	}
	if diff := cmp.Diff([]string{"vm1"}, onTarget()); diff != "" {
		t.Errorf("instances selected for node-b (-want +got):\n%s", diff)
	}

	// The node may not change while the migration is not completed.
	cur, _ := vmis.Get(ctx, "vm1", metav1.GetOptions{})
	cur.Status.NodeName = "node-b"
	if _, err := vmis.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("nodeName change before completion: want Invalid, got %v", err)
	}

	// Handover: completed, then the node moves; both labels follow.
	vmi = write(func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		st.MigrationState.Completed = true
		st.MigrationState.TargetNodeDomainDetected = true
		st.NodeName = "node-b"
	})
	if _, ok := vmi.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; ok || vmi.Labels[kubevirtv1.NodeNameLabel] != "node-b" {
		t.Errorf("labels after the handover: %v, want nodeName node-b and no migration target", vmi.Labels)
	}
	if got := onTarget(); len(got) != 0 {
		t.Errorf("instances still selected as migrating to node-b: %v", got)
	}
	list, err := vmis.List(ctx, metav1.ListOptions{FieldSelector: "status.nodeName=node-b"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "vm1" {
		t.Errorf("field selector status.nodeName=node-b: %v (err %v)", list, err)
	}

	// A new migration that is cleared before completion drops the label again.
	write(func(st *kubevirtv1.VirtualMachineInstanceStatus) {
		st.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m2", SourceNode: "node-b", TargetNode: "node-a"}
	})
	vmi = write(func(st *kubevirtv1.VirtualMachineInstanceStatus) { st.MigrationState = nil })
	if _, ok := vmi.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; ok {
		t.Errorf("label kept after migrationState was cleared: %v", vmi.Labels)
	}
}
