package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// DensityConfig sizes the density suite (KubeVirt's density test: N VMIs, then N VMs, created
// Interval apart, guests paused).
type DensityConfig struct {
	N        int
	Interval time.Duration
	// CPUAllocationRatio is nativevirt-controller's --cpu-allocation-ratio during the suite, so
	// that N launcher pods fit the nodes' CPU (KubeVirt's default is 10: 100m per vCPU).
	CPUAllocationRatio int
}

// Issue 27's targets for the density suite.
const (
	densityP50Goal    = 15 * time.Second
	densityP95Goal    = 25 * time.Second
	densityWritesGoal = 3.0
	densityPodRatio   = 2.0
)

const plainPodLabel = "nativevirt.io/bench-plain"

// RunDensity creates cfg.N VMIs cfg.Interval apart and waits until they are Running, then cfg.N
// VMs and, alternating with them, cfg.N plain pods of the same CPU request, and reports
// creation → Running, the API calls per VMI (both API servers' apiserver_request_total) and
// the machine's CPU-seconds per VMI. Guests start paused: Running without guest boots.
func RunDensity(ctx context.Context, e *Env, cfg DensityConfig) (*Result, error) {
	res := &Result{Suite: "density", Title: fmt.Sprintf("Density: %d VMIs, then %d VMs beside %d plain pods, %s apart, guests paused", cfg.N, cfg.N, cfg.N, cfg.Interval)}
	res.Columns = []string{"measurement", "created", "Running", "p50", "p95", "max", "CPU-s each"}
	if ok, why := e.readyForVMs(ctx); !ok {
		res.AddRow("skipped: "+why, "", "", "", "", "", "")
		return res, nil
	}
	image, err := e.controllerFlag(ctx, "launcher-image")
	if err != nil {
		return res, err
	}
	if _, err := e.setControllerFlag(ctx, "cpu-allocation-ratio", strconv.Itoa(cfg.CPUAllocationRatio)); err != nil {
		return res, err
	}
	cpu := resource.NewMilliQuantity(int64(1000/cfg.CPUAllocationRatio), resource.DecimalSI)
	res.Setup = map[string]string{
		"instances": "1 core, 128Mi guest, the demo containerDisk, startStrategy Paused (Running once the domain started, no guest boot), no CPU request",
		"cpu":       fmt.Sprintf("nativevirt-controller runs with --cpu-allocation-ratio=%d for the suite (KubeVirt's default 10): each launcher requests %s CPU, so that the instances fit the nodes", cfg.CPUAllocationRatio, cpu),
		"pods":      fmt.Sprintf("plain pods: the launcher image %s running sleep, requesting %s CPU, on the same nodes (kubevirt.io/schedulable=true), created alternately with the VMs", image, cpu),
		"calls":     "API calls per VMI: apiserver_request_total of nativevirt-apiserver (kubevirt.io) and kube-apiserver (core) from before the first VMI's create to 2 s after the last one Running, divided by N; the benchmark's own VMI creates left out; WATCH left out",
	}
	if err := e.waitForDevices(ctx); err != nil {
		res.Note("no schedulable node offers %s after a minute", tunResource)
	}
	const ns = "bench-density"
	if err := e.Namespace(ctx, ns); err != nil {
		return res, err
	}
	c, err := NewWatchClient(e.Kube)
	if err != nil {
		return res, err
	}
	vmis, vms, pods := c.Resource(VMIResource).Namespace(ns), c.Resource(VMResource).Namespace(ns), c.Resource(podResource).Namespace(ns)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := densityCleanUp(cctx, vms, vmis, pods); err != nil {
			res.Note("clean-up: %v", err)
		}
	}()
	run := time.Now().Unix() % 100000
	// Warm up: the controller's new leader, the node's first launcher.
	warm := newArrivals(1)
	if err := densityPhase(ctx, warm, vmis, nil, func(i int) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
		o, err := densityVMI(ns, fmt.Sprintf("warm-%d", run))
		return vmis, o, err
	}, 1, 0); err != nil {
		return res, err
	}
	if err := densityCleanUp(ctx, vms, vmis, pods); err != nil {
		return res, err
	}
	settle(ctx, settleBusy, settleWait)

	// Phase 0: N plain pods alone, for what Kubernetes itself writes per pod (the scheduler's
	// binding, the kubelet's status updates), beside what a VMI's start costs.
	plainCalls, err := densityPlainPodCalls(ctx, e, ns, vms, vmis, pods, image, cpu, cfg, run)
	if err != nil {
		return res, err
	}

	// Phase 1: N VMIs.
	e.Logf("density: %d VMIs", cfg.N)
	nv0, kube0, err := apiCalls(ctx, e)
	if err != nil {
		return res, err
	}
	a := newArrivals(cfg.N)
	cpu0 := ReadCPUTimes()
	vmiPrefix := fmt.Sprintf("vmi%d-", run)
	if err := densityPhase(ctx, a, vmis, nil, func(i int) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
		o, err := densityVMI(ns, fmt.Sprintf("%s%03d", vmiPrefix, i))
		return vmis, o, err
	}, cfg.N, cfg.Interval); err != nil {
		return res, err
	}
	cpu1 := ReadCPUTimes()
	time.Sleep(2 * time.Second)
	nv1, kube1, err := apiCalls(ctx, e)
	if err != nil {
		return res, err
	}
	vmiTimes, vmiCreated := a.durations(vmiPrefix)
	vmiCPU := float64(cpu1.Busy-cpu0.Busy) / clockTicks / float64(cfg.N)
	densityRow(res, "VMIs", vmiTimes, vmiCreated, fmt.Sprintf("%.2f", vmiCPU))
	nvCalls, kubeCalls := Delta(nv0, nv1), Delta(kube0, kube1)
	nvCalls["POST virtualmachineinstances"] -= float64(cfg.N)
	writes := WritesTo(nvCalls, "virtualmachineinstances") / float64(cfg.N)
	podWrites := WritesTo(kubeCalls, "pods") / float64(cfg.N)
	res.AddRow("· API calls per VMI, nativevirt-apiserver", FmtCalls(nvCalls, float64(cfg.N)), "", "", "", "", "")
	res.AddRow("· API calls per VMI, kube-apiserver", FmtCalls(kubeCalls, float64(cfg.N)), "", "", "", "", "")
	res.AddRow("· writes per VMI to VMIs + pods", fmt.Sprintf("%.1f + %.1f = %.1f", writes, podWrites, writes+podWrites), "", "", "", "", "")
	res.AddRow("· API calls per plain pod alone (created first), kube-apiserver", FmtCalls(plainCalls, float64(cfg.N)), "", "", "", "", "")
	plainWrites := WritesTo(plainCalls, "pods") / float64(cfg.N)
	res.AddRow("· writes per plain pod to pods (its creation left out)", fmt.Sprintf("%.1f", plainWrites), "", "", "", "", "")
	res.AddRow("· writes per VMI beyond a plain pod's: VMIs + pods − plain pod", fmt.Sprintf("%.1f + %.1f − %.1f = %.1f", writes, podWrites, plainWrites, writes+podWrites-plainWrites), "", "", "", "", "")
	res.Targets = append(res.Targets,
		// KubeVirt's yardstick counts its own components' requests (UPDATE-vmi, PATCH-pods); the
		// kubelet's, the scheduler's and Multus' writes, which a plain pod costs too, are not.
		NewCheck("VMIs: NativeVirt's writes per VMI to VMIs and pods (beyond a plain pod's)", "≤ 3",
			fmt.Sprintf("%.1f", writes+podWrites-plainWrites), writes+podWrites-plainWrites <= densityWritesGoal))
	densityTargets(res, "VMIs", vmiTimes, cfg.N)

	// Phase 2: N VMs and N plain pods, alternating.
	e.Logf("density: %d VMs beside %d plain pods", cfg.N, cfg.N)
	if err := densityCleanUp(ctx, vms, vmis, pods); err != nil {
		return res, err
	}
	settle(ctx, settleBusy, settleWait)
	b := newArrivals(2 * cfg.N)
	vmPrefix, podPrefix := fmt.Sprintf("vm%d-", run), fmt.Sprintf("pod%d-", run)
	cpu0 = ReadCPUTimes()
	if err := densityPhase(ctx, b, vmis, pods, func(i int) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
		if i%2 == 1 {
			o, err := plainPod(ns, fmt.Sprintf("%s%03d", podPrefix, i/2), image, cpu, map[string]string{"kubevirt.io/schedulable": "true"})
			return pods, o, err
		}
		o, err := densityVM(ns, fmt.Sprintf("%s%03d", vmPrefix, i/2))
		return vms, o, err
	}, 2*cfg.N, cfg.Interval/2); err != nil {
		return res, err
	}
	cpu1 = ReadCPUTimes()
	vmTimes, vmCreated := b.durations(vmPrefix)
	podTimes, podCreated := b.durations(podPrefix)
	densityRow(res, "VMs", vmTimes, vmCreated, "")
	densityRow(res, "plain pods beside them", podTimes, podCreated, "")
	res.AddRow("· VMs and pods together", "", "", "", "", "", fmt.Sprintf("%.2f", float64(cpu1.Busy-cpu0.Busy)/clockTicks/float64(2*cfg.N)))
	densityTargets(res, "VMs", vmTimes, cfg.N)
	if len(vmTimes) > 0 && len(podTimes) > 0 {
		r50 := Ratio(float64(Percentile(vmTimes, 50)), float64(Percentile(podTimes, 50)))
		r95 := Ratio(float64(Percentile(vmTimes, 95)), float64(Percentile(podTimes, 95)))
		res.AddRow("· VMs ÷ plain pods", "", "", fmt.Sprintf("%.2f×", r50), fmt.Sprintf("%.2f×", r95), "", "")
		res.Targets = append(res.Targets, NewCheck("VMs ÷ plain pods beside them, p50", "≤ 2×", fmt.Sprintf("%.2f×", r50), r50 <= densityPodRatio))
	}
	res.Records = map[string]any{"n": cfg.N, "cpuAllocationRatio": cfg.CPUAllocationRatio,
		"vmiMs": durationsMs(vmiTimes), "vmMs": durationsMs(vmTimes), "podMs": durationsMs(podTimes),
		"vmiCPUSeconds": vmiCPU, "callsPerVMI": map[string]any{"nativevirt": nvCalls, "kube": kubeCalls}, "callsPerPlainPod": plainCalls}
	return res, nil
}

