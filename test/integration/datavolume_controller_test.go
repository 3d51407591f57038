package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/controllers/datavolume"
)

var claimsGVR = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

// TestDataVolumeLifecycle runs the DataVolume and StorageProfile controllers in-process against
// the real API server (cdi.kubevirt.io) and a fake kube-apiserver whose pods and claims the test
// moves as kube-scheduler, the provisioner and the kubelet would: a StorageProfile appears for
// the default WaitForFirstConsumer class; an http DataVolume of spec.storage gets a claim with
// the profile's access and volume mode grown by the filesystem overhead, waits for its first
// consumer, is imported on the consumer's node, shows progress, a failed attempt's reason and
// restart count, and Succeeds; a permanent importer error Fails it.
func TestDataVolumeLifecycle(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	env.defaultLocalPathClass()
	env.eventually("the StorageProfile of local-path", func() (bool, error) {
		p, err := env.admin.CdiV1beta1().StorageProfiles().Get(ctx, "local-path", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		sets := p.Status.ClaimPropertySets
		return len(sets) == 1 && sets[0].AccessModes[0] == corev1.ReadWriteOnce && *sets[0].VolumeMode == corev1.PersistentVolumeFilesystem &&
			*p.Status.Provisioner == "rancher.io/local-path", fmt.Errorf("status %+v", p.Status)
	})

	dvs := env.admin.CdiV1beta1().DataVolumes(ns)
	if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/fedora.qcow2"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDV := func(what string, ok func(*cdiv1beta1.DataVolume) bool) *cdiv1beta1.DataVolume {
		t.Helper()
		var dv *cdiv1beta1.DataVolume
		env.eventually(what, func() (bool, error) {
			var err error
			if dv, err = dvs.Get(ctx, "fedora", metav1.GetOptions{}); err != nil {
				return false, err
			}
			return ok(dv), fmt.Errorf("status %+v", dv.Status)
		})
		return dv
	}
	dv := waitDV("phase WaitForFirstConsumer", func(dv *cdiv1beta1.DataVolume) bool {
		return dv.Status.Phase == cdiv1beta1.WaitForFirstConsumer
	})
	if dv.Status.ClaimName != "fedora" || dv.Status.Progress != "N/A" {
		t.Errorf("claimName %q progress %q, want fedora and N/A", dv.Status.ClaimName, dv.Status.Progress)
	}
	claim, err := env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "fedora", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 1 GiB / (1 - 0.055) = 1083.6 MiB, rounded up to a MiB.
	if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.Value() != 1084*(1<<20) {
		t.Errorf("claim size %s (%d), want 1084Mi", got.String(), got.Value())
	}
	if len(claim.Spec.AccessModes) != 1 || claim.Spec.AccessModes[0] != corev1.ReadWriteOnce ||
		*claim.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || *claim.Spec.StorageClassName != "local-path" {
		t.Errorf("claim spec %+v, want ReadWriteOnce Filesystem of local-path", claim.Spec)
	}
	if _, err := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-fedora", metav1.GetOptions{}); err == nil {
		t.Fatal("an importer pod exists before the claim's first consumer")
	}

	// The first consumer is scheduled on node1: the claim is provisioned there, the importer
	// runs there.
	consumer := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns}, Spec: corev1.PodSpec{
		NodeName:   "node1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "fedora"}}}},
	}}
	if err := env.kube.Tracker().Create(podsGVR, consumer, ns); err != nil {
		t.Fatal(err)
	}
	var importer *corev1.Pod
	env.eventually("the importer pod", func() (bool, error) {
		importer, err = env.kube.CoreV1().Pods(ns).Get(ctx, "importer-fedora", metav1.GetOptions{})
		return err == nil, err
	})
	claim, _ = env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "fedora", metav1.GetOptions{})
	if claim.Annotations[datavolume.AnnSelectedNode] != "node1" {
		t.Errorf("claim annotations %v, want the selected node node1", claim.Annotations)
	}
	terms := importer.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if terms[0].MatchFields[0].Values[0] != "node1" {
		t.Errorf("importer pod affinity %+v, want node1", terms)
	}
	c := importer.Spec.Containers[0]
	if importer.Spec.RestartPolicy != corev1.RestartPolicyOnFailure || *c.SecurityContext.Privileged ||
		!strings.Contains(strings.Join(c.Command, " "), "--url=http://images.example/fedora.qcow2") ||
		!strings.Contains(strings.Join(c.Command, " "), fmt.Sprintf("--image-size=%d", 1<<30)) {
		t.Errorf("importer pod: restartPolicy %s, container %+v", importer.Spec.RestartPolicy, c)
	}
	waitDV("phase ImportScheduled", func(dv *cdiv1beta1.DataVolume) bool { return dv.Status.Phase == cdiv1beta1.ImportScheduled })

	// Bound and running.
	claim.Status.Phase = corev1.ClaimBound
	if err := env.kube.Tracker().Update(claimsGVR, claim, ns); err != nil {
		t.Fatal(err)
	}
	setPod := func(mutate func(*corev1.Pod)) { env.setPodOnNode(ns, "importer-fedora", "node1", mutate) }
	setPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	waitDV("phase ImportInProgress, Bound", func(dv *cdiv1beta1.DataVolume) bool {
		return dv.Status.Phase == cdiv1beta1.ImportInProgress && condition(dv, cdiv1beta1.DataVolumeBound).Status == corev1.ConditionTrue &&
			condition(dv, cdiv1beta1.DataVolumeRunning).Status == corev1.ConditionTrue
	})

	// A failed attempt, retried by the kubelet: the reason shows in Running.
	setPod(func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", RestartCount: 2,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
				Message: `{"error":"unable to connect to http data source: dial tcp: lookup images.example: no such host"}`}}}}
	})
	dv = waitDV("the failed attempt's reason", func(dv *cdiv1beta1.DataVolume) bool {
		r := condition(dv, cdiv1beta1.DataVolumeRunning)
		return dv.Status.RestartCount == 2 && r.Status == corev1.ConditionFalse && r.Reason == "CrashLoopBackOff" &&
			strings.Contains(r.Message, "no such host")
	})
	if dv.Status.Phase != cdiv1beta1.ImportInProgress {
		t.Errorf("phase %s during retries, want ImportInProgress", dv.Status.Phase)
	}

	// Done.
	setPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", RestartCount: 2,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Message: `{"result":{"format":"qcow2","sourceBytes":1048576,"seconds":1}}`}}}}
	})
	dv = waitDV("phase Succeeded", func(dv *cdiv1beta1.DataVolume) bool { return dv.Status.Phase == cdiv1beta1.Succeeded })
	if dv.Status.Progress != "100.0%" || condition(dv, cdiv1beta1.DataVolumeReady).Status != corev1.ConditionTrue ||
		condition(dv, cdiv1beta1.DataVolumeRunning).Reason != "Completed" {
		t.Errorf("succeeded status %+v", dv.Status)
	}
	env.eventually("the importer pod's deletion", func() (bool, error) {
		_, err := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-fedora", metav1.GetOptions{})
		return err != nil, nil
	})
	// CDI's events, one per phase reached, and the result with its figures.
	env.dataVolumeEvents("fedora", map[string]string{
		"WaitForFirstConsumer": "PVC fedora waits for its first consumer",
		"ImportScheduled":      "Import into fedora scheduled",
		"ImportInProgress":     "Import into fedora in progress",
		"ImportSucceeded":      "Successfully populated PVC fedora: 1.0 MiB of qcow2",
	})

	// Immediate binding requested: no waiting for a consumer; the importer pod is the first
	// consumer, wherever the scheduler puts it.
	if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "now", Annotations: map[string]string{datavolume.AnnImmediateBinding: "true"}},
		Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.eventually("the importer pod of an immediate DataVolume", func() (bool, error) {
		p, err := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-now", metav1.GetOptions{})
		return err == nil && p.Spec.Affinity == nil && strings.Contains(strings.Join(p.Spec.Containers[0].Command, " "), "--blank"), err
	})
}

