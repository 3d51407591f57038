// Package storageprofile keeps one CDI StorageProfile per StorageClass, named like the class,
// whose status says what DataVolumes of spec.storage get when they omit access and volume mode:
// the administrator's spec.claimPropertySets when set, else what NativeVirt knows of the
// class's provisioner. Profiles of deleted classes are deleted.
package storageprofile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	cdiinformers "github.com/nativevirt/nativevirt/pkg/client/informers/externalversions/cdi/v1beta1"
	cdilisters "github.com/nativevirt/nativevirt/pkg/client/listers/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/wiring"
)

// Name is the controller's name in logs and metrics.
const Name = "storageprofile-controller"

// Controller is the StorageProfile controller.
type Controller struct {
	queue    *loop.Queue
	classes  storagelisters.StorageClassLister
	profiles cdilisters.StorageProfileLister
	synced   []cache.InformerSynced

	create       func(ctx context.Context, p *v1beta1.StorageProfile) (*v1beta1.StorageProfile, error)
	updateStatus func(ctx context.Context, p *v1beta1.StorageProfile) error
	remove       func(ctx context.Context, name string) error
}

// New wires the controller; Run starts it.
func New(client versioned.Interface, classes storageinformers.StorageClassInformer, profiles cdiinformers.StorageProfileInformer) (*Controller, error) {
	c := &Controller{
		classes: classes.Lister(), profiles: profiles.Lister(),
		synced: []cache.InformerSynced{classes.Informer().HasSynced, profiles.Informer().HasSynced},
	}
	c.queue = loop.New(Name, c.sync)
	api := client.CdiV1beta1().StorageProfiles()
	c.create = func(ctx context.Context, p *v1beta1.StorageProfile) (*v1beta1.StorageProfile, error) {
		return api.Create(ctx, p, metav1.CreateOptions{})
	}
	c.updateStatus = func(ctx context.Context, p *v1beta1.StorageProfile) error {
		_, err := api.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}
	c.remove = func(ctx context.Context, name string) error {
		err := api.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	h := wiring.Own(c.queue, c.queue.AddObject)
	if err := wiring.Register(wiring.Handler{Informer: classes.Informer(), Handler: h},
		wiring.Handler{Informer: profiles.Informer(), Handler: h}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run syncs profiles with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.queue.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, name string) (loop.Result, error) {
	class, err := c.classes.Get(name)
	if apierrors.IsNotFound(err) {
		if _, err := c.profiles.Get(name); err == nil {
			return loop.Result{}, c.remove(ctx, name)
		}
		return loop.Result{}, nil
	}
	if err != nil {
		return loop.Result{}, err
	}
	profile, err := c.profiles.Get(name)
	if apierrors.IsNotFound(err) {
		created, err := c.create(ctx, &v1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return loop.Result{}, fmt.Errorf("creating StorageProfile %s: %w", name, err)
		}
		if created == nil {
			return loop.Result{}, nil // the informer brings it
		}
		profile = created
	} else if err != nil {
		return loop.Result{}, err
	}
	st := Status(class, &profile.Spec)
	if apiequality.Semantic.DeepEqual(profile.Status, st) {
		return loop.Result{}, nil
	}
	p := profile.DeepCopy()
	p.Status = st
	return loop.Result{}, c.updateStatus(ctx, p)
}

// Status computes a profile's status from its class and spec.
func Status(class *storagev1.StorageClass, spec *v1beta1.StorageProfileSpec) v1beta1.StorageProfileStatus {
	st := v1beta1.StorageProfileStatus{
		StorageClass: ptr(class.Name), Provisioner: ptr(class.Provisioner),
		CloneStrategy: ptr(v1beta1.CloneStrategyHostAssisted),
	}
	if spec.CloneStrategy != nil {
		st.CloneStrategy = ptr(*spec.CloneStrategy)
	}
	if len(spec.ClaimPropertySets) > 0 {
		for _, s := range spec.ClaimPropertySets {
			st.ClaimPropertySets = append(st.ClaimPropertySets, *s.DeepCopy())
		}
	} else {
		st.ClaimPropertySets = knownProperties(class.Provisioner)
	}
	if spec.DataImportCronSourceFormat != nil {
		st.DataImportCronSourceFormat = ptr(*spec.DataImportCronSourceFormat)
	}
	if spec.SnapshotClass != nil {
		st.SnapshotClass = ptr(*spec.SnapshotClass)
	}
	return st
}

// knownProperties are the access and volume modes of provisioners NativeVirt knows, best first
// (nil: unknown; DataVolumes then have to name their access mode).
func knownProperties(provisioner string) []v1beta1.ClaimPropertySet {
	rwoFS := v1beta1.ClaimPropertySet{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		VolumeMode: ptr(corev1.PersistentVolumeFilesystem)}
	switch provisioner {
	case "rancher.io/local-path", "kubevirt.io.hostpath-provisioner", "kubevirt.io/hostpath-provisioner",
		"kubernetes.io/no-provisioner", "topolvm.io", "openebs.io/local":
		return []v1beta1.ClaimPropertySet{rwoFS}
	case "nfs.csi.k8s.io", "cephfs.csi.ceph.com", "openshift-storage.cephfs.csi.ceph.com":
		return []v1beta1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			VolumeMode: ptr(corev1.PersistentVolumeFilesystem)}}
	case "rbd.csi.ceph.com", "openshift-storage.rbd.csi.ceph.com":
		return []v1beta1.ClaimPropertySet{
			{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: ptr(corev1.PersistentVolumeBlock)},
			{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptr(corev1.PersistentVolumeBlock)},
			rwoFS,
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
