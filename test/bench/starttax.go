package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StartTaxConfig sizes the start-tax suite.
type StartTaxConfig struct {
	// Rounds each start one VM and then one plain pod.
	Rounds int
}

// Issue 27's targets for one VM's start: its create → Running at most startTaxGoal times a
// plain pod's on the same node, measured alternately, and startCPUGoal CPU-seconds per start.
const (
	startTaxGoal = 1.3
	startCPUGoal = 0.45
)

// RunStartTax starts, cfg.Rounds times and alternately, one VM (the demo guest, booting) and
// one plain pod of the launcher's image (sleep, the same CPU request) on the same node, each
// from create to Running on a settled machine: the VM's tax over a pod, by ratio, as absolute
// times differ between machines. The VM's starts are broken down by step as in control-plane.
func RunStartTax(ctx context.Context, e *Env, cfg StartTaxConfig) (*Result, error) {
	res := &Result{Suite: "start-tax", Title: "Start tax: one VM's create → Running against a plain pod's, alternately, same node"}
	res.Columns = []string{"measurement", "VMs", "reached", "p50", "p95", "max", "writes/VMI"}
	if ok, why := e.readyForVMs(ctx); !ok {
		res.AddRow("skipped: "+why, "", "", "", "", "", "")
		return res, nil
	}
	image, err := e.controllerFlag(ctx, "launcher-image")
	if err != nil {
		return res, err
	}
	nodes, err := e.KubeClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubevirt.io/schedulable=true"})
	if err != nil || len(nodes.Items) == 0 {
		return res, fmt.Errorf("schedulable nodes: %v", err)
	}
	node := nodes.Items[0].Labels[corev1.LabelHostname]
	if err := e.waitForDevices(ctx); err != nil {
		res.Note("no schedulable node offers %s after a minute", tunResource)
	}
	res.Setup = map[string]string{
		"VM":  "the control-plane suite's small VM (1 core, 128Mi, the demo containerDisk, CPU request 50m), runStrategy Always, the guest booting, on node " + node,
		"pod": "a plain pod of the launcher image " + image + " running sleep, CPU request 50m, grace period 0, on the same node",
		"CPU": "CPU-seconds: the whole machine's busy time (/proc/stat) from the create until Running, per start; by component from every process's /proc/<pid>/stat over the same windows (user + system time, and for the cluster's processes that of the children they waited for: runc, container inits, CNI plugins, the node agent's commands)",
	}
	const ns = "bench-start-tax"
	if err := e.Namespace(ctx, ns); err != nil {
		return res, err
	}
	run := time.Now().Unix() % 100000
	if err := warmUp(ctx, e, ns, run, true); err != nil {
		return res, err
	}
	c, err := NewWatchClient(e.Kube)
	if err != nil {
		return res, err
	}
	pods := c.Resource(podResource).Namespace(ns)
	var vmRuns []startRun
	var podTimes []time.Duration
	podCPU := 0.0
	var vmComponents, podComponents ComponentCPU
	cpu := resource.MustParse("50m")
	for k := range max(1, cfg.Rounds) {
		settle(ctx, settleBusy, settleWait)
		e.Logf("start-tax: round %d of %d", k+1, cfg.Rounds)
		r, err := startVMs(ctx, e, startOptions{ns: ns, prefix: fmt.Sprintf("tax%d-%d", run, k), n: 1, phase: "Running", node: node, components: &vmComponents})
		if err != nil {
			return res, err
		}
		vmRuns = append(vmRuns, r)
		settle(ctx, settleBusy, settleWait)
		a := newArrivals(1)
		name := fmt.Sprintf("taxpod%d-%d", run, k)
		o, err := plainPod(ns, name, image, &cpu, map[string]string{corev1.LabelHostname: node})
		if err != nil {
			return res, err
		}
		proc0 := ReadProcSnapshot()
		cpu0 := ReadCPUTimes()
		w, err := a.follow(ctx, pods, metav1.ListOptions{LabelSelector: plainPodLabel + "=true"})
		if err != nil {
			return res, err
		}
		if err := a.create(ctx, pods, o); err != nil {
			w.Stop()
			return res, err
		}
		err = a.wait(ctx, 2*time.Minute)
		w.Stop()
		if err != nil {
			return res, err
		}
		cpu1 := ReadCPUTimes()
		podComponents.Add(proc0, ReadProcSnapshot(), cpu1.Busy-cpu0.Busy)
		podCPU += float64(cpu1.Busy-cpu0.Busy) / clockTicks
		ds, _ := a.durations(name)
		podTimes = append(podTimes, ds...)
		if err := deletePods(ctx, e, ns); err != nil {
			return res, err
		}
	}
	vm := mergeRuns(vmRuns)
	m := cpMeasurement{label: "VM create → Running", n: 1, repeat: len(vmRuns), phase: "Running"}
	record := reportMeasurement(res, m, vm)
	pd := Summarize(podTimes, 0, len(vmRuns)-len(podTimes))
	res.AddRow("plain pod create → Running", fmt.Sprint(len(vmRuns)), fmt.Sprint(len(podTimes)), FmtMs(pd.P50Ms)+" ms", FmtMs(pd.P95Ms)+" ms", FmtMs(pd.MaxMs)+" ms", "")
	ratio := Ratio(vm.dist.P50Ms, pd.P50Ms)
	perStart := vm.cpuSeconds / float64(max(1, len(vmRuns)))
	res.AddRow("VM ÷ plain pod (p50)", "", "", fmt.Sprintf("%.2f×", ratio), "", "", "")
	res.AddRow("CPU-seconds per start: VM / plain pod", "", "", fmt.Sprintf("%.2f / %.2f", perStart, podCPU/float64(max(1, len(podTimes)))), "", "", "")
	res.Targets = append(res.Targets,
		NewCheck("VM create → Running ÷ plain pod's, p50", "≤ 1.3×", fmt.Sprintf("%.2f×", ratio), vm.reached == len(vmRuns) && ratio > 0 && ratio <= startTaxGoal),
		NewCheck("CPU-seconds per VM start (whole machine)", "≤ 0.45", fmt.Sprintf("%.2f", perStart), perStart <= startCPUGoal))
	record["cpuByComponent"] = componentRows(res, &vmComponents, &podComponents)
	record["pod"] = pd
	record["podCPUSeconds"] = podCPU
	record["ratio"] = ratio
	res.Records = []map[string]any{record}
	return res, nil
}

