package app

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/client/informers/externalversions"
	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	"github.com/nativevirt/nativevirt/pkg/controllers/cdiconfig"
	"github.com/nativevirt/nativevirt/pkg/controllers/datavolume"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/podindex"
	ctrlmetrics "github.com/nativevirt/nativevirt/pkg/controllers/metrics"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
	"github.com/nativevirt/nativevirt/pkg/controllers/node"
	"github.com/nativevirt/nativevirt/pkg/controllers/replicaset"
	"github.com/nativevirt/nativevirt/pkg/controllers/storageprofile"
	"github.com/nativevirt/nativevirt/pkg/controllers/vm"
	"github.com/nativevirt/nativevirt/pkg/controllers/vmi"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// informerResync is zero: every controller acts on events and requeues itself when time matters
// (back-off, heartbeats), so periodic resyncs would only cost CPU.
const informerResync = 0 * time.Second

// Controllers are the controllers of nativevirt-controller on shared informers.
type Controllers struct {
	kvFactory  externalversions.SharedInformerFactory
	podFactory kubeinformers.SharedInformerFactory
	// hotplugFactory informs of attachment pods.
	hotplugFactory kubeinformers.SharedInformerFactory
	nodeFactory    kubeinformers.SharedInformerFactory
	events         *cmdutil.Events

	listers ctrlmetrics.Listers

	vm         *vm.Controller
	vmi        *vmi.Controller
	replicaset *replicaset.Controller
	node       *node.Controller
	migration  *migration.Controller
	dataVolume *datavolume.Controller
	profiles   *storageprofile.Controller
	cdiConfig  *cdiconfig.Controller
}

// NewControllers builds every controller. kube reaches pods, nodes and events; kv the
// kubevirt.io API. cfg renders launcher pods; mig tunes live migrations (its Launcher is set
// from cfg, so that target pods are the source pods' twins). nads looks up the
// NetworkAttachmentDefinitions of Multus networks.
func NewControllers(kube kubernetes.Interface, kv versioned.Interface, cfg launcherpod.Config, nads vmi.NetworkAttachmentLookup,
	mig migration.Config) (*Controllers, error) {
	events, err := cmdutil.NewEvents(kube)
	if err != nil {
		return nil, err
	}
	c := &Controllers{
		kvFactory: externalversions.NewSharedInformerFactory(kv, informerResync),
		podFactory: kubeinformers.NewSharedInformerFactoryWithOptions(kube, informerResync,
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = podindex.LauncherSelector })),
		hotplugFactory: kubeinformers.NewSharedInformerFactoryWithOptions(kube, informerResync,
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = launcherpod.HotplugSelector })),
		nodeFactory: kubeinformers.NewSharedInformerFactory(kube, informerResync),
		events:      events,
	}
	recorder := func(component string) record.EventRecorder {
		return events.Recorder(corev1.EventSource{Component: component})
	}
	kvi := c.kvFactory.Kubevirt().V1()
	c.listers = ctrlmetrics.Listers{VMs: kvi.VirtualMachines().Lister(), VMIs: kvi.VirtualMachineInstances().Lister()}
	pods := c.podFactory.Core().V1().Pods()
	// Claims of persistentVolumeClaim volumes: their volume mode shapes the launcher pod.
	claims := c.nodeFactory.Core().V1().PersistentVolumeClaims().Lister()
	cfg.Claims = func(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
		return claims.PersistentVolumeClaims(namespace).Get(name)
	}

	if c.vm, err = vm.New(kube, kv, kvi.VirtualMachines(), kvi.VirtualMachineInstances(), recorder(vm.Name)); err != nil {
		return nil, err
	}
	if c.vmi, err = vmi.New(kube, kv, kvi.VirtualMachineInstances(), pods, cfg, nads, recorder(vmi.Name)); err != nil {
		return nil, err
	}
	if err := c.vmi.EnableHotplug(kube, c.hotplugFactory.Core().V1().Pods(), cfg); err != nil {
		return nil, err
	}
	if c.replicaset, err = replicaset.New(kv, kvi.VirtualMachineInstanceReplicaSets(), kvi.VirtualMachineInstances(),
		recorder(replicaset.Name)); err != nil {
		return nil, err
	}
	if c.node, err = node.New(kube, kv, c.nodeFactory.Core().V1().Nodes(), kvi.VirtualMachineInstances(), pods); err != nil {
		return nil, err
	}
	mig.Launcher = cfg
	if c.migration, err = migration.New(kube, kv, kvi.VirtualMachineInstanceMigrations(), kvi.VirtualMachineInstances(), pods,
		mig, recorder(migration.Name)); err != nil {
		return nil, err
	}
	// DataVolumes: importer pods run on the launcher image (nativevirt-importer, qemu-img); any
	// pod may be the first consumer of a claim, so the pods informer here is unfiltered.
	cdi := c.kvFactory.Cdi().V1beta1()
	classes := c.nodeFactory.Storage().V1().StorageClasses()
	image := cfg.LauncherImage
	if image == "" {
		image = launcherpod.DefaultLauncherImage
	}
	if c.dataVolume, err = datavolume.New(kube, kv, datavolume.Informers{
		DataVolumes: cdi.DataVolumes(), DataSources: cdi.DataSources(), StorageProfiles: cdi.StorageProfiles(),
		Claims: c.nodeFactory.Core().V1().PersistentVolumeClaims(), Pods: c.nodeFactory.Core().V1().Pods(),
		StorageClasses: classes,
	}, datavolume.Config{Image: image, PullPolicy: cfg.LauncherPullPolicy}, recorder(datavolume.Name)); err != nil {
		return nil, err
	}
	if c.profiles, err = storageprofile.New(kv, classes, cdi.StorageProfiles()); err != nil {
		return nil, err
	}
	// CDIConfig config: where the upload proxy (nativevirt-apiserver's, behind a NodePort
	// Service in this controller's namespace) is.
	c.cdiConfig = cdiconfig.New(kube, kv, c.nodeFactory.Core().V1().Nodes(), defaultNamespace())
	// The VM controller creates the DataVolumes of dataVolumeTemplates and follows them.
	// The VMI controller holds a launcher pod back until its DataVolumes may be used.
	if err = c.vmi.EnableDataVolumes(cdi.DataVolumes()); err != nil {
		return nil, err
	}
	if err = c.vm.UseDataVolumes(kv, cdi.DataVolumes(), claims, recorder(vm.Name)); err != nil {
		return nil, err
	}
	return c, nil
}

// Listers are the caches of VMs and VMIs, for the metrics.
func (c *Controllers) Listers() *ctrlmetrics.Listers { return &c.listers }

// Run starts the informers and all controllers with workers each, and returns when ctx ends.
func (c *Controllers) Run(ctx context.Context, workers int) error {
	defer c.events.Shutdown()
	c.kvFactory.Start(ctx.Done())
	c.podFactory.Start(ctx.Done())
	c.hotplugFactory.Start(ctx.Done())
	c.nodeFactory.Start(ctx.Done())
	defer c.kvFactory.Shutdown()
	defer c.podFactory.Shutdown()
	defer c.hotplugFactory.Shutdown()
	defer c.nodeFactory.Shutdown()
	c.nodeFactory.WaitForCacheSync(ctx.Done())

	runs := []func(context.Context, int) error{c.vm.Run, c.vmi.Run, c.replicaset.Run, c.node.Run, c.migration.Run,
		c.dataVolume.Run, c.profiles.Run, c.cdiConfig.Run}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run(ctx, workers)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
