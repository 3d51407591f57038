package lifecycle

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

const vmiUID = types.UID("vmi-uid")

func vmWith(strategy kubevirtv1.VirtualMachineRunStrategy, pending ...kubevirtv1.StateChangeRequestAction) *kubevirtv1.VirtualMachine {
	vm := &kubevirtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns"}}
	if strategy != "" {
		vm.Spec.RunStrategy = &strategy
	}
	for _, a := range pending {
		vm.Status.StateChangeRequests = append(vm.Status.StateChangeRequests, kubevirtv1.VirtualMachineStateChangeRequest{Action: a})
	}
	return vm
}

func legacyVM(running bool) *kubevirtv1.VirtualMachine {
	vm := vmWith("")
	vm.Spec.Running = &running
	return vm
}

func vmiIn(phase kubevirtv1.VirtualMachineInstancePhase) *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: vmiUID},
		Status:     kubevirtv1.VirtualMachineInstanceStatus{Phase: phase},
	}
}

func withGrace(vmi *kubevirtv1.VirtualMachineInstance, g int64) *kubevirtv1.VirtualMachineInstance {
	vmi.Spec.TerminationGracePeriodSeconds = &g
	return vmi
}

func uidPtr() *types.UID { u := vmiUID; return &u }
func i64(v int64) *int64 { return &v }

var (
	reqStart = kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest}
	reqStop  = kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StopRequest, UID: uidPtr()}
)

type planCase struct {
	name     string
	vm       *kubevirtv1.VirtualMachine
	vmi      *kubevirtv1.VirtualMachineInstance
	want     Plan
	wantCode int32 // 0: success
}

func runPlanCases(t *testing.T, cases []planCase, decide func(*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineInstance) (Plan, error)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decide(tc.vm, tc.vmi)
			var code int32
			if err != nil {
				status, ok := err.(apierrors.APIStatus)
				if !ok {
					t.Fatalf("error %v is not an API status", err)
				}
				code = status.Status().Code
			}
			if code != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code, err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanStart(t *testing.T) {
	tr := true
	cases := []planCase{
		{name: "halted", vm: vmWith(kubevirtv1.RunStrategyHalted), want: Plan{SetRunning: &tr}},
		{name: "legacy running false", vm: legacyVM(false), want: Plan{SetRunning: &tr}},
		{name: "no strategy at all", vm: vmWith(""), want: Plan{SetRunning: &tr}},
		{name: "halted with final instance", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: vmiIn(kubevirtv1.Succeeded), want: Plan{SetRunning: &tr}},
		{name: "halted with running instance", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
		{name: "halted with a stale pending request", vm: vmWith(kubevirtv1.RunStrategyHalted, kubevirtv1.StartRequest),
			want: Plan{SetRunning: &tr, WriteRequests: true}},
		{name: "manual", vm: vmWith(kubevirtv1.RunStrategyManual), want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStart}}},
		{name: "manual final instance", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Failed),
			want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop, reqStart}}},
		{name: "manual instance in phase Unknown", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Unknown),
			want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStart}}},
		{name: "manual pending", vm: vmWith(kubevirtv1.RunStrategyManual, kubevirtv1.StopRequest), wantCode: http.StatusConflict},
		{name: "manual running", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
		{name: "always running", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
		{name: "always pending phase", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(""), wantCode: http.StatusConflict},
		{name: "always no instance", vm: vmWith(kubevirtv1.RunStrategyAlways), wantCode: http.StatusConflict},
		{name: "rerun no instance", vm: vmWith(kubevirtv1.RunStrategyRerunOnFailure), want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStart}}},
		{name: "rerun succeeded", vm: vmWith(kubevirtv1.RunStrategyRerunOnFailure), vmi: vmiIn(kubevirtv1.Succeeded),
			want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop, reqStart}}},
		{name: "rerun failed", vm: vmWith(kubevirtv1.RunStrategyRerunOnFailure), vmi: vmiIn(kubevirtv1.Failed), wantCode: http.StatusConflict},
		{name: "once no instance", vm: vmWith(kubevirtv1.RunStrategyOnce), want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStart}}},
		{name: "once ran", vm: vmWith(kubevirtv1.RunStrategyOnce), vmi: vmiIn(kubevirtv1.Succeeded), wantCode: http.StatusConflict},
		{name: "wait as receiver", vm: vmWith(kubevirtv1.RunStrategyWaitAsReceiver), wantCode: http.StatusConflict},
		{name: "both fields set", vm: func() *kubevirtv1.VirtualMachine {
			vm := vmWith(kubevirtv1.RunStrategyAlways)
			f := false
			vm.Spec.Running = &f
			return vm
		}(), wantCode: http.StatusConflict},
	}
	runPlanCases(t, cases, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanStart(vm, vmi, &kubevirtv1.StartOptions{})
	})

	// virtctl start --paused: the start request carries KubeVirt's "paused" data; a Halted VM
	// becomes Always with that request pending, written before the run strategy.
	reqPaused := kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest,
		Data: map[string]string{kubevirtv1.StartRequestDataPausedKey: kubevirtv1.StartRequestDataPausedTrue}}
	paused := []planCase{
		{name: "paused halted", vm: vmWith(kubevirtv1.RunStrategyHalted),
			want: Plan{SetRunning: &tr, WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqPaused}}},
		{name: "paused halted with a pending request", vm: vmWith(kubevirtv1.RunStrategyHalted, kubevirtv1.StartRequest), wantCode: http.StatusConflict},
		{name: "paused manual", vm: vmWith(kubevirtv1.RunStrategyManual),
			want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqPaused}}},
		{name: "paused manual final instance", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Failed),
			want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop, reqPaused}}},
		{name: "paused rerun", vm: vmWith(kubevirtv1.RunStrategyRerunOnFailure),
			want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqPaused}}},
		{name: "paused always running", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
	}
	runPlanCases(t, paused, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanStart(vm, vmi, &kubevirtv1.StartOptions{Paused: true})
	})
}

