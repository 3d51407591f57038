package e2e

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/importer/registrytest"
)

// The credentials of the test registry, and the Secret holding them in CDI's keys.
const (
	registryUser     = "e2e"
	registryPassword = "registry-secret"
	registrySecret   = "registry-creds"
)

// serveRegistry serves an in-process registry (plain http, basic auth) on the pods' bridge
// address, pushes the demo disk as a containerDisk image (demo:latest) and an image without a
// disk (nodisk:latest), and returns the registry's host:port.
func serveRegistry(t *testing.T, raw []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", podBridgeIP(t)+":0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := log.New(io.Discard, "", 0)
	srv := &http.Server{Handler: registrytest.BasicAuth(registry.New(registry.Logger(quiet)), registryUser, registryPassword),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host := ln.Addr().String()
	demo, err := registrytest.ContainerDisk(raw)
	if err != nil {
		t.Fatal(err)
	}
	noDisk, err := registrytest.Image([]registrytest.File{{Name: "data/disk.img", Data: raw[:4096]}})
	if err != nil {
		t.Fatal(err)
	}
	for ref, img := range map[string]v1.Image{"demo:latest": demo, "nodisk:latest": noDisk} {
		if err := registrytest.Push(host+"/"+ref, img, nil, registryUser, registryPassword); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// allowInsecureRegistry lists host in the CDIConfig's spec.insecureRegistries (creating the
// CDIConfig when there is none) and restores it when the test ends.
func allowInsecureRegistry(e *ctrlEnv, host string) {
	e.t.Helper()
	ctx := context.Background()
	configs := e.kv.CdiV1beta1().CDIConfigs()
	old, err := configs.Get(ctx, cdiv1beta1.CDIConfigName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = configs.Create(ctx, &cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: cdiv1beta1.CDIConfigName},
			Spec: cdiv1beta1.CDIConfigSpec{InsecureRegistries: []string{host}}}, metav1.CreateOptions{})
		e.t.Cleanup(func() { _ = configs.Delete(context.Background(), cdiv1beta1.CDIConfigName, metav1.DeleteOptions{}) })
	case err == nil:
		cfg := old.DeepCopy()
		cfg.Spec.InsecureRegistries = append(cfg.Spec.InsecureRegistries, host)
		_, err = configs.Update(ctx, cfg, metav1.UpdateOptions{})
		e.t.Cleanup(func() {
			if cur, err := configs.Get(context.Background(), cdiv1beta1.CDIConfigName, metav1.GetOptions{}); err == nil {
				cur.Spec.InsecureRegistries = old.Spec.InsecureRegistries
				_, _ = configs.Update(context.Background(), cur, metav1.UpdateOptions{})
			}
		})
	}
	if err != nil {
		e.t.Fatalf("listing %s in CDIConfig spec.insecureRegistries: %v", host, err)
	}
}

// registryCredentials creates the Secret of the test registry's credentials (CDI's keys).
func registryCredentials(e *ctrlEnv) {
	e.t.Helper()
	if _, err := e.kube.CoreV1().Secrets(e.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: registrySecret},
		StringData: map[string]string{"accessKeyId": registryUser, "secretKey": registryPassword},
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
