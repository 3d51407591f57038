package app

import (
	"fmt"
	"github.com/nativevirt/nativevirt/pkg/controllers/vmi"
	"k8s.io/client-go/dynamic"
	"os"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/kubernetes"

	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/cmdutil"
	"github.com/nativevirt/nativevirt/pkg/controllers/migration"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// Config is what nativevirt-controller runs with, built from validated
// Options: the API clients and the controllers' settings. Nothing runs yet.
type Config struct {
	// Kube and KubeVirt are the API clients.
	Kube     kubernetes.Interface
	KubeVirt versioned.Interface
	// Launcher renders launcher pods.
	Launcher launcherpod.Config
	// NetworkAttachments looks up the NetworkAttachmentDefinitions of Multus networks (nil:
	// instances with Multus networks wait for ever).
	NetworkAttachments vmi.NetworkAttachmentLookup
	// Migration tunes live migrations.
	Migration migration.Config
	// Workers is the number of workers of each controller.
	Workers int
	// HealthAddr and MetricsAddr are where /healthz and /readyz, and the
	// metrics, are served ("": not at all).
	HealthAddr, MetricsAddr string
	// LeaderElection configures the leader Lease (nil: the controllers always act).
	LeaderElection *LeaderElection
}

// LeaderElection configures the leader Lease, as in kube-controller-manager.
type LeaderElection struct {
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Identity names this replica in the Lease (Complete sets a unique one when empty).
	Identity string
}

// Config builds the configuration from validated options.
func (o *Options) Config() (*Config, error) {
	rc, err := cmdutil.RESTConfig(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = o.QPS, o.Burst
	rc.UserAgent = "nativevirt-controller"
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	kv, err := versioned.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	c := &Config{
		Kube: kube, KubeVirt: kv, Launcher: o.launcherConfig(), NetworkAttachments: vmi.DynamicNetworkAttachmentLookup(dyn), Migration: o.Migration, Workers: o.Workers,
		HealthAddr: o.HealthAddr, MetricsAddr: o.MetricsAddr,
	}
	if o.LeaderElect {
		c.LeaderElection = &LeaderElection{Namespace: o.LeaderElectNamespace, Name: o.LeaderElectName,
			LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}
	}
	return c, nil
}

// completedConfig is a Config whose derived parts are filled in.
type completedConfig struct {
	*Config
}

// CompletedConfig is a Config ready for New; only Complete makes one.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in what follows from the configuration: the migration
// controller renders target pods as the VMI controller renders source pods,
// and a leader election without an identity gets a unique one.
func (c *Config) Complete() (CompletedConfig, error) {
	c.Migration.Launcher = c.Launcher
	if le := c.LeaderElection; le != nil && le.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return CompletedConfig{}, fmt.Errorf("the leader election identity: %w", err)
		}
		le.Identity = host + "_" + uuid.NewString()
	}
	return CompletedConfig{&completedConfig{c}}, nil
}