func TestPlanStop(t *testing.T) {
	f := false
	stopOpts := func(grace *int64) func(*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanStop(vm, vmi, &kubevirtv1.StopOptions{GracePeriod: grace})
		}
	}
	runPlanCases(t, []planCase{
		{name: "always", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), want: Plan{SetRunning: &f}},
		{name: "always no instance", vm: vmWith(kubevirtv1.RunStrategyAlways), want: Plan{SetRunning: &f}},
		{name: "legacy running", vm: legacyVM(true), vmi: vmiIn(kubevirtv1.Running), want: Plan{SetRunning: &f}},
		{name: "rerun", vm: vmWith(kubevirtv1.RunStrategyRerunOnFailure), vmi: vmiIn(kubevirtv1.Running), want: Plan{SetRunning: &f}},
		{name: "once", vm: vmWith(kubevirtv1.RunStrategyOnce), vmi: vmiIn(kubevirtv1.Running), want: Plan{SetRunning: &f}},
		{name: "manual", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Running),
			want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop}}},
		{name: "manual replaces pending", vm: vmWith(kubevirtv1.RunStrategyManual, kubevirtv1.StartRequest, kubevirtv1.StartRequest), vmi: vmiIn(kubevirtv1.Scheduling),
			want: Plan{WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop}}},
		{name: "manual no instance", vm: vmWith(kubevirtv1.RunStrategyManual), wantCode: http.StatusConflict},
		{name: "manual final", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Succeeded), wantCode: http.StatusConflict},
		{name: "halted", vm: vmWith(kubevirtv1.RunStrategyHalted), wantCode: http.StatusConflict},
		{name: "halted stopping", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
		{name: "wait as receiver", vm: vmWith(kubevirtv1.RunStrategyWaitAsReceiver), wantCode: http.StatusConflict},
	}, stopOpts(nil))

	runPlanCases(t, []planCase{
		{name: "always grace 10", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running),
			want: Plan{SetRunning: &f, InstanceUID: vmiUID, DeleteInstance: i64(10)}},
		{name: "always grace ignored without instance", vm: vmWith(kubevirtv1.RunStrategyAlways), want: Plan{SetRunning: &f}},
		{name: "halted shorter than spec", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: withGrace(vmiIn(kubevirtv1.Running), 60),
			want: Plan{InstanceUID: vmiUID, DeleteInstance: i64(10), WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop}}},
		{name: "halted not shorter than default 30", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: withGrace(vmiIn(kubevirtv1.Running), 10), wantCode: http.StatusConflict},
		{name: "halted not shorter than an earlier stop", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: func() *kubevirtv1.VirtualMachineInstance {
			v := vmiIn(kubevirtv1.Running)
			v.Annotations = map[string]string{StopGracePeriodAnnotation: "5"}
			return v
		}(), wantCode: http.StatusConflict},
	}, stopOpts(i64(10)))

	runPlanCases(t, []planCase{
		{name: "force", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running),
			want: Plan{SetRunning: &f, InstanceUID: vmiUID, DeleteInstance: i64(0), DeletePods: true}},
		{name: "force manual", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Scheduled),
			want: Plan{InstanceUID: vmiUID, DeleteInstance: i64(0), DeletePods: true, WriteRequests: true, Requests: []kubevirtv1.VirtualMachineStateChangeRequest{reqStop}}},
	}, stopOpts(i64(0)))

	runPlanCases(t, []planCase{
		{name: "negative grace", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusBadRequest},
	}, stopOpts(i64(-1)))
}

