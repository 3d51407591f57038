package vmi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/expectations"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

type podStub struct {
	renderErr, createErr, deleteErr error
	calls, events                   []string
}

func (s *podStub) api(exp *expectations.Expectations) *podAPI {
	return &podAPI{
		render: func(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
			if s.renderErr != nil {
				return nil, s.renderErr
			}
			return newPod("rendered"), nil
		},
		create: func(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
			s.calls = append(s.calls, "create "+pod.Name)
			return pod, s.createErr
		},
		delete: func(_ context.Context, _, name string, _ types.UID, grace *int64) error {
			call := "delete " + name
			if grace != nil {
				call += fmt.Sprintf(" grace=%d", *grace)
			}
			s.calls = append(s.calls, call)
			return s.deleteErr
		},
		event: func(_ *kubevirtv1.VirtualMachineInstance, eventType, reason, _ string) {
			s.events = append(s.events, eventType+" "+reason)
		},
		exp: exp,
	}
}

func TestEnsurePod(t *testing.T) {
	tests := []struct {
		name          string
		phase         kubevirtv1.VirtualMachineInstancePhase
		pods          []*corev1.Pod
		stub          podStub
		wantCalls     []string
		wantEvents    []string
		wantPods      int
		wantErr       bool
		wantSatisfied bool
	}{
		{name: "creates the pod", wantCalls: []string{"create rendered"}, wantEvents: []string{"Normal SuccessfulCreate"}, wantPods: 1},
		{name: "pending instance too", phase: kubevirtv1.Pending, wantCalls: []string{"create rendered"}, wantEvents: []string{"Normal SuccessfulCreate"}, wantPods: 1},
		{name: "a pod exists", pods: []*corev1.Pod{newPod("p")}, wantPods: 1, wantSatisfied: true},
		{name: "never a second pod once past Pending", phase: kubevirtv1.Scheduling, wantSatisfied: true},
		{name: "render error: event, no retry", stub: podStub{renderErr: errors.New("no memory")},
			wantEvents: []string{"Warning FailedCreate"}, wantSatisfied: true},
		{name: "missing claim: event and retry", stub: podStub{renderErr: fmt.Errorf("volume data: %w", launcherpod.ErrClaimPending)},
			wantEvents: []string{"Warning FailedPvcNotFound"}, wantErr: true, wantSatisfied: true},
		{name: "create error: event and retry", stub: podStub{createErr: errors.New("quota")}, wantCalls: []string{"create rendered"},
			wantEvents: []string{"Warning FailedCreate"}, wantErr: true, wantSatisfied: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := expectations.New()
			s := tc.stub
			vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Status.Phase = tc.phase })
			pods, err := s.api(exp).ensurePod(context.Background(), "default/vmi", vmi, tc.pods)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if len(pods) != tc.wantPods {
				t.Errorf("%d pods, want %d", len(pods), tc.wantPods)
			}
			if diff := cmp.Diff(tc.wantCalls, s.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, s.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := exp.Satisfied("default/vmi"); got != tc.wantSatisfied {
				t.Errorf("expectations satisfied = %v, want %v", got, tc.wantSatisfied)
			}
		})
	}
}

func TestDeletePods(t *testing.T) {
	own := func(g int64) podOpt { return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &g } }
	tests := []struct {
		name          string
		annotation    string
		pods          []*corev1.Pod
		stub          podStub
		wantCalls     []string
		wantRemaining bool
		wantErr       bool
	}{
		{name: "none"},
		{name: "deletes live pods only", pods: []*corev1.Pod{newPod("a"), newPod("b", podDeleting())},
			wantCalls: []string{"delete a"}, wantRemaining: true},
		{name: "already gone", pods: []*corev1.Pod{newPod("a")},
			stub:      podStub{deleteErr: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "a")},
			wantCalls: []string{"delete a"}, wantRemaining: true},
		{name: "a stop with a shorter grace period", annotation: "5", pods: []*corev1.Pod{newPod("a", own(45))},
			wantCalls: []string{"delete a grace=5"}, wantRemaining: true},
		{name: "a stop with grace 0", annotation: "0", pods: []*corev1.Pod{newPod("a", own(45))},
			wantCalls: []string{"delete a grace=0"}, wantRemaining: true},
		{name: "a longer stop grace period is not used", annotation: "60", pods: []*corev1.Pod{newPod("a", own(45))},
			wantCalls: []string{"delete a"}, wantRemaining: true},
		{name: "garbage annotation", annotation: "soon", pods: []*corev1.Pod{newPod("a", own(45))},
			wantCalls: []string{"delete a"}, wantRemaining: true},
		{name: "failure", pods: []*corev1.Pod{newPod("a")}, stub: podStub{deleteErr: errors.New("boom")},
			wantCalls: []string{"delete a"}, wantRemaining: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.stub
			vmi := testVMI()
			if tc.annotation != "" {
				vmi.Annotations = map[string]string{StopGracePeriodAnnotation: tc.annotation}
			}
			remaining, err := s.api(expectations.New()).deletePods(context.Background(), "default/vmi", vmi, tc.pods)
			if (err != nil) != tc.wantErr || remaining != tc.wantRemaining {
				t.Errorf("remaining %v err %v, want %v/%v", remaining, err, tc.wantRemaining, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantCalls, s.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetFinalizerPatch(t *testing.T) {
	tests := []struct {
		name     string
		existing []string
		add      bool
		want     string
	}{
		{name: "add", existing: []string{"other"}, add: true,
			want: `{"metadata":{"finalizers":["other","kubevirt.io/virtualMachineControllerFinalize"],"resourceVersion":"1"}}`},
		{name: "add once", existing: []string{Finalizer}, add: true,
			want: `{"metadata":{"finalizers":["kubevirt.io/virtualMachineControllerFinalize"],"resourceVersion":"1"}}`},
		{name: "remove", existing: []string{Finalizer, "other"},
			want: `{"metadata":{"finalizers":["other"],"resourceVersion":"1"}}`},
		{name: "remove the last", existing: []string{Finalizer},
			want: `{"metadata":{"finalizers":[],"resourceVersion":"1"}}`},
	}
	for _, tc := range tests {
		var got string
		a := metadataAPI{patch: func(_ context.Context, _, _ string, data []byte) (*kubevirtv1.VirtualMachineInstance, error) {
			got = string(data)
			return nil, nil
		}}
		vmi := testVMI(func(v *kubevirtv1.VirtualMachineInstance) { v.Finalizers = tc.existing })
		if _, err := a.setFinalizer(context.Background(), vmi, tc.add); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: patch %s, want %s", tc.name, got, tc.want)
		}
	}
}
