package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// vmShape is one VM of the vm-memory suite.
type vmShape struct {
	label  string
	guest  int64
	vcpus  int
	memory string
}

// RunVMMemory starts the demo VM (128Mi, 1 vCPU) and a 1 GiB/2-vCPU VM of the demo disk, one
// after the other, and reports their launcher pods' memory (the kubelet's working set; the
// RSS and PSS of all the pod's processes) minus the guest's RAM, beside the overhead KubeVirt's
// virt-controller would request for the same VM and the launcher pod's own memory request.
func RunVMMemory(ctx context.Context, e *Env) (*Result, error) {
	res := &Result{Suite: "vm-memory", Title: "Memory overhead per VM: the launcher pod's memory minus the guest's RAM"}
	res.Columns = []string{"VM", "working set", "RSS", "PSS", "PSS − guest", "KubeVirt's overhead", "pod's request − guest"}
	if ok, why := e.readyForVMs(ctx); !ok {
		res.AddRow("skipped: "+why, "", "", "", "", "", "")
		return res, nil
	}
	res.Setup = map[string]string{
		"memory":   "working set: the kubelet's /stats/summary for the pod; RSS and PSS: the sum of /proc/<pid>/smaps_rollup over every process in the pod's cgroup, 20 s after the VMI is Running (the guest booted meanwhile)",
		"KubeVirt": "KubeVirt's virt-controller overhead (GetMemoryOverhead, kubevirt/kubevirt pkg/hypervisor/kvm/launcherhypervisorresources.go, formerly pkg/virt-controller/services/renderresources.go; amd64, default graphics device): guest/512 page tables + 220Mi for its processes + 8Mi per vCPU + 8Mi IO thread + 32Mi video RAM",
	}
	const ns = "bench-vm-memory"
	if err := e.Namespace(ctx, ns); err != nil {
		return res, err
	}
	c, err := NewClient(e.Kube)
	if err != nil {
		return res, err
	}
	vms, vmis := c.Resource(VMResource).Namespace(ns), c.Resource(VMIResource).Namespace(ns)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_ = deleteVMs(cctx, vms, vmis, ns)
	}()
	const mi = 1 << 20
	var records []map[string]any
	for i, s := range []vmShape{{"demo VM (128Mi, 1 vCPU)", 128 * mi, 1, "128Mi"}, {"1 GiB, 2 vCPUs", 1024 * mi, 2, "1Gi"}} {
		name := fmt.Sprintf("mem-%d-%d", time.Now().Unix()%100000, i)
		o, err := smallVMObject(ns, name)
		if err != nil {
			return res, err
		}
		unstructured.RemoveNestedField(o.Object, "spec", "template", "spec", "domain", "resources")
		_ = unstructured.SetNestedField(o.Object, s.memory, "spec", "template", "spec", "domain", "memory", "guest")
		_ = unstructured.SetNestedField(o.Object, int64(s.vcpus), "spec", "template", "spec", "domain", "cpu", "cores")
		if _, err := vms.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return res, err
		}
		e.Logf("vm-memory: %s", s.label)
		pod, err := waitLauncherRunning(ctx, e, ns, name)
		if err != nil {
			res.Note("%s: %v", s.label, err)
			continue
		}
		time.Sleep(20 * time.Second)
		var rss, pss int64
		pids, err := PodPIDs(string(pod.UID))
		if err != nil {
			return res, err
		}
		procs := map[string]SmapsRollup{}
		for _, pid := range pids {
			if r, err := ReadSmapsRollup(pid); err == nil {
				rss += r.RSS
				pss += r.PSS
				p := procs[ProcessName(pid)]
				p.RSS, p.PSS, p.PSSAnon = p.RSS+r.RSS, p.PSS+r.PSS, p.PSSAnon+r.PSSAnon
				procs[ProcessName(pid)] = p
			}
		}
		ws, err := podWorkingSet(ctx, e, pod)
		if err != nil {
			res.Note("%s: working set: %v", s.label, err)
		}
		var request int64
		for _, ctr := range pod.Spec.Containers {
			request += ctr.Resources.Requests.Memory().Value()
		}
		kv := KubeVirtMemoryOverhead(s.guest, s.vcpus, true)
		res.AddRow(s.label, FmtMiB(ws), FmtMiB(rss), FmtMiB(pss), FmtMiB(pss-s.guest), FmtMiB(kv), FmtMiB(request-s.guest))
		res.AddRow("· PSS by process (anonymous)", fmtProcs(procs), "", "", "", "", "")
		name, goal := s.label+": PSS − guest RAM ≤ half of KubeVirt's overhead", "≤ "+FmtMiB(kv/2)
		if pss < s.guest { // the guest touched less than its RAM: no overhead can be read off
			res.Targets = append(res.Targets, Skipped(name, goal, "PSS "+FmtMiB(pss)+" is below the guest's RAM (untouched guest memory)"))
		} else {
			res.Targets = append(res.Targets, NewCheck(name, goal, FmtMiB(pss-s.guest), pss-s.guest <= kv/2))
		}
		records = append(records, map[string]any{"vm": s.label, "guestBytes": s.guest, "vcpus": s.vcpus, "workingSetBytes": ws,
			"rssBytes": rss, "pssBytes": pss, "processes": len(pids), "byProcess": procs, "kubevirtOverheadBytes": kv, "podRequestBytes": request})
		if err := deleteVMs(ctx, vms, vmis, ns); err != nil {
			return res, err
		}
	}
	res.Note("a guest's RAM is resident only as far as the guest touched it: PSS − guest RAM is below the true overhead when the guest did not touch all of its RAM (the demo guest boots a small initramfs)")
	res.Records = records
	return res, nil
}