func TestPlanRestart(t *testing.T) {
	restart := func(grace *int64) func(*kubevirtv1.VirtualMachine, *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
			return PlanRestart(vm, vmi, &kubevirtv1.RestartOptions{GracePeriodSeconds: grace})
		}
	}
	both := []kubevirtv1.VirtualMachineStateChangeRequest{reqStop, reqStart}
	runPlanCases(t, []planCase{
		{name: "always", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: both}},
		{name: "manual", vm: vmWith(kubevirtv1.RunStrategyManual), vmi: vmiIn(kubevirtv1.Running), want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: both}},
		{name: "once", vm: vmWith(kubevirtv1.RunStrategyOnce), vmi: vmiIn(kubevirtv1.Succeeded), want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: both}},
		{name: "legacy running", vm: legacyVM(true), vmi: vmiIn(kubevirtv1.Running), want: Plan{InstanceUID: vmiUID, WriteRequests: true, Requests: both}},
		{name: "no instance", vm: vmWith(kubevirtv1.RunStrategyAlways), wantCode: http.StatusConflict},
		{name: "halted", vm: vmWith(kubevirtv1.RunStrategyHalted), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
		{name: "pending", vm: vmWith(kubevirtv1.RunStrategyAlways, kubevirtv1.StartRequest), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusConflict},
	}, restart(nil))
	runPlanCases(t, []planCase{
		{name: "force", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), want: Plan{InstanceUID: vmiUID, DeletePods: true, WriteRequests: true, Requests: both}},
	}, restart(i64(0)))
	runPlanCases(t, []planCase{
		{name: "positive grace", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusBadRequest},
	}, restart(i64(3)))
	runPlanCases(t, []planCase{
		{name: "negative grace", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), wantCode: http.StatusBadRequest},
	}, restart(i64(-3)))
}

func TestPlanMigrate(t *testing.T) {
	sel := map[string]string{"zone": "a"}
	runPlanCases(t, []planCase{
		{name: "running", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Running), want: Plan{Migrate: true, InstanceUID: vmiUID, MigrateNodeSelector: sel}},
		{name: "scheduled", vm: vmWith(kubevirtv1.RunStrategyAlways), vmi: vmiIn(kubevirtv1.Scheduled), wantCode: http.StatusConflict},
		{name: "no instance", vm: vmWith(kubevirtv1.RunStrategyAlways), wantCode: http.StatusConflict},
	}, func(vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) (Plan, error) {
		return PlanMigrate(vm, vmi, &kubevirtv1.MigrateOptions{AddedNodeSelector: sel})
	})
}

func TestSetRunning(t *testing.T) {
	cases := []struct {
		name    string
		vm      *kubevirtv1.VirtualMachine
		running bool
		want    string
	}{
		{"strategy to always", vmWith(kubevirtv1.RunStrategyManual), true, "Always"},
		{"strategy to halted", vmWith(kubevirtv1.RunStrategyOnce), false, "Halted"},
		{"legacy to true", legacyVM(false), true, "running=true"},
		{"legacy to false", legacyVM(true), false, "running=false"},
		{"neither to true", vmWith(""), true, "running=true"},
	}
	for _, tc := range cases {
		setRunning(tc.vm, tc.running)
		got := ""
		if tc.vm.Spec.RunStrategy != nil {
			got = string(*tc.vm.Spec.RunStrategy)
		} else if tc.vm.Spec.Running != nil {
			got = map[bool]string{true: "running=true", false: "running=false"}[*tc.vm.Spec.Running]
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