// TestDataVolumePermanentFailure: the importer's permanent error (not an image, too big) fails
// the DataVolume with the importer's message; a spec.pvc claim is made as given.
func TestDataVolumePermanentFailure(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	dvs := env.admin.CdiV1beta1().DataVolumes(ns)
	if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "readme"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/README"}},
			PVC: &corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Mi")}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.eventually("the importer pod", func() (bool, error) {
		_, err := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-readme", metav1.GetOptions{})
		return err == nil, err
	})
	claim, err := env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "readme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "100Mi" || claim.Spec.StorageClassName != nil {
		t.Errorf("spec.pvc claim: size %s class %v, want 100Mi as given", got.String(), claim.Spec.StorageClassName)
	}
	p, _ := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-readme", metav1.GetOptions{})
	p = p.DeepCopy()
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "importer", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Message: `{"permanentError":"the source is text, not a disk image (raw, qcow2 or iso)"}`}}}}
	if err := env.kube.Tracker().Update(podsGVR, p, ns); err != nil {
		t.Fatal(err)
	}
	env.eventually("phase Failed", func() (bool, error) {
		dv, err := dvs.Get(ctx, "readme", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r := condition(dv, cdiv1beta1.DataVolumeRunning)
		return dv.Status.Phase == cdiv1beta1.Failed && r.Reason == "Error" && strings.Contains(r.Message, "not a disk image"),
			fmt.Errorf("status %+v", dv.Status)
	})
	env.dataVolumeEvents("readme", map[string]string{
		"Error": "Populating PVC readme failed: the source is text, not a disk image",
	})
}