// densityPhase creates n objects interval apart (build gives each) and waits until they are
// Running, watching the VMIs and, when given, the plain pods.
func densityPhase(ctx context.Context, a *arrivals, vmis, pods dynamic.ResourceInterface,
	build func(i int) (dynamic.ResourceInterface, *unstructured.Unstructured, error), n int, interval time.Duration) error {
	w, err := a.follow(ctx, vmis, metav1.ListOptions{})
	if err != nil {
		return err
	}
	defer w.Stop()
	if pods != nil {
		pw, err := a.follow(ctx, pods, metav1.ListOptions{LabelSelector: plainPodLabel + "=true"})
		if err != nil {
			return err
		}
		defer pw.Stop()
	}
	for i := range n {
		ri, obj, err := build(i)
		if err != nil {
			return err
		}
		if err := a.create(ctx, ri, obj); err != nil {
			return err
		}
		if i < n-1 {
			time.Sleep(interval)
		}
	}
	return a.wait(ctx, 3*time.Minute+time.Duration(n)*time.Second)
}

func densityRow(res *Result, label string, ds []time.Duration, created int, cpu string) {
	res.AddRow(label, strconv.Itoa(created), strconv.Itoa(len(ds)), FmtSeconds(Percentile(ds, 50)), FmtSeconds(Percentile(ds, 95)), FmtSeconds(Percentile(ds, 100)), cpu)
}

