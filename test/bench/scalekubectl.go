package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlGoal is issue 27's goal for `kubectl get vm -A` over the scale suite's VMs (and it must
// be below the CRD's when the CRD is measured beside it).
const kubectlGoal = 2 * time.Second

// timeKubectlGet times `kubectl get vm -A` cfg.Repeats times and, when the scenario has a CRD
// beside the server, the same get of the CRD's objects alternately with it.
func timeKubectlGet(h *scaleHost, cfg ScaleConfig, scenario string, res *Result, add func(scenario, metric string, value float64, unit, detail string)) error {
	type reader struct {
		name    string
		kubectl func(args ...string) (string, error)
		args    []string
		times   []time.Duration
	}
	readers := []*reader{{name: "vm", kubectl: h.kubectl, args: []string{"get", "vm", "-A", "--no-headers"}}}
	if h.crd != nil {
		readers = append(readers, &reader{name: "crd", kubectl: h.crd.kubectl,
			args: []string{"get", CRDResource.Resource + "." + CRDGroup, "-A", "--no-headers"}})
	}
	for range max(1, cfg.Repeats) {
		for _, r := range readers { // alternately, so that outside load hits both alike
			t0 := time.Now()
			out, err := r.kubectl(r.args...)
			if err != nil {
				return err
			}
			r.times = append(r.times, time.Since(t0))
			if lines := strings.Count(out, "\n"); lines < cfg.VMs {
				return fmt.Errorf("kubectl %s printed %d rows, want at least %d", strings.Join(r.args, " "), lines, cfg.VMs)
			}
		}
	}
	kt := median(readers[0].times)
	add(scenario, "kubectl-get-vm-all", kt.Seconds(), "s", fmt.Sprintf("%d rows", cfg.VMs))
	if h.crd == nil {
		res.AddRow(scenario, "kubectl get vm -A (wall)", FmtSeconds(kt), "")
		return nil
	}
	ct := median(readers[1].times)
	add(scenario, "kubectl-get-crd-all", ct.Seconds(), "s", fmt.Sprintf("%d rows", cfg.VMs))
	goal := "≤ 2 s and < (c)"
	res.AddRow(scenario, "kubectl get vm -A (wall); the same objects as the CRD (c)", fmt.Sprintf("%s; (c) %s", FmtSeconds(kt), FmtSeconds(ct)), goal)
	res.Targets = append(res.Targets, NewCheck(scenario+": kubectl get vm -A", goal,
		fmt.Sprintf("%s vs (c) %s", FmtSeconds(kt), FmtSeconds(ct)), kt <= kubectlGoal && kt < ct))
	return nil
}

// fillCRD creates the scenario's VMs, the same objects in namespaces of the same names, as the
// CRD (c) on h's kube-apiserver.
func fillCRD(ctx context.Context, h *crdHost, cfg ScaleConfig, namespaces []string, scenario string, res *Result, add func(scenario, metric string, value float64, unit, detail string)) error {
	for _, ns := range namespaces {
		if err := h.namespace(ctx, ns); err != nil {
			return err
		}
	}
	clients, err := h.target.Clients(cfg.Workers)
	if err != nil {
		return err
	}
	b := VMBuilder{GroupVersion: h.target.GroupVersion()}
	d, err := RunOpsErr(ctx, cfg.Workers, cfg.VMs, func(ctx context.Context, w, i int) error {
		ns := namespaces[i%len(namespaces)]
		o, err := b.Build(ns, fmt.Sprintf("vm-%05d", i), false)
		if err != nil {
			return err
		}
		_, err = clients[w].Resource(h.target.Resource).Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		return err
	})
	if d.Count != cfg.VMs {
		return fmt.Errorf("created %d of %d VMs: %v", d.Count, cfg.VMs, err)
	}
	res.AddRow(scenario, fmt.Sprintf("create the same VMs as the CRD (c) (%d clients)", cfg.Workers), fmt.Sprintf("%s/s, p99 %s ms", FmtOps(d.OpsPerSec), FmtMs(d.P99Ms)), "")
	add(scenario, "create-rate-crd", d.OpsPerSec, "1/s", "")
	return nil
}
