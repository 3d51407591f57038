// Package app turns flags into a running nativevirt-apiserver: options (RecommendedOptions plus
// NativeVirt's storage and standalone settings), the embedded etcd, and the cobra command.
package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	cliflag "k8s.io/component-base/cli/flag"
	netutils "k8s.io/utils/net"

	"github.com/nativevirt/nativevirt/pkg/apiserver"
	"github.com/nativevirt/nativevirt/pkg/apiserver/authn"
	"github.com/nativevirt/nativevirt/pkg/apiserver/embeddedetcd"
	"github.com/nativevirt/nativevirt/pkg/apiserver/storage"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// etcdPathPrefix is where NativeVirt's objects live in etcd.
const etcdPathPrefix = "/registry/kubevirt.io"

// maxRequestBodyBytes caps request bodies (413 above it); the embedded etcd accepts a bit more
// so that every body the server accepts can be stored.
const maxRequestBodyBytes = 3 * 1024 * 1024

// shutdownWatchGracePeriod bounds how long shutdown waits for open watches to drain.
const shutdownWatchGracePeriod = 5 * time.Second

// Options are the flags of nativevirt-apiserver.
type Options struct {
	// Recommended are the standard generic apiserver options: secure serving, delegated
	// authentication and authorization, audit, etcd, features.
	Recommended *genericoptions.RecommendedOptions
	// Standalone runs without a kube-apiserver, for local development and tests: no delegated
	// authentication, every request is an administrator, and only a loopback bind address is
	// accepted. Off by default.
	Standalone bool
	// DataDir holds the embedded etcd when no --etcd-servers are given.
	DataDir string
	// EmbeddedEtcdPort is the embedded etcd's client port on 127.0.0.1 (0: pick a free one).
	EmbeddedEtcdPort int
	// EmbeddedEtcdDefragInterval is how often the embedded etcd is defragmented when most of its
	// file is free (0: only when it starts).
	EmbeddedEtcdDefragInterval time.Duration
	// NodeAgent is the mutual TLS identity towards node agents (console, vnc, pause, ...).
	NodeAgent NodeAgentOptions
	// UploadTokenKeyFile holds the key that signs upload tokens (UploadTokenRequests). Every
	// replica and the upload proxy must share it; empty: a key is generated at start-up, which
	// only suits a single replica.
	UploadTokenKeyFile string
	// UploadProxyAddress is where CDI's upload proxy listens (empty: not served).
	UploadProxyAddress string
	// KubeClient, when set by a caller (tests), replaces the Kubernetes client built from the
	// delegated kubeconfig. Not a flag.
	KubeClient kubernetes.Interface

	etcd *embeddedetcd.Server
	// inProcess builds the storage on the embedded member's in-process client (nil: dialled).
	inProcess *storage.InProcessEtcd
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	o := &Options{
		Recommended: genericoptions.NewRecommendedOptions(etcdPathPrefix,
			storage.Codec(apiserver.Scheme, apiserver.StorageVersions)),
		DataDir:                    defaultDataDir(),
		EmbeddedEtcdDefragInterval: embeddedetcd.DefaultDefragInterval,
	}
	// Store kubevirt.io objects in v1 whatever version a client wrote (and instance types in
	// v1beta1); the generic registry reports these as the resources' storage versions.
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = apiserver.StorageVersions
	o.Recommended.SecureServing.BindPort = 8443
	return o
}

// defaultDataDir follows the XDG base directory convention for state.
func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "nativevirt", "apiserver")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "nativevirt", "apiserver")
	}
	return filepath.Join(os.TempDir(), "nativevirt-apiserver")
}

// AddFlags registers every flag, grouped by concern.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	o.Recommended.AddFlags(fss.FlagSet("generic"))
	fs := fss.FlagSet("nativevirt")
	o.addNativeVirtFlags(fs)
	o.NodeAgent.AddFlags(fss.FlagSet("node agent"))
}

func (o *Options) addNativeVirtFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone,
		"Run without a kube-apiserver (local development only): no delegated authentication or authorization, "+
			"every request acts as an administrator. Requires a loopback --bind-address.")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory of the embedded etcd, used when --etcd-servers is empty.")
	fs.IntVar(&o.EmbeddedEtcdPort, "embedded-etcd-port", o.EmbeddedEtcdPort,
		"Client port of the embedded etcd on 127.0.0.1 (0 picks a free port).")
	fs.DurationVar(&o.EmbeddedEtcdDefragInterval, "embedded-etcd-defrag-interval", o.EmbeddedEtcdDefragInterval,
		"How often the embedded etcd's file is rewritten when at least half of it (and 64 MiB) is free; "+
			"requests wait while it is. It is also checked when the server starts. 0 checks only at start.")
	fs.StringVar(&o.UploadTokenKeyFile, "upload-token-key-file", o.UploadTokenKeyFile,
		"File holding the key (at least 32 bytes, e.g. a mounted Secret) that signs the tokens of "+
			"upload.cdi.kubevirt.io UploadTokenRequests; the upload proxy verifies them with the same key. "+
			"Every API server replica must use the same file. Empty: a random key is generated at start-up "+
			"(a single replica only; tokens do not survive a restart).")
	fs.StringVar(&o.UploadProxyAddress, "upload-proxy-address", o.UploadProxyAddress,
		"Serve CDI's upload proxy (virtctl image-upload) over HTTPS with the serving certificate at this address, "+
			"e.g. :8444. Empty: no upload proxy.")
}

