package integration

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/controllers/app"
	"github.com/nativevirt/nativevirt/pkg/controllers/datavolume"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// requestLog records the write requests one client sends to the real apiserver, with their
// response codes: failed writes (409 conflicts of a stale cache) cost a round trip too.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

type loggingTransport struct {
	log  *requestLog
	next http.RoundTripper
}

func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.log.mu.Lock()
		t.log.reqs = append(t.log.reqs, fmt.Sprintf("%s %s %d", req.Method, resourcePath(req.URL.Path), code))
		t.log.mu.Unlock()
	}
	return resp, err
}

func (l *requestLog) reset() {
	l.mu.Lock()
	l.reqs = nil
	l.mu.Unlock()
}

func (l *requestLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// resourcePath shortens /apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm/status to
// virtualmachines/status.
func resourcePath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		if s == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	return p
}

// kubeWrites is the fake Kubernetes side (pods, nodes, events): it names generated pods, bumps
// resourceVersions as a server would, and records the controllers' writes.
type kubeWrites struct {
	requestLog
	rv int
}

func (k *kubeWrites) reactor(a clienttesting.Action) (bool, runtime.Object, error) {
	var obj runtime.Object
	switch a := a.(type) {
	case clienttesting.CreateAction: // an UpdateAction too: it has the same methods
		obj = a.GetObject()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if m, ok := obj.(metav1.Object); ok {
		k.rv++
		m.SetResourceVersion(fmt.Sprint(k.rv))
		if m.GetName() == "" && m.GetGenerateName() != "" {
			m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), k.rv))
			m.SetUID(types.UID(fmt.Sprintf("uid-%d", k.rv)))
		}
	}
	switch a.GetVerb() {
	case "create", "update", "patch", "delete":
		if a.GetResource().Resource != "events" {
			k.reqs = append(k.reqs, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return false, nil, nil
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

type controllerEnv struct {
	t       *testing.T
	admin   *versioned.Clientset // the test's own writes, not counted
	apiLog  *requestLog
	kube    *kubefake.Clientset
	kubeLog *kubeWrites
}

// setPodOnNode changes a pod in the fake as the scheduler and kubelet would: bound to node, then
// mutated (status, conditions).
func (e *controllerEnv) setPodOnNode(ns, name, node string, mutate func(*corev1.Pod)) {
	e.t.Helper()
	p, err := e.kube.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	p = p.DeepCopy()
	p.Spec.NodeName = node
	mutate(p)
	if err := e.kube.Tracker().Update(podsGVR, p, ns); err != nil {
		e.t.Fatal(err)
	}
}

// defaultLocalPathClass creates the local cluster's default StorageClass in the fake:
// rancher.io/local-path, WaitForFirstConsumer.
func (e *controllerEnv) defaultLocalPathClass() {
	e.t.Helper()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := e.kube.StorageV1().StorageClasses().Create(context.Background(), &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "local-path", Annotations: map[string]string{datavolume.AnnDefaultStorageClass: "true"}},
		Provisioner: "rancher.io/local-path", VolumeBindingMode: &wffc,
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// startControllers runs every controller in-process against the real apiserver (kubevirt.io)
// and a fake for pods, nodes and events.
func startControllers(t *testing.T) *controllerEnv {
	t.Helper()
	srv := framework.Start(t, "")
	env := &controllerEnv{t: t, admin: srv.Clientset(t), apiLog: &requestLog{}, kubeLog: &kubeWrites{}}
	cfg := rest.CopyConfig(srv.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return loggingTransport{log: env.apiLog, next: rt} })
	kv, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// node1 runs a live node agent: labelled schedulable, with a fresh heartbeat.
	env.kube = kubefake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        "node1",
		Labels:      map[string]string{"kubevirt.io/schedulable": "true"},
		Annotations: map[string]string{"kubevirt.io/heartbeat": time.Now().UTC().Format(time.RFC3339)},
	}})
	env.kube.PrependReactor("*", "*", env.kubeLog.reactor)
	ctrls, err := app.NewControllers(env.kube, kv, launcherpod.Config{UseEmulation: true}, nil, migration.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctrls.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controllers: %v", err)
		}
	})
	// The cdiconfig controller creates CDIConfig "config" once at start; tests that count writes
	// begin after that write has been answered.
	env.eventually("the CDIConfig created at start", func() (bool, error) {
		for _, w := range env.apiLog.get() {
			if strings.HasPrefix(w, "POST /apis/cdi.kubevirt.io/v1beta1/cdiconfigs ") {
				return true, nil
			}
		}
		return false, nil
	})
	return env
}

