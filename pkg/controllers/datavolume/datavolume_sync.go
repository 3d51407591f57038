package datavolume

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

// sync reconciles one DataVolume: its claim, its pods, its status.
func (c *Controller) sync(ctx context.Context, key string) (loop.Result, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return loop.Result{}, nil
	}
	dv, err := c.dvs.DataVolumes(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return loop.Result{}, nil // owner references collect its claim and pods
	}
	if err != nil {
		return loop.Result{}, err
	}
	if dv.DeletionTimestamp != nil {
		return loop.Result{}, nil
	}
	if dv.Status.Phase == v1beta1.Succeeded || dv.Status.Phase == v1beta1.Failed {
		// Done for good: the pods have nothing left to do.
		return loop.Result{}, c.cleanup(ctx, dv)
	}
	o, res, err := c.observe(ctx, dv)
	if err != nil {
		return loop.Result{}, err
	}
	st := computeStatus(dv, o, metav1.NewTime(c.now()))
	if st.Phase == v1beta1.Succeeded || st.Phase == v1beta1.Failed {
		res = loop.Result{}
	}
	if o.upload && o.claim != nil && !o.adopted && o.blocked == nil && metav1.IsControlledBy(o.claim, dv) {
		if err := c.annotateUpload(ctx, o.claim, st.Phase, o.pod); err != nil {
			return loop.Result{}, err
		}
	}
	summary := ""
	if st.Phase == v1beta1.Succeeded && o.pod != nil {
		summary = importSummary(o.pod)
	}
	if err := c.writeStatus(ctx, dv, st, summary); err != nil {
		return loop.Result{}, err
	}
	return res, nil
}

// observe creates what is missing (claim, pods) and returns what it saw.
func (c *Controller) observe(ctx context.Context, dv *v1beta1.DataVolume) (observation, loop.Result, error) {
	var o observation
	pop, source, blocked, err := c.resolveSource(dv)
	if err != nil {
		return o, loop.Result{}, err
	}
	o.clone = source != nil || (dv.Spec.Source != nil && dv.Spec.Source.PVC != nil) || dv.Spec.SourceRef != nil
	o.upload = isUpload(dv)
	if blocked != nil {
		o.blocked = blocked
		return o, loop.Result{RequeueAfter: blockedInterval}, nil
	}
	claim, err := c.claims.PersistentVolumeClaims(dv.Namespace).Get(dv.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return o, loop.Result{}, err
	}
	var cloneSize *resource.Quantity
	if source != nil {
		if q, ok := source.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			cloneSize = &q
		}
		if q, ok := source.Status.Capacity[corev1.ResourceStorage]; ok && source.Spec.VolumeMode != nil &&
			*source.Spec.VolumeMode == corev1.PersistentVolumeBlock {
			cloneSize = &q
		}
	}
	class := c.classFor(dv, claim)
	plan, err := planClaim(dv, claimInputs{class: class, profile: c.profileFor(class), cloneSize: cloneSize})
	if err != nil {
		o.blocked = &blocker{reason: reasonError, message: err.Error()}
		return o, loop.Result{RequeueAfter: blockedInterval}, nil
	}
	if claim == nil {
		if claim, err = c.createClaim(ctx, plan.claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return o, loop.Result{}, fmt.Errorf("creating claim: %w", err)
		}
		if claim == nil {
			return o, loop.Result{}, fmt.Errorf("claim %s/%s exists but is not in the cache yet", dv.Namespace, dv.Name)
		}
		c.recorder.Eventf(dv, corev1.EventTypeNormal, "Pending", "PVC %s Pending", claim.Name)
	} else if !metav1.IsControlledBy(claim, dv) {
		o.claim = claim
		if !adoptable(dv, claim) {
			o.blocked = &blocker{reason: "ErrClaimNotValid", message: fmt.Sprintf("PVC %s already exists and is not owned by DataVolume %s", claim.Name, dv.Name)}
			return o, loop.Result{}, nil
		}
		// As CDI: an adopted claim holds its data already.
		if err := c.adoptClaim(ctx, claim, dv); err != nil {
			return o, loop.Result{}, fmt.Errorf("adopting claim %s: %w", claim.Name, err)
		}
		o.adopted = true
		return o, loop.Result{}, nil
	}
	plan.block = claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock
	o.claim = claim

	node, wait, err := c.consumerNode(ctx, claim, class)
	if wait && (dv.Annotations[AnnImmediateBinding] == "true" || isUpload(dv)) {
		// As CDI: the importer (or upload server) pod is the claim's first consumer.
		wait = false
	}
	if err != nil {
		return o, loop.Result{}, err
	}
	pod, err := c.pods.Pods(dv.Namespace).Get(importerPodName(dv))
	if err != nil && !apierrors.IsNotFound(err) {
		return o, loop.Result{}, err
	}
	if pod == nil && wait {
		o.waitingForConsumer = true
		return o, loop.Result{}, nil
	}
	if pod != nil && !metav1.IsControlledBy(pod, dv) {
		o.blocked = &blocker{reason: reasonError, message: fmt.Sprintf("pod %s exists and is not DataVolume %s's", pod.Name, dv.Name)}
		return o, loop.Result{}, nil
	}
	if pod != nil && pod.Status.Phase == corev1.PodFailed {
		// Evicted or lost with its node: start over.
		return o, loop.Result{}, c.deletePod(ctx, pod.Namespace, pod.Name)
	}
	if pod == nil {
		if source != nil {
			url, token, ready, err := c.ensureCloneSource(ctx, dv, source)
			if err != nil || !ready {
				return o, loop.Result{RequeueAfter: progressInterval}, err
			}
			pop.cloneURL, pop.cloneToken = url, token
		}
		if pop.upload {
			if pop.uploadToken, err = newToken(); err != nil {
				return o, loop.Result{}, err
			}
		}
		if pod, err = c.createPod(ctx, importerPod(dv, plan, pop, c.cfg, node)); err != nil {
			return o, loop.Result{}, fmt.Errorf("creating the importer pod: %w", err)
		}
	}
	o.pod = pod
	if pod.Status.Phase == corev1.PodRunning {
		o.progress = c.progress(ctx, pod)
		return o, loop.Result{RequeueAfter: progressInterval}, nil
	}
	return o, loop.Result{}, nil
}