// waitLauncherRunning waits until the VMI of vm is Running and returns its launcher pod.
func waitLauncherRunning(ctx context.Context, e *Env, ns, vm string) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.KubeClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: launcherpod.VMINameLabel + "=" + vm})
		if err != nil || len(pods.Items) == 0 || pods.Items[0].Status.Phase != corev1.PodRunning {
			return false, nil
		}
		c, err := NewClient(e.Kube)
		if err != nil {
			return false, err
		}
		vmi, err := c.Resource(VMIResource).Namespace(ns).Get(ctx, vm, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase, _, _ := unstructured.NestedString(vmi.Object, "status", "phase")
		pod = &pods.Items[0]
		return phase == "Running", nil
	})
	if err != nil {
		return nil, fmt.Errorf("VMI %s not Running with its launcher pod after 3 min", vm)
	}
	return pod, nil
}

// podWorkingSet is the pod's memory working set from its node's kubelet (/stats/summary).
func podWorkingSet(ctx context.Context, e *Env, pod *corev1.Pod) (int64, error) {
	b, err := e.KubeClient.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", pod.Spec.NodeName, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	var summary struct {
		Pods []struct {
			PodRef struct{ UID string } `json:"podRef"`
			Memory struct {
				WorkingSetBytes int64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		return 0, err
	}
	for _, p := range summary.Pods {
		if p.PodRef.UID == string(pod.UID) {
			return p.Memory.WorkingSetBytes, nil
		}
	}
	return 0, fmt.Errorf("pod %s not in node %s's summary", pod.Name, pod.Spec.NodeName)
}

// readyForVMs says whether the deployed cluster can start VMs: the controller and a node agent
// answer and a node is schedulable; else why not, for the suite's "skipped" row.
func (e *Env) readyForVMs(ctx context.Context) (bool, string) {
	ok, why := e.controllerReady(ctx)
	if ok {
		ok, why = e.handlerReady(ctx)
	}
	if ok {
		ok, why = e.schedulableNode(ctx)
	}
	return ok, why
}

// fmtProcs renders the per-process PSS, largest first: "qemu-system-x86 150.2 MiB (anon 140.1), ...".
func fmtProcs(procs map[string]SmapsRollup) string {
	names := make([]string, 0, len(procs))
	for n := range procs {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(procs[b].PSS, procs[a].PSS) })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %s (anon %s)", n, FmtMiB(procs[n].PSS), FmtMiB(procs[n].PSSAnon))
	}
	return strings.Join(parts, ", ")
}
