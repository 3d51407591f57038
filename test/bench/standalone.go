package bench

import (
	"context"
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

// Standalone is a fresh nativevirt-apiserver process in standalone mode (loopback only, no
// kube-apiserver, every request an administrator) with an empty embedded etcd: a server without
// the history of the shared deployment, for figures that depend on history (memory, etcd size).
type Standalone struct {
	// Config reaches it.
	Config *rest.Config
	// PID is its process; DataDir its embedded etcd.
	PID     int
	DataDir string
	// Kubeconfig is a kubeconfig file for kubectl.
	Kubeconfig string

	exited chan error
	proc   *os.Process
}

// StartStandalone starts _output/bin/nativevirt-apiserver --standalone under dir (wiped first)
// and waits until it is ready. Stop ends it and removes dir.
func StartStandalone(ctx context.Context, bin, dir string) (*Standalone, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "nativevirt-apiserver.log"))
	if err != nil {
		return nil, err
	}
	s := &Standalone{DataDir: filepath.Join(dir, "data"), exited: make(chan error, 1)}
	cmd := exec.Command(bin, "--standalone", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--data-dir="+s.DataDir, "--embedded-etcd-port=0", "--cert-dir="+filepath.Join(dir, "certs"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() { s.exited <- cmd.Wait(); log.Close() }()
	s.proc, s.PID = cmd.Process, cmd.Process.Pid
	s.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		BearerToken:     "standalone", // kubectl asks for credentials without one; the server ignores it
		QPS:             -1,
	}
	if err := waitReadyz(ctx, s.Config, s.exited, 90*time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, log.Name())
	}
	s.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["standalone"] = &clientcmdapi.Cluster{Server: s.Config.Host, InsecureSkipTLSVerify: true}
	kc.AuthInfos["standalone"] = &clientcmdapi.AuthInfo{Token: s.Config.BearerToken}
	kc.Contexts["standalone"] = &clientcmdapi.Context{Cluster: "standalone", AuthInfo: "standalone"}
	kc.CurrentContext = "standalone"
	if err := clientcmd.WriteToFile(*kc, s.Kubeconfig); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop ends the process and removes its directory.
func (s *Standalone) Stop() error {
	err := stopProcess(s.proc, s.exited, 30*time.Second)
	if rmErr := os.RemoveAll(filepath.Dir(s.DataDir)); err == nil {
		err = rmErr
	}
	return err
}