// resolveSource says what fills the claim: for a clone (spec.source.pvc, or a DataSource)
// also the source claim; blocked when the source is missing.
func (c *Controller) resolveSource(dv *v1beta1.DataVolume) (population, *corev1.PersistentVolumeClaim, *blocker, error) {
	var pop population
	src := dv.Spec.Source
	if ref := dv.Spec.SourceRef; ref != nil {
		ns := dv.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = *ref.Namespace
		}
		ds, err := c.sources.DataSources(ns).Get(ref.Name)
		if apierrors.IsNotFound(err) {
			return pop, nil, &blocker{reason: "NotFound", message: fmt.Sprintf("DataSource %s/%s not found", ns, ref.Name)}, nil
		}
		if err != nil {
			return pop, nil, nil, err
		}
		pvc := ds.Spec.Source.PVC
		if ds.Status.Source.PVC != nil {
			pvc = ds.Status.Source.PVC
		}
		if pvc == nil {
			return pop, nil, &blocker{reason: "NotSupported", message: fmt.Sprintf("DataSource %s/%s has no pvc source: only pvc DataSources are supported", ns, ref.Name)}, nil
		}
		p := *pvc
		if p.Namespace == "" {
			p.Namespace = ns
		}
		src = &v1beta1.DataVolumeSource{PVC: &p}
	}
	if src == nil {
		return pop, nil, &blocker{reason: "NotSupported", message: "externally populated DataVolumes are not supported"}, nil
	}
	switch {
	case src.HTTP != nil:
		pop.http = src.HTTP
	case src.Blank != nil:
		pop.blank = true
	case src.Upload != nil:
		pop.upload = true
	case src.Registry != nil && src.Registry.URL != nil:
		pop.registryImage = registryImage(*src.Registry.URL)
	case src.PVC != nil:
		claim, err := c.claims.PersistentVolumeClaims(src.PVC.Namespace).Get(src.PVC.Name)
		if apierrors.IsNotFound(err) {
			return pop, nil, &blocker{reason: "CloneWithoutSource", message: fmt.Sprintf("source PVC %s/%s not found", src.PVC.Namespace, src.PVC.Name)}, nil
		}
		if err != nil {
			return pop, nil, nil, err
		}
		if claim.Status.Phase != corev1.ClaimBound {
			return pop, nil, &blocker{reason: "CloneSourceNotBound", message: fmt.Sprintf("source PVC %s/%s is not bound yet", claim.Namespace, claim.Name)}, nil
		}
		if busy := c.cloneSourceInUse(claim); busy != "" {
			return pop, nil, &blocker{reason: "CloneSourceInUse", message: fmt.Sprintf("source PVC %s/%s is in use by pod %s", claim.Namespace, claim.Name, busy)}, nil
		}
		return pop, claim, nil, nil
	default:
		return pop, nil, &blocker{reason: "NotSupported", message: "this source kind is not supported"}, nil
	}
	return pop, nil, nil, nil
}

