package app

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/pkg/apiserver"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// NodeAgentOptions locate the apiserver's identity towards node agents: the node CA and a
// client certificate with common name streams.APIServerCommonName signed by it. All three or
// none; without them console, vnc, pause, unpause and softreboot answer 503.
type NodeAgentOptions struct {
	CAFile         string
	ClientCertFile string
	ClientKeyFile  string
}

// AddFlags registers the node agent flags.
func (n *NodeAgentOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.CAFile, "node-agent-ca-file", n.CAFile,
		"PEM file of the node CA that signs node agent serving certificates and this apiserver's client certificate.")
	fs.StringVar(&n.ClientCertFile, "node-agent-client-cert-file", n.ClientCertFile,
		"PEM client certificate (common name "+streams.APIServerCommonName+") presented to node agents.")
	fs.StringVar(&n.ClientKeyFile, "node-agent-client-key-file", n.ClientKeyFile,
		"PEM private key of --node-agent-client-cert-file.")
}

// Validate checks that the files are given together.
func (n *NodeAgentOptions) Validate() []error {
	set := 0
	for _, f := range []string{n.CAFile, n.ClientCertFile, n.ClientKeyFile} {
		if f != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		return []error{errors.New("--node-agent-ca-file, --node-agent-client-cert-file and --node-agent-client-key-file go together")}
	}
	return nil
}

// TLSConfig loads the files; nil when none is set.
func (n *NodeAgentOptions) TLSConfig() (*tls.Config, error) {
	if n.CAFile == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(n.CAFile)
	if err != nil {
		return nil, fmt.Errorf("--node-agent-ca-file: %w", err)
	}
	cert, err := os.ReadFile(n.ClientCertFile)
	if err != nil {
		return nil, fmt.Errorf("--node-agent-client-cert-file: %w", err)
	}
	key, err := os.ReadFile(n.ClientKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--node-agent-client-key-file: %w", err)
	}
	return streams.ClientTLSConfig(ca, cert, key)
}

// extraConfig builds NativeVirt's own settings. The Kubernetes client comes from o.KubeClient
// when a caller set one (tests), else from the delegated kubeconfig or in-cluster config that
// the generic options resolved; standalone mode has none.
func (o *Options) extraConfig(clientConfig *rest.Config) (apiserver.ExtraConfig, error) {
	var extra apiserver.ExtraConfig
	tlsConfig, err := o.NodeAgent.TLSConfig()
	if err != nil {
		return extra, err
	}
	extra.NodeAgentTLS = tlsConfig
	switch {
	case o.KubeClient != nil:
		extra.KubeClient = o.KubeClient
	case clientConfig != nil && !o.Standalone:
		c, err := kubernetes.NewForConfig(clientConfig)
		if err != nil {
			return extra, fmt.Errorf("kubernetes client: %w", err)
		}
		extra.KubeClient = c
	}
	return extra, nil
}