// deletePods deletes the namespace's pods and waits until they are gone.
func deletePods(ctx context.Context, e *Env, ns string) error {
	c, err := NewClient(e.Kube)
	if err != nil {
		return err
	}
	pods := c.Resource(podResource).Namespace(ns)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{LabelSelector: plainPodLabel + "=true"}); err != nil {
		return err
	}
	for range 120 {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: plainPodLabel + "=true", Limit: 1})
		if err == nil && len(l.Items) == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("plain pods of %s still there after a minute", ns)
}

// componentRows adds a row with the CPU-seconds per start of the cluster's processes together,
// one per component (those that took at least 5 ms per VM or pod start), and the rest, each
// per VM start and per plain pod start; it returns them by component.
func componentRows(res *Result, vm, pod *ComponentCPU) map[string][2]float64 {
	vmNames, vmSec, vmRest := vm.PerWindow()
	_, podSec, podRest := pod.PerWindow()
	out := map[string][2]float64{}
	names := vmNames
	for k := range podSec {
		if _, ok := vmSec[k]; !ok {
			names = append(names, k)
		}
	}
	outside := map[string]bool{kernelThreads: true, notTheCluster: true, theBenchmark: true}
	var cluster, small [2]float64
	var rows [][]string
	for _, k := range names {
		v := [2]float64{vmSec[k], podSec[k]}
		out[k] = v
		if outside[k] {
			continue
		}
		cluster[0] += v[0]
		cluster[1] += v[1]
		if v[0] < 0.005 && v[1] < 0.005 {
			small[0] += v[0]
			small[1] += v[1]
			continue
		}
		rows = append(rows, []string{"  · " + k, "", "", fmt.Sprintf("%.3f / %.3f", v[0], v[1]), "", "", ""})
	}
	res.AddRow("CPU-seconds per start, the cluster's processes: VM / plain pod", "", "", fmt.Sprintf("%.2f / %.2f", cluster[0], cluster[1]), "", "", "")
	res.Rows = append(res.Rows, rows...)
	res.AddRow("  · other processes of the cluster", "", "", fmt.Sprintf("%.3f / %.3f", small[0], small[1]), "", "", "")
	for _, k := range []string{kernelThreads, theBenchmark, notTheCluster} {
		res.AddRow("  outside the cluster: "+k, "", "", fmt.Sprintf("%.3f / %.3f", vmSec[k], podSec[k]), "", "", "")
	}
	res.AddRow("  not attributed to a process (interrupts, processes nobody waited for)", "", "", fmt.Sprintf("%.3f / %.3f", vmRest, podRest), "", "", "")
	out["the cluster's processes"] = cluster
	out["not attributed"] = [2]float64{vmRest, podRest}
	return out
}