// cloneSourceInUse names a running pod (other than this controller's) writing to the claim.
func (c *Controller) cloneSourceInUse(claim *corev1.PersistentVolumeClaim) string {
	objs, _ := c.podIndexer.ByIndex(byClaim, claim.Namespace+"/"+claim.Name)
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Labels[LabelApp] == AppImporter || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim.Name && !v.PersistentVolumeClaim.ReadOnly {
				return pod.Name
			}
		}
	}
	return ""
}

// classFor is the StorageClass of the claim (existing or to be made).
func (c *Controller) classFor(dv *v1beta1.DataVolume, claim *corev1.PersistentVolumeClaim) *storagev1.StorageClass {
	var name *string
	switch {
	case claim != nil:
		name = claim.Spec.StorageClassName
	case dv.Spec.PVC != nil:
		name = dv.Spec.PVC.StorageClassName
	case dv.Spec.Storage != nil:
		name = dv.Spec.Storage.StorageClassName
	}
	if name != nil && *name != "" {
		sc, err := c.classes.Get(*name)
		if err != nil {
			return nil
		}
		return sc
	}
	if name != nil { // "": no class at all
		return nil
	}
	all, err := c.classes.List(labels.Everything())
	if err != nil {
		return nil
	}
	return defaultClass(all)
}

func (c *Controller) profileFor(class *storagev1.StorageClass) *v1beta1.StorageProfile {
	if class == nil {
		return nil
	}
	p, err := c.profiles.Get(class.Name)
	if err != nil {
		return nil
	}
	return p
}

// consumerNode returns the node the claim is (to be) provisioned on, and whether population
// must wait for a first consumer: an unbound claim of a WaitForFirstConsumer class without a
// selected node. A scheduled consumer pod selects its node.
func (c *Controller) consumerNode(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) (string, bool, error) {
	if node := claim.Annotations[AnnSelectedNode]; node != "" {
		return node, false, nil
	}
	if claim.Status.Phase == corev1.ClaimBound || !waitsForConsumer(class) {
		return "", false, nil
	}
	objs, err := c.podIndexer.ByIndex(byClaim, claim.Namespace+"/"+claim.Name)
	if err != nil {
		return "", false, err
	}
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Labels[LabelApp] == AppImporter || pod.Spec.NodeName == "" ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := c.annotateClaim(ctx, claim, map[string]string{AnnSelectedNode: pod.Spec.NodeName}); err != nil {
			return "", false, fmt.Errorf("selecting node %s for claim %s: %w", pod.Spec.NodeName, claim.Name, err)
		}
		return pod.Spec.NodeName, false, nil
	}
	return "", true, nil
}