// Complete starts the embedded etcd when no external one is configured and adjusts the options
// of standalone mode. Call Stop to release what it started.
func (o *Options) Complete(ctx context.Context) error {
	if o.Standalone {
		// Nothing to delegate to: no TokenReview, SubjectAccessReview, core client or admission.
		o.Recommended.Authentication = nil
		o.Recommended.Authorization = nil
		o.Recommended.CoreAPI = nil
		o.Recommended.Admission = nil
		o.Recommended.Features.EnablePriorityAndFairness = false
	}
	if len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 {
		srv, err := embeddedetcd.Start(ctx, embeddedetcd.Options{
			DataDir:         o.DataDir,
			ClientPort:      o.EmbeddedEtcdPort,
			MaxRequestBytes: maxRequestBodyBytes + 512*1024,
			DefragInterval:  o.EmbeddedEtcdDefragInterval,
		})
		if err != nil {
			return err
		}
		o.etcd = srv
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{srv.ClientURL()}
	}
	return nil
}

// Stop releases what Complete and Config started.
func (o *Options) Stop() {
	if o.inProcess != nil {
		o.inProcess.Stop()
	}
	o.etcd.Stop()
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Recommended.Validate()...)
	errs = append(errs, o.NodeAgent.Validate()...)
	if o.EmbeddedEtcdDefragInterval < 0 {
		errs = append(errs, fmt.Errorf("--embedded-etcd-defrag-interval must not be negative, got %s", o.EmbeddedEtcdDefragInterval))
	}
	if o.Standalone {
		ip := o.Recommended.SecureServing.BindAddress
		if ip == nil || !ip.IsLoopback() {
			errs = append(errs, fmt.Errorf("--standalone serves without authentication and requires a loopback --bind-address (e.g. 127.0.0.1), got %v", ip))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// Config builds the server configuration from completed, validated options.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil,
		[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	cfg := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	cfg.MaxRequestBodyBytes = maxRequestBodyBytes
	// Close open watches at shutdown (clients re-establish them elsewhere) instead of waiting for
	// them: otherwise SIGTERM only takes effect when the kubelet kills the pod after its grace period.
	cfg.ShutdownWatchTerminationGracePeriod = shutdownWatchGracePeriod
	apiserver.SetOpenAPI(cfg)
	apiserver.GuardPatches(cfg)
	apiserver.PageTablesLarger(cfg)
	if err := o.Recommended.ApplyTo(cfg); err != nil {
		return nil, err
	}
	if rh := cfg.Authentication.RequestHeaderConfig; rh != nil && cfg.Authentication.Authenticator != nil {
		// kube-apiserver's front-proxy certificate: verified once a minute, not on every request.
		cfg.Authentication.Authenticator = authn.WithVerifiedFrontProxies(cfg.Authentication.Authenticator, rh)
	}
	raw, revisions := o.storageBackend()
	cfg.RESTOptionsGetter = storage.SharingWatchCaches(cfg.RESTOptionsGetter, apiserver.Scheme, o.watchCached, raw, revisions)
	if o.Standalone {
		cfg.Authentication.Authenticator = standaloneAuthenticator()
		cfg.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	extra, err := o.extraConfig(cfg.ClientConfig)
	if err != nil {
		return nil, err
	}
	if o.UploadTokenKeyFile != "" {
		if extra.UploadTokenKey, err = uploadtoken.LoadKey(o.UploadTokenKeyFile); err != nil {
			return nil, err
		}
	}
	extra.UploadProxyAddress = o.UploadProxyAddress
	return &apiserver.Config{GenericConfig: cfg, ExtraConfig: extra}, nil
}

// storageBackend is how each resource reaches etcd: the embedded member through its in-process
// client, whose keys' revisions also let consistent GETs be served from the watch caches;
// external servers (--etcd-servers) as k8s.io/apiserver dials them.
func (o *Options) storageBackend() (storage.RawFunc, storage.KeyRevisionFunc) {
	if o.etcd == nil {
		return storage.Dialed, nil
	}
	if o.inProcess == nil {
		o.inProcess = storage.NewInProcessEtcd(o.etcd.InProcessClient(), o.etcd.ClientURL(), o.Recommended.Etcd.StorageConfig.CompactionInterval)
	}
	return o.inProcess.Storage, o.inProcess.KeyRevision
}

// watchCached says whether resource has a watch cache, as the generic etcd options decide it.
func (o *Options) watchCached(resource schema.GroupResource) (bool, error) {
	if !o.Recommended.Etcd.EnableWatchCache {
		return false, nil
	}
	sizes, err := genericoptions.ParseWatchCacheSizes(o.Recommended.Etcd.WatchCacheSizes)
	if err != nil {
		return false, err
	}
	size, set := sizes[resource]
	return !set || size > 0, nil
}

// standaloneAuthenticator treats every request as a cluster administrator. Standalone mode has
// no identity provider; a fixed user keeps audit logs and managed fields meaningful.
func standaloneAuthenticator() authenticator.Request {
	admin := &user.DefaultInfo{
		Name:   "nativevirt-standalone-admin",
		Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated},
	}
	return authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: admin}, true, nil
	})
}