func (e *controllerEnv) eventually(what string, cond func() (bool, error)) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("timed out waiting for %s (last error: %v)\napiserver writes: %v\npod writes: %v", what, last,
		e.apiLog.get(), e.kubeLog.get())
}

func (e *controllerEnv) vm(name string) *kubevirtv1.VirtualMachine {
	e.t.Helper()
	vm, err := e.admin.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return vm
}

func (e *controllerEnv) vmi(name string) (*kubevirtv1.VirtualMachineInstance, error) {
	return e.admin.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// launcherPod waits for the launcher pod of the instance with uid.
func (e *controllerEnv) launcherPod(uid types.UID) *corev1.Pod {
	e.t.Helper()
	var pod *corev1.Pod
	e.eventually("the launcher pod", func() (bool, error) {
		list, err := e.kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kubevirt.io/created-by=" + string(uid)})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		if len(list.Items) > 1 {
			e.t.Fatalf("%d launcher pods for one instance", len(list.Items))
		}
		pod = &list.Items[0]
		return true, nil
	})
	return pod
}

// schedule does what kube-scheduler and the kubelet do to a pod: bind it and run it (through the
// tracker, so that it is not counted).
func (e *controllerEnv) schedule(pod *corev1.Pod, node string) {
	e.t.Helper()
	pod = pod.DeepCopy()
	pod.Spec.NodeName = node
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	pod.ResourceVersion = "999999"
	if err := e.kube.Tracker().Update(podsGVR, pod, pod.Namespace); err != nil {
		e.t.Fatal(err)
	}
}

