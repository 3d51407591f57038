// Package datavolume populates the claims of CDI DataVolumes: for each DataVolume it creates
// the claim (spec.pvc as given, spec.storage completed from the StorageProfile and grown by the
// filesystem overhead) and an unprivileged importer pod (cmd/nativevirt-importer on the
// launcher image) that fills it from an http URL, a registry image's disk on the node, a blank
// disk, or a clone source pod serving another claim; it reports CDI's phases, progress,
// restart count, conditions and events. A claim of a WaitForFirstConsumer class is populated
// once its first consumer is scheduled, on that consumer's node.
package datavolume

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	cdiinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/cdi/v1beta1"
	cdilisters "github.com/nativevirt/nativevirt/pkg/client/listers/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// Name is the controller's name in logs, events and metrics.
const Name = "datavolume-controller"

// Pod indexes.
const (
	// byClaim indexes pods by the namespace/name of each claim they use.
	byClaim = "claim"
	// byCloneTarget indexes clone source pods by the UID of their DataVolume.
	byCloneTarget = "cloneTarget"
	// annCloneTarget names the namespace/name of the DataVolume a clone source pod serves.
	annCloneTarget = "nativevirt.io/clone-target"
)

// Requeue intervals.
const (
	// progressInterval refreshes the progress of a running import.
	progressInterval = 3 * time.Second
	// blockedInterval looks again for a missing source.
	blockedInterval = 10 * time.Second
)

// Controller is the DataVolume controller.
type Controller struct {
	queue      *loop.Queue
	dvs        cdilisters.DataVolumeLister
	claims     corelisters.PersistentVolumeClaimLister
	pods       corelisters.PodLister
	podIndexer cache.Indexer
	classes    storagelisters.StorageClassLister
	profiles   cdilisters.StorageProfileLister
	sources    cdilisters.DataSourceLister
	synced     []cache.InformerSynced
	cfg        Config
	recorder   record.EventRecorder
	now        func() time.Time

	// The effects, function fields so that tests stub them.
	createClaim func(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
	// annotateClaim merges annotations into the claim's.
	annotateClaim func(ctx context.Context, claim *corev1.PersistentVolumeClaim, annotations map[string]string) error
	adoptClaim    func(ctx context.Context, claim *corev1.PersistentVolumeClaim, dv *v1beta1.DataVolume) error
	createPod     func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	deletePod     func(ctx context.Context, namespace, name string) error
	updateStatus  func(ctx context.Context, dv *v1beta1.DataVolume) error
	// progress asks a running importer pod how far it is ("" when it cannot tell).
	progress func(ctx context.Context, pod *corev1.Pod) string
}

// Informers are the caches the controller reads.
type Informers struct {
	DataVolumes     cdiinformers.DataVolumeInformer
	DataSources     cdiinformers.DataSourceInformer
	StorageProfiles cdiinformers.StorageProfileInformer
	// Claims and Pods are of all namespaces (Pods unfiltered: any pod may be a claim's first
	// consumer).
	Claims         coreinformers.PersistentVolumeClaimInformer
	Pods           coreinformers.PodInformer
	StorageClasses storageinformers.StorageClassInformer
}

// New wires the controller; Run starts it.
func New(kube kubernetes.Interface, client versioned.Interface, inf Informers, cfg Config, recorder record.EventRecorder) (*Controller, error) {
	podInformer := inf.Pods.Informer()
	if err := addPodIndexers(podInformer); err != nil {
		return nil, err
	}
	c := &Controller{
		dvs: inf.DataVolumes.Lister(), claims: inf.Claims.Lister(), pods: inf.Pods.Lister(), podIndexer: podInformer.GetIndexer(),
		classes: inf.StorageClasses.Lister(), profiles: inf.StorageProfiles.Lister(), sources: inf.DataSources.Lister(),
		synced: []cache.InformerSynced{inf.DataVolumes.Informer().HasSynced, inf.DataSources.Informer().HasSynced,
			inf.StorageProfiles.Informer().HasSynced, inf.Claims.Informer().HasSynced, podInformer.HasSynced,
			inf.StorageClasses.Informer().HasSynced},
		cfg: cfg, recorder: recorder, now: time.Now,
	}
	c.queue = loop.New(Name, c.sync)
	c.createClaim = func(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
		return kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	}
	c.annotateClaim = func(ctx context.Context, claim *corev1.PersistentVolumeClaim, annotations map[string]string) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if err != nil {
			return err
		}
		_, err = kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Patch(ctx, claim.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	c.adoptClaim = func(ctx context.Context, claim *corev1.PersistentVolumeClaim, dv *v1beta1.DataVolume) error {
		refs := []metav1.OwnerReference{*metav1.NewControllerRef(dv, v1beta1.SchemeGroupVersion.WithKind("DataVolume"))}
		for _, r := range claim.OwnerReferences {
			if r.Controller == nil || !*r.Controller {
				refs = append(refs, r)
			}
		}
		// The resource version makes the patch fail if the claim changed meanwhile.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": refs, "resourceVersion": claim.ResourceVersion,
			"annotations": map[string]string{AnnPopulatedFor: dv.Name},
		}})
		if err != nil {
			return err
		}
		_, err = kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Patch(ctx, claim.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	c.createPod = func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
		return kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	}
	c.deletePod = func(ctx context.Context, namespace, name string) error {
		err := kube.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	c.updateStatus = func(ctx context.Context, dv *v1beta1.DataVolume) error {
		_, err := client.CdiV1beta1().DataVolumes(dv.Namespace).UpdateStatus(ctx, dv, metav1.UpdateOptions{})
		return err
	}
	c.progress = fetchProgress
	err := wiring.Register(
		wiring.Handler{Informer: inf.DataVolumes.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.queue.AddObject,
			UpdateFunc: func(_, cur any) { c.queue.AddObject(cur) },
			DeleteFunc: c.dataVolumeDeleted,
		}},
		wiring.Handler{Informer: inf.Claims.Informer(), Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.claimChanged,
			UpdateFunc: func(_, cur any) { c.claimChanged(cur) },
			DeleteFunc: c.claimChanged,
		}},
		wiring.Handler{Informer: podInformer, Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.podChanged,
			UpdateFunc: func(_, cur any) { c.podChanged(cur) },
			DeleteFunc: c.podChanged,
		}})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs DataVolumes with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