// dataVolumeEvents waits for the DataVolume's events of each reason, with a message beginning
// with the one given.
func (e *controllerEnv) dataVolumeEvents(name string, want map[string]string) {
	e.t.Helper()
	e.eventually("the events of DataVolume "+name, func() (bool, error) {
		events, err := e.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen := map[string]bool{}
		var got []string
		for _, ev := range events.Items {
			if ev.InvolvedObject.Kind != "DataVolume" || ev.InvolvedObject.Name != name {
				continue
			}
			got = append(got, ev.Reason+": "+ev.Message)
			if prefix, ok := want[ev.Reason]; ok && strings.HasPrefix(ev.Message, prefix) {
				seen[ev.Reason] = true
			}
		}
		return len(seen) == len(want), fmt.Errorf("events %q", got)
	})
}

// condition returns a DataVolume's condition of type t (zero when missing).
func condition(dv *cdiv1beta1.DataVolume, t cdiv1beta1.DataVolumeConditionType) cdiv1beta1.DataVolumeCondition {
	for _, c := range dv.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return cdiv1beta1.DataVolumeCondition{}
}

// TestDataVolumeClaimAdoption: a DataVolume finding a claim of its name adopts it as populated
// when it allows adoption (as KubeVirt's dataVolumeTemplates do), and otherwise refuses it.
func TestDataVolumeClaimAdoption(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	for _, name := range []string{"kept", "foreign"} {
		if _, err := env.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dvs := env.admin.CdiV1beta1().DataVolumes(ns)
	for name, ann := range map[string]map[string]string{"kept": {datavolume.AnnAllowClaimAdoption: "true"}, "foreign": nil} {
		if _, err := dvs.Create(ctx, &cdiv1beta1.DataVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
			Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
				Storage: &cdiv1beta1.StorageSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	env.eventually("kept Succeeded, owning its claim", func() (bool, error) {
		dv, err := dvs.Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		claim, err := env.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return dv.Status.Phase == cdiv1beta1.Succeeded && metav1.IsControlledBy(claim, dv), fmt.Errorf("phase %s, owners %v", dv.Status.Phase, claim.OwnerReferences)
	})
	env.eventually("foreign Pending with ErrClaimNotValid", func() (bool, error) {
		dv, err := dvs.Get(ctx, "foreign", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r := condition(dv, cdiv1beta1.DataVolumeRunning)
		return dv.Status.Phase == cdiv1beta1.Pending && r.Reason == "ErrClaimNotValid", fmt.Errorf("status %+v", dv.Status)
	})
	if _, err := env.kube.CoreV1().Pods(ns).Get(ctx, "importer-kept", metav1.GetOptions{}); err == nil {
		t.Error("an importer pod for an adopted claim")
	}
}