func (e *controllerEnv) createVM(name string, strategy kubevirtv1.VirtualMachineRunStrategy) {
	e.t.Helper()
	vm := &kubevirtv1.VirtualMachine{}
	if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), vm); err != nil {
		e.t.Fatal(err)
	}
	vm.Spec.RunStrategy = &strategy
	if _, err := e.admin.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *controllerEnv) setStrategy(name string, strategy kubevirtv1.VirtualMachineRunStrategy) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"runStrategy":%q}}`, strategy)
	if _, err := e.admin.KubevirtV1().VirtualMachines(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// request appends state change requests to the VM's status as the start/stop/restart
// subresources do, retrying on conflicts with the controller's own status writes.
func (e *controllerEnv) request(name string, reqs ...kubevirtv1.VirtualMachineStateChangeRequest) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vm := e.vm(name)
		vm.Status.StateChangeRequests = append(vm.Status.StateChangeRequests, reqs...)
		_, err := e.admin.KubevirtV1().VirtualMachines(ns).UpdateStatus(context.Background(), vm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *controllerEnv) printable(name string, want kubevirtv1.VirtualMachinePrintableStatus) {
	e.t.Helper()
	e.eventually("VM "+name+" "+string(want), func() (bool, error) {
		return e.vm(name).Status.PrintableStatus == want, nil
	})
}

// TestControllerWritesPerStart counts every write request the controllers send, to the real
// apiserver and to Kubernetes, from `runStrategy: Always` until the instance is Scheduled.
func TestControllerWritesPerStart(t *testing.T) {
	env := startControllers(t)
	env.createVM("vm-writes", kubevirtv1.RunStrategyHalted)
	env.printable("vm-writes", kubevirtv1.VirtualMachineStatusStopped)
	time.Sleep(300 * time.Millisecond)
	env.apiLog.reset()
	env.kubeLog.reset()

	env.setStrategy("vm-writes", kubevirtv1.RunStrategyAlways)
	var vmi *kubevirtv1.VirtualMachineInstance
	env.eventually("the instance", func() (bool, error) {
		var err error
		vmi, err = env.vmi("vm-writes")
		return err == nil, err
	})
	pod := env.launcherPod(vmi.UID)
	env.schedule(pod, "node1")
	env.eventually("Scheduled with the node label", func() (bool, error) {
		v, err := env.vmi("vm-writes")
		return err == nil && v.Status.Phase == kubevirtv1.Scheduled && v.Status.NodeName == "node1" &&
			v.Labels[kubevirtv1.NodeNameLabel] == "node1", err
	})
	time.Sleep(1500 * time.Millisecond) // anything still to come (past the scheduling grace) would be an extra write
	writes := append(env.apiLog.get(), env.kubeLog.get()...)
	sort.Strings(writes)
	want := []string{
		"POST virtualmachineinstances 201",       // VM controller: the instance, finalizer included
		"PUT virtualmachineinstances/status 200", // VMI controller: Scheduled, nodeName (the server mirrors the node label)
		"PUT virtualmachines/status 200",         // VM controller: created, Starting
		"create pods",                            // VMI controller: the launcher pod
	}
	if fmt.Sprint(writes) != fmt.Sprint(want) {
		t.Errorf("writes per start:\n got %d: %v\nwant %d: %v", len(writes), writes, len(want), want)
	}
	t.Logf("writes from start to Scheduled: %d %v", len(writes), writes)

	vm := env.vm("vm-writes")
	if !vm.Status.Created || vm.Status.PrintableStatus != kubevirtv1.VirtualMachineStatusStarting {
		t.Errorf("VM status: created %v %s", vm.Status.Created, vm.Status.PrintableStatus)
	}
	vmi, _ = env.vmi("vm-writes")
	if fw := vmi.Spec.Domain.Firmware; fw == nil || fw.UUID == "" || fw.UUID != vm.Spec.Template.Spec.Domain.Firmware.UUID {
		t.Errorf("instance firmware %+v, want the VM's UUID", fw)
	}
}

// TestControllerWritesPerStandaloneStart counts the controllers' writes for a VMI created on its
// own, until it is Scheduled: the launcher pod and one status write. The apiserver gives the VMI
// its finalizer at creation, so the VMI controller does not patch it in.
func TestControllerWritesPerStandaloneStart(t *testing.T) {
	env := startControllers(t)
	vmi := &kubevirtv1.VirtualMachineInstance{}
	if err := yaml.Unmarshal([]byte(framework.VMIYAML("vmi-writes")), vmi); err != nil {
		t.Fatal(err)
	}
	env.apiLog.reset()
	env.kubeLog.reset()
	created, err := env.admin.KubevirtV1().VirtualMachineInstances(ns).Create(context.Background(), vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{kubevirtv1.VirtualMachineControllerFinalizer}; fmt.Sprint(created.Finalizers) != fmt.Sprint(want) {
		t.Errorf("finalizers at creation: %v, want %v", created.Finalizers, want)
	}
	pod := env.launcherPod(created.UID)
	env.schedule(pod, "node1")
	env.eventually("Scheduled", func() (bool, error) {
		v, err := env.vmi("vmi-writes")
		return err == nil && v.Status.Phase == kubevirtv1.Scheduled && v.Status.NodeName == "node1", err
	})
	time.Sleep(1500 * time.Millisecond) // anything still to come (past the scheduling grace) would be an extra write
	writes := append(env.apiLog.get(), env.kubeLog.get()...)
	sort.Strings(writes)
	want := []string{
		"PUT virtualmachineinstances/status 200", // VMI controller: Scheduled, nodeName
		"create pods",                            // VMI controller: the launcher pod
	}
	if fmt.Sprint(writes) != fmt.Sprint(want) {
		t.Errorf("writes per standalone start:\n got %d: %v\nwant %d: %v", len(writes), writes, len(want), want)
	}
}

// TestControllerLifecycle drives a VM through stop, start, restart through the subresource's
// state change requests, and adoption of an orphaned instance.
func TestControllerLifecycle(t *testing.T) {
	env := startControllers(t)
	const name = "vm-life"
	env.createVM(name, kubevirtv1.RunStrategyAlways)
	env.eventually("the first instance", func() (bool, error) { _, err := env.vmi(name); return err == nil, nil })
	first, _ := env.vmi(name)
	env.schedule(env.launcherPod(first.UID), "node1")
	env.eventually("Scheduled", func() (bool, error) {
		v, err := env.vmi(name)
		return err == nil && v.Status.Phase == kubevirtv1.Scheduled, err
	})

	// Stop: the instance is deleted, its pod removed, the finalizer released, the VM Stopped.
	env.setStrategy(name, kubevirtv1.RunStrategyHalted)
	env.eventually("the instance to be gone", func() (bool, error) {
		_, err := env.vmi(name)
		return apierrors.IsNotFound(err), nil
	})
	env.printable(name, kubevirtv1.VirtualMachineStatusStopped)
	if pods, _ := env.kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{}); len(pods.Items) != 0 {
		t.Errorf("%d launcher pods left after stop", len(pods.Items))
	}

	// Start again (Manual + a Start request, as the start subresource queues it).
	env.setStrategy(name, kubevirtv1.RunStrategyManual)
	env.request(name, kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest})
	var second *kubevirtv1.VirtualMachineInstance
	env.eventually("the second instance", func() (bool, error) {
		v, err := env.vmi(name)
		if err != nil {
			return false, nil
		}
		second = v
		return v.UID != first.UID, nil
	})
	env.eventually("the Start request to be consumed", func() (bool, error) { return len(env.vm(name).Status.StateChangeRequests) == 0, nil })
	env.schedule(env.launcherPod(second.UID), "node1")

	// Restart: [Stop uid, Start] — a third instance, created only after the second is gone.
	uid := second.UID
	env.request(name, kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StopRequest, UID: &uid},
		kubevirtv1.VirtualMachineStateChangeRequest{Action: kubevirtv1.StartRequest})
	var third *kubevirtv1.VirtualMachineInstance
	env.eventually("the third instance", func() (bool, error) {
		v, err := env.vmi(name)
		if err != nil {
			return false, nil
		}
		third = v
		return v.UID != second.UID, nil
	})
	env.schedule(env.launcherPod(third.UID), "node1")
	env.eventually("the requests to be consumed", func() (bool, error) { return len(env.vm(name).Status.StateChangeRequests) == 0, nil })

	// Orphan and adopt: what `kubectl delete vm --cascade=orphan` leaves (the garbage collector
	// removes the owner reference), then the VM re-created with the same name.
	if err := env.admin.KubevirtV1().VirtualMachines(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.KubevirtV1().VirtualMachineInstances(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"ownerReferences":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	env.createVM(name, kubevirtv1.RunStrategyAlways)
	newVM := env.vm(name)
	env.eventually("the orphan to be adopted", func() (bool, error) {
		v, err := env.vmi(name)
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(v)
		return ref != nil && ref.UID == newVM.UID, nil
	})
	if v, _ := env.vmi(name); v.UID != third.UID {
		t.Errorf("adoption replaced the instance: %s, want %s", v.UID, third.UID)
	}
}

// TestControllerReplicaSet scales a replica set 0 → 3 → 1 against the real apiserver.
func TestControllerReplicaSet(t *testing.T) {
	env := startControllers(t)
	rs := &kubevirtv1.VirtualMachineInstanceReplicaSet{}
	if err := yaml.Unmarshal([]byte(framework.VMIRSYAML("rs-scale", 0)), rs); err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		list, err := env.admin.KubevirtV1().VirtualMachineInstances(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "rs=rs-scale"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range list.Items {
			if v.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	scale := func(n int32) {
		// The controller writes the replica set's status meanwhile: a read-modify-write of the
		// scale retries on conflict, as kubectl's would.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := env.admin.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).GetScale(context.Background(), "rs-scale", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = n
			_, err = env.admin.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).UpdateScale(context.Background(), "rs-scale", s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int32{3, 1} {
		scale(n)
		env.eventually(fmt.Sprintf("%d replicas", n), func() (bool, error) {
			if count() != int(n) {
				return false, nil
			}
			s, err := env.admin.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).GetScale(context.Background(), "rs-scale", metav1.GetOptions{})
			return err == nil && s.Status.Replicas == n && s.Status.Selector == "rs=rs-scale", err
		})
	}
}