func addPodIndexers(inf cache.SharedIndexInformer) error {
	indexers := cache.Indexers{}
	if _, ok := inf.GetIndexer().GetIndexers()[byClaim]; !ok {
		indexers[byClaim] = func(obj any) ([]string, error) {
			pod, ok := obj.(*corev1.Pod)
			if !ok {
				return nil, nil
			}
			var keys []string
			for _, v := range pod.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
				}
			}
			return keys, nil
		}
	}
	if _, ok := inf.GetIndexer().GetIndexers()[byCloneTarget]; !ok {
		indexers[byCloneTarget] = func(obj any) ([]string, error) {
			if pod, ok := obj.(*corev1.Pod); ok && pod.Labels[LabelCloneTarget] != "" {
				return []string{pod.Labels[LabelCloneTarget]}, nil
			}
			return nil, nil
		}
	}
	if len(indexers) == 0 {
		return nil
	}
	return inf.AddIndexers(indexers)
}

// claimChanged queues the DataVolume of a claim (of the same name).
func (c *Controller) claimChanged(obj any) {
	if claim, ok := wiring.Object[*corev1.PersistentVolumeClaim](obj); ok {
		if ref := metav1.GetControllerOf(claim); ref != nil && ref.Kind == "DataVolume" {
			c.queue.Add(claim.Namespace + "/" + ref.Name)
		}
	}
}

// podChanged queues the DataVolume of an importer or clone source pod, and those of the claims
// a pod consumes (a first consumer lets a WaitForFirstConsumer claim be populated).
func (c *Controller) podChanged(obj any) {
	pod, ok := wiring.Object[*corev1.Pod](obj)
	if !ok {
		return
	}
	if pod.Labels[LabelApp] == AppImporter {
		if name := pod.Labels[LabelDataVolume]; name != "" {
			c.queue.Add(pod.Namespace + "/" + name)
		}
		if target := pod.Annotations[annCloneTarget]; target != "" {
			c.queue.Add(target)
		}
		return
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			c.queue.Add(pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName)
		}
	}
}

// dataVolumeDeleted removes the clone source pods of a deleted DataVolume (in other
// namespaces no owner reference collects them).
func (c *Controller) dataVolumeDeleted(obj any) {
	dv, ok := wiring.Object[*v1beta1.DataVolume](obj)
	if !ok {
		return
	}
	objs, err := c.podIndexer.ByIndex(byCloneTarget, string(dv.UID))
	if err != nil {
		return
	}
	for _, o := range objs {
		if pod, ok := o.(*corev1.Pod); ok {
			if err := c.deletePod(context.Background(), pod.Namespace, pod.Name); err != nil {
				klog.Background().Error(err, "Deleting a clone source pod", "pod", klog.KObj(pod))
			}
		}
	}
}

// fetchProgress asks the importer pod's progress endpoint.
func fetchProgress(ctx context.Context, pod *corev1.Pod) string {
	if pod.Status.PodIP == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://%s/progress", hostPort(pod.Status.PodIP, ProgressPort))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	var r struct {
		Progress string `json:"progress"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		return ""
	}
	return r.Progress
}

func hostPort(ip string, port int) string {
	for _, ch := range ip {
		if ch == ':' {
			return fmt.Sprintf("[%s]:%d", ip, port)
		}
	}
	return fmt.Sprintf("%s:%d", ip, port)
}

// newToken makes a clone's secret.
func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeStatus stores status when it changed, and records the phase change (summary ends the
// message of a success).
func (c *Controller) writeStatus(ctx context.Context, dv *v1beta1.DataVolume, st v1beta1.DataVolumeStatus, summary string) error {
	if apiequality.Semantic.DeepEqual(dv.Status, st) {
		return nil
	}
	old := dv.Status.Phase
	dv = dv.DeepCopy()
	dv.Status = st
	if err := c.updateStatus(ctx, dv); err != nil {
		return err
	}
	if old != st.Phase {
		c.phaseEvent(dv, st, summary)
	}
	return nil
}