func densityTargets(res *Result, label string, ds []time.Duration, n int) {
	p50, p95 := Percentile(ds, 50), Percentile(ds, 95)
	res.Targets = append(res.Targets,
		NewCheck(label+": creation → Running p50", "≤ 15 s", FmtSeconds(p50), len(ds) == n && p50 <= densityP50Goal),
		NewCheck(label+": creation → Running p95", "≤ 25 s", FmtSeconds(p95), len(ds) == n && p95 <= densityP95Goal))
}

func durationsMs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

// apiCalls reads both API servers' calls by verb and resource: nativevirt-apiserver's
// kubevirt.io, kube-apiserver's core group.
func apiCalls(ctx context.Context, e *Env) (nv, kube map[string]float64, err error) {
	b, err := GetRaw(ctx, e.Direct, "/metrics")
	if err != nil {
		return nil, nil, fmt.Errorf("nativevirt-apiserver metrics: %w", err)
	}
	s, err := ParseMetrics(b)
	if err != nil {
		return nil, nil, err
	}
	kb, err := GetRaw(ctx, e.Kube, "/metrics")
	if err != nil {
		return nil, nil, fmt.Errorf("kube-apiserver metrics: %w", err)
	}
	ks, err := ParseMetrics(kb)
	if err != nil {
		return nil, nil, err
	}
	return CallsByVerbResource(s, "kubevirt.io"), CallsByVerbResource(ks, ""), nil
}

