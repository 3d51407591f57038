package bench

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FreshKube is a fresh kube-apiserver with its own empty etcd (Debian's, from PATH), both plain
// processes on 127.0.0.1: the CRD target (c) of the scale-fresh suite, as fresh as the standalone
// nativevirt-apiserver beside it. Every request with its token is a member of system:masters.
type FreshKube struct {
	// Config reaches kube-apiserver; Kubeconfig is a file for kubectl.
	Config     *rest.Config
	Kubeconfig string
	// PID is kube-apiserver's process, EtcdPID etcd's.
	PID, EtcdPID int

	dir   string
	procs []*startedProcess
}

type startedProcess struct {
	proc   *os.Process
	exited chan error
}

const freshKubeToken = "bench-fresh-admin"

// StartFreshKube starts etcd and kube-apiserver (bin) under dir (wiped first) and waits until
// kube-apiserver is ready. Stop ends both and removes dir.
func StartFreshKube(ctx context.Context, bin, dir string) (*FreshKube, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	k := &FreshKube{dir: dir}
	ports := make([]int, 3)
	for i := range ports {
		p, err := freePort("127.0.0.1")
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	etcd, err := k.start(filepath.Join(dir, "etcd.log"), "etcd", "--name=bench-fresh", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=bench-fresh="+peerURL, "--listen-metrics-urls=")
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	k.EtcdPID = etcd.proc.Pid
	saKey := filepath.Join(dir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		k.Stop()
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(freshKubeToken+",bench-admin,bench-admin,system:masters\n"), 0o600); err != nil {
		k.Stop()
		return nil, err
	}
	api, err := k.start(filepath.Join(dir, "kube-apiserver.log"), bin,
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[2]), "--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+tokens, "--authorization-mode=RBAC",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--service-account-issuer=https://kubernetes.default.svc", "--service-cluster-ip-range=10.250.0.0/24",
		"--endpoint-reconciler-type=none", "--v=1")
	if err != nil {
		k.Stop()
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	k.PID = api.proc.Pid
	k.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(ports[2]),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		BearerToken:     freshKubeToken,
		QPS:             -1,
	}
	if err := waitReadyz(ctx, k.Config, api.exited, 2*time.Minute); err != nil {
		k.Stop()
		return nil, fmt.Errorf("kube-apiserver: %w (log: %s)", err, filepath.Join(dir, "kube-apiserver.log"))
	}
	k.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["fresh"] = &clientcmdapi.Cluster{Server: k.Config.Host, InsecureSkipTLSVerify: true}
	kc.AuthInfos["fresh"] = &clientcmdapi.AuthInfo{Token: freshKubeToken}
	kc.Contexts["fresh"] = &clientcmdapi.Context{Cluster: "fresh", AuthInfo: "fresh"}
	kc.CurrentContext = "fresh"
	if err := clientcmd.WriteToFile(*kc, k.Kubeconfig); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// start runs one process in its own process group with its output in logPath.
func (k *FreshKube) start(logPath, bin string, args ...string) (*startedProcess, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &startedProcess{proc: cmd.Process, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait(); log.Close() }()
	k.procs = append(k.procs, p)
	return p, nil
}

// Stop ends kube-apiserver, then etcd, and removes the directory.
func (k *FreshKube) Stop() error {
	var errs []error
	for i := len(k.procs) - 1; i >= 0; i-- {
		errs = append(errs, stopProcess(k.procs[i].proc, k.procs[i].exited, 30*time.Second))
	}
	k.procs = nil
	errs = append(errs, os.RemoveAll(k.dir))
	return errors.Join(errs...)
}

// writeRSAKey writes a new RSA private key (PEM) for the service account tokens.
func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}