// ensureCloneSource makes the pod serving the source claim and returns its URL and token once
// it serves.
func (c *Controller) ensureCloneSource(ctx context.Context, dv *v1beta1.DataVolume, source *corev1.PersistentVolumeClaim) (string, string, bool, error) {
	pod, err := c.pods.Pods(source.Namespace).Get(cloneSourcePodName(dv))
	if err != nil && !apierrors.IsNotFound(err) {
		return "", "", false, err
	}
	if pod == nil {
		token, err := newToken()
		if err != nil {
			return "", "", false, err
		}
		p := cloneSourcePod(dv, source, token, c.cfg)
		p.Annotations = map[string]string{annCloneTarget: dv.Namespace + "/" + dv.Name}
		if pod, err = c.createPod(ctx, p); err != nil {
			return "", "", false, fmt.Errorf("creating the clone source pod: %w", err)
		}
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || !podReady(pod) {
		return "", "", false, nil
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == cloneTokenEnv {
			return cloneURL(pod), e.Value, true, nil
		}
	}
	return "", "", false, fmt.Errorf("clone source pod %s/%s has no token", pod.Namespace, pod.Name)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// cleanup deletes the pods of a finished DataVolume.
func (c *Controller) cleanup(ctx context.Context, dv *v1beta1.DataVolume) error {
	if pod, err := c.pods.Pods(dv.Namespace).Get(importerPodName(dv)); err == nil && metav1.IsControlledBy(pod, dv) && pod.DeletionTimestamp == nil {
		if err := c.deletePod(ctx, pod.Namespace, pod.Name); err != nil {
			return err
		}
	}
	objs, err := c.podIndexer.ByIndex(byCloneTarget, string(dv.UID))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok && pod.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, pod.Namespace, pod.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// phaseEvent records a phase change as CDI's events do.
// summary ends the message of a success (what was imported, how fast).
func (c *Controller) phaseEvent(dv *v1beta1.DataVolume, st v1beta1.DataVolumeStatus, summary string) {
	claim := st.ClaimName
	switch st.Phase {
	case v1beta1.ImportScheduled, v1beta1.CloneScheduled:
		c.recorder.Eventf(dv, corev1.EventTypeNormal, string(st.Phase), "%s into %s scheduled", verb(st.Phase), claim)
	case v1beta1.ImportInProgress, v1beta1.CloneInProgress:
		c.recorder.Eventf(dv, corev1.EventTypeNormal, string(st.Phase), "%s into %s in progress", verb(st.Phase), claim)
	case v1beta1.WaitForFirstConsumer:
		c.recorder.Eventf(dv, corev1.EventTypeNormal, string(st.Phase), "PVC %s waits for its first consumer", claim)
	case v1beta1.UploadScheduled:
		c.recorder.Eventf(dv, corev1.EventTypeNormal, string(st.Phase), "Upload into %s scheduled", claim)
	case v1beta1.UploadReady:
		c.recorder.Eventf(dv, corev1.EventTypeNormal, string(st.Phase), "Upload into %s ready", claim)
	case v1beta1.Succeeded:
		if isUpload(dv) {
			c.recorder.Eventf(dv, corev1.EventTypeNormal, "UploadSucceeded", "Successfully uploaded into PVC %s%s", claim, summary)
			return
		}
		c.recorder.Eventf(dv, corev1.EventTypeNormal, "ImportSucceeded", "Successfully populated PVC %s%s", claim, summary)
	case v1beta1.Failed:
		msg := ""
		for _, cnd := range st.Conditions {
			if cnd.Type == v1beta1.DataVolumeRunning {
				msg = cnd.Message
			}
		}
		c.recorder.Eventf(dv, corev1.EventTypeWarning, "Error", "Populating PVC %s failed: %s", claim, msg)
	}
}

func verb(p v1beta1.DataVolumePhase) string {
	if p == v1beta1.CloneScheduled || p == v1beta1.CloneInProgress {
		return "Cloning"
	}
	return "Import"
}

// adoptable says whether dv may take over an existing claim of its name: the DataVolume allows
// it (cdi.kubevirt.io/allowClaimAdoption, which KubeVirt sets on the DataVolumes of
// dataVolumeTemplates) or the claim says it was populated for it, and no other live owner
// controls the claim (a DataVolume of the same name that was deleted with orphaning does not
// count).
func adoptable(dv *v1beta1.DataVolume, claim *corev1.PersistentVolumeClaim) bool {
	if dv.Annotations[AnnAllowClaimAdoption] != "true" && claim.Annotations[AnnPopulatedFor] != dv.Name {
		return false
	}
	ref := metav1.GetControllerOf(claim)
	return ref == nil || (ref.Kind == "DataVolume" && ref.Name == dv.Name && ref.UID != dv.UID)
}