// densityCleanUp deletes the namespace's VMs, VMIs and plain pods and waits until no VMI and
// no pod (launchers included) is left.
func densityCleanUp(ctx context.Context, vms, vmis, pods dynamic.ResourceInterface) error {
	for _, ri := range []dynamic.ResourceInterface{vms, vmis} {
		if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return err
		}
	}
	// Only the plain pods: the launchers go with their VMIs.
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{LabelSelector: plainPodLabel + "=true"}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, ri := range []dynamic.ResourceInterface{vmis, pods} {
			l, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil || len(l.Items) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// densityVM is the small VM with a paused guest and no CPU request (the controller's ratio
// sets it).
func densityVM(ns, name string) (*unstructured.Unstructured, error) {
	o, err := smallVMObject(ns, name)
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(o.Object, "spec", "template", "spec", "domain", "resources")
	return o, unstructured.SetNestedField(o.Object, "Paused", "spec", "template", "spec", "startStrategy")
}

// densityVMI is densityVM's instance on its own.
func densityVMI(ns, name string) (*unstructured.Unstructured, error) {
	vm, err := densityVM(ns, name)
	if err != nil {
		return nil, err
	}
	spec, _, _ := unstructured.NestedMap(vm.Object, "spec", "template", "spec")
	labels, _, _ := unstructured.NestedStringMap(vm.Object, "spec", "template", "metadata", "labels")
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "spec": spec}}
	o.SetName(name)
	o.SetNamespace(ns)
	o.SetLabels(labels)
	return o, nil
}

// plainPod is a pod of the launcher's image that sleeps, requesting cpu, on the nodes of nodeSelector.
func plainPod(ns, name, image string, cpu *resource.Quantity, nodeSelector map[string]string) (*unstructured.Unstructured, error) {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{plainPodLabel: "true"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			NodeSelector:                  nodeSelector,
			Containers: []corev1.Container{{
				Name: "sleep", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:   []string{"sleep", "3600"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *cpu}},
			}},
		},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	return &unstructured.Unstructured{Object: u}, err
}

// densityPlainPodCalls creates cfg.N plain pods (and nothing else) cfg.Interval apart, waits until
// they are Running, counts kube-apiserver's calls as the VMI phase does (the benchmark's own
// creates left out) and deletes the pods again.
func densityPlainPodCalls(ctx context.Context, e *Env, ns string, vms, vmis, pods dynamic.ResourceInterface, image string,
	cpu *resource.Quantity, cfg DensityConfig, run int64) (map[string]float64, error) {
	e.Logf("density: %d plain pods alone", cfg.N)
	_, kube0, err := apiCalls(ctx, e)
	if err != nil {
		return nil, err
	}
	a := newArrivals(cfg.N)
	if err := densityPhase(ctx, a, vmis, pods, func(i int) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
		o, err := plainPod(ns, fmt.Sprintf("alone%d-%03d", run, i), image, cpu, map[string]string{"kubevirt.io/schedulable": "true"})
		return pods, o, err
	}, cfg.N, cfg.Interval); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	_, kube1, err := apiCalls(ctx, e)
	if err != nil {
		return nil, err
	}
	calls := Delta(kube0, kube1)
	calls["POST pods"] -= float64(cfg.N)
	if err := densityCleanUp(ctx, vms, vmis, pods); err != nil {
		return nil, err
	}
	settle(ctx, settleBusy, settleWait)
	return calls, nil
}
